/// The sharp 2:1 decimator: the last stage when the output rate is the lower one.
///
/// Output n is centred on input sample 2n (no delay in the output's time base); it needs input
/// up to 2n + 64. Uses ``SharpFilter`` folded by symmetry: 65 multiplies per output.
final class HalfRateDecimator {
    private let centreTap: Float
    private let evenTaps: UnsafeMutablePointer<Float>
    private let oddTaps: UnsafeMutablePointer<Float>
    private let history: SampleHistory
    /// Absolute input index of the next output's centre.
    private var nextCentre = 0

    /// - Parameter maxInputBlock: the most input one ``process(_:into:)`` call receives.
    init(maxInputBlock: Int) throws(ResamplerError) {
        let polyphase = try SharpFilter.polyphase(gain: 1)
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

    /// Input samples the stage must see after an output's centre: its lookahead.
    static let lookahead = SharpFilter.halfLength

    func reset() {
        history.reset(leadingZeros: SharpFilter.halfLength)
        nextCentre = 0
    }

    func maxOutput(forInput count: Int) -> Int { count / 2 + 2 }

    /// Consumes all of `input`, writes every output now complete, returns how many.
    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        history.append(input)
        var produced = 0
        while nextCentre + SharpFilter.halfLength < history.end {
            output[produced] = Self.output(centre: history.pointer(at: nextCentre), centreTap: centreTap, evenTaps: evenTaps, oddTaps: oddTaps)
            produced += 1
            nextCentre += 2
        }
        history.discard(before: nextCentre - SharpFilter.halfLength)
        return produced
    }

    /// One output: the reference arithmetic (fixed order: centre, even pairs, odd pairs).
    @inline(__always)
    static func output(centre x: UnsafePointer<Float>, centreTap: Float, evenTaps: UnsafePointer<Float>, oddTaps: UnsafePointer<Float>) -> Float {
        var sum = centreTap * x[0]
        for t in 0..<32 {
            sum += evenTaps[t] * (x[-64 + 2 * t] + x[64 - 2 * t])
        }
        for t in 0..<32 {
            sum += oddTaps[t] * (x[-63 + 2 * t] + x[63 - 2 * t])
        }
        return sum
    }
}
