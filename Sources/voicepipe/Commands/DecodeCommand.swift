import Foundation
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// `voicepipe decode`: a runtime's messages (JSON Lines) into what a player would have played.
struct DecodeCommand: Command {
    static let name = "decode"
    static let abstract = "Play a runtime's messages (JSON Lines) into a Float32 audio file; print transcripts."
    struct Options: CommandOptions {
        var output: String?
        var channels: Int?
        var rate: Int?
        var summary = SummaryOptions()

        static var outOption: OptionBinding<Self> {
            .option("out", "reply.wav", \.output, .text, help: "The Float32 audio file to write (required): .wav, .aif/.aiff or .raw/.pcm; '-' writes WAV to standard output.")
        }
        static var bindings: [OptionBinding<Self>] {
            [
                outOption,
                .option("channels", "n", \.channels, .integer(in: 1...8), help: "Player channels, 1 to 8 (default 1); mono is copied to each."),
                .option("rate", "hz", \.rate, .integer(in: 8_000...192_000), help: "Player rate in Hz, 8000 to 192000 (default 24000); other rates are resampled."),
                SummaryOptions.quietFlag.within(\.summary), SummaryOptions.jsonFlag.within(\.summary),
            ]
        }
    }

    static var help: String {
        HelpText.make(
            usage: "voicepipe decode <messages.jsonl|-> --out <reply.wav|-> [options]",
            abstract: abstract,
            discussion: """
            Reads one JSON message per line. Every audio.chunk goes through the playback path (Int16 to
            deinterleaved Float32, optional upmix and rate change, the playback queue) into the file; an
            interruption cuts the audio still queued with a 5 ms fade. transcript and info.message text is
            printed to stdout (to stderr when the audio or the --json summary goes there); a runtime's error message is
            printed and counted. A bad line (not JSON, not a message, a chunk that cannot be played) is
            reported with its number and reason and skipped; every valid chunk before and after it still
            reaches the file, and the exit status is then 65. Input that is not JSON Lines at all (its first
            \(DecodeReport.badRunLimit) lines are not messages) is refused with one message and no file is left.
            """,
            examples: [
                "voicepipe decode reply.jsonl --out reply.wav",
                "voicepipe decode - --out - < reply.jsonl | aplay",
            ],
            bindings: Options.bindings)
    }

    let input: String
    let output: String
    let container: AudioContainer
    let format: PlayerFormat
    let summary: SummaryOptions

    init(options: Options, positionals: [String]) throws(CommandFailure) {
        input = try Positionals.exactly(positionals, named: ["messages.jsonl"], command: Self.name)[0]
        let out = Options.outOption
        guard let output = options.output else { throw .usage("missing \(out.flag) <\(out.valueName ?? "")>", command: Self.name) }
        self.output = output
        guard let container = output == "-" ? .wav : AudioContainer(forPath: output), container.canStore(.float32) else {
            throw .usage("decode writes Float32 audio: give '\(out.flag)' one of the extensions .wav, .aif/.aiff, .raw/.pcm (FLAC holds integers only), or '-' for WAV on standard output", command: Self.name)
        }
        self.container = container
        let channels = options.channels ?? 1
        let rate = options.rate ?? AudioFormat.playback.sampleRate.roundedHertz
        do {
            format = try PlayerFormat(FormatGuard.validate(AudioFormat(sampleRate: SampleRate(hertz: Double(rate)), channelCount: channels, sampleType: .float32, isInterleaved: false)))
        } catch {
            throw CommandFailure("cannot play at \(rate) Hz with \(channels) channels: \(error)", exitCode: .usage)
        }
        summary = options.summary
        if InputFile.sameFile(input, output) {
            throw .usage("the output '\(output)' is the input file; choose another output path", command: Self.name)
        }
    }

    func run() throws(CommandFailure) -> ExitCode {
        let limits = WireLimits.default
        let lines: JSONLinesReader
        do { lines = try JSONLinesReader(path: input, maximumLength: limits.maxMessageBytes) } catch { throw CommandFailure(error) }
        let sink = AudioFileSink(path: output, container: container)
        let player: ReplyPlayer
        do { player = try ReplyPlayer(sink: sink, format: format) } catch { throw CommandFailure(error.message, exitCode: .cannotCreate) }
        // Transcripts go to stdout unless it carries the audio or the JSON summary.
        var report = DecodeReport(input: input, textToStandardError: output == "-" || summary.json, summary: summary)
        do {
            while let line = try lines.next() {
                guard let envelope = try report.decode(line, limits: limits) else { continue }
                try report.carryOut(envelope, on: player)
            }
            report.endOfInput()
            try player.finish()
        } catch let failure as CommandFailure {
            // Input refused as a whole: nothing was played, so no file is left behind.
            if output != "-" { _ = unlink(output) }
            throw failure
        } catch {
            throw Self.failure(error)
        }
        let seconds = InputFile.seconds(sink.framesWritten, rate: format.sampleRate)
        let text = "decoded \(Console.count(report.lines, "line")), \(Console.count(report.chunks, "audio chunk")) -> \(output == "-" ? "standard output" : output) (\(Console.count(sink.framesWritten, "frame")), \(seconds) at \(format.sampleRate), \(format.channelCount) ch, Float32); \(Console.count(player.interruptions, "interruption")); \(Console.count(report.runtimeErrors, "runtime error")); \(Console.count(report.rejected, "line")) rejected"
        summary.emit(text, json: report.json(output: output, frames: sink.framesWritten, format: format, interruptions: player.interruptions), textToStandardError: true, standardOutputCarriesData: output == "-")
        return report.rejected > 0 ? .dataError : .success
    }

    private static func failure(_ error: any Error) -> CommandFailure {
        switch error {
        case let error as JSONLinesError: CommandFailure(error)
        case let error as ReplyPlayerError: CommandFailure(error.message, exitCode: .ioError)
        default: CommandFailure("decoding failed: \(error)", exitCode: .software)
        }
    }
}

/// What `decode` has seen so far, and the notes and errors it reports on the way.
struct DecodeReport {
    /// Bad lines in a row after which the input is judged not to be JSON Lines at all.
    static let badRunLimit = 20

    let input: String
    /// Whether transcripts go to stderr (stdout carries the audio).
    let textToStandardError: Bool
    let summary: SummaryOptions
    var lines = 0
    var chunks = 0
    var rejected = 0
    var runtimeErrors = 0
    private var notes = UnknownContentNotes()
    /// Errors of the bad lines before the first message, held back until a message shows that the
    /// input is JSON Lines after all.
    private var heldBack: [String] = []
    /// Whether a line has decoded as a message: from then on the input is messages, and a bad line
    /// is one bad line.
    private var sawMessage = false

    init(input: String, textToStandardError: Bool, summary: SummaryOptions) {
        self.input = input
        self.textToStandardError = textToStandardError
        self.summary = summary
    }

    /// Decodes the next line: the envelope, or nil for a blank or bad line (reported by number).
    /// - Throws: a ``CommandFailure`` (65) when ``badRunLimit`` lines in a row were bad.
    mutating func decode(_ line: JSONLinesReader.Line, limits: WireLimits) throws(CommandFailure) -> WireEnvelope? {
        lines += 1
        let text: [UInt8]
        switch line {
        case .tooLong(let bytes):
            try reject(WireError.messageTooLarge(bytes: bytes, limit: limits.maxMessageBytes).description)
            return nil
        case .text(let bytes):
            text = bytes
        }
        if text.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
        do {
            let envelope = try text.withUnsafeBytes { bytes throws(WireError) in try WireCodec.decode(bytes, limits: limits) }
            accept()
            if let note = notes.note(for: envelope) { summary.note("voicepipe decode: note: line \(lines): \(note)") }
            return envelope
        } catch {
            try reject("\(error)")
            return nil
        }
    }

    /// Carries out one message: audio to the player, text to the user, runtime errors counted.
    mutating func carryOut(_ envelope: WireEnvelope, on player: ReplyPlayer) throws(ReplyPlayerError) {
        switch envelope.message {
        case .audioChunk(let chunk):
            do {
                try player.play(chunk)
                chunks += 1
            } catch .unplayableChunk(let rate, let reason) {
                rejected += 1
                Console.error("voicepipe decode: line \(lines): \(ReplyPlayerError.unplayableChunk(sampleRate: rate, reason).message); skipped")
            }
        case .interruption:
            try player.interrupt()
        case .transcript(let role, let text, let isFinal):
            show("\(role.rawValue)\(isFinal ? "" : " (partial)"): \(text)")
        case .infoMessage(let markdown):
            show(markdown)
        case .error(let message, let code):
            runtimeErrors += 1
            Console.error("voicepipe decode: line \(lines): the runtime reported an error: \(message)" + (code.map { " (code \($0))" } ?? ""))
        default:
            break
        }
    }

    /// The end of the input: a short run of bad lines at the end is reported.
    mutating func endOfInput() {
        accept()
    }

    /// The summary as JSON.
    func json(output: String, frames: Int, format: PlayerFormat, interruptions: Int) -> JSONObject {
        [
            "input": .string(input), "output": .string(output), "lines": .integer(lines),
            "audioChunks": .integer(chunks), "frames": .integer(frames), "seconds": .seconds(frames, rate: format.sampleRate),
            "sampleRate": .number(format.sampleRate.hertz), "channels": .integer(format.channelCount),
            "interruptions": .integer(interruptions), "runtimeErrors": .integer(runtimeErrors), "rejectedLines": .integer(rejected),
        ]
    }

    private func show(_ text: String) {
        if textToStandardError { Console.error(text) } else { print(text) }
    }

    /// A good line: the bad lines held back before it are reported after all.
    private mutating func accept() {
        sawMessage = true
        heldBack.forEach { Console.error("voicepipe decode: \($0)") }
        heldBack.removeAll()
    }

    /// A bad line: counted and reported, or held back while the input may not be messages at all.
    private mutating func reject(_ reason: String) throws(CommandFailure) {
        rejected += 1
        guard !sawMessage else {
            Console.error("voicepipe decode: line \(lines): \(reason)")
            return
        }
        heldBack.append("line \(lines): \(reason)")
        guard heldBack.count >= Self.badRunLimit else { return }
        let from = lines - heldBack.count + 1
        throw CommandFailure("\(InputFile.name(input)) does not look like JSON Lines: lines \(from) to \(lines) are not messages (line \(from): \(heldBack[0].dropFirst("line \(from): ".count))); nothing more was read", exitCode: .dataError)
    }
}
