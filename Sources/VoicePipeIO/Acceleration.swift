import CVoicePipeKernels
import VoicePipeCore

/// CPU-specific resampler kernels, chosen at run time.
///
/// VoicePipeCore's portable kernels are Swift SIMD code for the x86-64 baseline (SSE2). On a CPU
/// with AVX2 and FMA, ``install()`` makes C kernels compiled for those units the preferred ones,
/// after asking the CPU (and the operating system) whether they are supported, so no compiler flag
/// is ever needed. The command-line tool installs them at start; a library user calls
/// ``install()`` once, early, or passes ``avx2`` to a `BuiltInResampler` explicitly.
public enum Acceleration {
    /// The AVX2 + FMA kernels, when this CPU runs them; `nil` otherwise.
    public static let avx2: DSPKernels? = vp_cpu_has_avx2_fma() != 0
        ? DSPKernels(name: "AVX2 + FMA (C, chosen at run time)", decimate: vp_decimate_avx2, interpolate: vp_interpolate_avx2, polyphase: vp_polyphase_avx2, convertToInt16: vp_convert_int16_avx2, convertToFloat: vp_convert_float_avx2, polyphaseRowMultiple: 4)
        : nil

    /// The plain C references of the AVX2 kernels: the same operations in the same order, one
    /// sample at a time. They run on any CPU and are for tests (bit-for-bit agreement).
    public static let fmaReference = DSPKernels(
        name: "scalar C reference of the AVX2 + FMA kernels",
        decimate: vp_decimate_fma_reference, interpolate: vp_interpolate_fma_reference, polyphase: vp_polyphase_fma_reference,
        convertToInt16: DSPKernels.portable.convertToInt16, convertToFloat: DSPKernels.portable.convertToFloat,
        polyphaseRowMultiple: 4)

    /// The fastest kernels this CPU runs.
    public static var best: DSPKernels { avx2 ?? .portable }

    /// Makes ``best`` the preferred kernels for resamplers built from now on.
    /// - Returns: the kernels installed.
    @discardableResult
    public static func install() -> DSPKernels {
        let kernels = best
        DSPKernels.preferred = kernels
        return kernels
    }
}
