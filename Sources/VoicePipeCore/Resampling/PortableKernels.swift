import CVoicePipeKernels

/// The portable Swift kernels behind ``DSPKernels/portable``: SIMD code that compiles to
/// SSE2 on the x86-64 baseline, each with the plain arithmetic every vector lane repeats.
///
/// Implementation notes: only lane-wise operators appear in the loops (the generic SIMD
/// conversions and `pointwiseMax` compile to scalar code on this toolchain), taps come splatted
/// across four lanes (one load instead of a load and a shuffle), and shuffles that the optimiser
/// would otherwise hoist into the tap loops live in non-inlined helpers.
enum PortableKernels {
    @inline(__always)
    static func load16(_ p: UnsafePointer<Float>) -> SIMD16<Float> {
        UnsafeRawPointer(p).loadUnaligned(as: SIMD16<Float>.self)
    }

    @inline(__always)
    static func load8(_ p: UnsafePointer<Float>) -> SIMD8<Float> {
        UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
    }

    @inline(__always)
    static func load4(_ p: UnsafePointer<Float>) -> SIMD4<Float> {
        UnsafeRawPointer(p).loadUnaligned(as: SIMD4<Float>.self)
    }

    // MARK: Sharp decimator

    /// See ``DSPKernels/Decimate``: 16 outputs per vector step, then singly.
    static func decimate(
        _ streams: UnsafePointer<UnsafePointer<Float>>, _ classes: UnsafePointer<DecimatorTapClass>, _ factor: Int,
        _ taps: UnsafePointer<Float>, _ splats: UnsafePointer<SIMD4<Float>>, _ centre: Float,
        _ output: UnsafeMutablePointer<Float>, _ count: Int
    ) {
        var produced = 0
        while produced &+ 16 <= count {
            let block = decimateVector(streams, classes, factor, splats, centre, produced)
            UnsafeMutableRawPointer(output + produced).storeBytes(of: block, as: SIMD16<Float>.self)
            produced &+= 16
        }
        if produced < count {
            // The last few outputs: one more vector, its extra lanes discarded (within the read slack).
            let block = decimateVector(streams, classes, factor, splats, centre, produced)
            for lane in 0..<(count &- produced) { output[produced &+ lane] = block[lane] }
        }
    }

    @inline(__always)
    static func decimateVector(
        _ streams: UnsafePointer<UnsafePointer<Float>>, _ classes: UnsafePointer<DecimatorTapClass>, _ factor: Int,
        _ splats: UnsafePointer<SIMD4<Float>>, _ centre: Float, _ offset: Int
    ) -> SIMD16<Float> {
        @inline(__always) func splat(_ tap: SIMD4<Float>) -> SIMD16<Float> {
            let eight = SIMD8(lowHalf: tap, highHalf: tap)
            return SIMD16(lowHalf: eight, highHalf: eight)
        }
        var sum = SIMD16(repeating: centre) * load16(streams[0] + offset)
        for s in 0..<factor {
            let tapClass = classes[s]
            let taps = splats + tapClass.tapStart
            let forward = streams[tapClass.forwardStream] + (offset &+ tapClass.forwardOffset)
            let backward = streams[tapClass.backwardStream] + (offset &+ tapClass.backwardOffset)
            for j in 0..<tapClass.tapCount {
                sum += splat(taps[j]) * (load16(forward + j) + load16(backward - j))
            }
        }
        return sum
    }

    /// One decimator output, plainly: centre, then each class in ascending j.
    @inline(__always)
    static func decimateReference(
        _ streams: UnsafePointer<UnsafePointer<Float>>, _ classes: UnsafePointer<DecimatorTapClass>, _ factor: Int,
        _ taps: UnsafePointer<Float>, _ centre: Float, _ offset: Int
    ) -> Float {
        var sum = centre * streams[0][offset]
        for s in 0..<factor {
            let tapClass = classes[s]
            let classTaps = taps + tapClass.tapStart
            let forward = streams[tapClass.forwardStream] + (offset + tapClass.forwardOffset)
            let backward = streams[tapClass.backwardStream] + (offset + tapClass.backwardOffset)
            for j in 0..<tapClass.tapCount {
                sum += classTaps[j] * (forward[j] + backward[-j])
            }
        }
        return sum
    }

    // MARK: Interpolator

    /// See ``DSPKernels/Interpolate``: the pairs of 8 inputs per vector step, then singly.
    static func interpolate(
        _ x: UnsafePointer<Float>, _ evenTaps: UnsafePointer<Float>, _ oddTaps: UnsafePointer<Float>,
        _ evenSplats: UnsafePointer<SIMD4<Float>>, _ oddSplats: UnsafePointer<SIMD4<Float>>, _ centre: Float,
        _ output: UnsafeMutablePointer<Float>, _ count: Int
    ) {
        var i = 0
        while i &+ 8 <= count {
            let pairs = interpolateVector(x + i, evenSplats, oddSplats, centre)
            UnsafeMutableRawPointer(output + 2 &* i).storeBytes(of: pairs, as: SIMD16<Float>.self)
            i &+= 8
        }
        if i < count {
            // The last few pairs: one more vector, its extra lanes discarded (within the read slack).
            let pairs = interpolateVector(x + i, evenSplats, oddSplats, centre)
            for lane in 0..<(2 &* (count &- i)) { output[2 &* i &+ lane] = pairs[lane] }
        }
    }

    @inline(__always)
    static func interpolateVector(_ x: UnsafePointer<Float>, _ evenTaps: UnsafePointer<SIMD4<Float>>, _ oddTaps: UnsafePointer<SIMD4<Float>>, _ centre: Float) -> SIMD16<Float> {
        @inline(__always) func splat(_ tap: SIMD4<Float>) -> SIMD8<Float> {
            SIMD8(lowHalf: tap, highHalf: tap)
        }
        // One pass for both: x[i + 32 − t] is shared by the even and the odd sum.
        var even = SIMD8(repeating: centre) * load8(x)
        var odd = SIMD8<Float>()
        for t in 0..<32 {
            let late = load8(x + 32 - t)
            even += splat(evenTaps[t]) * (late + load8(x - 32 + t))
            odd += splat(oddTaps[t]) * (late + load8(x - 31 + t))
        }
        return interleave(even, odd)
    }

    /// (e0, o0, e1, o1, …). Not inlined: inlined, the optimiser pulls the shuffles into the tap
    /// loop and interleaves the accumulators on every tap, which runs far slower.
    @inline(never)
    static func interleave(_ even: SIMD8<Float>, _ odd: SIMD8<Float>) -> SIMD16<Float> {
        var pairs = SIMD16<Float>()
        pairs.evenHalf = even
        pairs.oddHalf = odd
        return pairs
    }

    /// Even output of input i, plainly: the centre tap on x[i] plus 32 symmetric pairs.
    @inline(__always)
    static func interpolateEven(_ x: UnsafePointer<Float>, _ taps: UnsafePointer<Float>, _ centre: Float) -> Float {
        var sum = centre * x[0]
        for t in 0..<32 {
            sum += taps[t] * (x[32 - t] + x[-32 + t])
        }
        return sum
    }

    /// Odd output of input i, plainly: 32 symmetric pairs around i + ½.
    @inline(__always)
    static func interpolateOdd(_ x: UnsafePointer<Float>, _ taps: UnsafePointer<Float>) -> Float {
        var sum: Float = 0
        for t in 0..<32 {
            sum += taps[t] * (x[32 - t] + x[-31 + t])
        }
        return sum
    }

    // MARK: Polyphase stage

    /// See ``DSPKernels/Polyphase``. The common row lengths get a call of their own so the
    /// dot products fully unroll.
    static func polyphase(_ origin: UnsafePointer<Float>, _ table: UnsafePointer<Float>, _ rowLength: Int, _ walk: UnsafePointer<PolyphaseWalk>, _ position: UnsafeMutablePointer<PolyphasePosition>, _ output: UnsafeMutablePointer<Float>) -> Int {
        let stepper = PolyphaseStepper(walk.pointee)
        switch rowLength {
        case 12: return stepper.run(origin, table, 12, position, output)
        case 16: return stepper.run(origin, table, 16, position, output)
        case 20: return stepper.run(origin, table, 20, position, output)
        case 24: return stepper.run(origin, table, 24, position, output)
        default: return stepper.run(origin, table, rowLength, position, output)
        }
    }

    /// Σ x[j]·c[j] over `count` taps (a multiple of 4): four lanes of partial sums, then
    /// (l0 + l2) + (l1 + l3).
    @inline(__always)
    static func dot(_ x: UnsafePointer<Float>, _ c: UnsafePointer<Float>, _ count: Int) -> Float {
        var sum = SIMD4<Float>()
        var j = 0
        while j < count {
            sum += load4(x + j) * load4(c + j)
            j &+= 4
        }
        let two = sum.lowHalf + sum.highHalf
        return two[0] + two[1]
    }

    /// Four independent ``dot(_:_:_:)``s, reduced together by a transpose; each result is
    /// bit-identical to ``dot(_:_:_:)`` of the same window and row.
    @inline(__always)
    static func dot4(
        _ x: (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>),
        _ c: (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>),
        _ count: Int
    ) -> SIMD4<Float> {
        var a = SIMD4<Float>(), b = SIMD4<Float>(), d = SIMD4<Float>(), e = SIMD4<Float>()
        var j = 0
        while j < count {
            a += load4(x.0 + j) * load4(c.0 + j)
            b += load4(x.1 + j) * load4(c.1 + j)
            d += load4(x.2 + j) * load4(c.2 + j)
            e += load4(x.3 + j) * load4(c.3 + j)
            j &+= 4
        }
        return reduce(a, b, d, e)
    }

    /// Lane k: (l0 + l2) + (l1 + l3) of sum k, as ``dot(_:_:_:)`` reduces. Not inlined: inlined,
    /// the optimiser pulls these shuffles into the tap loop of ``dot4(_:_:_:)``.
    @inline(never)
    static func reduce(_ a: SIMD4<Float>, _ b: SIMD4<Float>, _ d: SIMD4<Float>, _ e: SIMD4<Float>) -> SIMD4<Float> {
        let ab = SIMD4(a[0], b[0], a[1], b[1]) + SIMD4(a[2], b[2], a[3], b[3])
        let de = SIMD4(d[0], e[0], d[1], e[1]) + SIMD4(d[2], e[2], d[3], e[3])
        return SIMD4(ab[0], ab[1], de[0], de[1]) + SIMD4(ab[2], ab[3], de[2], de[3])
    }

    /// The plain arithmetic of ``dot(_:_:_:)``: lane k sums taps k, k+4, … in order.
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

/// The polyphase stage's output loop over plain values (a struct, not a closure over locals, so
/// it allocates nothing even unoptimised).
struct PolyphaseStepper {
    let up: Int
    let stepWhole: Int
    let stepPhase: Int
    let last: Int

    init(_ walk: PolyphaseWalk) {
        up = walk.phaseCount
        stepWhole = walk.stepWhole
        stepPhase = walk.stepPhase
        last = walk.end
    }

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
    func run(_ origin: UnsafePointer<Float>, _ table: UnsafePointer<Float>, _ length: Int, _ position: UnsafeMutablePointer<PolyphasePosition>, _ output: UnsafeMutablePointer<Float>) -> Int {
        var base = position.pointee.base
        var phase = position.pointee.phase
        var produced = 0
        while true {
            var b1 = base, p1 = phase
            advance(&b1, &p1)
            var b2 = b1, p2 = p1
            advance(&b2, &p2)
            var b3 = b2, p3 = p2
            advance(&b3, &p3)
            guard b3 < last else { break }
            let sums = PortableKernels.dot4(
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
            output[produced] = PortableKernels.dot(origin + base, table + phase &* length, length)
            produced &+= 1
            advance(&base, &phase)
        }
        position.pointee = PolyphasePosition(base: base, phase: phase)
        return produced
    }
}
