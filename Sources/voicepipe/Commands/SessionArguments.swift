import Foundation
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

extension SessionCommand {
    /// The session command's options, each bound once to its flag.
    struct Options: CommandOptions {
        var texts: [String] = []
        var output: String?
        var log: String?
        var runtimeCommand: String?
        var microphone: String?
        var speaker: String?
        var echo: EchoSetting?
        var room: RoomChoice?
        var roomRecord: String?
        /// `--record`: both sides of the session in one stereo file.
        var record: String?
        var context: [(key: String, value: String)] = []
        var sessionId: String?
        var replyTimeout: Double?
        /// `--reconnect`: attempts after a drop (nil: the default).
        var reconnectAttempts: Int?
        /// `--reconnect-hold`, in seconds.
        var reconnectHold: Double?
        var keepAlive: Double?
        var longRunningTools: [String] = []
        var embeddedFault: EmbeddedRuntimeOptions.Misbehaviour?
        var raw: RawPCMFormat?
        var webSocket = WebSocketArguments()
        var capture = CaptureArguments()
        var fast = false
        var stdio = false
        var summary = SummaryOptions()
        var corpus = CorpusOptions()

        static var textOption: OptionBinding<Self> {
            .repeated("text", "text", \.texts, .text, help: "Type this as a turn (repeatable; queued while connecting, sent in order).")
        }
        static var outOption: OptionBinding<Self> {
            .option("out", "file.wav", \.output, .text, help: "Write the reply audio here as 24 kHz Float32 WAV (AIFF by extension; '-' is standard output).")
        }
        static var runtimeCommandOption: OptionBinding<Self> {
            .option("runtime-command", "cmd", \.runtimeCommand, .text, help: "Start this shell command as the runtime and speak JSON Lines on its standard input and output.")
        }
        static var micOption: OptionBinding<Self> {
            .option("mic", "device", \.microphone, .text, help: "Capture live from this ALSA device instead of a file (see 'voicepipe devices').")
        }
        static var speakerOption: OptionBinding<Self> {
            .option("speaker", "device", \.speaker, .text, help: "Play the reply on this ALSA device as it arrives.")
        }
        static var embeddedFaultOption: OptionBinding<Self> {
            .option("embedded-fault", "fault", \.embeddedFault, .choice, help: "Make the embedded runtime misbehave, for testing: fail, silent or stall.")
        }
        static var fastFlag: OptionBinding<Self> {
            .flag("fast", \.fast, help: "Send the input file as fast as the runtime takes it instead of at real-time pace.")
        }
        static var stdioFlag: OptionBinding<Self> {
            .flag("stdio", \.stdio, help: "Speak JSON Lines on standard input and output to whatever is connected there (the timeline goes to stderr).")
        }
        static var bindings: [OptionBinding<Self>] {
            [
                textOption,
                outOption,
                .option("log", "file.jsonl", \.log, .text, help: "Write every message both ways, timed, as JSON Lines (audio summarised, not copied)."),
                runtimeCommandOption,
                micOption,
                speakerOption,
                echoOption,
                roomOption,
                roomRecordOption,
                .option("record", "file.wav", \.record, .text,
                        help: "Record both sides in one stereo 16 kHz WAV: what was captured and sent on the left, what was played (with cuts) on the right, aligned by sample position."),
                .repeated("context", "key=value", \.context, contextValue, help: "Add to the session.start context (repeatable); persona and vehicle name the session."),
                .option("session-id", "id", \.sessionId, sessionIdValue, help: "The session id sent in session.start (default: a fresh random one)."),
                .option("reply-timeout", "seconds", \.replyTimeout, .decimal(in: 0.1...3_600), help: "Longest wait from the end of a turn to the reply (default 15)."),
                .option("reconnect", "attempts", \.reconnectAttempts, .integer(in: 0...100),
                        help: "After a dropped connection, try this many times to reconnect, waiting 0.5, 1, 2, 4, 8 s (default \(SessionArguments.defaultReconnectAttempts); 0 ends the session at a drop)."),
                .option("reconnect-hold", "seconds", \.reconnectHold, .decimal(in: 0...60),
                        help: "Audio captured while reconnecting that is kept and sent on the new connection; older audio is dropped and counted (default 5)."),
                .option("keep-alive", "seconds", \.keepAlive, .decimal(in: 0.1...3_600), help: "Send silence after this long with no audio sent, so the runtime does not close an idle session (default 40; AgentCore closes at 55 s idle, AWS suggests 30)."),
                .repeated("long-running-tool", "name", \.longRunningTools, .text, help: "A tool that may take long: a turn that calls it gets 90 s (repeatable)."),
                embeddedFaultOption,
                InputFile.rawOption(\.raw),
            ] + WebSocketArguments.bindings.within(\.webSocket) + CaptureArguments.bindings.within(\.capture) + CorpusOptions.bindings.within(\.corpus) + [
                fastFlag,
                stdioFlag,
                SummaryOptions.quietFlag.within(\.summary),
                SummaryOptions.jsonFlag.within(\.summary),
            ]
        }

        /// A `--context` pair: `key=value`, the key not empty.
        private static var contextValue: OptionValue<(key: String, value: String)> {
            OptionValue { pair, flag, command throws(CommandFailure) in
                guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                    throw .usage("'\(flag)' takes key=value, not '\(pair)'", command: command)
                }
                return (String(pair[..<equals]), String(pair[pair.index(after: equals)...]))
            }
        }

        /// A session id, not empty.
        private static var sessionIdValue: OptionValue<String> {
            OptionValue { text, flag, command throws(CommandFailure) in
                guard !text.isEmpty else { throw .usage("'\(flag)' cannot be empty", command: command) }
                return text
            }
        }
    }
}

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

    init(_ options: SessionCommand.Options, command: String) throws(CommandFailure) {
        typealias Options = SessionCommand.Options
        let fault = options.embeddedFault
        let stdio = Options.stdioFlag.flag, runtimeCommand = Options.runtimeCommandOption.flag
        let faultOnlyEmbedded = "'\(Options.embeddedFaultOption.flag)' applies to the embedded runtime only"
        let connector = try options.webSocket.connector(environment: ProcessInfo.processInfo.environment, homeDirectory: NSHomeDirectory(),
                                                        command: command, sessionId: options.sessionId ?? AgentCoreRuntime.makeSessionId())
        if let connector {
            if options.stdio || options.runtimeCommand != nil {
                throw .usage("'\(options.webSocket.agentCoreARN == nil ? WebSocketArguments.urlOption.flag : WebSocketArguments.agentCoreOption.flag)' cannot be combined with '\(stdio)' or '\(runtimeCommand)'; choose one runtime", command: command)
            }
            if fault != nil { throw .usage(faultOnlyEmbedded, command: command) }
            self = .webSocket(connector)
            return
        }
        switch (options.stdio, options.runtimeCommand) {
        case (true, _?):
            throw .usage("'\(stdio)' and '\(runtimeCommand)' cannot be combined; choose one runtime", command: command)
        case (true, nil):
            self = .standardStreams
        case (false, let line?):
            guard !line.allSatisfy(\.isWhitespace) else { throw .usage("'\(runtimeCommand)' needs a command to run", command: command) }
            self = .command(line)
        case (false, nil):
            self = .embedded(EmbeddedRuntimeOptions(pacing: options.fast ? .unpaced : .realTime, misbehaviour: fault))
            return
        }
        if fault != nil { throw .usage(faultOnlyEmbedded, command: command) }
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
            "the runtime at \(connector.configuration.url)" + (connector.signing.map { " (SigV4, \($0.placement.rawValue), credentials from \($0.credentials.source))" } ?? "")
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
    /// Five attempts wait 0.5 + 1 + 2 + 4 + 8 s: a network back within about 15 s keeps the session.
    static let defaultReconnectAttempts = 5
    /// The session's figures: id, context, reply timeout, keep-alive interval, reconnection, long-running tools.
    static func configuration(_ options: SessionCommand.Options) -> SessionConfiguration {
        var context = JSONObject()
        for (key, value) in options.context { context[key] = .string(value) }
        // The default is long enough for AgentCore, which wants 33 to 256 characters.
        let sessionId = options.sessionId ?? AgentCoreRuntime.makeSessionId()
        var configuration = SessionConfiguration(sessionId: sessionId, context: context, longRunningTools: Set(options.longRunningTools))
        if let seconds = options.replyTimeout {
            configuration.replyTimeout = .seconds(seconds)
        }
        if let seconds = options.keepAlive {
            configuration.keepAliveInterval = .seconds(seconds)
        }
        if let seconds = options.webSocket.rotateAfter {
            configuration.rotateAfter = .seconds(seconds)
        }
        configuration.reconnect = ReconnectPolicy(attempts: options.reconnectAttempts ?? defaultReconnectAttempts,
                                                  holdLimit: .seconds(options.reconnectHold ?? 5))
        return configuration
    }

    /// Refuses combinations that cannot work, before anything is opened.
    static func check(input: String?, texts: [String], microphone: String?, output: String?, speaker: String?, log: String?,
                      transport: SessionRuntimeChoice, fast: Bool, command: String) throws(CommandFailure) {
        typealias Options = SessionCommand.Options
        let mic = Options.micOption, textOption = Options.textOption, out = Options.outOption.flag, stdio = Options.stdioFlag.flag
        if input != nil && microphone != nil { throw .usage("give an input file or '\(mic.flag)', not both", command: command) }
        if input == nil && microphone == nil && texts.isEmpty {
            throw .usage("say what to send: an input file, '\(mic.flag) <\(mic.valueName ?? "")>' or '\(textOption.flag) <\(textOption.valueName ?? "")>'", command: command)
        }
        if fast && input == nil { throw .usage("'\(Options.fastFlag.flag)' applies to an input file", command: command) }
        if output != nil && speaker != nil { throw .usage("give '\(out)' or '\(Options.speakerOption.flag)', not both", command: command) }
        if let output, output != "-" {
            let container = try OutputFile.container(for: output, command: command)
            guard container == .wav || container == .aiff else {
                throw .usage("reply audio is Float32, which \(container) cannot hold; give '\(out)' a .wav or .aiff name", command: command)
            }
        }
        if transport.usesStandardStreams {
            // A closed descriptor 0 or 1 would be reused by the first file opened.
            guard fcntl(STDIN_FILENO, F_GETFD) >= 0, fcntl(STDOUT_FILENO, F_GETFD) >= 0 else {
                throw .usage("with '\(stdio)', standard input and output must be open: they carry the runtime's messages", command: command)
            }
            if input == "-" { throw .usage("with '\(stdio)', standard input carries the runtime's messages; give the input as a file", command: command) }
            if output == "-" || log == "-" { throw .usage("with '\(stdio)', standard output carries messages to the runtime; write the reply and log to files", command: command) }
        }
        if output == "-" && log == "-" { throw .usage("the reply audio and the log cannot both go to standard output", command: command) }
        for text in texts where !text.contains(where: { !$0.isWhitespace }) {
            throw .usage("'\(textOption.flag)' needs some text", command: command)
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
            let open = { @Sendable () throws -> CapturePump in
                let device = try CaptureDevice.open(name: microphone)
                let converter = try capture.converter(for: device.format, source: "'\(microphone)'")
                return try CapturePump(device: device, converter: converter, whenFull: .drop)
            }
            // Unplugged mid-session, the microphone is opened again every 2 s (guarded anew, its
            // converter built for the format it comes back in); the session goes on as text meanwhile.
            return .reopenableDevice(try open(), reopen: CaptureReopening(name: "microphone '\(microphone)'", open: open))
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
    /// `--record`'s recorder, its file created now so a path that cannot be written is refused up front.
    static func recorder(_ path: String?) throws(CommandFailure) -> ConversationRecorder? {
        guard let path else { return nil }
        do {
            return try ConversationRecorder(path: path)
        } catch {
            throw CommandFailure(error.message, exitCode: .cannotCreate)
        }
    }

    static func replyOutput(path: String?, speaker: String?, texts: [String], problems: inout [String], command: String) throws(CommandFailure) -> (output: any ReplyOutput, note: String?) {
        if let path {
            let container = path == "-" ? AudioContainer.wav : (AudioContainer(forPath: path) ?? .wav)
            do {
                return (try FileReplyOutput(path: path, container: container), nil)
            } catch {
                throw CommandFailure("cannot create '\(path)': \(error.message)", exitCode: .cannotCreate)
            }
        }
        guard let speaker else {
            let out = SessionCommand.Options.outOption, speakerOption = SessionCommand.Options.speakerOption
            return (DiscardedReplyOutput(), "reply audio is not played; give '\(out.flag) <\(out.valueName ?? "")>' or '\(speakerOption.flag) <\(speakerOption.valueName ?? "")>'")
        }
        do {
            let open = { () throws -> any ReplyOutput in try DeviceReplyOutput(device: PlaybackDevice.open(name: speaker)) }
            // Unplugged mid-session, the speaker is let go (replies continue as text) and opened
            // again, guarded anew, by the first reply chunk 2 s or more later.
            let output = ReopeningReplyOutput(name: "speaker '\(speaker)'", first: try open(), open: open) { change in
                Console.warning(SessionCommand.name, change)
            }
            return (output, nil)
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
    static func log(_ path: String?, sampleRate: SampleRate) throws(CommandFailure) -> SessionLogWriter? {
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
    /// `--json`'s object: the session's summary (``SessionSummary``) with the input, the reply
    /// audio written or played and the exit status.
    static func summaryObject(_ report: SessionReport, input: String?, exitCode: ExitCode) -> JSONObject {
        var object = SessionSummary.json(of: report.machine, duration: report.finishedAt - report.startedAt)
        object["input"] = input.map { .string(InputFile.name($0)) } ?? .null
        object["reply"] = .object(["output": .string(report.outputName),
                                   "seconds": .seconds(report.outputFrames, rate: report.outputSampleRate)])
        if report.captureFramesDropped > 0 { object["microphoneFramesDropped"] = .number(Double(report.captureFramesDropped)) }
        if let jitter = report.jitter {
            object["jitterBuffer"] = .object(["underruns": .number(Double(jitter.underruns)), "preRollSeconds": .seconds(jitter.preRoll),
                                              "largestPreRollSeconds": .seconds(jitter.largestPreRoll)])
        }
        object["exitStatus"] = .number(Double(exitCode.rawValue))
        return object
    }

    static func exitCode(for report: SessionReport) -> ExitCode {
        if report.playbackError != nil || !report.captureProblems.isEmpty { return .ioError }
        return report.endedCleanly ? .success : .temporaryFailure
    }
}
