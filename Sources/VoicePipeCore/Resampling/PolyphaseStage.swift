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
    /// Taps per stored row: `taps` rounded up to whole vectors, the rest zero.
    let paddedTaps: Int
    private let halfTaps: Int
    /// Phase rows: exact mode `up` rows, interpolated mode `tablePhases + 1` rows, `taps` each.
    private let table: UnsafeMutablePointer<Float>
    /// Interpolated mode only: row differences (row i+1 − row i).
    private let slopes: UnsafeMutablePointer<Float>?
    private let tablePhases: Int
    private let history: SampleHistory
    private let stepWhole: Int
    private let stepPhase: Int
    /// Integer part of the next output's input position.
    private var base = 0
    /// Fractional part of the next output's input position, in units of 1/up.
    private var phase = 0

    /// Stopband attenuation of the prototype, dB: what reaches the kept band through this stage
    /// directly, matching the sharp stage's 106 dB.
    static let attenuation = 106.0

    /// Most phases that get an exact row of their own.
    static let maximumExactPhases = 4096

    /// - Parameters:
    ///   - inputRate, outputRate: the stage's rates in hertz.
    ///   - lowerRate: the lower of the whole conversion's two rates; the band kept is half of it.
    ///   - maxInputBlock: the most input one ``process(_:into:)`` call receives.
    init(inputRate: Double, outputRate: Double, lowerRate: Double, maxInputBlock: Int) throws(ResamplerError) {
        ratio = try RationalRatio(inputRate: inputRate, outputRate: outputRate)
        let relativeWidth = lowerRate / inputRate
        let (prototype, tapCount) = KaiserLowpass.design(cutoff: relativeWidth, transitionWidth: relativeWidth, attenuation: Self.attenuation)
        taps = tapCount
        paddedTaps = (tapCount + Self.lanes - 1) / Self.lanes * Self.lanes
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
        } else {
            let slopes = UnsafeMutablePointer<Float>.allocate(capacity: tablePhases * rowLength)
            for i in 0..<(tablePhases * rowLength) {
                slopes[i] = table[i + rowLength] - table[i]
            }
            self.slopes = slopes
        }
        history = SampleHistory(capacity: 2 * tapCount + maxInputBlock + 4, readSlack: paddedTaps - tapCount)
        reset()
    }

    deinit {
        table.deallocate()
        slopes?.deallocate()
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

    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        history.append(input)
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
            // The common row lengths get a call of their own so the dot product fully unrolls.
            let walk = Walk(origin: origin - halfTaps + 1, table: UnsafePointer(table), last: last, up: up, stepWhole: stepWhole, stepPhase: stepPhase)
            switch rowLength {
            case 12: walk.run(length: 12, base: &base, phase: &phase, output: output, produced: &produced)
            case 16: walk.run(length: 16, base: &base, phase: &phase, output: output, produced: &produced)
            case 20: walk.run(length: 20, base: &base, phase: &phase, output: output, produced: &produced)
            case 24: walk.run(length: 24, base: &base, phase: &phase, output: output, produced: &produced)
            default: walk.run(length: rowLength, base: &base, phase: &phase, output: output, produced: &produced)
            }
        }
        self.base = base
        self.phase = phase
        history.discard(before: base - halfTaps + 1)
        return produced
    }

    /// Lanes of the vector dot product (rows are padded with zero taps to a multiple).
    static let lanes = 4

    /// Σ x[j]·c[j] over `count` taps (a multiple of 4): four lanes of partial sums, then a fixed
    /// pairwise reduction. ``referenceDot(_:_:_:)`` is the same arithmetic written plainly.
    @inline(__always)
    static func dot(_ x: UnsafePointer<Float>, _ c: UnsafePointer<Float>, _ count: Int) -> Float {
        var sum = SIMD4<Float>()
        var j = 0
        while j < count {
            sum += UnsafeRawPointer(x + j).loadUnaligned(as: SIMD4<Float>.self) * UnsafeRawPointer(c + j).loadUnaligned(as: SIMD4<Float>.self)
            j &+= 4
        }
        return reduce(sum)
    }

    /// The exact-table output loop, over locals (a struct, not captured variables, so it
    /// allocates nothing even unoptimised).
    struct Walk {
        /// Pointer to the first tap's sample for base 0.
        let origin: UnsafePointer<Float>
        let table: UnsafePointer<Float>
        let last: Int
        let up: Int
        let stepWhole: Int
        let stepPhase: Int

        @inline(__always)
        func advance(_ base: inout Int, _ phase: inout Int) {
            base &+= stepWhole
            phase &+= stepPhase
            if phase >= up {
                phase &-= up
                base &+= 1
            }
        }

        /// Four outputs at a time (four independent sums reduced by one transpose), then singly.
        @inline(__always)
        func run(length: Int, base: inout Int, phase: inout Int, output: UnsafeMutablePointer<Float>, produced: inout Int) {
            while true {
                var b1 = base, p1 = phase
                advance(&b1, &p1)
                var b2 = b1, p2 = p1
                advance(&b2, &p2)
                var b3 = b2, p3 = p2
                advance(&b3, &p3)
                guard b3 < last else { break }
                let sums = PolyphaseStage.dot4(
                    (origin + base, origin + b1, origin + b2, origin + b3),
                    (table + phase &* length, table + p1 &* length, table + p2 &* length, table + p3 &* length),
                    length)
                UnsafeMutableRawPointer(output + produced).storeBytes(of: sums, as: SIMD4<Float>.self)
                produced &+= 4
                advance(&b3, &p3)
                base = b3
                phase = p3
            }
            while base < last {
                output[produced] = PolyphaseStage.dot(origin + base, table + phase &* length, length)
                produced &+= 1
                advance(&base, &phase)
            }
        }
    }

    /// Four independent ``dot(_:_:_:)``s, reduced together by a transpose; each result is
    /// bit-identical to ``dot(_:_:_:)`` of the same window and row.
    @inline(__always)
    static func dot4(
        _ x: (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>),
        _ c: (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>),
        _ count: Int
    ) -> SIMD4<Float> {
        @inline(__always) func load(_ p: UnsafePointer<Float>) -> SIMD4<Float> {
            UnsafeRawPointer(p).loadUnaligned(as: SIMD4<Float>.self)
        }
        var a = SIMD4<Float>(), b = SIMD4<Float>(), d = SIMD4<Float>(), e = SIMD4<Float>()
        var j = 0
        while j < count {
            a += load(x.0 + j) * load(c.0 + j)
            b += load(x.1 + j) * load(c.1 + j)
            d += load(x.2 + j) * load(c.2 + j)
            e += load(x.3 + j) * load(c.3 + j)
            j &+= 4
        }
        return reduce(a, b, d, e)
    }

    /// Lane k: (l0 + l2) + (l1 + l3) of sum k, as ``reduce(_:)`` computes it. Not inlined:
    /// inlined, the optimiser pulls these shuffles into the tap loop of ``dot4(_:_:_:)``.
    @inline(never)
    static func reduce(_ a: SIMD4<Float>, _ b: SIMD4<Float>, _ d: SIMD4<Float>, _ e: SIMD4<Float>) -> SIMD4<Float> {
        let ab = SIMD4(a[0], b[0], a[1], b[1]) + SIMD4(a[2], b[2], a[3], b[3])
        let de = SIMD4(d[0], e[0], d[1], e[1]) + SIMD4(d[2], e[2], d[3], e[3])
        return SIMD4(ab[0], ab[1], de[0], de[1]) + SIMD4(ab[2], ab[3], de[2], de[3])
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
        return reduce(sum)
    }

    /// (l0 + l2) + (l1 + l3).
    @inline(__always)
    static func reduce(_ sum: SIMD4<Float>) -> Float {
        let two = sum.lowHalf + sum.highHalf
        return two[0] + two[1]
    }

    /// The plain arithmetic of ``dot(_:_:_:)``: lane k sums taps k, k+4, k+8, … in order, then the
    /// lanes are reduced pairwise as ``reduce(_:)`` does.
    static func referenceDot(_ x: UnsafePointer<Float>, _ c: UnsafePointer<Float>, _ count: Int) -> Float {
        var lanes: (Float, Float, Float, Float) = (0, 0, 0, 0)
        var j = 0
        while j < count {
            lanes.0 += x[j] * c[j]
            lanes.1 += x[j + 1] * c[j + 1]
            lanes.2 += x[j + 2] * c[j + 2]
            lanes.3 += x[j + 3] * c[j + 3]
            j += 4
        }
        return (lanes.0 + lanes.2) + (lanes.1 + lanes.3)
    }
}
