import CVoicePipeKernels

/// One residue class of a sharp decimator phase, as the ``DSPKernels/Decimate`` kernels take it
/// (a C struct of `CVoicePipeKernels`, named here so that users of Core need not import it).
public typealias DecimatorTapClass = CVoicePipeKernels.DecimatorTapClass
/// The polyphase stage's step and end, as the ``DSPKernels/Polyphase`` kernels take them.
public typealias PolyphaseWalk = CVoicePipeKernels.PolyphaseWalk
/// The polyphase table in the sixteen-lane kernel's layout, carried by a ``PolyphaseWalk``.
public typealias PolyphaseColumns = CVoicePipeKernels.PolyphaseColumns
/// The polyphase stage's position, as the ``DSPKernels/Polyphase`` kernels take and update it.
public typealias PolyphasePosition = CVoicePipeKernels.PolyphasePosition
/// The peaks a ``DSPKernels/ConvertToInt16`` kernel measures: `input`, the largest |x| before
/// rounding, and `output`, the largest |result| (0 … 32768).
public typealias ConversionPeaks = CVoicePipeKernels.ConversionPeaks

/// The inner loops of the built-in resampler and of the Float ↔ Int16 conversions with peak
/// metering, as a value: a set of C-callable function pointers.
///
/// There are three sets: ``portable`` (Swift SIMD for the x86-64 baseline, SSE2), ``avx2`` (C
/// compiled for AVX2 with FMA) and ``avx512`` (the same C kernels with sixteen lanes), the last two
/// present only when this CPU and its operating system run them. ``best`` is chosen once per
/// process by ``calibration`` (the vector sets timed on a short probe), so no package user ever
/// needs compiler flags; every converter takes its kernels as a parameter whose default is
/// ``best``, and there is no process-wide setting to change. Each set is deterministic on its
/// own: output never depends on how the input was cut into buffers. The portable set rounds
/// differently from the C sets (a fused multiply-add rounds once), so a stream keeps the kernels
/// its resampler was built with; the AVX2 and AVX-512 sets give the same bits. The Int16
/// conversions and the downmix are exact in every set.
///
/// The decimate and interpolate kernels may finish a block with a full vector whose extra lanes
/// are discarded, so they may read up to ``readSlack`` samples past the newest input the last
/// requested output needs; the stages keep that much readable memory (zeros or older, finite
/// samples) past their histories.
public struct DSPKernels: Sendable {
    /// Computes `count` consecutive outputs of the sharp decimator by `factor`.
    ///
    /// - `streams`: `factor + 1` pointers: slot 0 at the centre tap's sample, slots 1 … factor the
    ///   streams at the first output's index (S_r[m] = x[factor·m + r − 1]);
    /// - `classes`: `factor` residue classes, each a run of taps and the two streams it folds
    ///   (see `SharpStage`);
    /// - `taps`, `splats`: the class taps, plain and splatted across 4-lane vectors;
    /// - `centre`: the centre tap. Output n is centre·S_0[n] + Σ_s Σ_j taps[s.tapStart + j]·
    ///   (S_s.forwardStream[n + s.forwardOffset + j] + S_s.backwardStream[n + s.backwardOffset − j]),
    ///   in that order.
    public typealias Decimate = @convention(c) (
        _ streams: UnsafePointer<UnsafePointer<Float>>, _ classes: UnsafePointer<DecimatorTapClass>, _ factor: Int,
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

    /// Runs the polyphase stage's exact-table output loop: while `position.base` is below
    /// `walk.end`, writes Σ_j x[base + j]·table[phase·rowLength + j] (x = `origin`, j < rowLength,
    /// a multiple of ``polyphaseRowMultiple``; the kernel's own lanes of partial sums and
    /// reduction order) and steps `position` by `walk`. Returns the outputs written; `position`
    /// is left at the next output.
    public typealias Polyphase = @convention(c) (
        _ origin: UnsafePointer<Float>, _ table: UnsafePointer<Float>, _ rowLength: Int,
        _ walk: UnsafePointer<PolyphaseWalk>, _ position: UnsafeMutablePointer<PolyphasePosition>, _ output: UnsafeMutablePointer<Float>
    ) -> Int

    /// Converts `count` samples to Int16 exactly as ``SampleConversion/int16(_:)-(Float)`` does
    /// (×32768, nearest-even, saturate, NaN → 0) and writes the largest |x| (NaN never counts)
    /// and the largest |result| (0 … 32768) to `peaks`.
    public typealias ConvertToInt16 = @convention(c) (
        _ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Int16>, _ count: Int, _ peaks: UnsafeMutablePointer<ConversionPeaks>
    ) -> Void

    /// Samples a decimate or interpolate kernel may read past the newest input it needs.
    public static let readSlack = 16

    /// Converts `count` Int16 samples to Float32, x / 32768 (exact in every set).
    public typealias ConvertToFloat = @convention(c) (
        _ input: UnsafePointer<Int16>, _ output: UnsafeMutablePointer<Float>, _ count: Int
    ) -> Void

    /// Interleaved stereo Float32 to mono: (L + R) · 0.5 of the samples with NaN → 0 and clamped
    /// to ±1, exactly as ``Downmix`` computes it.
    public typealias DownmixStereoFloat = @convention(c) (
        _ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, _ frames: Int
    ) -> Void

    /// Interleaved stereo Float32 to mono as ``DownmixStereoFloat`` computes it, dealt out to two
    /// streams: mono sample 2k goes to `first[k]`, 2k + 1 to `second[k]` (a half-band decimator's
    /// input streams, written in the same pass as the downmix); `first` takes (frames + 1) / 2
    /// samples, `second` frames / 2.
    public typealias DownmixStereoFloatSplit = @convention(c) (
        _ input: UnsafePointer<Float>, _ first: UnsafeMutablePointer<Float>, _ second: UnsafeMutablePointer<Float>, _ frames: Int
    ) -> Void

    /// ``DownmixStereoInt16`` dealt out to two streams as ``DownmixStereoFloatSplit`` does.
    public typealias DownmixStereoInt16Split = @convention(c) (
        _ input: UnsafePointer<Int16>, _ first: UnsafeMutablePointer<Float>, _ second: UnsafeMutablePointer<Float>, _ frames: Int
    ) -> Void

    /// Interleaved stereo Int16 to mono: (L / 32768 + R / 32768) · 0.5, exactly as ``Downmix``.
    public typealias DownmixStereoInt16 = @convention(c) (
        _ input: UnsafePointer<Int16>, _ output: UnsafeMutablePointer<Float>, _ frames: Int
    ) -> Void

    /// `output[2i] = even[i]`, `output[2i + 1] = odd[i]` for i < `pairs`: the outputs of a
    /// two-phase stage (the 2/3 stage), computed phase by phase, put in order.
    public typealias InterleavePairs = @convention(c) (
        _ even: UnsafePointer<Float>, _ odd: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, _ pairs: Int
    ) -> Void

    /// `target[i] = source[stride · i]` for i < `count`, reading nothing past
    /// `source[stride · (count − 1)]`: one of a decimating stage's input streams dealt out of its
    /// input.
    public typealias TakeEvery = @convention(c) (
        _ source: UnsafePointer<Float>, _ stride: Int, _ target: UnsafeMutablePointer<Float>, _ count: Int
    ) -> Void

    /// A name for reports ("portable Swift (SSE2)", "AVX2 + FMA").
    public let name: String
    public let decimate: Decimate
    public let interpolate: Interpolate
    public let polyphase: Polyphase
    public let convertToInt16: ConvertToInt16
    public let convertToFloat: ConvertToFloat
    public let downmixStereoFloat: DownmixStereoFloat
    public let downmixStereoInt16: DownmixStereoInt16
    public let downmixStereoFloatSplit: DownmixStereoFloatSplit
    public let downmixStereoInt16Split: DownmixStereoInt16Split
    public let interleavePairs: InterleavePairs
    public let takeEvery: TakeEvery
    /// The polyphase kernel's vector width: table rows are padded with zero taps to a multiple.
    public let polyphaseRowMultiple: Int
    /// The polyphase kernel computes sixteen outputs at once from the table's column layout
    /// (``PolyphaseColumns``) when the walk carries one; the stage then builds it.
    public let polyphaseTakesColumns: Bool

    public init(name: String, decimate: Decimate, interpolate: Interpolate, polyphase: Polyphase, convertToInt16: ConvertToInt16, convertToFloat: ConvertToFloat,
                downmixStereoFloat: DownmixStereoFloat = { input, output, frames in Downmix.stereoFloat(input, frames: frames, into: output) },
                downmixStereoInt16: DownmixStereoInt16 = { input, output, frames in Downmix.stereoInt16(input, frames: frames, into: output) },
                downmixStereoFloatSplit: DownmixStereoFloatSplit = { input, first, second, frames in Downmix.stereoFloatSplit(input, frames: frames, into: first, second) },
                downmixStereoInt16Split: DownmixStereoInt16Split = { input, first, second, frames in Downmix.stereoInt16Split(input, frames: frames, into: first, second) },
                interleavePairs: InterleavePairs = { even, odd, output, pairs in StreamShuffles.interleave(even: even, odd: odd, pairs: pairs, into: output) },
                takeEvery: TakeEvery = { source, stride, target, count in StreamShuffles.takeEvery(stride, from: source, count: count, into: target) },
                polyphaseRowMultiple: Int, polyphaseTakesColumns: Bool = false) {
        self.polyphaseTakesColumns = polyphaseTakesColumns
        self.interleavePairs = interleavePairs
        self.takeEvery = takeEvery
        self.downmixStereoFloatSplit = downmixStereoFloatSplit
        self.downmixStereoInt16Split = downmixStereoInt16Split
        self.name = name
        self.downmixStereoFloat = downmixStereoFloat
        self.downmixStereoInt16 = downmixStereoInt16
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
        polyphase: { origin, table, rowLength, walk, position, output in
            PortableKernels.polyphase(origin, table, rowLength, walk, position, output)
        },
        convertToInt16: { input, output, count, peaks in
            let measured = SampleConversion.convertToInt16(input, output, count: count, measuring: true)
            peaks.pointee = ConversionPeaks(input: measured.floatPeak, output: Float(measured.int16Peak))
        },
        convertToFloat: { input, output, count in
            // A plain loop: the optimiser vectorises it better than explicit SIMD conversions.
            for i in 0..<count { output[i] = Float(input[i]) * (1 / 32768) }
        },
        polyphaseRowMultiple: 4)

    /// The AVX2 + FMA kernels in C, when this CPU has those units and the operating system saves
    /// their registers; `nil` otherwise.
    public static let avx2: DSPKernels? = vp_cpu_supports_avx2_fma() != 0
        ? DSPKernels(name: "AVX2 + FMA (C)", decimate: vp_decimate_avx2, interpolate: vp_interpolate_avx2, polyphase: vp_polyphase_avx2,
                     convertToInt16: vp_convert_int16_avx2, convertToFloat: vp_convert_float_avx2,
                     downmixStereoFloat: vp_downmix_stereo_float_avx2, downmixStereoInt16: vp_downmix_stereo_int16_avx2,
                     downmixStereoFloatSplit: vp_downmix_stereo_float_split_avx2, downmixStereoInt16Split: vp_downmix_stereo_int16_split_avx2,
                     interleavePairs: vp_interleave_avx2, takeEvery: vp_take_every_avx2,
                     polyphaseRowMultiple: 4)
        : nil

    /// The AVX2 set with sixteen-lane AVX-512 decimate, interpolate, polyphase, stereo downmix and Int16 kernels
    /// (bit for bit the AVX2 results), when this CPU and its operating system run AVX-512 F;
    /// `nil` otherwise.
    public static let avx512: DSPKernels? = vp_cpu_supports_avx512f() != 0
        ? DSPKernels(name: "AVX-512 + FMA (C)", decimate: vp_decimate_avx512, interpolate: vp_interpolate_avx512, polyphase: vp_polyphase_avx512,
                     convertToInt16: vp_convert_int16_avx512, convertToFloat: vp_convert_float_avx2,
                     downmixStereoFloat: vp_downmix_stereo_float_avx512, downmixStereoInt16: vp_downmix_stereo_int16_avx512,
                     downmixStereoFloatSplit: vp_downmix_stereo_float_split_avx512, downmixStereoInt16Split: vp_downmix_stereo_int16_split_avx512,
                     interleavePairs: vp_interleave_avx2, takeEvery: vp_take_every_avx2,
                     polyphaseRowMultiple: 4, polyphaseTakesColumns: true)
        : nil

    /// The plain C references of the AVX2 kernels: the same operations in the same order, one
    /// sample at a time. They run on any CPU and exist for tests (bit-for-bit agreement).
    public static let fmaReference = DSPKernels(
        name: "scalar C reference of the AVX2 + FMA kernels",
        decimate: vp_decimate_fma_reference, interpolate: vp_interpolate_fma_reference, polyphase: vp_polyphase_fma_reference,
        convertToInt16: DSPKernels.portable.convertToInt16, convertToFloat: DSPKernels.portable.convertToFloat,
        polyphaseRowMultiple: 4)

    /// The fastest set this CPU runs, chosen once, on first use, by ``calibration``: the default of
    /// every converter. ``portable`` where the CPU has no AVX2 and FMA. Stored, so a call that takes
    /// it as a default argument borrows it: a computed property returned a copy, whose name cost a
    /// retain and a release (about 18 ns a call, a fifth of converting a 20 ms chunk to Int16).
    public static let best: DSPKernels = calibration.chosen

    /// The decimate loops, conversions, downmixes and shuffles of `decimators`, the polyphase loop
    /// (and its table layout) of `polyphase` and the interpolate loop of `interpolator`: what the
    /// calibration chooses when the sets win different parts. The vector sets compute the same
    /// bits in every loop, so such a mix does too.
    public static func combining(decimators: DSPKernels, polyphase: DSPKernels, interpolator: DSPKernels) -> DSPKernels {
        let name = decimators.name == polyphase.name && polyphase.name == interpolator.name
            ? decimators.name
            : "\(decimators.name) decimators, \(polyphase.name) polyphase, \(interpolator.name) interpolator"
        return DSPKernels(name: name, decimate: decimators.decimate, interpolate: interpolator.interpolate, polyphase: polyphase.polyphase,
                          convertToInt16: decimators.convertToInt16, convertToFloat: decimators.convertToFloat,
                          downmixStereoFloat: decimators.downmixStereoFloat, downmixStereoInt16: decimators.downmixStereoInt16,
                          downmixStereoFloatSplit: decimators.downmixStereoFloatSplit, downmixStereoInt16Split: decimators.downmixStereoInt16Split,
                          interleavePairs: decimators.interleavePairs, takeEvery: decimators.takeEvery,
                          polyphaseRowMultiple: polyphase.polyphaseRowMultiple, polyphaseTakesColumns: polyphase.polyphaseTakesColumns)
    }

    /// How ``best`` was chosen: measured, not read from feature bits, because a core that splits
    /// 512-bit operations runs the AVX-512 set no faster than the AVX2 set while a full-width core
    /// runs it up to twice as fast.
    public static let calibration = KernelCalibration.run(candidates: [avx512, avx2].compactMap { $0 }, fallback: portable)
}
