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
/// n + a_s + j and n + b_s − j. Consecutive outputs read consecutive stream samples, so a vector
/// computes many outputs at once with plain loads (``DSPKernels/Decimate``).
final class SharpDecimator {
    /// The decimation factor.
    let factor: Int
    /// Input samples the stage must see after an output's centre: its lookahead.
    let lookahead: Int
    private let kernels: DSPKernels
    private let centreTap: Float
    /// Per residue class: tap start, tap count, forward stream and offset, backward stream and offset.
    private let classes: UnsafeMutablePointer<Int>
    private let classTaps: UnsafeMutablePointer<Float>
    /// The same taps splatted across 4-lane vectors.
    private let classSplats: UnsafeMutablePointer<SIMD4<Float>>
    private let streams: [SampleHistory]
    /// Each stream's sample at the next output's index, handed to the kernel.
    private let streamPointers: UnsafeMutablePointer<UnsafePointer<Float>>
    /// The lowest stream offset any tap reads, relative to n (≤ 0).
    private let lowestOffset: Int
    /// Input samples received in this stream.
    private var received = 0
    /// Index of the next output.
    private var next = 0

    /// - Parameters:
    ///   - factor: 2, 3, 4 or 6.
    ///   - maxInputBlock: the most input one ``process(_:into:)`` call receives.
    ///   - kernels: the inner loops to use.
    init(factor: Int, maxInputBlock: Int, kernels: DSPKernels) throws(ResamplerError) {
        let taps: [Double]
        switch SharpFilter.taps(factor: factor) {
        case .success(let designed): taps = designed
        case .failure(let error): throw .filterDesignFailed(error.description)
        }
        self.factor = factor
        self.kernels = kernels
        let centre = (taps.count - 1) / 2
        lookahead = centre
        centreTap = Float(taps[centre])
        func floorDivide(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }
        func modulo(_ a: Int, _ b: Int) -> Int { ((a % b) + b) % b }
        var table = [Int]()
        var coefficients = [Float]()
        for s in 0..<factor {
            let start = coefficients.count
            var j = 0
            while factor * j + s < centre {
                coefficients.append(Float(taps[factor * j + s]))
                j += 1
            }
            table += [start, j, modulo(s - centre, factor), floorDivide(s - centre, factor), modulo(centre - s, factor), floorDivide(centre - s, factor)]
        }
        classes = .allocate(capacity: table.count)
        classes.initialize(from: table, count: table.count)
        classTaps = .allocate(capacity: max(coefficients.count, 1))
        classTaps.initialize(from: coefficients, count: coefficients.count)
        classSplats = .allocate(capacity: max(coefficients.count, 1))
        classSplats.initialize(from: coefficients.map { SIMD4(repeating: $0) }, count: coefficients.count)
        lowestOffset = stride(from: 3, to: table.count, by: 6).map { table[$0] }.min() ?? 0
        let streamCapacity = 2 * taps.count / factor + maxInputBlock / factor + 8
        streams = (0..<factor).map { _ in SampleHistory(capacity: streamCapacity) }
        streamPointers = .allocate(capacity: factor)
        for r in 0..<factor { (streamPointers + r).initialize(to: UnsafePointer(streams[r].storage)) }
        reset()
    }

    deinit {
        classes.deallocate()
        classTaps.deallocate()
        classSplats.deallocate()
        streamPointers.deallocate()
    }

    func reset() {
        var r = 0
        while r < factor {
            streams[r].reset(leadingZeros: -lowestOffset)
            r += 1
        }
        received = 0
        next = 0
    }

    func maxOutput(forInput count: Int) -> Int { count / factor + 2 }

    /// Consumes all of `input`, writes every output now complete, returns how many.
    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        guard let source = input.baseAddress else { return 0 }
        let phase = received % factor
        // (While loops: even iterating an array or a range of streams allocates when unoptimised.)
        var r = 0
        while r < factor {
            let first = (r - phase + factor) % factor
            if first < input.count {
                streams[r].appendStrided(source + first, stride: factor, count: (input.count - first + factor - 1) / factor)
            }
            r += 1
        }
        received += input.count

        // Output n needs x up to D·n + c.
        let available = received > lookahead ? (received - lookahead - 1) / factor + 1 : 0
        let count = max(available - next, 0)
        if count > 0 {
            r = 0
            while r < factor {
                streamPointers[r] = UnsafePointer(streams[r].pointer(at: next))
                r += 1
            }
            kernels.decimate(streamPointers, classes, factor, classTaps, classSplats, centreTap, output, count)
            next += count
        }
        r = 0
        while r < factor {
            streams[r].discard(before: next + lowestOffset)
            r += 1
        }
        return count
    }
}
