import Foundation
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// `voicepipe decode`: a runtime's messages (JSON Lines) into what a player would have played.
struct DecodeCommand: Command {
    static let name = "decode"
    static let abstract = "Play a runtime's messages (JSON Lines) into a Float32 WAV file; print transcripts."
    static let options: [Arguments.Option] = [
        Arguments.Option(name: "out", valueName: "reply.wav", help: "The Float32 WAV file to write (required)."),
        Arguments.Option(name: "channels", valueName: "n", help: "Player channels, 1 to 8 (default 1); mono is copied to each."),
        Arguments.Option(name: "rate", valueName: "hz", help: "Player rate in Hz, 8000 to 192000 (default 24000); other rates are resampled."),
    ]
    static let flags: [Arguments.Flag] = []
    static var help: String {
        Arguments.help(
            usage: "voicepipe decode <messages.jsonl|-> --out <reply.wav> [--channels <n>] [--rate <hz>]",
            abstract: abstract,
            discussion: """
            Reads one JSON message per line. Every audio.chunk goes through the playback path (Int16 to
            deinterleaved Float32, optional upmix and rate change, the playback queue) into the WAV file; an
            interruption cuts the audio still queued with a 5 ms fade. transcript and info.message text is
            printed to stdout. A bad line is reported on stderr with its line number and reason and
            skipped; every valid chunk still reaches the file, and the exit status is then 65.
            """,
            options: options, flags: flags)
    }

    let input: String
    let output: String
    let format: PlayerFormat

    init(arguments: Arguments) throws(CommandFailure) {
        input = try arguments.positionals(exactly: ["messages.jsonl"], command: Self.name)[0]
        guard let output = arguments.value("out") else { throw .usage("missing --out <reply.wav>", command: Self.name) }
        self.output = output
        let channels = try arguments.integer("channels", in: 1...8, default: 1, command: Self.name)
        let rate = try arguments.integer("rate", in: 8_000...192_000, default: Int(AudioFormat.playback.sampleRate), command: Self.name)
        do {
            format = try PlayerFormat(FormatGuard.validate(AudioFormat(sampleRate: Double(rate), channelCount: channels, sampleType: .float32, isInterleaved: false)))
        } catch {
            throw CommandFailure("cannot play at \(rate) Hz with \(channels) channels: \(error)", exitCode: .usage)
        }
        if input != "-" && InputFile.sameFile(input, output) {
            throw .usage("the output '\(output)' is the input file; choose another output path", command: Self.name)
        }
    }

    func run() throws(CommandFailure) -> ExitCode {
        let limits = WireLimits.default
        let lines: JSONLinesReader
        do { lines = try JSONLinesReader(path: input, maximumLength: limits.maxMessageBytes) } catch { throw CommandFailure(error) }
        let sink = AudioFileSink(path: output)
        let player: ReplyPlayer
        do {
            player = try ReplyPlayer(sink: sink, format: format)
        } catch {
            throw CommandFailure(error.description, exitCode: .cannotCreate)
        }
        var report = DecodeReport()
        do {
            while let line = try lines.next() {
                report.lines += 1
                guard let envelope = report.decode(line, limits: limits) else { continue }
                try play(envelope, on: player, report: &report)
            }
            try player.finish()
        } catch {
            throw Self.failure(error)
        }
        let seconds = InputFile.seconds(sink.framesWritten, rate: format.sampleRate)
        Console.error("decoded \(Console.count(report.lines, "line")), \(Console.count(report.chunks, "audio chunk")) -> \(output) (\(Console.count(sink.framesWritten, "frame")), \(seconds) at \(AudioFormat.describe(rate: format.sampleRate)), \(format.channelCount) ch, Float32); \(Console.count(player.interruptions, "interruption")); \(Console.count(report.rejected, "line")) rejected")
        return report.rejected > 0 ? .dataError : .success
    }

    /// Carries out one message: audio to the player, text to stdout, notes for what is unknown.
    private func play(_ envelope: WireEnvelope, on player: ReplyPlayer, report: inout DecodeReport) throws(ReplyPlayerError) {
        switch envelope.message {
        case .audioChunk(let chunk):
            report.chunks += 1
            try player.play(chunk)
        case .interruption:
            try player.interrupt()
        case .transcript(let role, let text, let isFinal):
            print("\(role.rawValue)\(isFinal ? "" : " (partial)"): \(text)")
        case .infoMessage(let markdown):
            print(markdown)
        default:
            break
        }
    }

    private static func failure(_ error: any Error) -> CommandFailure {
        switch error {
        case let error as JSONLinesError: CommandFailure(error)
        case let error as ReplyPlayerError:
            if case .unplayableChunk = error { CommandFailure(error.description, exitCode: .dataError) } else { CommandFailure("writing the reply failed: \(error)", exitCode: .ioError) }
        default: CommandFailure("decoding failed: \(error)", exitCode: .software)
        }
    }
}

/// What `decode` has seen so far, and the notes and errors it reports on the way.
private struct DecodeReport {
    var lines = 0
    var chunks = 0
    var rejected = 0
    private var notes = UnknownContentNotes()

    /// Decodes one line, reporting a bad one by number (nil for a bad or blank line).
    mutating func decode(_ line: JSONLinesReader.Line, limits: WireLimits) -> WireEnvelope? {
        let text: [UInt8]
        switch line {
        case .tooLong(let bytes):
            rejected += 1
            Console.error("line \(lines): \(WireError.messageTooLarge(bytes: bytes, limit: limits.maxMessageBytes))")
            return nil
        case .text(let bytes):
            text = bytes
        }
        if text.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
        do {
            let envelope = try text.withUnsafeBytes { bytes throws(WireError) in try WireCodec.decode(bytes, limits: limits) }
            if let note = notes.note(for: envelope) { Console.error("note: line \(lines): \(note)") }
            return envelope
        } catch {
            rejected += 1
            Console.error("line \(lines): \(error)")
            return nil
        }
    }
}
