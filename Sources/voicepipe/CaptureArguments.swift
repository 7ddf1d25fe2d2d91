import VoicePipeCore
import VoicePipeIO

/// The options of every command that runs the capture converter (`convert`, `encode`, `record`),
/// declared once and parsed once: `--chunk-ms`, `--channel` and `--resampler`.
struct CaptureArguments {
    static let options: [Arguments.Option] = [
        Arguments.Option(name: "chunk-ms", valueName: "ms", help: "Audio per frame in milliseconds, 10 to 100 (default 32 = 512 samples)."),
        Arguments.Option(name: "channel", valueName: "index", help: "Take one channel (from 0) instead of the average of all channels."),
        Arguments.Option(name: "resampler", valueName: "name", help: "builtin (default), or libsamplerate's src-best, src-medium, src-fastest, src-linear."),
    ]

    /// Frame length and downmix.
    let options: CaptureOptions
    let resampler: ResamplerChoice

    /// - Throws: a usage ``CommandFailure`` for a value out of range.
    init(_ arguments: Arguments, command: String) throws(CommandFailure) {
        let milliseconds = try arguments.integer("chunk-ms", in: 10...100, default: 32, command: command)
        var downmix = DownmixMode.average
        if arguments.value("channel") != nil {
            downmix = .channel(try arguments.integer("channel", in: 0...1023, default: 0, command: command))
        }
        options = CaptureOptions(frameMilliseconds: milliseconds, downmix: downmix)
        let choice = try arguments.choice("resampler", of: ResamplerChoice.allCases.map(\.rawValue), default: ResamplerChoice.builtin.rawValue, command: command)
        resampler = ResamplerChoice(rawValue: choice) ?? .builtin
    }

    /// A capture converter from `format` with these options.
    /// - Parameter source: what the audio comes from, for the error ("'take.wav'", "'default'").
    /// - Throws: exit 64 for an option the input cannot honour (a channel it lacks), 65 for a
    ///   format that cannot be converted.
    func converter(for format: ValidatedFormat, source: String) throws(CommandFailure) -> CaptureConverter {
        do {
            let resampler = try resampler.make(from: format.sampleRate, to: AudioFormat.captureTarget.sampleRate)
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
