import Synchronization

/// The inner loops of the built-in resampler and of the Float → Int16 conversion with peak
/// metering, as C-callable function pointers.
///
/// Core ships portable Swift kernels (``portable``: SIMD code for the x86-64 baseline, SSE2). A
/// module that may use C — VoicePipeIO's `Acceleration` — can supply kernels built for wider
/// vector units (AVX2 with FMA) and make them ``preferred`` after checking the CPU at run time, so
/// no package user ever needs compiler flags. Each set of kernels is deterministic on its own:
/// output never depends on how the input was cut into buffers. Different sets round differently
/// (a fused multiply-add rounds once), so a stream keeps the kernels its resampler was built with.
/// The Int16 conversion is exact in every set.
///
/// The decimate and interpolate kernels may finish a block with a full vector whose extra lanes
/// are discarded, so they may read up to ``readSlack`` samples past the newest input the last
/// requested output needs; the stages keep that much readable memory (zeros or older, finite
/// samples) past their histories.
public struct DSPKernels: Sendable {
    /// Computes `count` consecutive outputs of the sharp decimator by `factor`.
    ///
    /// - `streams`: `factor` pointers, stream r at the first output's index (S_r[m] = x[factor·m + r]);
    /// - `classes`: per residue class s, six integers: tap start, tap count, forward stream,
    ///   forward offset, backward stream, backward offset (see `SharpStage`);
    /// - `taps`, `splats`: the class taps, plain and splatted across 4-lane vectors;
    /// - `centre`: the centre tap. Output n is
    ///   centre·S_0[n] + Σ_s Σ_j taps[start_s + j]·(S_f[n + fo + j] + S_b[n + bo − j]), in that order.
    public typealias Decimate = @convention(c) (
        _ streams: UnsafePointer<UnsafePointer<Float>>, _ classes: UnsafePointer<Int>, _ factor: Int,
        _ taps: UnsafePointer<Float>, _ splats: UnsafeRawPointer, _ centre: Float,
        _ output: UnsafeMutablePointer<Float>, _ count: Int
    ) -> Void

    /// Computes the output pairs of `count` consecutive inputs of the sharp 1:2 interpolator,
    /// interleaved (even, odd, …), from `x` pointing at the first input.
    ///
    /// Even output: centre·x[i] + Σ_t even[t]·(x[i+32−t] + x[i−32+t]); odd output:
    /// Σ_t odd[t]·(x[i+32−t] + x[i−31+t]); t = 0 … 31 in order.
    public typealias Interpolate = @convention(c) (
        _ x: UnsafePointer<Float>, _ evenTaps: UnsafePointer<Float>, _ oddTaps: UnsafePointer<Float>,
        _ evenSplats: UnsafeRawPointer, _ oddSplats: UnsafeRawPointer, _ centre: Float,
        _ output: UnsafeMutablePointer<Float>, _ count: Int
    ) -> Void

    /// Runs the polyphase stage's exact-table output loop: while `state[0]` (the base) is below
    /// `walk[3]`, writes Σ_j x[base + j]·table[phase·rowLength + j] (x = `origin`, j < rowLength,
    /// a multiple of ``polyphaseRowMultiple``; the kernel's own lanes of partial sums and
    /// reduction order) and steps base and phase (`state[1]`) by `walk` = [up, stepWhole,
    /// stepPhase, last]. Returns the outputs written.
    public typealias Polyphase = @convention(c) (
        _ origin: UnsafePointer<Float>, _ table: UnsafePointer<Float>, _ rowLength: Int,
        _ walk: UnsafePointer<Int>, _ state: UnsafeMutablePointer<Int>, _ output: UnsafeMutablePointer<Float>
    ) -> Int

    /// Converts `count` samples to Int16 exactly as ``SampleConversion/int16(_:)-(Float)`` does
    /// (×32768, nearest-even, saturate, NaN → 0) and writes the largest |x| (NaN never counts)
    /// to `peaks[0]` and the largest |result| (0 … 32768) to `peaks[1]`.
    public typealias ConvertToInt16 = @convention(c) (
        _ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Int16>, _ count: Int, _ peaks: UnsafeMutablePointer<Float>
    ) -> Void

    /// Samples a decimate or interpolate kernel may read past the newest input it needs.
    public static let readSlack = 16

    /// Converts `count` Int16 samples to Float32, x / 32768 (exact in every set).
    public typealias ConvertToFloat = @convention(c) (
        _ input: UnsafePointer<Int16>, _ output: UnsafeMutablePointer<Float>, _ count: Int
    ) -> Void

    /// A name for reports ("portable Swift (SSE2)", "AVX2 + FMA").
    public let name: String
    public let decimate: Decimate
    public let interpolate: Interpolate
    public let polyphase: Polyphase
    public let convertToInt16: ConvertToInt16
    public let convertToFloat: ConvertToFloat
    /// The polyphase kernel's vector width: table rows are padded with zero taps to a multiple.
    public let polyphaseRowMultiple: Int

    public init(name: String, decimate: Decimate, interpolate: Interpolate, polyphase: Polyphase, convertToInt16: ConvertToInt16, convertToFloat: ConvertToFloat, polyphaseRowMultiple: Int) {
        self.name = name
        self.convertToFloat = convertToFloat
        self.polyphaseRowMultiple = polyphaseRowMultiple
        self.decimate = decimate
        self.interpolate = interpolate
        self.polyphase = polyphase
        self.convertToInt16 = convertToInt16
    }

    /// The portable Swift kernels: SIMD code for the x86-64 baseline.
    public static let portable = DSPKernels(
        name: "portable Swift SIMD (SSE2 baseline)",
        decimate: { streams, classes, factor, taps, splats, centre, output, count in
            PortableKernels.decimate(streams, classes, factor, taps, splats.assumingMemoryBound(to: SIMD4<Float>.self), centre, output, count)
        },
        interpolate: { x, evenTaps, oddTaps, evenSplats, oddSplats, centre, output, count in
            PortableKernels.interpolate(x, evenTaps, oddTaps, evenSplats.assumingMemoryBound(to: SIMD4<Float>.self), oddSplats.assumingMemoryBound(to: SIMD4<Float>.self), centre, output, count)
        },
        polyphase: { origin, table, rowLength, walk, state, output in
            PortableKernels.polyphase(origin, table, rowLength, walk, state, output)
        },
        convertToInt16: { input, output, count, peaks in
            let measured = SampleConversion.convertToInt16(input, output, count: count, measuring: true)
            peaks[0] = measured.floatPeak
            peaks[1] = Float(measured.int16Peak)
        },
        convertToFloat: { input, output, count in
            // A plain loop: the optimiser vectorises it better than explicit SIMD conversions.
            for i in 0..<count { output[i] = Float(input[i]) * (1 / 32768) }
        },
        polyphaseRowMultiple: 4)

    private static let preferredKernels = Mutex(DSPKernels.portable)

    /// The kernels new resamplers use unless told otherwise; ``portable`` until a faster set is
    /// installed (VoicePipeIO's `Acceleration.install()` does that after checking the CPU).
    public static var preferred: DSPKernels {
        get { preferredKernels.withLock { $0 } }
        set { preferredKernels.withLock { $0 = newValue } }
    }
}
