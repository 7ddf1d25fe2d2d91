/// The sharp decimator by a whole factor D (2, 3, 4 or 6): the last stage when the output rate is
/// the lower one.
///
/// Output n is centred on input sample D·n (no delay in the output's time base) and uses the
/// ``SharpFilter`` design for D, folded by symmetry: (length + 1) / 2 multiplies per output.
///
/// Implementation notes: the input is kept split into D streams, S_r[m] = x[D·m + r]. With h the
/// taps and c the centre, output n is
///
/// ```
///   h[c]·S_0[n] + Σ_k h[k]·(x[D·n − c + k] + x[D·n + c − k]),   k < c
/// ```
///
/// and for the taps k = D·j + s of one residue class s both samples come from fixed streams at
/// n + a_s + j and n + b_s − j. Consecutive outputs read consecutive stream samples, so a SIMD
/// vector computes 16 outputs at once with plain loads. Every output, vector lane or scalar tail,
/// uses the same operations in the same order (``reference(_:)``): centre, then class 0, 1, …,
/// each in ascending j; so the result does not depend on how the input was cut into blocks.
final class SharpDecimator {
    /// The decimation factor.
    let factor: Int
    /// Input samples the stage must see after an output's centre: its lookahead.
    let lookahead: Int
    private let centreTap: Float
    /// Per residue class: where its taps start in `classTaps`, how many, and the streams and
    /// starting offsets of its two samples.
    private let classes: UnsafeMutablePointer<TapClass>
    private let classTaps: UnsafeMutablePointer<Float>
    /// The same taps splatted across 4-lane vectors: one load per tap in the vector loop.
    private let classSplats: UnsafeMutablePointer<SIMD4<Float>>
    private let streams: [SampleHistory]
    /// Each stream's storage, for the kernels (arrays are avoided on the hot path: even iterating
    /// one allocates in an unoptimised build).
    private let streamHandles: UnsafeMutablePointer<Unmanaged<SampleHistory>>
    /// The lowest stream offset any tap reads, relative to n (≤ 0).
    private let lowestOffset: Int
    /// Input samples received in this stream.
    private var received = 0
    /// Index of the next output.
    private var next = 0

    struct TapClass {
        let start: Int
        let count: Int
        let forwardStream: Int
        let forwardOffset: Int
        let backwardStream: Int
        let backwardOffset: Int
    }

    /// Outputs per vector step.
    static let lanes = 16

    /// - Parameters:
    ///   - factor: 2, 3, 4 or 6.
    ///   - maxInputBlock: the most input one ``process(_:into:)`` call receives.
    init(factor: Int, maxInputBlock: Int) throws(ResamplerError) {
        let taps: [Double]
        switch SharpFilter.taps(factor: factor) {
        case .success(let designed): taps = designed
        case .failure(let error): throw .filterDesignFailed(error.description)
        }
        self.factor = factor
        let centre = (taps.count - 1) / 2
        lookahead = centre
        centreTap = Float(taps[centre])
        func floorDivide(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }
        func modulo(_ a: Int, _ b: Int) -> Int { ((a % b) + b) % b }
        var classes = [TapClass]()
        var coefficients = [Float]()
        for s in 0..<factor {
            var j = 0
            let start = coefficients.count
            while factor * j + s < centre {
                coefficients.append(Float(taps[factor * j + s]))
                j += 1
            }
            classes.append(TapClass(
                start: start, count: j,
                forwardStream: modulo(s - centre, factor), forwardOffset: floorDivide(s - centre, factor),
                backwardStream: modulo(centre - s, factor), backwardOffset: floorDivide(centre - s, factor)))
        }
        self.classes = .allocate(capacity: factor)
        self.classes.initialize(from: classes, count: factor)
        classTaps = .allocate(capacity: max(coefficients.count, 1))
        classTaps.initialize(from: coefficients, count: coefficients.count)
        classSplats = .allocate(capacity: max(coefficients.count, 1))
        classSplats.initialize(from: coefficients.map { SIMD4(repeating: $0) }, count: coefficients.count)
        lowestOffset = classes.map(\.forwardOffset).min() ?? 0
        let streamCapacity = 2 * taps.count / factor + maxInputBlock / factor + 8
        streams = (0..<factor).map { _ in SampleHistory(capacity: streamCapacity) }
        streamHandles = .allocate(capacity: factor)
        streamHandles.initialize(from: streams.map { Unmanaged.passUnretained($0) }, count: factor)
        reset()
    }

    deinit {
        classes.deallocate()
        classTaps.deallocate()
        classSplats.deallocate()
        streamHandles.deallocate()
    }

    private func stream(_ r: Int) -> SampleHistory {
        streamHandles[r].takeUnretainedValue()
    }

    func reset() {
        for r in 0..<factor { stream(r).reset(leadingZeros: -lowestOffset) }
        received = 0
        next = 0
    }

    func maxOutput(forInput count: Int) -> Int { count / factor + 2 }

    /// Consumes all of `input`, writes every output now complete, returns how many.
    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        guard let source = input.baseAddress else { return 0 }
        let phase = received % factor
        for r in 0..<factor {
            let first = (r - phase + factor) % factor
            if first < input.count {
                stream(r).appendStrided(source + first, stride: factor, count: (input.count - first + factor - 1) / factor)
            }
        }
        received += input.count

        // Output n needs x up to D·n + c.
        let available = received > lookahead ? (received - lookahead - 1) / factor + 1 : 0
        var next = self.next
        var produced = 0
        let pointers = Pointers(factor: factor, at: next) { stream($0) }
        var offset = 0
        while next &+ Self.lanes <= available {
            let block = vector(pointers, offset)
            UnsafeMutableRawPointer(output + produced).storeBytes(of: block, as: SIMD16<Float>.self)
            produced &+= Self.lanes
            next &+= Self.lanes
            offset &+= Self.lanes
        }
        while next < available {
            output[produced] = reference(pointers, offset)
            produced &+= 1
            next &+= 1
            offset &+= 1
        }
        self.next = next
        for r in 0..<factor { stream(r).discard(before: next + lowestOffset) }
        return produced
    }

    /// Each stream's sample at the first output's index, for the kernels.
    struct Pointers {
        let bases: (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>)

        init(factor: Int, at index: Int, stream: (Int) -> SampleHistory) {
            func base(_ r: Int) -> UnsafePointer<Float> { UnsafePointer(stream(min(r, factor - 1)).pointer(at: index)) }
            bases = (base(0), base(1), base(2), base(3), base(4), base(5))
        }

        @inline(__always)
        subscript(_ stream: Int) -> UnsafePointer<Float> {
            switch stream {
            case 0: bases.0
            case 1: bases.1
            case 2: bases.2
            case 3: bases.3
            case 4: bases.4
            default: bases.5
            }
        }
    }

    /// Sixteen consecutive outputs starting `offset` after the pointers' index, lane k computed
    /// exactly as ``reference(_:_:)`` computes output offset + k.
    @inline(__always)
    private func vector(_ pointers: Pointers, _ offset: Int) -> SIMD16<Float> {
        @inline(__always) func load(_ p: UnsafePointer<Float>) -> SIMD16<Float> {
            UnsafeRawPointer(p).loadUnaligned(as: SIMD16<Float>.self)
        }
        @inline(__always) func splat(_ tap: SIMD4<Float>) -> SIMD16<Float> {
            let eight = SIMD8(lowHalf: tap, highHalf: tap)
            return SIMD16(lowHalf: eight, highHalf: eight)
        }
        var sum = SIMD16(repeating: centreTap) * load(pointers[0] + offset)
        for s in 0..<factor {
            let tapClass = classes[s]
            let taps = classSplats + tapClass.start
            let forward = pointers[tapClass.forwardStream] + (offset + tapClass.forwardOffset)
            let backward = pointers[tapClass.backwardStream] + (offset + tapClass.backwardOffset)
            for j in 0..<tapClass.count {
                sum += splat(taps[j]) * (load(forward + j) + load(backward - j))
            }
        }
        return sum
    }

    /// One output, plainly: the arithmetic every vector lane repeats.
    @inline(__always)
    private func reference(_ pointers: Pointers, _ offset: Int) -> Float {
        var sum = centreTap * pointers[0][offset]
        for s in 0..<factor {
            let tapClass = classes[s]
            let taps = classTaps + tapClass.start
            let forward = pointers[tapClass.forwardStream] + (offset + tapClass.forwardOffset)
            let backward = pointers[tapClass.backwardStream] + (offset + tapClass.backwardOffset)
            for j in 0..<tapClass.count {
                sum += taps[j] * (forward[j] + backward[-j])
            }
        }
        return sum
    }
}
