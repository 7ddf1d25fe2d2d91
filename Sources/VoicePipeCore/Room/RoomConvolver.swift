import CVoicePipeKernels

/// Streaming convolution with a room's impulse response: direct form, eight outputs at a time in
/// vector lanes (each tap broadcast across them), so it vectorises without reassociating any sum.
/// The loop is C (`vp_room_convolve`): a real-time room must keep up in a debug build too, where
/// Swift's SIMD types compile to calls (a 0.08 s room took 77 % of the CPU of a debug session).
///
/// Measured cost (release, default x86-64 target, on a shared 2-core machine): 0.8–1.5 % of one
/// core per second at 16 kHz for a 0.3 s response (4 848 taps), 1.7–3.3 % for 0.6 s (9 648 taps).
///
/// Every output is Σ_k h[k]·x[n−k] summed in the same order of k, in a lane or in the scalar
/// remainder alike, so the result does not depend on how the input is cut into blocks.
///
/// ```
///  work: [ x(n−T+1) … x(n−1) │ x(n) … x(n+B−1) ]   T taps, block of B
///          history (T−1)       this block          after the block, its last T−1 move to the front
/// ```
public struct RoomConvolver: Sendable {
    /// The largest block ``process(_:into:)`` takes in one call; longer input is done in pieces.
    public static let maximumBlock = 1024
    /// The taps, reversed: reversed[j] = h[T−1−j], so output n reads work[n ... n+T−1] forwards.
    private var reversed: [Float]
    private var work: [Float]
    private let history: Int

    /// A convolver for `taps` (at least one).
    public init(taps: [Float]) {
        let taps = taps.isEmpty ? [0] : taps
        reversed = taps.reversed()
        history = taps.count - 1
        work = [Float](repeating: 0, count: history + Self.maximumBlock)
    }

    /// Convolves `input` into `output` (the same count), carrying the history across calls.
    public mutating func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) {
        var done = 0
        while done < input.count {
            let count = min(Self.maximumBlock, input.count - done)
            let history = history
            let taps = reversed.count
            reversed.withUnsafeBufferPointer { reversed in
                work.withUnsafeMutableBufferPointer { work in
                    guard let workBase = work.baseAddress, let inputBase = input.baseAddress, let tapBase = reversed.baseAddress,
                          let outputBase = output.baseAddress else { return }
                    (workBase + history).update(from: inputBase + done, count: count)
                    roomConvolve(work: workBase, reversedTaps: tapBase, tapCount: taps, output: outputBase + done, count: count)
                    if history > 0 { workBase.update(from: workBase + count, count: history) }
                }
            }
            done += count
        }
    }

    /// Forgets the history (as if only silence had been convolved).
    public mutating func reset() {
        for index in work.indices { work[index] = 0 }
    }
}
