import Foundation

/// Runs the built `voicepipe` binary the way a user would, capturing its output and exit status.
public enum CommandRunner {
    public struct Result: CustomStringConvertible {
        public let status: Int32
        /// Standard output as bytes (a WAV written to '-', say).
        public let output: Data
        public var stdout: String { String(decoding: output, as: UTF8.self) }
        public let stderr: String
        public var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
    }

    /// The package root (found from this file's location).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A bundled sample file.
    public static func sample(_ name: String) -> String {
        packageRoot.appendingPathComponent("Samples/Audio").appendingPathComponent(name).path
    }

    /// The `voicepipe` executable next to the test bundle (same build directory), or
    /// `$VOICEPIPE_BINARY` when set.
    public static var binary: URL {
        if let explicit = ProcessInfo.processInfo.environment["VOICEPIPE_BINARY"] {
            return URL(fileURLWithPath: explicit)
        }
        return executable(named: "voicepipe")
    }

    /// A product of this package's build (the tool, a sample program) next to the test bundle.
    public static func executable(named name: String) -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // On some runners argv[0] is inside the .xctest bundle; walk up to the build directory.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug").appendingPathComponent(name)
    }

    /// ``run(_:executable:stdin:environment:in:)`` on a thread of its own, for a long run from an
    /// async test: waiting minutes for a child on one of Swift concurrency's few cooperative
    /// threads starves every other test's awaits (on 2 cores, both threads can end up blocked).
    public static func runOnOwnThread(_ arguments: [String], executable: URL = binary, environment: [String: String] = [:]) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do {
                    continuation.resume(returning: try run(arguments, executable: executable, environment: environment))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.name = "voicepipe test child"
            thread.start()
        }
    }

    /// Runs `voicepipe` (or `executable`) with `arguments`, optionally feeding `stdin`, in
    /// `directory` (default: this process's current directory).
    public static func run(_ arguments: [String], executable: URL = binary, stdin: Data? = nil, environment: [String: String] = [:], in directory: URL? = nil) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = input
        try process.run()
        // Feed standard input from another thread, so a child that writes while it reads cannot
        // block on a full pipe either way.
        let feeder = input.fileHandleForWriting
        let fed = DispatchGroup()
        fed.enter()
        _ = ignoreBrokenPipes
        DispatchQueue.global().async {
            // A child that exits without reading all of it (a usage error, say) closes the pipe.
            if let stdin { try? feeder.write(contentsOf: stdin) }
            try? feeder.close()
            fed.leave()
        }
        // Read both pipes to the end before waiting, so a chatty child cannot block on a full pipe.
        let errorOutput = Collected()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errorOutput.data = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        fed.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: outData, stderr: String(decoding: errorOutput.data, as: UTF8.self))
    }

    /// Writing to a pipe whose reader has gone must fail the write, not kill the test process.
    private static let ignoreBrokenPipes: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    /// Bytes read on another thread; the DispatchGroup orders the write before the read.
    private final class Collected: @unchecked Sendable {
        var data = Data()
    }

}

/// A fresh directory under the system temporary directory, removed when released.
public final class TemporaryDirectory {
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("voicepipe-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `bytes` to a file in the directory and returns its path.
    public func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}

/// Hand-built WAV bytes for files libsndfile would refuse to write (zero rate, truncated, ...).
public enum WAVBytes {
    /// A 16-bit PCM WAV header and data; `declaredFrames` may exceed the frames present.
    public static func pcm16(rate: UInt32, channels: UInt16, samples: [Int16], declaredFrames: Int? = nil) -> Data {
        let frames = channels == 0 ? samples.count : samples.count / Int(channels)
        let declaredBytes = UInt32((declaredFrames ?? frames) * Int(max(channels, 1)) * 2)
        var data = Data("RIFF".utf8)
        append(&data, UInt32(36) + declaredBytes)
        data += Data("WAVEfmt ".utf8)
        append(&data, UInt32(16))
        append(&data, UInt16(1))
        append(&data, channels)
        append(&data, rate)
        append(&data, rate * UInt32(channels) * 2)
        append(&data, channels * 2)
        append(&data, UInt16(16))
        data += Data("data".utf8)
        append(&data, declaredBytes)
        for sample in samples { append(&data, UInt16(bitPattern: sample)) }
        return data
    }

    private static func append<T: FixedWidthInteger>(_ data: inout Data, _ value: T) {
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }
}
