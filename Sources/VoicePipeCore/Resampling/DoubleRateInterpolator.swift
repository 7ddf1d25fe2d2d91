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
    private let centreTap: Float
    private let evenTaps: UnsafeMutablePointer<Float>
    private let oddTaps: UnsafeMutablePointer<Float>
    /// The taps again, each splatted across a 4-lane vector: one aligned load per tap in the
    /// vector loop instead of a scalar load and a shuffle.
    private let evenSplats: UnsafeMutablePointer<SIMD4<Float>>
    private let oddSplats: UnsafeMutablePointer<SIMD4<Float>>
    private let history: SampleHistory
    /// Absolute index of the input sample whose output pair comes next.
    private var nextInput = 0

    /// Input samples the stage must see after an output's instant: its lookahead.
    static let lookahead = SharpFilter.halfLength / 2

    init(maxInputBlock: Int) throws(ResamplerError) {
        let polyphase = try SharpFilter.polyphase(gain: 2)
        centreTap = polyphase.even[32]
        evenTaps = .allocate(capacity: 32)
        evenTaps.initialize(from: polyphase.even, count: 32)
        oddTaps = .allocate(capacity: 32)
        oddTaps.initialize(from: polyphase.odd, count: 32)
        evenSplats = .allocate(capacity: 32)
        evenSplats.initialize(from: polyphase.even.prefix(32).map { SIMD4(repeating: $0) }, count: 32)
        oddSplats = .allocate(capacity: 32)
        oddSplats.initialize(from: polyphase.odd.map { SIMD4(repeating: $0) }, count: 32)
        history = SampleHistory(capacity: 2 * SharpFilter.length + maxInputBlock + 4)
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

    /// Inputs per vector step (each gives two outputs).
    static let lanes = 8

    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        history.append(input)
        var next = nextInput
        var produced = 0
        let last = history.end - Self.lookahead
        var x = UnsafePointer(history.pointer(at: next))
        while next &+ Self.lanes <= last {
            let pairs = Self.vector(at: x, centreTap: centreTap, evenTaps: evenSplats, oddTaps: oddSplats)
            UnsafeMutableRawPointer(output + produced).storeBytes(of: pairs, as: SIMD16<Float>.self)
            produced &+= 2 * Self.lanes
            next &+= Self.lanes
            x += Self.lanes
        }
        while next < last {
            output[produced] = Self.evenOutput(at: x, centreTap: centreTap, taps: evenTaps)
            output[produced + 1] = Self.oddOutput(at: x, taps: oddTaps)
            produced &+= 2
            next &+= 1
            x += 1
        }
        nextInput = next
        history.discard(before: next - Self.lookahead)
        return produced
    }

    /// The output pairs of eight consecutive inputs, interleaved (even, odd, even, odd, …); lane k
    /// computed exactly as the scalar functions compute input i + k's pair.
    @inline(__always)
    static func vector(at x: UnsafePointer<Float>, centreTap: Float, evenTaps: UnsafePointer<SIMD4<Float>>, oddTaps: UnsafePointer<SIMD4<Float>>) -> SIMD16<Float> {
        @inline(__always) func load(_ p: UnsafePointer<Float>) -> SIMD8<Float> {
            UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
        }
        @inline(__always) func splat(_ tap: SIMD4<Float>) -> SIMD8<Float> {
            SIMD8(lowHalf: tap, highHalf: tap)
        }
        // One pass for both: x[i + 32 − t] is shared by the even and the odd sum.
        var even = SIMD8(repeating: centreTap) * load(x)
        var odd = SIMD8<Float>()
        for t in 0..<32 {
            let late = load(x + 32 - t)
            even += splat(evenTaps[t]) * (late + load(x - 32 + t))
            odd += splat(oddTaps[t]) * (late + load(x - 31 + t))
        }
        return interleave(even, odd)
    }

    /// (e0, o0, e1, o1, …). Not inlined: inlined, the optimiser pulls the shuffles into the tap
    /// loop above and interleaves the accumulators on every tap, which runs far slower.
    @inline(never)
    static func interleave(_ even: SIMD8<Float>, _ odd: SIMD8<Float>) -> SIMD16<Float> {
        var pairs = SIMD16<Float>()
        pairs.evenHalf = even
        pairs.oddHalf = odd
        return pairs
    }

    /// Output 2i: the centre tap on x[i] plus 32 symmetric pairs.
    @inline(__always)
    static func evenOutput(at x: UnsafePointer<Float>, centreTap: Float, taps: UnsafePointer<Float>) -> Float {
        var sum = centreTap * x[0]
        for t in 0..<32 {
            sum += taps[t] * (x[32 - t] + x[-32 + t])
        }
        return sum
    }

    /// Output 2i + 1: 32 symmetric pairs around i + ½.
    @inline(__always)
    static func oddOutput(at x: UnsafePointer<Float>, taps: UnsafePointer<Float>) -> Float {
        var sum: Float = 0
        for t in 0..<32 {
            sum += taps[t] * (x[32 - t] + x[-31 + t])
        }
        return sum
    }
}
