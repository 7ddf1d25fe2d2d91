import VoicePipeCore
import VoicePipeIO

/// `voicepipe convert`: any audio file to the capture format, 16 kHz mono Int16 WAV.
struct ConvertCommand: Command {
    static let name = "convert"
    static let abstract = "Convert an audio file to the capture format (16 kHz mono Int16 WAV)."
    static let options: [Arguments.Option] = CaptureArguments.options + [InputFile.rawOption]
    static let flags: [Arguments.Flag] = []
    static var help: String {
        Arguments.help(
            usage: "voicepipe convert <input> <output.wav> [--resampler <name>] [--chunk-ms <ms>] [--channel <index>] [--raw <rate:channels:type>]",
            abstract: abstract,
            discussion: """
            Reads any file libsndfile opens (WAV, AIFF, FLAC, OGG, ...), downmixes, resamples and rounds to
            16 kHz mono Int16, and prints one summary line: frames in and out, durations, the peak level and
            how many frames were digital silence (exact zeros, as from a dead microphone).
            """,
            options: options, flags: flags)
    }

    let input: String
    let output: String
    let capture: CaptureArguments
    let raw: AudioFormat?

    init(arguments: Arguments) throws(CommandFailure) {
        let paths = try arguments.positionals(exactly: ["input", "output.wav"], command: Self.name)
        input = paths[0]
        output = paths[1]
        capture = try CaptureArguments(arguments, command: Self.name)
        raw = try InputFile.rawFormat(arguments.value("raw"), command: Self.name)
        if InputFile.sameFile(input, output) {
            throw .usage("the output '\(output)' is the input file; choose another output path", command: Self.name)
        }
    }

    func run() throws(CommandFailure) -> ExitCode {
        let reader = try InputFile.open(input, raw: raw)
        let format = reader.format
        let converter = try capture.converter(for: format, source: "'\(input)'")
        let target = AudioFormat.captureTarget
        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(path: output, sampleRate: Int(target.sampleRate), channelCount: target.channelCount, encoding: .int16)
        } catch {
            throw CommandFailure(error)
        }
        var stats = CaptureStatistics()
        let progress = ProgressLine(label: "converting", total: reader.info.frameCount.map { Double($0) / format.sampleRate }, unit: "s")
        defer { progress.finish() }
        let ending: FileReadEnding
        do {
            ending = try converter.convert(reader, progress: { progress.update(Double($0) / format.sampleRate) }) { frame in
                try writer.write(frame.samples)
                stats.add(frame)
            }
            try writer.close()
        } catch {
            try? writer.close()
            let failure = CommandFailure.streaming(error, while: "converting '\(input)'")
            throw CommandFailure("\(failure.message); the \(writer.framesWritten) frames converted before it are in '\(output)'", exitCode: failure.exitCode)
        }
        progress.finish()
        if let warning = InputFile.truncationWarning(ending, path: input, done: "converted") { Console.error(warning) }
        print("\(input) -> \(output): \(reader.framesRead) frames at \(AudioFormat.describe(rate: format.sampleRate)) (\(InputFile.seconds(reader.framesRead, rate: format.sampleRate))) -> \(stats.samples) frames at \(AudioFormat.describe(rate: target.sampleRate)) (\(InputFile.seconds(stats.samples, rate: target.sampleRate))); \(stats.summary)")
        return .success
    }
}
