import CVoicePipeKernels

/// The arbitrary-ratio stage: a polyphase Kaiser-windowed-sinc filter with a wide transition band.
///
/// It converts between the doubled lower rate and the other rate (48 → 32 kHz, 32 → 44.1 kHz, …)
/// while the sharp 2:1 stage does the steep filtering. Its transition band runs from half the
/// lower rate to one and a half times it, so it needs only 10–90 taps.
///
/// Output n sits at input position n·down/up exactly (integer part `base`, fraction
/// `phase / up`), so the ratio is exact for any pair of whole-hertz rates. Up to 4096 phases get
/// their own precomputed row; beyond that (odd rates with a huge `up`), rows of a 4096-phase table
/// are interpolated linearly, which stays 130 dB below the signal.
final class PolyphaseStage {
    let ratio: RationalRatio
    /// Taps per output (even).
    let taps: Int
    /// Taps per stored row: `taps` rounded up to whole vectors of the kernels, the rest zero.
    let paddedTaps: Int
    private let halfTaps: Int
    /// Phase rows: exact mode `up` rows, interpolated mode `tablePhases + 1` rows, `taps` each.
    private let table: UnsafeMutablePointer<Float>
    /// Interpolated mode only: row differences (row i+1 − row i).
    private let slopes: UnsafeMutablePointer<Float>?
    private let tablePhases: Int
    /// The table laid out for a kernel set that computes sixteen outputs at once; nil otherwise.
    private let columnTable: PolyphaseColumnTable?
    private let history: SampleHistory
    private let kernels: DSPKernels
    /// The step and end, and the position, handed to the kernel.
    private let walk: UnsafeMutablePointer<PolyphaseWalk>
    private let position: UnsafeMutablePointer<PolyphasePosition>
    private let stepWhole: Int
    private let stepPhase: Int
    /// Integer part of the next output's input position.
    @exclusivity(unchecked) private var base = 0
    /// Fractional part of the next output's input position, in units of 1/up.
    @exclusivity(unchecked) private var phase = 0

    /// Stopband attenuation of the prototype, dB: what reaches the kept band through this stage
    /// directly, matching the sharp stage's 106 dB.
    static let attenuation = 106.0

    /// Most phases that get an exact row of their own.
    static let maximumExactPhases = 4096

    /// - Parameters:
    ///   - inputRate, outputRate: the stage's rates in hertz.
    ///   - lowerRate: the lower of the whole conversion's two rates; the band kept is half of it.
    ///   - maxInputBlock: the most input one ``process(_:into:)`` call receives.
    init(inputRate: Double, outputRate: Double, lowerRate: Double, maxInputBlock: Int, kernels: DSPKernels) throws(ResamplerError) {
        self.kernels = kernels
        ratio = try RationalRatio(inputRate: SampleRate(hertz: inputRate), outputRate: SampleRate(hertz: outputRate))
        let relativeWidth = lowerRate / inputRate
        let (prototype, tapCount) = KaiserLowpass.design(cutoff: relativeWidth, transitionWidth: relativeWidth, attenuation: Self.attenuation)
        taps = tapCount
        let multiple = max(kernels.polyphaseRowMultiple, 4)
        paddedTaps = (tapCount + multiple - 1) / multiple * multiple
        halfTaps = tapCount / 2
        stepWhole = ratio.down / ratio.up
        stepPhase = ratio.down % ratio.up

        let exact = ratio.up <= Self.maximumExactPhases
        tablePhases = exact ? ratio.up : Self.maximumExactPhases
        let rows = exact ? tablePhases : tablePhases + 1
        let rowLength = paddedTaps
        table = .allocate(capacity: rows * rowLength)
        table.initialize(repeating: 0, count: rows * rowLength)
        for row in 0..<rows {
            let fraction = Double(row) / Double(tablePhases)
            for j in 0..<tapCount {
                // Tap j multiplies input base − halfTaps + 1 + j, at distance fraction + halfTaps − 1 − j.
                table[row * rowLength + j] = Float(prototype.value(at: fraction + Double(halfTaps - 1 - j)))
            }
        }
        if exact {
            slopes = nil
            columnTable = kernels.polyphaseTakesColumns ? PolyphaseColumnTable(rows: table, rowLength: rowLength, ratio: ratio) : nil
        } else {
            columnTable = nil
            let slopes = UnsafeMutablePointer<Float>.allocate(capacity: tablePhases * rowLength)
            for i in 0..<(tablePhases * rowLength) {
                slopes[i] = table[i + rowLength] - table[i]
            }
            self.slopes = slopes
        }
        history = SampleHistory(capacity: 2 * tapCount + maxInputBlock + 4, readSlack: paddedTaps - tapCount)
        walk = .allocate(capacity: 1)
        walk.initialize(to: PolyphaseWalk(phaseCount: ratio.up, stepWhole: stepWhole, stepPhase: stepPhase, end: 0,
                                          columns: columnTable.map { UnsafePointer($0.columns) }))
        position = .allocate(capacity: 1)
        position.initialize(to: PolyphasePosition(base: 0, phase: 0))
        reset()
    }

    deinit {
        table.deallocate()
        slopes?.deallocate()
        walk.deallocate()
        position.deallocate()
    }

    /// Input samples the stage must see after an output's position: its lookahead.
    var lookahead: Int { halfTaps }

    func reset() {
        history.reset(leadingZeros: halfTaps - 1)
        base = 0
        phase = 0
    }

    func maxOutput(forInput count: Int) -> Int {
        (count * ratio.up + ratio.down - 1) / ratio.down + 2
    }

    /// A row's taps; an interpolated row also costs one multiply-add a tap to build.
    var arithmeticPerOutput: ResamplerArithmetic {
        let rowBuilding = slopes == nil ? 0 : Double(paddedTaps)
        return ResamplerArithmetic(multiplyAdds: Double(taps), executedMultiplyAdds: Double(paddedTaps) + rowBuilding)
    }

    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        history.append(input)
        return emitOutputs(into: output)
    }

    /// Stereo input downmixed straight into the history (no intermediate mono buffer); then as
    /// ``process(_:into:)``, with the same outputs.
    func processStereo(_ stereo: InterleavedStereo, frames: Int, into output: UnsafeMutablePointer<Float>) -> Int? {
        stereo.downmix(frames: frames, into: history.reserve(frames), kernels: kernels)
        history.commit(frames)
        return emitOutputs(into: output)
    }

    /// Writes every output the history now completes, then drops input no output needs.
    private func emitOutputs(into output: UnsafeMutablePointer<Float>) -> Int {
        // The loop works on locals: stored properties of a class would be reloaded, stored and
        // exclusivity-checked on every output.
        var base = self.base
        var phase = self.phase
        var produced = 0
        let up = ratio.up
        let stepWhole = self.stepWhole
        let stepPhase = self.stepPhase
        let halfTaps = self.halfTaps
        let rowLength = paddedTaps
        let last = history.end - halfTaps
        // Pointer to absolute index 0: only indices inside the history are ever read through it.
        let origin = UnsafePointer(history.pointer(at: history.start)) - history.start
        if let slopes {
            let phases = tablePhases
            while base < last {
                let scaled = phase &* phases
                let row = scaled / up
                let fraction = Float(scaled % up) / Float(up)
                output[produced] = Self.interpolatedDot(origin + (base &- halfTaps &+ 1), table + row &* rowLength, slopes + row &* rowLength, fraction, rowLength)
                produced &+= 1
                base &+= stepWhole
                phase &+= stepPhase
                if phase >= up {
                    phase &-= up
                    base &+= 1
                }
            }
        } else {
            walk.pointee.end = last
            position.pointee = PolyphasePosition(base: base, phase: phase)
            produced = kernels.polyphase(origin - halfTaps + 1, table, rowLength, walk, position, output)
            base = position.pointee.base
            phase = position.pointee.phase
        }
        self.base = base
        self.phase = phase
        history.discard(before: base - halfTaps + 1)
        return produced
    }

    /// Σ x[j]·(c[j] + f·d[j]): taps interpolated between two table rows, as ``dot(_:_:_:)`` sums.
    @inline(__always)
    static func interpolatedDot(_ x: UnsafePointer<Float>, _ c: UnsafePointer<Float>, _ d: UnsafePointer<Float>, _ f: Float, _ count: Int) -> Float {
        var sum = SIMD4<Float>()
        let fraction = SIMD4(repeating: f)
        var j = 0
        while j < count {
            let taps = UnsafeRawPointer(c + j).loadUnaligned(as: SIMD4<Float>.self) + fraction * UnsafeRawPointer(d + j).loadUnaligned(as: SIMD4<Float>.self)
            sum += UnsafeRawPointer(x + j).loadUnaligned(as: SIMD4<Float>.self) * taps
            j &+= 4
        }
        let two = sum.lowHalf + sum.highHalf
        return two[0] + two[1]
    }
}

/// A polyphase table laid out for the sixteen-lane kernel (``PolyphaseColumns``): the rows'
/// taps in columns by place in the period, each place's input offsets for the next fifteen
/// outputs, and its advance to the sixteenth.
final class PolyphaseColumnTable {
    let columns: UnsafeMutablePointer<PolyphaseColumns>
    private let taps: UnsafeMutablePointer<Float>
    private let offsets: UnsafeMutablePointer<UInt8>
    private let advances: UnsafeMutablePointer<UInt8>

    /// The largest input offset within sixteen consecutive outputs that the kernel's windows
    /// (32 samples, eight taps deep) can reach.
    static let maximumOffset = 24

    /// The columns of `rows` (`ratio.up` rows of `rowLength` taps); nil when sixteen consecutive
    /// outputs span more than ``maximumOffset`` input samples (steps above about 1.6).
    init?(rows: UnsafePointer<Float>, rowLength: Int, ratio: RationalRatio) {
        let phases = ratio.up, down = ratio.down
        // Place s sits at input position ⌊s·down / up⌋ from place 0, with phase s·down mod up.
        func position(_ place: Int) -> Int { place * down / phases }
        guard (0..<phases).allSatisfy({ position($0 + 15) - position($0) <= Self.maximumOffset }) else { return nil }
        // Whole 64-byte lines per row, from a 64-byte aligned start: sixteen places from a multiple
        // of sixteen are one aligned vector.
        let stride = (phases + 15 + 15) / 16 * 16
        taps = UnsafeMutableRawPointer.allocate(byteCount: rowLength * stride * MemoryLayout<Float>.stride, alignment: 64)
            .bindMemory(to: Float.self, capacity: rowLength * stride)
        taps.initialize(repeating: 0, count: rowLength * stride)
        offsets = .allocate(capacity: 16 * phases)
        advances = .allocate(capacity: phases)
        for place in 0..<(phases + 15) {
            let row = rows + (place * down % phases) * rowLength
            for j in 0..<rowLength { taps[j * stride + place] = row[j] }
        }
        for place in 0..<phases {
            for k in 0..<16 { offsets[16 * place + k] = UInt8(position(place + k) - position(place)) }
            advances[place] = UInt8(position(place + 16) - position(place))
        }
        columns = .allocate(capacity: 1)
        columns.initialize(to: PolyphaseColumns(taps: taps, stride: stride, offsets: offsets, advances: advances,
                                                placeOfPhaseStep: Self.inverse(down % phases, modulo: phases)))
    }

    deinit {
        UnsafeMutableRawPointer(taps).deallocate()
        offsets.deallocate()
        advances.deallocate()
        columns.deallocate()
    }

    /// x with x·value ≡ 1 (mod modulus), for value coprime to modulus; 0 for a modulus of 1.
    static func inverse(_ value: Int, modulo modulus: Int) -> Int {
        var (r0, r1) = (modulus, value)
        var (t0, t1) = (0, 1)
        while r1 != 0 {
            let quotient = r0 / r1
            (r0, r1) = (r1, r0 - quotient * r1)
            (t0, t1) = (t1, t0 - quotient * t1)
        }
        return ((t0 % modulus) + modulus) % modulus
    }
}
