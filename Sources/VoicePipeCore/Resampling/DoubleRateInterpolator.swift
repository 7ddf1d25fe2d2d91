/// The sharp 1:2 interpolator: the first stage when the input rate is the lower one.
///
/// Input sample i yields outputs 2i (at the same instant) and 2i + 1 (half a sample later); both
/// need input up to i + 32. Uses ``SharpFilter`` with gain 2, split into its two polyphase halves
/// and folded by symmetry: 33 and 32 multiplies per output pair.
final class DoubleRateInterpolator {
    private let centreTap: Float
    private let evenTaps: UnsafeMutablePointer<Float>
    private let oddTaps: UnsafeMutablePointer<Float>
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
        history = SampleHistory(capacity: 2 * SharpFilter.length + maxInputBlock + 4)
        reset()
    }

    deinit {
        evenTaps.deallocate()
        oddTaps.deallocate()
    }

    func reset() {
        history.reset(leadingZeros: Self.lookahead)
        nextInput = 0
    }

    func maxOutput(forInput count: Int) -> Int { 2 * count + 2 }

    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        history.append(input)
        var produced = 0
        while nextInput + Self.lookahead < history.end {
            let x = UnsafePointer(history.pointer(at: nextInput))
            output[produced] = Self.evenOutput(at: x, centreTap: centreTap, taps: evenTaps)
            output[produced + 1] = Self.oddOutput(at: x, taps: oddTaps)
            produced += 2
            nextInput += 1
        }
        history.discard(before: nextInput - Self.lookahead)
        return produced
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
