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
    let raw: RawPCMFormat?

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
        let job = FileCapture(input: input, raw: raw, capture: capture, destination: .wav(path: output))
        let outcome = try job.run(doing: "converting", done: "converted")
        let (reader, stats) = (outcome.reader, outcome.statistics)
        let rate = reader.format.sampleRate, target = AudioFormat.captureTarget.sampleRate
        print("\(input) -> \(output): \(reader.framesRead) frames at \(AudioFormat.describe(rate: rate)) (\(InputFile.seconds(reader.framesRead, rate: rate))) -> \(stats.samples) frames at \(AudioFormat.describe(rate: target)) (\(InputFile.seconds(stats.samples, rate: target))); \(stats.summary)")
        return .success
    }
}
