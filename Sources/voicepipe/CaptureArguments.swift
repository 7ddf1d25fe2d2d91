import VoicePipeCore
import VoicePipeIO

/// The options of every command that runs the capture converter (`convert`, `encode`, `record`,
/// `info`, `session`), declared once: `--chunk-ms`, `--channel` and `--resampler`.
struct CaptureArguments: Sendable {
    static var bindings: [OptionBinding<Self>] {
        [
            .option("chunk-ms", "ms", \.frameMilliseconds, .integer(in: 10...100), help: "Audio per frame in milliseconds, 10 to 100 (default 32 = 512 samples)."),
            .option("channel", "index", \.channel, .integer(in: 0...1023), help: "Take one channel (from 0) instead of the average of all channels."),
            .option("resampler", "name", \.resampler, .choice, help: "builtin (default), or libsamplerate's src-best, src-medium, src-fastest, src-linear."),
        ]
    }

    /// Audio per frame in milliseconds; nil for the converter's default.
    var frameMilliseconds: Int?
    /// The one channel to take; nil for the average of all.
    var channel: Int?
    /// The resampler; nil for the built-in one.
    var resampler: ResamplerChoice?

    /// Frame length and downmix.
    var options: CaptureOptions {
        CaptureOptions(frameMilliseconds: frameMilliseconds ?? 32, downmix: channel.map { .channel($0) } ?? .average)
    }

    /// A capture converter from `format` with these options.
    /// - Parameter source: what the audio comes from, for the error ("'take.wav'", "'default'").
    /// - Throws: exit 64 for an option the input cannot honour (a channel it lacks), 65 for a
    ///   format that cannot be converted.
    func converter(for format: ValidatedFormat, source: String) throws(CommandFailure) -> CaptureConverter {
        do {
            let resampler = try (resampler ?? .builtin).make(from: format.sampleRate, to: AudioFormat.captureTarget.sampleRate)
            return try CaptureConverter(input: format, options: options, resampler: resampler)
        } catch let error as CaptureConverterError {
            throw CommandFailure("cannot convert \(source) (\(format)): \(error)", exitCode: error.isUsageProblem ? .usage : .dataError)
        } catch {
            throw CommandFailure("cannot convert \(source) (\(format)): \(error)", exitCode: .dataError)
        }
    }
}

extension CaptureConverterError {
    /// Errors that come from the command line's options rather than from the input.
    var isUsageProblem: Bool {
        switch self {
        case .frameDurationOutOfRange, .downmixChannelOutOfRange: true
        default: false
        }
    }
}
