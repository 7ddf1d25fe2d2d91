/// VoicePipe's own resampler: any rate to any rate from 1 kHz to 768 kHz, up or down.
///
/// Two stages, each doing what it is cheap at:
///
/// ```
///  down (44.1 kHz → 16 kHz): input ─▶ PolyphaseStage ─▶ 32 kHz ─▶ SharpDecimator(2) ─▶ output
///  down (48 kHz → 16 kHz):   input ─▶ SharpDecimator(3) ─▶ output
///  up   (8 kHz → 44.1 kHz): input ─▶ DoubleRateInterpolator ─▶ 16 kHz ─▶ PolyphaseStage ─▶ output
/// ```
///
/// The sharp stage (an equiripple filter at twice the lower rate, or at D times it for a whole
/// factor D of 2, 3, 4 or 6) sets the response: flat within ±0.08 dB up to 87.5 % of the lower
/// Nyquist frequency and at least 106 dB down from the lower Nyquist frequency up. The polyphase
/// stage bridges to the other rate with a wide transition band that keeps its aliases and images
/// out of the band the sharp stage protects, 106 dB down. When the sharp stage alone reaches the
/// other rate the polyphase stage is skipped; equal rates copy. The inner loops are
/// ``DSPKernels``: portable Swift, or a CPU-specific set installed at run time.
///
/// Both stages are linear phase and centred, so output frame n is the signal at time n / outputRate
/// exactly (no delay to compensate), and a stream of N input frames gives exactly
/// ``RationalRatio/outputFrames(forInputFrames:)`` output frames. Output depends only on the
/// samples, never on how they were cut into buffers.
public final class BuiltInResampler: Resampler {
    public let inputRate: Double
    public let outputRate: Double
    /// The exact conversion ratio.
    public let ratio: RationalRatio
    public let latency: Double

    /// Input frames processed per internal block; bounds every internal buffer.
    private static let blockFrames = 1024

    private enum Chain {
        case copy
        case down(PolyphaseStage?, SharpDecimator)
        case up(DoubleRateInterpolator, PolyphaseStage?)
    }

    private let chain: Chain
    private let middle: UnsafeMutablePointer<Float>
    private let middleCapacity: Int
    private let staging: UnsafeMutablePointer<Float>
    private let stagingCapacity: Int
    private let zeros: UnsafeMutablePointer<Float>
    private var consumedFrames = 0
    private var producedFrames = 0

    /// The inner loops this resampler runs.
    public let kernels: DSPKernels

    /// Builds a resampler; all memory is allocated here.
    /// - Parameters:
    ///   - kernels: the inner loops; ``DSPKernels/preferred`` by default.
    /// - Throws: ``ResamplerError/unsupportedRate(_:)`` for a rate outside 1 kHz … 768 kHz.
    public init(inputRate: Double, outputRate: Double, kernels: DSPKernels = .preferred) throws(ResamplerError) {
        self.kernels = kernels
        self.inputRate = inputRate
        self.outputRate = outputRate
        ratio = try RationalRatio(inputRate: inputRate, outputRate: outputRate)
        let block = Self.blockFrames
        if ratio.up == ratio.down {
            chain = .copy
            latency = 0
            middleCapacity = 0
            stagingCapacity = block
        } else if outputRate < inputRate {
            // A whole factor with its own sharp design goes in one stage; any other ratio first
            // goes to twice the output rate.
            let direct = ratio.up == 1 && SharpFilter.lengths[ratio.down] != nil
            let factor = direct ? ratio.down : 2
            let middleRate = Double(factor) * outputRate
            let wide = direct ? nil : try PolyphaseStage(inputRate: inputRate, outputRate: middleRate, lowerRate: outputRate, maxInputBlock: block, kernels: kernels)
            middleCapacity = wide?.maxOutput(forInput: block) ?? 0
            let decimator = try SharpDecimator(factor: factor, maxInputBlock: max(middleCapacity, block), kernels: kernels)
            stagingCapacity = decimator.maxOutput(forInput: max(middleCapacity, block))
            chain = .down(wide, decimator)
            latency = Double(decimator.lookahead) / middleRate + Double(wide?.lookahead ?? 0) / inputRate
        } else {
            let middleRate = 2 * inputRate
            let interpolator = try DoubleRateInterpolator(maxInputBlock: block, kernels: kernels)
            middleCapacity = interpolator.maxOutput(forInput: block)
            let wide = ratio.up == ratio.down * 2 ? nil : try PolyphaseStage(inputRate: middleRate, outputRate: outputRate, lowerRate: inputRate, maxInputBlock: middleCapacity, kernels: kernels)
            stagingCapacity = wide?.maxOutput(forInput: middleCapacity) ?? middleCapacity
            chain = .up(interpolator, wide)
            latency = Double(DoubleRateInterpolator.lookahead) / inputRate + Double(wide?.lookahead ?? 0) / middleRate
        }
        middle = .allocate(capacity: max(middleCapacity, 1))
        staging = .allocate(capacity: stagingCapacity)
        zeros = .allocate(capacity: block)
        zeros.initialize(repeating: 0, count: block)
    }

    deinit {
        middle.deallocate()
        staging.deallocate()
        zeros.deallocate()
    }

    public func maxOutputFrames(forInputFrames count: Int) -> Int {
        (count * ratio.up + ratio.down - 1) / ratio.down + 3
    }

    public var maxFlushFrames: Int {
        Int((latency * outputRate).rounded(.up)) + 4
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
        switch chain {
        case .copy:
            break
        case .down(let wide, let decimator):
            wide?.reset()
            decimator.reset()
        case .up(let interpolator, let wide):
            interpolator.reset()
            wide?.reset()
        }
        consumedFrames = 0
        producedFrames = 0
    }

    /// Runs one block (at most `blockFrames`) through the stages into `output`.
    private func runChain(_ block: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        switch chain {
        case .copy:
            if let base = block.baseAddress { output.update(from: base, count: block.count) }
            return block.count
        case .down(let wide, let decimator):
            guard let wide else { return decimator.process(block, into: output) }
            let middleCount = wide.process(block, into: middle)
            return decimator.process(UnsafeBufferPointer(start: middle, count: middleCount), into: output)
        case .up(let interpolator, let wide):
            guard let wide else { return interpolator.process(block, into: output) }
            let middleCount = interpolator.process(block, into: middle)
            return wide.process(UnsafeBufferPointer(start: middle, count: middleCount), into: output)
        }
    }
}
