import Foundation
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// `voicepipe session`: a whole voice session, from a file or a microphone to a reply file or a speaker.
struct SessionCommand: Command {
    static let name = "session"
    static let abstract = "Run a voice session: speech from a file or microphone through a runtime, the reply to a file or speaker."
    static var help: String {
        HelpText.make(
            usage: """
            voicepipe session [<input>] [--text <text>]... [--out <file.wav>] [--log <file.jsonl>] [--fast] [--stdio | --runtime-command <cmd> | --url <ws(s)://host[:port]/path> | --agentcore-runtime <ARN>] [--mic <device>] [--speaker <device>] [--echo <backend>] [--room <room>] [--room-record <dir>] [--context <key=value>]...
                   voicepipe session <input>... --out-dir <dir> [--jobs <n>] [--repeat <k>] [--stagger <seconds>] [runtime and session options]
            """,
            abstract: abstract,
            discussion: """
            The input file (any format 'convert' reads; '-' is standard input) goes through the capture path
            at real-time pace, 16 kHz mono frames sent as audio.chunk messages; --text turns are typed
            while connecting, as a user typing early. The runtime is the embedded one unless --stdio or
            --runtime-command is given: it answers each turn with its transcript, an audio_stats tool call,
            a table of the turn's levels and, as the reply, your own audio of the turn at 24 kHz (a typed
            turn gets a short tone). When the input has ended and the last reply has played, the session
            sends session.end and waits up to 5 s for session.ended.

            --url talks to a runtime over a WebSocket instead (wss:// verified against the system's CAs,
            or --ca-file). Header values, the URL's query and its user:password@ never appear in the
            timeline, the log or an error; a secret given with --header is in the command line, which every
            user of the machine can read in ps and /proc, so --header @file reads 'Name: value' lines from
            a file and --header-env NAME from an environment variable instead. --aws-sigv4 signs the handshake with the credentials AWS tools
            read (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, else AWS_PROFILE's keys in
            ~/.aws/credentials, its credential_process, refreshed before expiry, or its keys in ~/.aws/config); --rotate-after moves the session to a fresh, re-signed connection at the first
            ready moment after that many seconds, losing no frame.

            --agentcore-runtime talks to an Amazon Bedrock AgentCore runtime: the URL comes from the ARN
            (wss://bedrock-agentcore.<region>.amazonaws.com/runtimes/<ARN>/ws, ?qualifier= for --qualifier),
            signed for the ARN's region and bedrock-agentcore, presigned unless --aws-sigv4 header. The
            session id (33 to 256 visible ASCII characters) goes as X-Amzn-Bedrock-AgentCore-Runtime-Session-Id,
            in the signed query when presigned, a header otherwise, the same on every connection and in
            session.start. --endpoint-url (else AWS_ENDPOINT_URL_BEDROCK_AGENTCORE, then AWS_ENDPOINT_URL)
            reaches the same path elsewhere, such as a runtime on loopback.

            The timeline shows each state change, transcripts, tool calls (over-budget ones marked),
            info cards as tables, escalation and keep-alives; the summary gives turns, audio both ways
            and the turn latency (end of speech to first reply audio) per turn, median and 95th
            percentile; past eight answered turns, the median, p90, p95 and maximum instead. --json
            prints only the summary, as one JSON object (version 1: status, each turn's speech and
            latency, turnLatencies, turnLatency, audio both ways, tools, reconnections, exit status).

            With --mic and --speaker, echo control (--echo, speex by default) removes the speaker's
            sound from the microphone before frames are sent. --room runs the session live in a
            simulated room instead: the input file is the person speaking into it, the reply plays
            into it, and the summary adds echo return loss enhancement, self-interruptions and
            barge-ins honoured; --room-record keeps the room's signals.

            With --out-dir, every input is a whole session of its own (its own connection and session id,
            the same runtime options and --text turns), --jobs at once (default \(CorpusOptions.defaultWidth)), --repeat times,
            each start --stagger seconds after the one before. Each session writes NAME.reply.wav and
            NAME.log.jsonl into the folder and prints one line (or, with --json, its summary object) as it
            ends; an input that cannot be read is reported by name and the rest run. At the end the folder
            gets report.json (every session and every turn's latency, raw, for 'voicepipe report' to merge),
            report.md and report-latency.svg; the exit status is the worst session's. Ctrl-C ends every
            running session cleanly and starts no more, and the report is still written. Ctrl-C ends the session (session.end, then the wait for the runtime); a second
            stops waiting, still finishing the reply file and the log; a third quits at once.
            """,
            examples: [
                "voicepipe session Samples/Audio/speech-48k-stereo-f32.wav --out reply.wav",
                "voicepipe session --text 'what is my tyre pressure?' --context persona=Dana --context 'vehicle=2022 Model Y'",
                "voicepipe session take.wav --runtime-command 'python3 runtime.py' --log session.jsonl --fast",
                "voicepipe session take.wav --url wss://runtime.example.com/voice --header @runtime-headers.txt",
                "RUNTIME_AUTH=\"Authorization: Bearer $(cat token)\" voicepipe session take.wav --url wss://runtime.example.com/voice --header-env RUNTIME_AUTH",
                "voicepipe session take.wav --url 'wss://bedrock-agentcore.us-west-2.amazonaws.com/runtimes/<arn>/ws' --aws-sigv4 presign --rotate-after 420",
                "voicepipe session take.wav --agentcore-runtime arn:aws:bedrock-agentcore:us-west-2:123456789012:runtime/my_agent-abc123 --qualifier DEFAULT",
                "voicepipe session --mic default --speaker default",
                "voicepipe session Samples/Audio/room-barge-in-16k-mono-s16.wav --room office --room-record .build",
                "voicepipe session take.wav --room kitchen,drift=100 --echo webrtc",
                "voicepipe session calls/*.wav --out-dir results --jobs 32 --url wss://runtime.example.com/voice --header @runtime-headers.txt",
                "voicepipe session utterances/*.wav --out-dir load --repeat 10 --stagger 0.2 --jobs 200",
            ],
            bindings: Options.bindings)
            + "\n  75  the runtime failed, or did not answer in time (EX_TEMPFAIL)"
    }

    /// One session, or with `--out-dir` a corpus of them.
    enum Mode {
        case single(SingleSession)
        case corpus(SessionCorpusCommand)
    }

    let mode: Mode

    init(options: Options, positionals: [String]) throws(CommandFailure) {
        if let directory = options.corpus.directory {
            mode = .corpus(try SessionCorpusCommand(options: options, inputs: positionals, directory: directory))
        } else {
            mode = .single(try SingleSession(options: options, positionals: positionals))
        }
    }

    func run() throws(CommandFailure) -> ExitCode {
        switch mode {
        case .single(let session): try session.run()
        case .corpus(let corpus): corpus.run()
        }
    }
}

/// One session, from a file or a microphone to a reply file or a speaker.
struct SingleSession {
    let input: String?
    let texts: [String]
    let outputPath: String?
    let logPath: String?
    let transport: SessionRuntimeChoice
    let microphone: String?
    let speaker: String?
    let configuration: SessionConfiguration
    let fast: Bool
    let quiet: Bool
    let summaryOptions: SummaryOptions
    let raw: RawPCMFormat?
    let capture: CaptureArguments
    let room: RoomChoice?
    let roomRecord: String?
    let record: String?
    let echo: EchoBackend?

    init(options: SessionCommand.Options, positionals: [String]) throws(CommandFailure) {
        guard positionals.count <= 1 else {
            throw .usage("give at most one input file, not \(positionals.count); to run each as a session of its own, add '\(CorpusOptions.outDirOption.flag) <dir>'", command: SessionCommand.name)
        }
        input = positionals.first
        texts = options.texts
        outputPath = options.output
        logPath = options.log
        microphone = options.microphone
        speaker = options.speaker
        fast = options.fast
        quiet = options.summary.quiet || options.summary.json
        summaryOptions = options.summary
        raw = options.raw
        capture = options.capture
        room = options.room
        roomRecord = options.roomRecord
        record = options.record
        echo = SessionArguments.echoBackend(options)
        try SessionArguments.checkLive(options, input: positionals.first, command: SessionCommand.name)
        // One id for session.start and every AgentCore handshake (reconnections and rotations too).
        var options = options
        options.sessionId = options.sessionId ?? AgentCoreRuntime.makeSessionId()
        transport = try SessionRuntimeChoice(options, command: SessionCommand.name)
        configuration = SessionArguments.configuration(options)
        try SessionArguments.check(input: input, texts: texts, microphone: microphone, output: outputPath, speaker: speaker, log: logPath, transport: transport, fast: fast, command: SessionCommand.name)
    }

    func run() throws(CommandFailure) -> ExitCode {
        var problems = [String]()
        let live = try liveAudio()
        let roomDevices = live?.room
        let source: SessionCapture, output: (output: any ReplyOutput, note: String?)
        if let live {
            source = live.capture
            output = (live.output, nil)
        } else {
            source = try SessionArguments.captureSource(input: input, raw: raw, capture: capture, microphone: microphone, fast: fast, texts: texts, problems: &problems, command: SessionCommand.name)
            output = try SessionArguments.replyOutput(path: outputPath, speaker: speaker, texts: texts, problems: &problems, command: SessionCommand.name)
        }
        let printer = SessionPrinter(toStandardError: transport.usesStandardStreams || outputPath == "-" || logPath == "-", quiet: quiet)
        let log = try SessionArguments.log(logPath, sampleRate: configuration.captureSampleRate)
        let recorder = try SessionArguments.recorder(record)
        let options = SessionDriverOptions(session: configuration, initialTexts: texts, audioUnavailable: problems.isEmpty ? nil : problems.joined(separator: "; "))
        let runtime = transport
        let connect: (@Sendable () throws -> any SessionTransport)? = configuration.rotateAfter == nil && configuration.reconnect.attempts == 0
            ? nil : { @Sendable in try runtime.makeTransport() }
        let driver = SessionDriver(options: options, transport: try transport.makeTransport(), connect: connect, capture: source, output: output.output, recorder: recorder) { event, instant in
            printer.show(event, at: instant)
            log?.record(event, at: instant)
            roomDevices?.observe(event)
        }
        printer.header(configuration: configuration, runtime: transport.description, input: room.map { "\(InputFile.name(input ?? "")) spoken into the room '\($0.text)'" } ?? SessionArguments.describe(input: input, microphone: microphone, fast: fast), output: output.output.name, note: output.note)
        // The first Ctrl-C sends session.end and waits for the runtime; the second stops waiting
        // (the reply file and log are still finished); a third quits at once.
        let signals = StopSignals(gentle: 2) { driver.requestEnd() }
        let report = driver.run()
        withExtendedLifetime(signals) {}
        log?.finish()
        printer.summary(report, fast: fast)
        if let recorder {
            if let failure = recorder.failure {
                Console.warning(SessionCommand.name, "the recording '\(recorder.path)' is incomplete: \(failure.message)")
            } else {
                let length = Double(recorder.framesWritten) / ConversationMix.sampleRate.hertz
                printer.lines(["recorded both sides: \(String(format: "%.3f", length)) s to '\(recorder.path)' (left: captured and sent, right: played; 16 kHz)"])
            }
        }
        if let live {
            printer.lines(live.summary())
            if let roomRecord {
                let recording = live.writeRecording(to: roomRecord)
                printer.lines(recording.lines)
                if let failure = recording.failure { Console.warning(SessionCommand.name, failure) }
            }
        }
        if let failure = log?.failure { Console.warning(SessionCommand.name, "the session log is incomplete: \(failure.message)") }
        let exitCode = SessionArguments.exitCode(for: report)
        if summaryOptions.json {
            summaryOptions.emit("", json: SessionArguments.summaryObject(report, input: input, exitCode: exitCode),
                                textToStandardError: false, standardOutputCarriesData: printer.writesToStandardError)
        }
        return exitCode
    }

    /// The live audio with echo control: a simulated room, or a microphone and a speaker with a
    /// canceller between them; nil otherwise.
    private func liveAudio() throws(CommandFailure) -> LiveAudio? {
        if let room, let input {
            return try LiveAudio.room(room.configuration, description: room.text, talker: input, raw: raw, backend: echo, capture: capture, keepsSignals: roomRecord != nil)
        }
        if let microphone, let speaker, let echo {
            return try LiveAudio.devices(microphone: microphone, speaker: speaker, backend: echo, capture: capture, command: SessionCommand.name)
        }
        return nil
    }
}
