import Foundation
import VoicePipeCore
import VoicePipeIO

/// `voicepipe encode`: an audio file to the `audio.chunk` messages a voice session sends.
struct EncodeCommand: Command {
    static let name = "encode"
    static let abstract = "Turn an audio file into audio.chunk messages (JSON Lines) as a session sends them."
    static let options: [Arguments.Option] = [
        Arguments.Option(name: "out", valueName: "file", help: "Where to write the JSON Lines; '-' for standard output (default)."),
        Arguments.Option(name: "chunk-ms", valueName: "ms", help: "Audio per message in milliseconds, 10 to 100 (default 32 = 512 samples)."),
        ResamplerChoice.option,
        Arguments.Option(name: "channel", valueName: "index", help: "Take one channel (from 0) instead of the average of all channels."),
        InputFile.rawOption,
    ]
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
    let resampler: ResamplerChoice
    let captureOptions: CaptureOptions
    let raw: AudioFormat?

    init(arguments: Arguments) throws(CommandFailure) {
        input = try arguments.positionals(exactly: ["input"], command: Self.name)[0]
        output = arguments.value("out") ?? "-"
        let choice = try arguments.choice("resampler", of: ResamplerChoice.allCases.map(\.rawValue), default: "builtin", command: Self.name)
        resampler = ResamplerChoice(rawValue: choice) ?? .builtin
        captureOptions = try arguments.captureOptions(command: Self.name)
        raw = try InputFile.rawFormat(arguments.value("raw"), command: Self.name)
        if output != "-" && InputFile.sameFile(input, output) {
            throw .usage("the output '\(output)' is the input file; choose another output path", command: Self.name)
        }
    }

    func run() throws(CommandFailure) -> ExitCode {
        let reader = try InputFile.open(input, raw: raw)
        let converter = try InputFile.captureConverter(for: reader, resampler: resampler, options: captureOptions)
        let out = try OutputFile(path: output)
        var stats = CaptureStatistics()
        var warning: String?
        let sampleRate = Int(AudioFormat.captureTarget.sampleRate)
        let emit: (CaptureFrame) throws -> Void = { frame in
            try out.appendAudioChunkLine(frame.samples, sampleRate: sampleRate)
            stats.add(frame)
        }
        let progress = ProgressLine(label: "encoding", total: reader.info.frameCount.map { Double($0) / reader.format.sampleRate }, unit: "s")
        do {
            try InputFile.stream(reader, through: converter, progress: progress, truncated: { read, declared in
                warning = "warning: '\(input)' is truncated: its header declares \(declared) frames but the file holds \(read); encoded the \(read) frames present"
            }, emit)
            try out.flush()
        } catch {
            progress.finish()
            throw InputFile.streamFailure(error, input: input)
        }
        progress.finish()
        if let warning { Console.error(warning) }
        let quietest = stats.minNonSilentDBFS.map { "\(PeakLevel.format($0)) dBFS" } ?? "none"
        Console.error("encoded \(Console.count(stats.frames, "chunk")) (\(InputFile.seconds(stats.samples, rate: 16_000)) at 16000 Hz) to \(output == "-" ? "standard output" : output); peak \(PeakLevel.format(stats.maxDBFS)) dBFS loudest, \(quietest) quietest non-silent; \(Console.count(stats.silentFrames, "chunk")) digital silence")
        return .success
    }
}
