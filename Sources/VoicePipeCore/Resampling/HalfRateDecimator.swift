/// The sharp 2:1 decimator: the last stage when the output rate is the lower one.
///
/// Output n is centred on input sample 2n (no delay in the output's time base); it needs input
/// up to 2n + 64. Uses ``SharpFilter`` folded by symmetry: 65 multiplies per output.
///
/// Implementation notes: the input is kept split into its even and odd samples, E[m] = x[2m] and
/// O[m] = x[2m + 1]. Output n is then
///
/// ```
///   h64·E[n] + Σt he[t]·(E[n−32+t] + E[n+32−t]) + Σt ho[t]·(O[n−32+t] + O[n+31−t])
/// ```
///
/// so consecutive outputs read consecutive samples and a SIMD vector computes several outputs at
/// once with plain loads. Every output, vector lane or scalar tail, is computed with the same
/// operations in the same order (``reference(even:odd:centreTap:evenTaps:oddTaps:)``), so the
/// result does not depend on how the input was cut into blocks.
final class HalfRateDecimator {
    private let centreTap: Float
    private let evenTaps: UnsafeMutablePointer<Float>
    private let oddTaps: UnsafeMutablePointer<Float>
    /// E[m] = x[2m], indexed by m.
    private let evens: SampleHistory
    /// O[m] = x[2m + 1], indexed by m.
    private let odds: SampleHistory
    /// Input samples received in this stream (their parity decides where the next one goes).
    private var received = 0
    /// Index of the next output.
    private var next = 0

    /// Input samples the stage must see after an output's centre: its lookahead.
    static let lookahead = SharpFilter.halfLength
    /// Outputs per vector step.
    static let lanes = 16

    /// - Parameter maxInputBlock: the most input one ``process(_:into:)`` call receives.
    init(maxInputBlock: Int) throws(ResamplerError) {
        let polyphase = try SharpFilter.polyphase(gain: 1)
        centreTap = polyphase.even[32]
        evenTaps = .allocate(capacity: 32)
        evenTaps.initialize(from: polyphase.even, count: 32)
        oddTaps = .allocate(capacity: 32)
        oddTaps.initialize(from: polyphase.odd, count: 32)
        evens = SampleHistory(capacity: 2 * SharpFilter.length + maxInputBlock / 2 + 4)
        odds = SampleHistory(capacity: 2 * SharpFilter.length + maxInputBlock / 2 + 4)
        reset()
    }

    deinit {
        evenTaps.deallocate()
        oddTaps.deallocate()
    }

    func reset() {
        evens.reset(leadingZeros: 32)
        odds.reset(leadingZeros: 32)
        received = 0
        next = 0
    }

    func maxOutput(forInput count: Int) -> Int { count / 2 + 2 }

    /// Consumes all of `input`, writes every output now complete, returns how many.
    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        guard let source = input.baseAddress else { return 0 }
        let firstIsOdd = received & 1 == 1
        let evenCount = firstIsOdd ? input.count / 2 : (input.count + 1) / 2
        evens.appendStrided(source + (firstIsOdd ? 1 : 0), stride: 2, count: evenCount)
        odds.appendStrided(source + (firstIsOdd ? 0 : 1), stride: 2, count: input.count - evenCount)
        received += input.count

        // Output n needs E up to n + 32 and O up to n + 31.
        let available = min(evens.end - 32, odds.end - 31)
        var next = self.next
        var produced = 0
        var even = UnsafePointer(evens.pointer(at: next))
        var odd = UnsafePointer(odds.pointer(at: next))
        while next &+ Self.lanes <= available {
            let block = Self.vector(even: even, odd: odd, centreTap: centreTap, evenTaps: evenTaps, oddTaps: oddTaps)
            UnsafeMutableRawPointer(output + produced).storeBytes(of: block, as: SIMD16<Float>.self)
            produced &+= Self.lanes
            next &+= Self.lanes
            even += Self.lanes
            odd += Self.lanes
        }
        while next < available {
            output[produced] = Self.reference(even: even, odd: odd, centreTap: centreTap, evenTaps: evenTaps, oddTaps: oddTaps)
            produced &+= 1
            next &+= 1
            even += 1
            odd += 1
        }
        self.next = next
        evens.discard(before: next - 32)
        odds.discard(before: next - 32)
        return produced
    }

    /// Sixteen consecutive outputs, lane k computed exactly as ``reference`` computes output n + k.
    @inline(__always)
    static func vector(even: UnsafePointer<Float>, odd: UnsafePointer<Float>, centreTap: Float, evenTaps: UnsafePointer<Float>, oddTaps: UnsafePointer<Float>) -> SIMD16<Float> {
        @inline(__always) func load(_ p: UnsafePointer<Float>) -> SIMD16<Float> {
            UnsafeRawPointer(p).loadUnaligned(as: SIMD16<Float>.self)
        }
        var sum = SIMD16(repeating: centreTap) * load(even)
        for t in 0..<32 {
            sum += SIMD16(repeating: evenTaps[t]) * (load(even - 32 + t) + load(even + 32 - t))
        }
        for t in 0..<32 {
            sum += SIMD16(repeating: oddTaps[t]) * (load(odd - 32 + t) + load(odd + 31 - t))
        }
        return sum
    }

    /// One output, plainly: the arithmetic every vector lane repeats.
    @inline(__always)
    static func reference(even: UnsafePointer<Float>, odd: UnsafePointer<Float>, centreTap: Float, evenTaps: UnsafePointer<Float>, oddTaps: UnsafePointer<Float>) -> Float {
        var sum = centreTap * even[0]
        for t in 0..<32 {
            sum += evenTaps[t] * (even[-32 + t] + even[32 - t])
        }
        for t in 0..<32 {
            sum += oddTaps[t] * (odd[-32 + t] + odd[31 - t])
        }
        return sum
    }
}
