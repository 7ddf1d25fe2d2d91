import Foundation
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
    let channels: Int
    let rate: Int

    init(arguments: Arguments) throws(CommandFailure) {
        input = try arguments.positionals(exactly: ["messages.jsonl"], command: Self.name)[0]
        guard let output = arguments.value("out") else { throw .usage("missing --out <reply.wav>", command: Self.name) }
        self.output = output
        channels = try arguments.integer("channels", in: 1...8, default: 1, command: Self.name)
        rate = try arguments.integer("rate", in: 8_000...192_000, default: 24_000, command: Self.name)
        if input != "-" && InputFile.sameFile(input, output) {
            throw .usage("the output '\(output)' is the input file; choose another output path", command: Self.name)
        }
    }

    func run() throws(CommandFailure) -> ExitCode {
        let lines = try LineReader(path: input, maximumLength: WireLimits.default.maxMessageBytes)
        let player = try ReplyPlayer(path: output, rate: Double(rate), channels: channels)
        var lineNumber = 0
        var rejected = 0
        var chunks = 0
        var notes = UnknownContentNotes()
        do {
            while let line = try lines.next() {
                lineNumber += 1
                let text: [UInt8]
                switch line {
                case .tooLong(let bytes):
                    rejected += 1
                    Console.error("line \(lineNumber): \(WireError.messageTooLarge(bytes: bytes, limit: WireLimits.default.maxMessageBytes))")
                    continue
                case .text(let bytes):
                    text = bytes
                }
                if text.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                let envelope: WireEnvelope
                do {
                    envelope = try text.withUnsafeBytes { bytes throws(WireError) in try WireCodec.decode(bytes) }
                } catch {
                    rejected += 1
                    Console.error("line \(lineNumber): \(error)")
                    continue
                }
                if let note = notes.note(for: envelope) {
                    Console.error("note: line \(lineNumber): \(note)")
                }
                switch envelope.message {
                case .audioChunk(let chunk):
                    chunks += 1
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
            try player.finish()
        } catch {
            throw error
        }
        let seconds = String(format: "%.3f s", Double(player.framesWritten) / Double(rate))
        Console.error("decoded \(Console.count(lineNumber, "line")), \(Console.count(chunks, "audio chunk")) -> \(output) (\(Console.count(player.framesWritten, "frame")), \(seconds) at \(rate) Hz, \(channels) ch, Float32); \(Console.count(player.interruptions, "interruption")); \(Console.count(rejected, "line")) rejected")
        return rejected > 0 ? .dataError : .success
    }
}

/// A virtual player for `decode`: the playback converter and queue in front of a WAV file sink,
/// keeping the queue's pre-roll buffered the way a device would, so an interruption cuts what had
/// not been heard yet.
final class ReplyPlayer {
    private let sink: AudioFileSink
    private let queue: PlaybackQueue
    private let rate: Double
    private let channels: Int
    private var converter: PlaybackConverter?
    private var period: [Float]
    private static let periodFrames = 240

    init(path: String, rate: Double, channels: Int) throws(CommandFailure) {
        self.rate = rate
        self.channels = channels
        sink = AudioFileSink(path: path)
        do {
            let format = try PlayerFormat(FormatGuard.validate(AudioFormat(sampleRate: rate, channelCount: channels, sampleType: .float32, isInterleaved: false)))
            queue = try PlaybackQueue(format: format)
            try sink.open(format)
        } catch let error as PlayerSinkError {
            throw CommandFailure("cannot create '\(path)': \(error)", exitCode: .cannotCreate)
        } catch {
            throw CommandFailure("cannot set up playback: \(error)", exitCode: .software)
        }
        period = [Float](repeating: 0, count: Self.periodFrames * channels)
    }

    var framesWritten: Int { sink.framesWritten }
    var interruptions: Int { queue.statistics.interruptions }

    /// Converts a chunk (at its own rate) and plays what the queue holds beyond its pre-roll.
    func play(_ chunk: AudioChunk) throws(CommandFailure) {
        let source = Double(chunk.sampleRate)
        if converter?.sourceRate != source {
            try flushConverter()
            do {
                converter = try PlaybackConverter(sourceRate: source, outputRate: rate, channelCount: channels)
            } catch {
                throw CommandFailure("cannot play audio at \(chunk.sampleRate) Hz: \(error)", exitCode: .dataError)
            }
        }
        guard let converter else { return }
        do {
            try chunk.samples.withUnsafeBufferPointer { samples in
                try converter.process(samples) { buffer in try self.enqueue(buffer) }
            }
        } catch {
            throw Self.failure(error)
        }
        try render(keeping: queue.preRollFrames)
    }

    /// Cuts what is queued (with the queue's fade) and starts the next reply fresh.
    func interrupt() throws(CommandFailure) {
        queue.interrupt()
        converter?.reset()
        try render(frames: queue.fadeFrames)
    }

    /// Plays everything left and closes the file.
    func finish() throws(CommandFailure) {
        try flushConverter()
        queue.markEndOfStream()
        try render(keeping: 0)
        do {
            try sink.close()
        } catch {
            throw CommandFailure("\(error)", exitCode: .ioError)
        }
    }

    private func flushConverter() throws(CommandFailure) {
        guard let converter else { return }
        do {
            try converter.flush { buffer in try self.enqueue(buffer) }
        } catch {
            throw Self.failure(error)
        }
    }

    /// Queues a buffer, playing queued audio first when the queue is full.
    private func enqueue(_ buffer: PlaybackBuffer) throws {
        while true {
            do {
                try queue.enqueue(buffer)
                return
            } catch .full {
                try render(frames: Self.periodFrames)
            }
        }
    }

    /// Renders periods while more than `keeping` frames are queued.
    private func render(keeping: Int) throws(CommandFailure) {
        while queue.queuedFrames > keeping {
            guard try render(frames: min(Self.periodFrames, queue.queuedFrames - keeping)) > 0 else { return }
        }
    }

    /// Renders up to `frames` frames of queued audio (no silence: the file has no clock to fill).
    @discardableResult
    private func render(frames: Int) throws(CommandFailure) -> Int {
        guard frames > 0 else { return 0 }
        let played = period.withUnsafeMutableBufferPointer { queue.render(into: $0.baseAddress!, channelStride: frames, frameCount: frames) }
        guard played > 0 else { return 0 }
        do {
            try period.withUnsafeBufferPointer { try sink.play(PlaybackBuffer(base: $0.baseAddress!, frameCount: played, channelCount: channels, channelStride: frames)) }
        } catch {
            throw CommandFailure("writing the reply failed: \(error)", exitCode: .ioError)
        }
        return played
    }

    private static func failure(_ error: any Error) -> CommandFailure {
        if let failure = error as? CommandFailure { return failure }
        return CommandFailure("playback failed: \(error)", exitCode: .software)
    }
}
