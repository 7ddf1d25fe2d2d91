import VoicePipeCore

/// The resamplers a caller can choose by name: the built-in one, or a libsamplerate converter.
///
/// The raw values are the names the command line takes (`--resampler src-best`).
public enum ResamplerChoice: String, Sendable, Hashable, CaseIterable {
    case builtin
    case srcBest = "src-best"
    case srcMedium = "src-medium"
    case srcFastest = "src-fastest"
    case srcLinear = "src-linear"

    /// Builds the chosen resampler.
    /// - Parameter kernels: the built-in resampler's inner loops (libsamplerate has its own).
    /// - Throws: ``ResamplerError`` for rates the resampler cannot convert.
    public func make(from input: SampleRate, to output: SampleRate, kernels: DSPKernels = .best) throws(ResamplerError) -> any Resampler {
        switch self {
        case .builtin: try BuiltInResampler(inputRate: input, outputRate: output, kernels: kernels)
        case .srcBest: try LibsamplerateResampler(inputRate: input, outputRate: output, quality: .sincBest)
        case .srcMedium: try LibsamplerateResampler(inputRate: input, outputRate: output, quality: .sincMedium)
        case .srcFastest: try LibsamplerateResampler(inputRate: input, outputRate: output, quality: .sincFastest)
        case .srcLinear: try LibsamplerateResampler(inputRate: input, outputRate: output, quality: .linear)
        }
    }
}
