import Foundation
import VoicePipeCore
import VoicePipeIO

/// `voicepipe convert`: any audio file to the capture format, 16 kHz mono Int16 WAV.
struct ConvertCommand: Command {
    static let name = "convert"
    static let abstract = "Convert an audio file to the capture format (16 kHz mono Int16 WAV)."
    static let options: [Arguments.Option] = [
        ResamplerChoice.option,
        Arguments.Option(name: "chunk-ms", valueName: "ms", help: "Frame length in milliseconds, 10 to 100 (default 32 = 512 samples)."),
        Arguments.Option(name: "channel", valueName: "index", help: "Take one channel (from 0) instead of the average of all channels."),
        InputFile.rawOption,
    ]
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
    let resampler: ResamplerChoice
    let captureOptions: CaptureOptions
    let raw: AudioFormat?

    init(arguments: Arguments) throws(CommandFailure) {
        let paths = try arguments.positionals(exactly: ["input", "output.wav"], command: Self.name)
        input = paths[0]
        output = paths[1]
        let choice = try arguments.choice("resampler", of: ResamplerChoice.allCases.map(\.rawValue), default: "builtin", command: Self.name)
        resampler = ResamplerChoice(rawValue: choice) ?? .builtin
        captureOptions = try arguments.captureOptions(command: Self.name)
        raw = try InputFile.rawFormat(arguments.value("raw"), command: Self.name)
        if InputFile.sameFile(input, output) {
            throw .usage("the output '\(output)' is the input file; choose another output path", command: Self.name)
        }
    }

    func run() throws(CommandFailure) -> ExitCode {
        let reader = try InputFile.open(input, raw: raw)
        let format = reader.format
        let converter = try InputFile.captureConverter(for: reader, resampler: resampler, options: captureOptions)
        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(path: output, sampleRate: 16_000, channelCount: 1, encoding: .int16)
        } catch {
            throw InputFile.failure(error)
        }
        var stats = CaptureStatistics()
        var warning: String?
        let progress = ProgressLine(label: "converting", total: reader.info.frameCount.map { Double($0) / format.sampleRate }, unit: "s")
        do {
            try InputFile.stream(reader, through: converter, progress: progress, truncated: { read, declared in
                warning = "warning: '\(input)' is truncated: its header declares \(declared) frames but the file holds \(read); converted the \(read) frames present"
            }) { frame in
                try writer.write(frame.samples)
                stats.add(frame)
            }
            try writer.close()
        } catch {
            progress.finish()
            try? writer.close()
            let failure = InputFile.streamFailure(error, input: input)
            throw CommandFailure("\(failure.message); the \(writer.framesWritten) frames converted before it are in '\(output)'", exitCode: failure.exitCode)
        }
        progress.finish()
        if let warning { Console.error(warning) }
        print("\(input) -> \(output): \(reader.framesRead) frames at \(Self.rate(format.sampleRate)) (\(InputFile.seconds(reader.framesRead, rate: format.sampleRate))) -> \(stats.samples) frames at 16000 Hz (\(InputFile.seconds(stats.samples, rate: 16_000))); \(stats.summary)")
        return .success
    }

    static func rate(_ rate: Double) -> String {
        rate == rate.rounded() ? "\(Int(rate)) Hz" : "\(rate) Hz"
    }
}

/// Per-frame levels gathered into the numbers a summary line reports.
struct CaptureStatistics {
    private(set) var frames = 0
    private(set) var samples = 0
    private(set) var silentFrames = 0
    private(set) var maxDBFS = -Double.infinity
    /// The quietest frame that was not digital silence, if any.
    private(set) var minNonSilentDBFS: Double?

    mutating func add(_ frame: CaptureFrame) {
        frames += 1
        samples += frame.samples.count
        maxDBFS = max(maxDBFS, frame.level.dBFS)
        if frame.level.isDigitalSilence {
            silentFrames += 1
        } else {
            minNonSilentDBFS = min(minNonSilentDBFS ?? .infinity, frame.level.dBFS)
        }
    }

    /// "peak -3.0 dBFS; 7 of 92 frames digital silence".
    var summary: String {
        let peak = frames == 0 ? "no audio" : "peak \(PeakLevel.format(maxDBFS)) dBFS"
        return "\(peak); \(silentFrames) of \(frames) frames digital silence"
    }
}

extension CaptureConverterError {
    /// Errors that come from the command line's options rather than from the file.
    var isUsageProblem: Bool {
        switch self {
        case .frameDurationOutOfRange, .downmixChannelOutOfRange: true
        default: false
        }
    }
}
