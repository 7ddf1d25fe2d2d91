/// Interleaved stereo samples (left, right, left, …) for ``BuiltInResampler/processStereo(_:frames:into:)``.
public enum InterleavedStereo {
    /// Float32 at full scale ±1; NaN counts as 0 and larger values are clamped.
    case float32(UnsafePointer<Float>)
    /// Int16, full scale 32768.
    case int16(UnsafePointer<Int16>)

    /// The samples from frame `frames` on.
    func advanced(by frames: Int) -> InterleavedStereo {
        switch self {
        case .float32(let samples): .float32(samples + 2 * frames)
        case .int16(let samples): .int16(samples + 2 * frames)
        }
    }

    /// Writes `frames` mono samples, (L + R) / 2 of the normalised samples, to `output`.
    func downmix(frames: Int, into output: UnsafeMutablePointer<Float>, kernels: DSPKernels) {
        switch self {
        case .float32(let samples): kernels.downmixStereoFloat(samples, output, frames)
        case .int16(let samples): kernels.downmixStereoInt16(samples, output, frames)
        }
    }
}

/// One rate-changing stage of the built-in resampler's chain.
protocol ResamplingStage: AnyObject {
    /// Consumes all of `input`, writes every output now complete, returns how many.
    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int
    /// The most outputs one call with `count` inputs can write.
    func maxOutput(forInput count: Int) -> Int
    func reset()
    /// The stage, for calls without reference counting.
    var reference: StageReference { get }
    /// The filter arithmetic of one output of this stage, averaged over its phases.
    var arithmeticPerOutput: ResamplerArithmetic { get }
    /// Downmixes `frames` of `stereo` straight into the stage's input and writes every output now
    /// complete, as ``process(_:into:)`` would after a separate downmix; nil (nothing consumed)
    /// when the stage has no such path for this input.
    func processStereo(_ stereo: InterleavedStereo, frames: Int, into output: UnsafeMutablePointer<Float>) -> Int?
}

extension ResamplingStage {
    func processStereo(_ stereo: InterleavedStereo, frames: Int, into output: UnsafeMutablePointer<Float>) -> Int? { nil }
}

extension SharpStage: ResamplingStage {
    var reference: StageReference { .sharp(.passUnretained(self)) }
}

extension PolyphaseStage: ResamplingStage {
    var reference: StageReference { .polyphase(.passUnretained(self)) }
}

extension DoubleRateInterpolator: ResamplingStage {
    var reference: StageReference { .interpolator(.passUnretained(self)) }
}

/// A stage of the chain, unretained (the resampler's `stages` own them) and called without
/// reference counting: a call through the protocol retains and releases the stage around it,
/// which was 3-5 % of a 10 ms conversion on an Intel Xeon.
enum StageReference {
    case sharp(Unmanaged<SharpStage>)
    case polyphase(Unmanaged<PolyphaseStage>)
    case interpolator(Unmanaged<DoubleRateInterpolator>)

    /// ``ResamplingStage/process(_:into:)`` of the stage.
    @inline(__always) func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        switch self {
        case .sharp(let stage): stage._withUnsafeGuaranteedRef { $0.process(input, into: output) }
        case .polyphase(let stage): stage._withUnsafeGuaranteedRef { $0.process(input, into: output) }
        case .interpolator(let stage): stage._withUnsafeGuaranteedRef { $0.process(input, into: output) }
        }
    }

    /// ``ResamplingStage/processStereo(_:frames:into:)`` of the stage.
    @inline(__always) func processStereo(_ stereo: InterleavedStereo, frames: Int, into output: UnsafeMutablePointer<Float>) -> Int? {
        switch self {
        case .sharp(let stage): stage._withUnsafeGuaranteedRef { $0.processStereo(stereo, frames: frames, into: output) }
        case .polyphase(let stage): stage._withUnsafeGuaranteedRef { $0.processStereo(stereo, frames: frames, into: output) }
        case .interpolator(let stage): stage._withUnsafeGuaranteedRef { $0.processStereo(stereo, frames: frames, into: output) }
        }
    }
}

/// VoicePipe's own resampler: any rate to any rate from 1 kHz to 768 kHz, up or down.
///
/// A short chain of stages, each doing what it is cheap at:
///
/// ```
///  44.1 kHz → 16 kHz:  PolyphaseStage ─▶ 32 kHz ─▶ SharpStage ↓2 ─▶ output
///  48 kHz → 16 kHz:    half-band ↓2 ─▶ 24 kHz ─▶ SharpStage ↑2↓3 ─▶ output
///  32 kHz → 16 kHz:    SharpStage ↓2 ─▶ output        (96, 192 kHz: more half-bands first)
///  8 kHz → 44.1 kHz:   DoubleRateInterpolator ─▶ 16 kHz ─▶ PolyphaseStage ─▶ output
/// ```
///
/// The sharp stage (an equiripple filter at twice the lower rate, or at three times it for the
/// 2/3 stage) sets the response: flat within ±0.08 dB up to 87.5 % of the lower Nyquist frequency
/// and at least 106 dB down from the lower Nyquist frequency up. Half-band decimators (every other
/// tap zero) and the polyphase stage bridge to the other rate with wide transition bands that keep
/// their aliases and images out of the band the sharp stage protects, 106 dB down. Equal rates
/// copy. The inner loops are ``DSPKernels``: portable Swift, or a CPU-specific set installed at
/// run time.
///
/// Every stage is linear phase and centred, so output frame n is the signal at time
/// n / outputRate exactly (no delay to compensate), and a stream of N input frames gives exactly
/// ``RationalRatio/outputFrames(forInputFrames:)`` output frames. Output depends only on the
/// samples, never on how they were cut into buffers.
public final class BuiltInResampler: Resampler {
    public let inputRate: SampleRate
    public let outputRate: SampleRate
    /// The exact conversion ratio.
    public let ratio: RationalRatio
    public let latency: Double
    /// The inner loops this resampler runs.
    public let kernels: DSPKernels
    /// The filter arithmetic of one output frame, over the whole chain of stages.
    public let arithmetic: ResamplerArithmetic

    /// Input frames processed per internal block; bounds every internal buffer.
    private static let blockFrames = 1024

    private let stages: [any ResamplingStage]
    /// The same stages, for the per-block calls.
    private let chain: [StageReference]
    /// Output of every stage but the last, and the most each stage may write per block.
    private let buffers: [UnsafeMutablePointer<Float>]
    private let capacities: [Int]
    private let staging: UnsafeMutablePointer<Float>
    private let zeros: UnsafeMutablePointer<Float>
    @exclusivity(unchecked) private var consumedFrames = 0
    @exclusivity(unchecked) private var producedFrames = 0

    /// Builds a resampler; all memory is allocated here.
    /// - Parameters:
    ///   - kernels: the inner loops; the fastest set this CPU runs (``DSPKernels/best``) by default.
    /// - Throws: ``ResamplerError/unsupportedRate(_:)`` for a rate outside 1 kHz … 768 kHz.
    public init(inputRate: SampleRate, outputRate: SampleRate, kernels: DSPKernels = .best) throws(ResamplerError) {
        self.kernels = kernels
        self.inputRate = inputRate
        self.outputRate = outputRate
        ratio = try RationalRatio(inputRate: inputRate, outputRate: outputRate)
        // The chain of stages below is designed in hertz.
        let inputRate = inputRate.hertz, outputRate = outputRate.hertz
        let block = Self.blockFrames
        var stages = [any ResamplingStage]()
        var latency = 0.0
        var capacity = block
        var capacities = [Int]()
        var arithmetic = ResamplerArithmetic.none
        func add(_ stage: any ResamplingStage, lookahead seconds: Double, outputRate stageOutputRate: Double) {
            arithmetic = arithmetic + stage.arithmeticPerOutput.scaled(by: stageOutputRate / outputRate)
            capacity = stage.maxOutput(forInput: capacity)
            capacities.append(capacity)
            stages.append(stage)
            latency += seconds
        }
        func sharpTaps(_ factor: Int) throws(ResamplerError) -> [Double] {
            switch SharpFilter.taps(factor: factor) {
            case .success(let taps): return taps
            case .failure(let error): throw .filterDesignFailed(error.description)
            }
        }
        if ratio.up == ratio.down {
            // Equal rates: the chain is empty and blocks are copied.
        } else if outputRate < inputRate {
            // Whole factors 2^k and 3·2^k go through half-bands to twice (or one and a half times)
            // the output rate, then the sharp stage; anything else bridges to twice the output
            // rate with the polyphase stage first.
            var factor = ratio.up == 1 ? ratio.down : 0
            var halfBands = 0
            while factor > 0 && factor % 2 == 0 && factor != 2 {
                factor /= 2
                halfBands += 1
            }
            // 3·fout goes through 1.5·fout: one more half-band before the 2/3 stage.
            if factor == 3 { halfBands += 1 }
            var rate = inputRate
            if factor == 3 || factor == 2 {
                for _ in 0..<halfBands {
                    let halfBand = SharpStage(taps: SharpFilter.halfBand(rate: rate, band: outputRate / 2), up: 1, down: 2, maxInputBlock: capacity, kernels: kernels)
                    add(halfBand, lookahead: halfBand.lookahead / rate, outputRate: rate / 2)
                    rate /= 2
                }
            } else {
                let wide = try PolyphaseStage(inputRate: inputRate, outputRate: 2 * outputRate, lowerRate: outputRate, maxInputBlock: capacity, kernels: kernels)
                add(wide, lookahead: Double(wide.lookahead) / inputRate, outputRate: 2 * outputRate)
                rate = 2 * outputRate
                factor = 2
            }
            let sharp = factor == 3
                ? SharpStage(taps: try sharpTaps(3), up: 2, down: 3, maxInputBlock: capacity, kernels: kernels)
                : SharpStage(taps: try sharpTaps(2), up: 1, down: 2, maxInputBlock: capacity, kernels: kernels)
            add(sharp, lookahead: sharp.lookahead / rate, outputRate: outputRate)
        } else {
            let interpolator = try DoubleRateInterpolator(maxInputBlock: capacity, kernels: kernels)
            add(interpolator, lookahead: Double(DoubleRateInterpolator.lookahead) / inputRate, outputRate: 2 * inputRate)
            if ratio.up != ratio.down * 2 {
                let wide = try PolyphaseStage(inputRate: 2 * inputRate, outputRate: outputRate, lowerRate: inputRate, maxInputBlock: capacity, kernels: kernels)
                add(wide, lookahead: Double(wide.lookahead) / (2 * inputRate), outputRate: outputRate)
            }
        }
        self.stages = stages
        chain = stages.map(\.reference)
        self.arithmetic = arithmetic
        self.capacities = capacities
        self.latency = latency
        buffers = capacities.dropLast().map { UnsafeMutablePointer<Float>.allocate(capacity: $0) }
        staging = .allocate(capacity: max(capacity, block))
        zeros = .allocate(capacity: block)
        zeros.initialize(repeating: 0, count: block)
    }

    deinit {
        for buffer in buffers { buffer.deallocate() }
        staging.deallocate()
        zeros.deallocate()
    }

    public func maxOutputFrames(forInputFrames count: Int) -> Int {
        (count * ratio.up + ratio.down - 1) / ratio.down + 3
    }

    public var maxFlushFrames: Int {
        Int((latency * outputRate.hertz).rounded(.up)) + 4
    }

    public func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) throws(ResamplerError) -> Int {
        let needed = maxOutputFrames(forInputFrames: input.count)
        guard output.count >= needed else { throw .outputBufferTooSmall(needed: needed, available: output.count) }
        guard let source = input.baseAddress, let destination = output.baseAddress else { return 0 }
        var produced = 0
        var offset = 0
        while offset < input.count {
            let count = min(Self.blockFrames, input.count - offset)
            // The caller's buffer holds maxOutputFrames for the whole input, so each block's output
            // goes straight into it.
            let made = runChain(UnsafeBufferPointer(start: source + offset, count: count), into: destination + produced)
            produced += made
            offset += count
        }
        consumedFrames += input.count
        producedFrames += produced
        return produced
    }

    /// Downmixes interleaved stereo frames to mono ((L + R) / 2 of the normalised samples, as
    /// ``DSPKernels/downmixStereoFloat`` and ``DSPKernels/downmixStereoInt16`` compute it) and
    /// resamples them: the same output as downmixing first and calling ``process(_:into:)``. The
    /// downmix writes straight into the first stage's input where that stage allows it (a
    /// decimate-by-2 stage, as 48 kHz → 16 kHz starts; the polyphase stage, as 44.1 kHz → 16 kHz
    /// starts): one pass over the samples fewer.
    /// - Parameters:
    ///   - stereo: `2 · frames` samples, left then right.
    ///   - output: at least ``maxOutputFrames(forInputFrames:)`` frames.
    public func processStereo(_ stereo: InterleavedStereo, frames: Int, into output: UnsafeMutableBufferPointer<Float>) throws(ResamplerError) -> Int {
        let needed = maxOutputFrames(forInputFrames: frames)
        guard output.count >= needed else { throw .outputBufferTooSmall(needed: needed, available: output.count) }
        guard let destination = output.baseAddress, frames > 0 else { return 0 }
        var produced = 0
        var offset = 0
        while offset < frames {
            let count = min(Self.blockFrames, frames - offset)
            let block = stereo.advanced(by: offset)
            // The first stage writes where the second reads, or into the output when it is the only one.
            let target = stages.count > 1 ? buffers[0] : destination + produced
            if !chain.isEmpty, let made = chain[0].processStereo(block, frames: count, into: target) {
                assert(made <= capacities[0], "a resampling stage wrote past the output it was sized for")
                produced += runStages(from: 1, UnsafeBufferPointer(start: target, count: made), into: destination + produced)
            } else {
                // `staging` (only flush uses it otherwise) holds the block's mono samples.
                block.downmix(frames: count, into: staging, kernels: kernels)
                produced += runChain(UnsafeBufferPointer(start: staging, count: count), into: destination + produced)
            }
            offset += count
        }
        consumedFrames += frames
        producedFrames += produced
        return produced
    }

    public func flush(into output: UnsafeMutableBufferPointer<Float>) throws(ResamplerError) -> Int {
        guard output.count >= maxFlushFrames else { throw .outputBufferTooSmall(needed: maxFlushFrames, available: output.count) }
        let total = ratio.outputFrames(forInputFrames: consumedFrames)
        var written = 0
        if let destination = output.baseAddress {
            // The stream continues as silence until every output frame it owes is complete.
            var rounds = 0
            while producedFrames + written < total && rounds < 1_000 {
                let made = runChain(UnsafeBufferPointer(start: zeros, count: Self.blockFrames), into: staging)
                let keep = min(made, total - producedFrames - written)
                (destination + written).update(from: staging, count: keep)
                written += keep
                rounds += 1
            }
        }
        reset()
        return written
    }

    public func reset() {
        var index = 0
        while index < stages.count {
            stages[index].reset()
            index += 1
        }
        consumedFrames = 0
        producedFrames = 0
    }

    /// Runs one block (at most `blockFrames`) through the stages into `output`.
    private func runChain(_ block: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        guard !stages.isEmpty else {
            if let base = block.baseAddress { output.update(from: base, count: block.count) }
            return block.count
        }
        return runStages(from: 0, block, into: output)
    }

    /// Runs `input` through the stages from `first` on into `output`; with no stage left, the
    /// input is already in place.
    private func runStages(from first: Int, _ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        // (A while loop: iterating an array allocates when unoptimised.)
        var current = input
        var index = first
        while index < stages.count {
            let target = index == stages.count - 1 ? output : buffers[index]
            let count = chain[index].process(current, into: target)
            assert(count <= capacities[index], "a resampling stage wrote past the output it was sized for")
            current = UnsafeBufferPointer(start: target, count: count)
            index += 1
        }
        return current.count
    }
}
