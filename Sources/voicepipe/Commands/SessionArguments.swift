import Foundation
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// Which runtime a session talks to.
enum SessionRuntimeChoice: CustomStringConvertible, Sendable {
    /// The in-process runtime (the default).
    case embedded(EmbeddedRuntimeOptions)
    /// JSON Lines on this process's standard input and output.
    case standardStreams
    /// JSON Lines on the pipes of a command started for the session.
    case command(String)
    /// A WebSocket server (`--url`), each connection made (and signed) by the connector.
    case webSocket(WebSocketConnector)

    init(_ arguments: Arguments, fast: Bool, command: String) throws(CommandFailure) {
        let fault = try arguments.value("embedded-fault").map { name throws(CommandFailure) -> EmbeddedRuntimeOptions.Misbehaviour in
            guard let fault = EmbeddedRuntimeOptions.Misbehaviour(rawValue: name) else {
                throw .usage("'--embedded-fault' must be one of \(EmbeddedRuntimeOptions.Misbehaviour.allCases.map(\.rawValue).joined(separator: ", ")), not '\(name)'", command: command)
            }
            return fault
        }
        let connector = try WebSocketArguments.connector(arguments, environment: ProcessInfo.processInfo.environment,
                                                         homeDirectory: NSHomeDirectory(), command: command)
        if let connector {
            if arguments.has("stdio") || arguments.value("runtime-command") != nil {
                throw .usage("'--url' cannot be combined with '--stdio' or '--runtime-command'; choose one runtime", command: command)
            }
            if fault != nil { throw .usage("'--embedded-fault' applies to the embedded runtime only", command: command) }
            self = .webSocket(connector)
            return
        }
        switch (arguments.has("stdio"), arguments.value("runtime-command")) {
        case (true, _?):
            throw .usage("'--stdio' and '--runtime-command' cannot be combined; choose one runtime", command: command)
        case (true, nil):
            self = .standardStreams
        case (false, let line?):
            guard !line.allSatisfy(\.isWhitespace) else { throw .usage("'--runtime-command' needs a command to run", command: command) }
            self = .command(line)
        case (false, nil):
            self = .embedded(EmbeddedRuntimeOptions(pacing: fast ? .unpaced : .realTime, misbehaviour: fault))
            return
        }
        if fault != nil { throw .usage("'--embedded-fault' applies to the embedded runtime only", command: command) }
    }

    var usesStandardStreams: Bool {
        if case .standardStreams = self { return true }
        return false
    }

    var description: String {
        switch self {
        case .embedded(let options): "the embedded runtime" + (options.misbehaviour.map { " (told to \($0.rawValue))" } ?? "")
        case .standardStreams: "the runtime on standard input and output"
        case .command(let line): "the runtime '\(line)'"
        case .webSocket(let connector):
            "the runtime at \(connector.configuration.url)" + (connector.signing.map { " (SigV4, \($0.placement.rawValue))" } ?? "")
        }
    }

    /// A transport to the runtime, not yet open; a WebSocket one signed for now.
    func makeTransport() throws(CommandFailure) -> any SessionTransport {
        switch self {
        case .embedded(let options): return EmbeddedRuntime(options: options).connect()
        case .standardStreams: return JSONLinesTransport.standardStreams()
        case .command(let line): return JSONLinesTransport.launching(line)
        case .webSocket(let connector):
            do {
                return try connector.makeTransport(at: time(nil))
            } catch {
                throw CommandFailure("cannot sign the handshake: \(error.message)", exitCode: .software)
            }
        }
    }
}

/// The session command's pieces, each from its options.
enum SessionArguments {
    /// The session's figures: id, context, reply timeout, long-running tools.
    static func configuration(_ arguments: Arguments, command: String) throws(CommandFailure) -> SessionConfiguration {
        var context = JSONObject()
        for pair in arguments.values("context") {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw .usage("'--context' takes key=value, not '\(pair)'", command: command)
            }
            context[String(pair[..<equals])] = .string(String(pair[pair.index(after: equals)...]))
        }
        let random = String(UInt32.random(in: .min ... .max), radix: 16)
        let sessionId = arguments.value("session-id") ?? "voicepipe-" + String(repeating: "0", count: 8 - random.count) + random
        guard !sessionId.isEmpty else { throw .usage("'--session-id' cannot be empty", command: command) }
        var configuration = SessionConfiguration(sessionId: sessionId, context: context, longRunningTools: Set(arguments.values("long-running-tool")))
        if let seconds = try arguments.decimal("reply-timeout", in: 0.1...3_600, command: command) {
            configuration.replyTimeout = .seconds(seconds)
        }
        if let seconds = try WebSocketArguments.rotation(arguments, command: command) {
            configuration.rotateAfter = .seconds(seconds)
        }
        return configuration
    }

    /// Refuses combinations that cannot work, before anything is opened.
    static func check(input: String?, texts: [String], microphone: String?, output: String?, speaker: String?, log: String?,
                      transport: SessionRuntimeChoice, fast: Bool, command: String) throws(CommandFailure) {
        if input != nil && microphone != nil { throw .usage("give an input file or '--mic', not both", command: command) }
        if input == nil && microphone == nil && texts.isEmpty {
            throw .usage("say what to send: an input file, '--mic <device>' or '--text <text>'", command: command)
        }
        if fast && input == nil { throw .usage("'--fast' applies to an input file", command: command) }
        if output != nil && speaker != nil { throw .usage("give '--out' or '--speaker', not both", command: command) }
        if let output, output != "-" {
            let container = try OutputFile.container(for: output, command: command)
            guard container == .wav || container == .aiff else {
                throw .usage("reply audio is Float32, which \(container) cannot hold; give '--out' a .wav or .aiff name", command: command)
            }
        }
        if transport.usesStandardStreams {
            // A closed descriptor 0 or 1 would be reused by the first file opened.
            guard fcntl(STDIN_FILENO, F_GETFD) >= 0, fcntl(STDOUT_FILENO, F_GETFD) >= 0 else {
                throw .usage("with '--stdio', standard input and output must be open: they carry the runtime's messages", command: command)
            }
            if input == "-" { throw .usage("with '--stdio', standard input carries the runtime's messages; give the input as a file", command: command) }
            if output == "-" || log == "-" { throw .usage("with '--stdio', standard output carries messages to the runtime; write the reply and log to files", command: command) }
        }
        if output == "-" && log == "-" { throw .usage("the reply audio and the log cannot both go to standard output", command: command) }
        for text in texts where !text.contains(where: { !$0.isWhitespace }) {
            throw .usage("'--text' needs some text", command: command)
        }
    }

    /// The capture source; an unavailable microphone is exit 69, or a problem noted when the
    /// session can go on as text.
    static func captureSource(input: String?, raw: RawPCMFormat?, capture: CaptureArguments, microphone: String?, fast: Bool,
                              texts: [String], problems: inout [String], command: String) throws(CommandFailure) -> SessionCapture {
        if let input {
            let reader = try InputFile.open(input, raw: raw)
            let converter = try capture.converter(for: reader.format, source: InputFile.name(input))
            do {
                return .file(try FileCaptureSource(reader: reader, converter: converter), pacing: fast ? .asFastAsTaken : .realTime)
            } catch {
                throw CommandFailure("cannot read \(InputFile.name(input)): \(error)", exitCode: .dataError)
            }
        }
        guard let microphone else { return .none }
        do {
            let device = try CaptureDevice.open(name: microphone)
            let converter = try capture.converter(for: device.format, source: "'\(microphone)'")
            return .device(try CapturePump(device: device, converter: converter, whenFull: .drop))
        } catch let error as AudioUnavailable {
            guard !texts.isEmpty else { throw CommandFailure(error.message, exitCode: .unavailable) }
            problems.append(error.message)
            return .none
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            guard !texts.isEmpty else { throw CommandFailure("cannot capture from '\(microphone)': \(error)", exitCode: .unavailable) }
            problems.append("cannot capture from '\(microphone)': \(error)")
            return .none
        }
    }

    /// Where the reply goes: a file, a speaker, or nowhere.
    static func replyOutput(path: String?, speaker: String?, texts: [String], problems: inout [String], command: String) throws(CommandFailure) -> (output: any ReplyOutput, note: String?) {
        if let path {
            let container = path == "-" ? AudioContainer.wav : (AudioContainer(forPath: path) ?? .wav)
            do {
                return (try FileReplyOutput(path: path, container: container), nil)
            } catch {
                throw CommandFailure("cannot create '\(path)': \(error.message)", exitCode: .cannotCreate)
            }
        }
        guard let speaker else { return (DiscardedReplyOutput(), "reply audio is not played; give '--out <file.wav>' or '--speaker <device>'") }
        do {
            return (try DeviceReplyOutput(device: PlaybackDevice.open(name: speaker)), nil)
        } catch let error as AudioUnavailable {
            guard !texts.isEmpty else { throw CommandFailure(error.message, exitCode: .unavailable) }
            problems.append(error.message)
        } catch {
            guard !texts.isEmpty else { throw CommandFailure("cannot play on '\(speaker)': \(error)", exitCode: .unavailable) }
            problems.append("cannot play on '\(speaker)': \(error)")
        }
        return (DiscardedReplyOutput(), nil)
    }

    /// The session log, if asked for.
    static func log(_ path: String?, sampleRate: Int) throws(CommandFailure) -> SessionLogWriter? {
        guard let path else { return nil }
        do {
            return try SessionLogWriter(path: path, captureSampleRate: sampleRate)
        } catch {
            throw CommandFailure(error.message, exitCode: .cannotCreate)
        }
    }

    /// "'take.wav' at real-time pace", "microphone 'default'", "typed text only".
    static func describe(input: String?, microphone: String?, fast: Bool) -> String {
        if let input { return "\(InputFile.name(input)) \(fast ? "as fast as the runtime takes it" : "at real-time pace")" }
        if let microphone { return "microphone '\(microphone)'" }
        return "typed text only"
    }

    /// 0 for a session that ended cleanly; 75 when the runtime failed or timed out; 74 when the
    /// reply audio or the input could not be read or written.
    static func exitCode(for report: SessionReport) -> ExitCode {
        if report.playbackError != nil || !report.captureProblems.isEmpty { return .ioError }
        return report.endedCleanly ? .success : .temporaryFailure
    }
}
