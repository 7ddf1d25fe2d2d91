import Foundation
import Synchronization
import VoicePipeCore
import VoicePipeIO

/// The Python runtime server of `Samples/runtime-server` (or another script speaking its event
/// format), started on a free loopback port for a test and stopped when the test is done.
///
/// The server prints one JSON object per line on standard output; the first is
/// `{"event":"listening","url":"ws://127.0.0.1:PORT"}`. Every line is kept, parsed, for
/// ``events`` and ``waitForEvent(within:where:)``.
public final class RuntimeServer: Sendable {
    public enum Failure: Error, CustomStringConvertible {
        case pythonMissing(String)
        case didNotStart(String)

        public var description: String {
            switch self {
            case .pythonMissing(let path):
                "the runtime server's Python environment is missing (\(path)): run scripts/bootstrap"
            case .didNotStart(let detail):
                "the runtime server did not start: \(detail)"
            }
        }
    }

    /// The server's address, as it printed it.
    public let url: String
    private let process: Process
    private let output: Output

    /// What the server printed, filled by two reader threads.
    private final class Output: Sendable {
        let lines = Guarded<[[String: any Sendable]]>([])
        let errors = Guarded("")
    }

    /// The Python of the server's environment (made by `Samples/runtime-server/setup`).
    public static var python: URL {
        CommandRunner.packageRoot.appendingPathComponent("Samples/runtime-server/.venv/bin/python")
    }

    /// The bundled server script.
    public static var script: URL {
        CommandRunner.packageRoot.appendingPathComponent("Samples/runtime-server/server.py")
    }

    /// Starts `script` with `arguments` (plus `--port 0`) and waits for its listening line.
    public init(script: URL = RuntimeServer.script, _ arguments: [String] = [], within seconds: Double = 20) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python.path) else { throw Failure.pythonMissing(Self.python.path) }
        let process = Process()
        process.executableURL = Self.python
        process.arguments = ["-u", script.path] + (script == Self.script ? ["--port", "0"] : []) + arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let printed = Output()
        try process.run()
        Self.collect(output.fileHandleForReading, into: printed)
        let errorDescriptor = errors.fileHandleForReading.fileDescriptor
        Thread.detachNewThread {
            Self.readAll(errorDescriptor) { bytes in printed.errors.withLock { $0 += String(decoding: bytes, as: UTF8.self) } }
        }
        self.process = process
        self.output = printed
        let deadline = Date().addingTimeInterval(seconds)
        var listening: String?
        while listening == nil, Date() < deadline, process.isRunning {
            listening = printed.lines.withLock { $0.first { $0["event"] as? String == "listening" }?["url"] as? String }
            if listening == nil { usleep(2_000) }
        }
        guard let listening else {
            process.terminate()
            process.waitUntilExit()
            let errorText = printed.errors.withLock { $0 }
            throw Failure.didNotStart(errorText.isEmpty ? "no listening line within \(seconds) s" : errorText)
        }
        url = listening
    }

    deinit { stop() }

    /// The server's process id (to sample its memory, say).
    public var processIdentifier: Int32 { process.processIdentifier }

    /// The port it listens on.
    public var port: Int {
        Int(url.split(separator: ":").last ?? "") ?? 0
    }

    /// Every event line so far, parsed.
    public var events: [[String: any Sendable]] { output.lines.withLock { $0 } }

    /// What the server wrote on standard error (tracebacks, its own log).
    public var standardError: String { output.errors.withLock { $0 } }

    /// The events named `name`.
    public func events(named name: String) -> [[String: any Sendable]] {
        events.filter { $0["event"] as? String == name }
    }

    /// Waits (on this thread) for an event satisfying `condition` (which must not call back into
    /// the server: it runs under its lock); nil when none came in time.
    public func waitForEvent(within seconds: Double = 20, where condition: ([String: any Sendable]) -> Bool) -> [String: any Sendable]? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let event = output.lines.withLock({ $0.first(where: condition) }) { return event }
            usleep(2_000)
        }
        return nil
    }

    /// Waits (on this thread) until at least `count` events named `name` have come; false when
    /// they did not in time.
    public func waitForEvents(named name: String, count: Int, within seconds: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while events(named: name).count < count {
            guard Date() < deadline else { return false }
            usleep(2_000)
        }
        return true
    }

    /// Waits for the first event named `name`.
    public func waitForEvent(named name: String, within seconds: Double = 20) -> [String: any Sendable]? {
        waitForEvent(within: seconds) { $0["event"] as? String == name }
    }

    /// Stops the server: SIGTERM, and SIGKILL when it has not exited a second later.
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        if !waitForExit(within: 1) {
            kill(process.processIdentifier, SIGKILL)
            _ = waitForExit(within: 3)
        }
    }

    private func waitForExit(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            guard Date() < deadline else { return false }
            usleep(5_000)
        }
        return true
    }

    /// Reads `descriptor` to its end, handing over each piece (FileHandle's own reading traps
    /// when a signal interrupts it).
    private static func readAll(_ descriptor: Int32, _ take: ([UInt8]) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            take(Array(buffer[..<count]))
        }
    }

    private static func collect(_ handle: FileHandle, into printed: Output) {
        let descriptor = handle.fileDescriptor
        Thread.detachNewThread {
            var pending = Data()
            readAll(descriptor) { chunk in
                pending.append(contentsOf: chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = pending[pending.startIndex..<newline]
                    pending.removeSubrange(pending.startIndex...newline)
                    if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] {
                        let event = object.mapValues { SendableJSON.wrap($0) }
                        printed.lines.withLock { $0.append(event) }
                    }
                }
            }
        }
    }
}

/// JSON values as parsed by `JSONSerialization`, made `Sendable` by copying them into Swift types.
enum SendableJSON {
    static func wrap(_ value: Any) -> any Sendable {
        switch value {
        case let text as String: text
        case let number as NSNumber: number.doubleValue == number.doubleValue.rounded() && !(value is Bool) ? number.intValue as any Sendable : number.doubleValue
        case let list as [Any]: list.map { wrap($0) }
        case let object as [String: Any]: object.mapValues { wrap($0) }
        default: String(describing: value)
        }
    }
}
