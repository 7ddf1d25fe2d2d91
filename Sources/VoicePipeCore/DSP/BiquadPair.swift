import CVoicePipeKernels

/// Two second-order sections (biquads) in series over Int16 samples, in Double, the state carried
/// from call to call, giving the sum of the squared output: a band-pass level meter's filter
/// (the speech-band meter's high-pass at 300 Hz and low-pass at 3 400 Hz).
///
/// Where the CPU has AVX2 and FMA the pair advances eight samples at a time with one matrix
/// (`vp_biquad_pair_sum_squares_avx2`) instead of one sample at a time, about three times faster:
/// a recursive filter run sample by sample waits on its own feedback. The two ways round
/// differently, by about one part in 10¹⁵; each alone gives the same result however the samples
/// are cut into calls, but for that rounding.
public struct BiquadPair: Sendable, Hashable {
    /// One section's coefficients, a0 = 1, in direct form I:
    /// y = b0·x + b1·x[−1] + b2·x[−2] − a2·y[−2] − a1·y[−1].
    public struct Section: Sendable, Hashable {
        public var b0, b1, b2, a1, a2: Double

        public init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
            (self.b0, self.b1, self.b2, self.a1, self.a2) = (b0, b1, b2, a1, a2)
        }

        /// A Butterworth (Q = 1/√2) high- or low-pass from the RBJ audio-EQ cookbook.
        public static func butterworth(highPass: Bool, cutoff: Double, sampleRate: Double) -> Section {
            let w0 = 2 * Double.pi * cutoff / sampleRate
            let cosine = Elementary.cos(w0)
            let alpha = Elementary.sin(w0) / (2 * 0.707_106_781_186_547_6)
            let a0 = 1 + alpha
            let edge = (highPass ? 1 + cosine : 1 - cosine) / a0
            return Section(b0: edge / 2, b1: highPass ? -edge : edge, b2: edge / 2, a1: -2 * cosine / a0, a2: (1 - alpha) / a0)
        }

        var coefficients: (Double, Double, Double, Double, Double) { (b0, b1, b2, a1, a2) }
    }

    /// Whether this CPU runs the eight-sample kernel (AVX2 and FMA).
    public static let blockKernelAvailable = vp_cpu_supports_avx2_fma() != 0

    /// The sections, in the order the samples pass them.
    public var first: Section { design.first }
    public var second: Section { design.second }
    /// Whether ``sumOfSquares(_:)`` uses the eight-sample kernel.
    public let usesBlockKernel: Bool
    /// The coefficients and block matrix, shared by copies (1.4 KB, made once per design).
    private let design: Design
    /// x[−1], x[−2] (full scale 1.0), the first section's u[−1], u[−2], the second's y[−1], y[−2].
    private var state: (Double, Double, Double, Double, Double, Double) = (0, 0, 0, 0, 0, 0)

    /// - Parameter usesBlockKernel: the eight-sample kernel; ignored (false) where the CPU lacks it.
    public init(_ first: Section, _ second: Section, usesBlockKernel: Bool = BiquadPair.blockKernelAvailable) {
        self.usesBlockKernel = usesBlockKernel && Self.blockKernelAvailable
        design = Design(first, second)
    }

    /// Filters `samples` (x/32768 is full scale) and returns Σ y² over their outputs.
    public mutating func sumOfSquares(_ samples: UnsafeBufferPointer<Int16>) -> Double {
        guard let base = samples.baseAddress, !samples.isEmpty else { return 0 }
        let kernel = usesBlockKernel ? vp_biquad_pair_sum_squares_avx2 : vp_biquad_pair_sum_squares
        let pair = design.pair
        return withUnsafeMutablePointer(to: &state) { tuple in
            tuple.withMemoryRebound(to: Double.self, capacity: 6) { kernel(pair, $0, base, samples.count) }
        }
    }

    public static func == (lhs: BiquadPair, rhs: BiquadPair) -> Bool {
        lhs.first == rhs.first && lhs.second == rhs.second && lhs.usesBlockKernel == rhs.usesBlockKernel
            && lhs.state == rhs.state
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(first)
        hasher.combine(second)
        hasher.combine(usesBlockKernel)
        // The last input and output stand for the state: values that are equal hash alike.
        hasher.combine(state.0)
        hasher.combine(state.4)
    }

    /// The sections and the C struct the kernels read, made once and never changed after ``init``.
    private final class Design: Sendable {
        let first: Section
        let second: Section
        // Safety: written only in init; the kernels only read it after.
        nonisolated(unsafe) let pair: UnsafeMutablePointer<BiquadPairDesign>

        init(_ first: Section, _ second: Section) {
            self.first = first
            self.second = second
            pair = .allocate(capacity: 1)
            pair.initialize(to: BiquadPairDesign())
            pair.pointee.first = first.coefficients
            pair.pointee.second = second.coefficients
            vp_biquad_pair_design(pair)
        }

        deinit { pair.deallocate() }
    }
}
