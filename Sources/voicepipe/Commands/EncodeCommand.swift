import VoicePipeCore
import VoicePipeIO

/// `voicepipe encode`: an audio file to the `audio.chunk` messages a voice session sends.
struct EncodeCommand: Command {
    static let name = "encode"
    static let abstract = "Turn an audio file into audio.chunk messages (JSON Lines) as a session sends them."
    static let options: [Arguments.Option] = [
        Arguments.Option(name: "out", valueName: "file", help: "Where to write the JSON Lines; '-' for standard output (default)."),
    ] + CaptureArguments.options + [InputFile.rawOption]
    static let flags: [Arguments.Flag] = []
    static var help: String {
        Arguments.help(
            usage: "voicepipe encode <input> [--out <file>|-] [--chunk-ms <ms>] [--resampler <name>] [--channel <index>] [--raw <rate:channels:type>]",
            abstract: abstract,
            discussion: """
            Converts the input to 16 kHz mono Int16 exactly as 'voicepipe convert' does and writes one
            {"type":"audio.chunk","data":"<base64>","sampleRate":16000} message per line. A summary goes to
            stderr: chunks, duration, the loudest chunk's peak, the quietest non-silent chunk's peak, and how
            many chunks were digital silence.
            """,
            options: options, flags: flags)
    }

    let input: String
    let output: String
    let capture: CaptureArguments
    let raw: RawPCMFormat?

    init(arguments: Arguments) throws(CommandFailure) {
        input = try arguments.positionals(exactly: ["input"], command: Self.name)[0]
        output = arguments.value("out") ?? "-"
        capture = try CaptureArguments(arguments, command: Self.name)
        raw = try InputFile.rawFormat(arguments.value("raw"), command: Self.name)
        if output != "-" && InputFile.sameFile(input, output) {
            throw .usage("the output '\(output)' is the input file; choose another output path", command: Self.name)
        }
    }

    func run() throws(CommandFailure) -> ExitCode {
        let job = FileCapture(input: input, raw: raw, capture: capture, destination: .jsonLines(path: output))
        let stats = try job.run(doing: "encoding", done: "encoded").statistics
        let target = AudioFormat.captureTarget.sampleRate
        let quietest = stats.minNonSilentDBFS.map { "\(PeakLevel.format($0)) dBFS" } ?? "none"
        Console.error("encoded \(Console.count(stats.frames, "chunk")) (\(InputFile.seconds(stats.samples, rate: target)) at \(AudioFormat.describe(rate: target))) to \(output == "-" ? "standard output" : output); peak \(PeakLevel.format(stats.maxDBFS)) dBFS loudest, \(quietest) quietest non-silent; \(Console.count(stats.silentFrames, "chunk")) digital silence")
        return .success
    }
}
