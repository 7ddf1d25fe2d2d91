import CVoicePipeKernels

/// A linear-phase FIR stage that changes the rate by up/down with up 1 or 2: the sharp stages
/// (decimate by 2, or 2/3 through twice the input rate) and the half-band decimators before them.
///
/// Output n is the filter centred on input position n·down/up (no delay in the output's time
/// base). The filter is symmetric and odd in length, so each output folds pairs of samples that
/// share a tap: (length + 1) / (2·up) multiplies per output, fewer where taps are zero.
///
/// Implementation notes: with h the taps (scaled by `up`), c the centre and u the input with
/// up − 1 zeros after each sample, output n is Σ_k h[k]·u[down·n + c − k]. For the outputs
/// n = q + up·j of one phase q only the taps k of one parity (up = 2) or all taps (up = 1) meet
/// a sample, the sample being x[down·j + a(k)] with a(k) = (down·q + c − k) / up. The input is
/// kept split into `down` streams, S_r[t] = x[down·t + r]; grouping a phase's taps k < c by
/// residue makes each group read two fixed streams at consecutive indices (one forwards, its
/// mirror tap backwards), so consecutive outputs of a phase read consecutive samples and one
/// vector computes many at once (``DSPKernels/Decimate``). Phases are computed apart and
/// interleaved. Every output is computed with the same operations in the same order whatever
/// the block boundaries.
final class SharpStage {
    let up: Int
    let down: Int
    /// Input samples beyond an output's position it needs: its lookahead, in input samples.
    let lookahead: Double
    private let kernels: DSPKernels
    private let phases: [Phase]
    /// The input streams, retained once here and released in `deinit`, and borrowed per use
    /// (``stream(_:_:)``): retaining and releasing them around every use cost a tenth of a
    /// 10 ms conversion on an Intel Xeon.
    private let streams: UnsafeMutablePointer<Unmanaged<SampleHistory>>
    /// Stream pointers for the kernel: slot 0 is the centre tap's sample, slots 1 … down the streams.
    private let slots: UnsafeMutablePointer<UnsafePointer<Float>>
    /// Per-phase outputs before interleaving (two phases only).
    private let scratch: UnsafeMutablePointer<Float>
    private let scratchCapacity: Int
    private let lowestIndex: Int
    @exclusivity(unchecked) private var received = 0
    @exclusivity(unchecked) private var next = 0

    /// One phase: its taps grouped by residue, as the decimate kernel takes them.
    struct Phase {
        /// One tap class per residue: its taps and the two stream slots it folds.
        let classes: UnsafeMutablePointer<DecimatorTapClass>
        let taps: UnsafeMutablePointer<Float>
        let splats: UnsafeMutablePointer<SIMD4<Float>>
        let centreTap: Float
        /// Stream and offset of the centre tap's sample (or of any sample read anyway, when the
        /// phase has no centre tap and `centreTap` is 0).
        let centreStream: Int
        let centreOffset: Int
        /// Largest and smallest a(k): the newest and oldest input the phase reads for j = 0.
        let newest: Int
        let oldest: Int
    }

    /// - Parameters:
    ///   - taps: symmetric, odd length, unit passband gain (scaled by `up` here).
    ///   - up: 1 or 2. - down: ≥ 1, coprime to `up`.
    ///   - maxInputBlock: the most input one ``process(_:into:)`` call receives.
    init(taps: [Double], up: Int, down: Int, maxInputBlock: Int, kernels: DSPKernels) {
        self.up = up
        self.down = down
        self.kernels = kernels
        let centre = (taps.count - 1) / 2
        func floorDivide(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }
        func modulo(_ a: Int, _ b: Int) -> Int { ((a % b) + b) % b }
        var phases = [Phase]()
        for q in 0..<up {
            // Taps of this phase: k ≡ down·q + c (mod up).
            let first = modulo(down * q + centre, up)
            var table = [DecimatorTapClass]()
            var coefficients = [Float]()
            for s in 0..<down {
                let start = coefficients.count
                var k = first + up * s
                var count = 0
                while k < centre {
                    coefficients.append(Float(Double(up) * taps[k]))
                    count += 1
                    k += up * down
                }
                // A group of zero taps (a half-band's) costs nothing.
                if coefficients[start...].allSatisfy({ $0 == 0 }) {
                    coefficients.removeSubrange(start...)
                    count = 0
                }
                let k0 = first + up * s
                let late = (down * q + centre - k0) / up
                let early = (down * q - centre + k0) / up
                table.append(DecimatorTapClass(
                    tapStart: start, tapCount: count,
                    forwardStream: 1 + modulo(early, down), forwardOffset: floorDivide(early, down),
                    backwardStream: 1 + modulo(late, down), backwardOffset: floorDivide(late, down)))
            }
            let hasCentre = modulo(centre - first, up) == 0
            let centreA = hasCentre ? down * q / up : (down * q - centre + first) / up
            let classes = UnsafeMutablePointer<DecimatorTapClass>.allocate(capacity: table.count)
            classes.initialize(from: table, count: table.count)
            let tapStore = UnsafeMutablePointer<Float>.allocate(capacity: max(coefficients.count, 1))
            tapStore.initialize(from: coefficients, count: coefficients.count)
            let splats = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: max(coefficients.count, 1))
            splats.initialize(from: coefficients.map { SIMD4(repeating: $0) }, count: coefficients.count)
            phases.append(Phase(
                classes: classes, taps: tapStore, splats: splats,
                centreTap: hasCentre ? Float(Double(up) * taps[centre]) : 0,
                centreStream: modulo(centreA, down), centreOffset: floorDivide(centreA, down),
                newest: (down * q + centre - first) / up, oldest: (down * q - centre + first) / up))
        }
        self.phases = phases
        lookahead = Double(centre) / Double(up)
        lowestIndex = floorDivide(phases.map(\.oldest).min() ?? 0, down)
        let streamCapacity = 2 * taps.count / down + maxInputBlock / down + 16
        streams = .allocate(capacity: down)
        for r in 0..<down { (streams + r).initialize(to: .passRetained(SampleHistory(capacity: streamCapacity, readSlack: DSPKernels.readSlack))) }
        slots = .allocate(capacity: down + 1)
        let anyStream = UnsafePointer(streams[0].takeUnretainedValue().storage)
        for r in 0...down { (slots + r).initialize(to: anyStream) }
        scratchCapacity = up == 1 ? 1 : 2 * (maxInputBlock / down + 4)
        scratch = .allocate(capacity: scratchCapacity)
        reset()
    }

    deinit {
        for phase in phases {
            phase.classes.deallocate()
            phase.taps.deallocate()
            phase.splats.deallocate()
        }
        for r in 0..<down { streams[r].release() }
        streams.deallocate()
        slots.deallocate()
        scratch.deallocate()
    }

    /// Runs `body` on stream `r`, borrowed: no reference counting.
    @inline(__always) private func stream<Result>(_ r: Int, _ body: (SampleHistory) -> Result) -> Result {
        streams[r]._withUnsafeGuaranteedRef(body)
    }

    var arithmeticPerOutput: ResamplerArithmetic {
        var total = ResamplerArithmetic.none
        for phase in phases {
            let folded = (0..<down).reduce(0) { $0 + phase.classes[$1].tapCount }
            let centre = phase.centreTap == 0 ? 0 : 1
            // The kernel multiplies the centre sample even when its tap is 0.
            total = total + ResamplerArithmetic(multiplyAdds: Double(2 * folded + centre), executedMultiplyAdds: Double(folded + 1))
        }
        return total.scaled(by: 1 / Double(phases.count))
    }

    func reset() {
        var r = 0
        while r < down {
            stream(r) { $0.reset(leadingZeros: -lowestIndex + 1) }
            r += 1
        }
        received = 0
        next = 0
    }

    func maxOutput(forInput count: Int) -> Int { count * up / down + 2 * up + 2 }

    /// Consumes all of `input`, writes every output now complete, returns how many.
    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        guard let source = input.baseAddress else { return 0 }
        let phaseOfInput = received - down * quotient(received)
        // (While loops: iterating an array or a range of streams allocates when unoptimised.)
        var r = 0
        while r < down {
            let first = r >= phaseOfInput ? r - phaseOfInput : r - phaseOfInput + down
            if first < input.count {
                let count = quotient(input.count - first + down - 1)
                stream(r) { stream in
                    kernels.takeEvery(source + first, down, stream.reserve(count), count)
                    stream.commit(count)
                }
            }
            r += 1
        }
        received += input.count
        return emitOutputs(into: output)
    }

    /// Stereo into a decimate-by-2 stage: the downmix is dealt out to the two input streams in
    /// the same pass (``DSPKernels/downmixStereoFloatSplit``, ``DSPKernels/downmixStereoInt16Split``);
    /// then as ``process(_:into:)``, with the same outputs. Nil for any other stage.
    func processStereo(_ stereo: InterleavedStereo, frames: Int, into output: UnsafeMutablePointer<Float>) -> Int? {
        guard up == 1, down == 2 else { return nil }
        // The next sample belongs to stream (received mod 2); the two alternate from there.
        let firstStream = received & 1, secondStream = 1 - (received & 1)
        let firstCount = (frames + 1) / 2, secondCount = frames / 2
        let first = stream(firstStream) { $0.reserve(firstCount) }, second = stream(secondStream) { $0.reserve(secondCount) }
        switch stereo {
        case .float32(let source): kernels.downmixStereoFloatSplit(source, first, second, frames)
        case .int16(let source): kernels.downmixStereoInt16Split(source, first, second, frames)
        }
        stream(firstStream) { $0.commit(firstCount) }
        stream(secondStream) { $0.commit(secondCount) }
        received += frames
        return emitOutputs(into: output)
    }

    /// Writes every output the received input completes, then drops input no output needs.
    private func emitOutputs(into output: UnsafeMutablePointer<Float>) -> Int {
        // Outputs of phase q are available while their newest input has arrived; outputs leave
        // in order, so the prefix every phase has reached.
        var available = Int.max
        var q = 0
        while q < up {
            let newest = phases[q].newest
            let count = received > newest ? quotient(received - 1 - newest) + 1 : 0
            available = min(available, up * count + q)
            q += 1
        }
        let count = max(available - next, 0)
        if count > 0 {
            if up == 1 {
                run(phase: 0, from: next, count: count, into: output)
            } else {
                // Phase q holds outputs n ≡ q (mod 2); compute each run, then interleave.
                let evenStart = (next + 1) / 2, evenEnd = (next + count + 1) / 2
                let oddStart = next / 2, oddEnd = (next + count) / 2
                run(phase: 0, from: evenStart, count: evenEnd - evenStart, into: scratch)
                let odd = scratch + scratchCapacity / 2
                run(phase: 1, from: oddStart, count: oddEnd - oddStart, into: odd)
                interleave(even: scratch, odd: odd, startingOdd: next & 1 == 1, count: count, into: output)
            }
            next += count
        }
        // next / up, up being 1 or 2.
        let oldestIndex = (up == 1 ? next : next >> 1) + lowestIndex - 1
        var r = 0
        while r < down {
            stream(r) { $0.discard(before: oldestIndex) }
            r += 1
        }
        return count
    }

    /// `value / down` for `value` ≥ 0. The chains use factors 2 and 3 only, and a constant divisor
    /// compiles to a shift or a multiply: each call of ``process(_:into:)`` divides a handful of times, and
    /// hardware divisions were a fifth of its time at 10 ms buffers.
    @inline(__always) private func quotient(_ value: Int) -> Int {
        switch down {
        case 2: value >> 1
        case 3: value / 3
        default: value / down
        }
    }

    /// Writes `count` outputs alternating between the two phase runs, starting with an odd one
    /// when `startingOdd`; the whole pairs by ``DSPKernels/interleavePairs``.
    private func interleave(even: UnsafePointer<Float>, odd: UnsafePointer<Float>, startingOdd: Bool, count: Int, into output: UnsafeMutablePointer<Float>) {
        guard count > 0 else { return }
        let lead = startingOdd ? 1 : 0
        if startingOdd { output[0] = odd[0] }
        let pairs = (count - lead) / 2
        kernels.interleavePairs(even, odd + lead, output + lead, pairs)
        if (count - lead) & 1 == 1 { output[count - 1] = even[pairs] }
    }

    /// Computes `count` outputs of phase `q` starting at its j = `first`.
    private func run(phase q: Int, from first: Int, count: Int, into output: UnsafeMutablePointer<Float>) {
        guard count > 0 else { return }
        let phase = phases[q]
        slots[0] = UnsafePointer(stream(phase.centreStream) { $0.pointer(at: first + phase.centreOffset) })
        var r = 0
        while r < down {
            slots[r + 1] = UnsafePointer(stream(r) { $0.pointer(at: first) })
            r += 1
        }
        kernels.decimate(slots, phase.classes, down, phase.taps, phase.splats, phase.centreTap, output, count)
    }
}
