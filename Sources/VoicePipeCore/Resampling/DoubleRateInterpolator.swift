/// The sharp 1:2 interpolator: the first stage when the input rate is the lower one.
///
/// Input sample i yields outputs 2i (at the same instant) and 2i + 1 (half a sample later); both
/// need input up to i + 32. Uses ``SharpFilter`` with gain 2, split into its two polyphase halves
/// and folded by symmetry: 33 and 32 multiplies per output pair.
///
/// Implementation notes: consecutive inputs read consecutive samples, so a SIMD vector computes
/// the output pairs of several inputs at once and the even and odd results are interleaved on the
/// way out. Every output, vector lane or scalar tail, uses the same operations in the same order
/// (``evenOutput(at:centreTap:taps:)``, ``oddOutput(at:taps:)``).
final class DoubleRateInterpolator {
    private let kernels: DSPKernels
    private let centreTap: Float
    private let evenTaps: UnsafeMutablePointer<Float>
    private let oddTaps: UnsafeMutablePointer<Float>
    /// The taps again, each splatted across a 4-lane vector.
    private let evenSplats: UnsafeMutablePointer<SIMD4<Float>>
    private let oddSplats: UnsafeMutablePointer<SIMD4<Float>>
    private let history: SampleHistory
    /// Absolute index of the input sample whose output pair comes next.
    @exclusivity(unchecked) private var nextInput = 0

    /// Input samples the stage must see after an output's instant: its lookahead.
    static let lookahead = SharpFilter.halfLength / 2

    init(maxInputBlock: Int, kernels: DSPKernels) throws(ResamplerError) {
        let polyphase = try SharpFilter.polyphase(gain: 2)
        self.kernels = kernels
        centreTap = polyphase.even[32]
        evenTaps = .allocate(capacity: 32)
        evenTaps.initialize(from: polyphase.even, count: 32)
        oddTaps = .allocate(capacity: 32)
        oddTaps.initialize(from: polyphase.odd, count: 32)
        evenSplats = .allocate(capacity: 32)
        evenSplats.initialize(from: polyphase.even.prefix(32).map { SIMD4(repeating: $0) }, count: 32)
        oddSplats = .allocate(capacity: 32)
        oddSplats.initialize(from: polyphase.odd.map { SIMD4(repeating: $0) }, count: 32)
        history = SampleHistory(capacity: 2 * SharpFilter.length + maxInputBlock + 4, readSlack: DSPKernels.readSlack)
        reset()
    }

    deinit {
        evenTaps.deallocate()
        oddTaps.deallocate()
        evenSplats.deallocate()
        oddSplats.deallocate()
    }

    func reset() {
        history.reset(leadingZeros: Self.lookahead)
        nextInput = 0
    }

    func maxOutput(forInput count: Int) -> Int { 2 * count + 2 }

    /// Per pair of outputs: the even one folds 32 tap pairs and multiplies the centre, the odd one
    /// folds 32 tap pairs.
    var arithmeticPerOutput: ResamplerArithmetic {
        ResamplerArithmetic(multiplyAdds: (65 + 64) / 2, executedMultiplyAdds: (33 + 32) / 2)
    }

    /// Consumes all of `input`, writes every output pair now complete, returns how many outputs.
    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        history.append(input)
        let count = max(history.end - Self.lookahead - nextInput, 0)
        if count > 0 {
            kernels.interpolate(UnsafePointer(history.pointer(at: nextInput)), evenTaps, oddTaps, evenSplats, oddSplats, centreTap, output, count)
            nextInput += count
        }
        history.discard(before: nextInput - Self.lookahead)
        return 2 * count
    }
}
