/// The echo-control stage of the capture path: 16 kHz mono frames from the capture converter in,
/// the same frames with the speaker's echo removed out, each with the peak of the cleaned signal
/// (so the voice gate and the dead-microphone check read what is sent).
///
/// ```
///  capture converter ─▶ Int16 frames (any length, stamped) ─▶ 10 ms blocks ──┐
///                                                                            ├─▶ EchoCanceller ─▶ frames of `frameSamples`, cleaned peak
///  EchoReferenceAligner ─▶ what the speaker played when each block was captured ┘
/// ```
///
/// The stage re-cuts its input into the canceller's 10 ms blocks and its output back into frames
/// of the capture's length, so it holds at most one block and one frame back. A block the backend
/// fails on goes out unprocessed (counted in ``blocksPassedThrough``): a canceller problem never
/// costs the user's words. When the echo turns out later or earlier than the devices' stamps
/// say (``EchoDelayEstimator``), the stage moves the reference by that much. Everything is
/// allocated in `init`; nothing is allocated per frame. It is used on one thread (the capture
/// converter's).
public final class EchoControlStage {
    /// The backend that removes the echo.
    public let canceller: any EchoCanceller
    /// Where each block's far-end reference comes from.
    public let reference: EchoReferenceAligner
    /// Samples in each frame delivered.
    public let frameSamples: Int
    /// Holds back the echo while the canceller converges, if on.
    public let convergenceGuard: EchoConvergenceGuard?
    /// Finds the echo's real delay and moves the reference when the devices' stamps are off, if on.
    public let delayEstimator: EchoDelayEstimator?

    private let block = EchoBlock.frameCount
    private let near: UnsafeMutableBufferPointer<Float>
    private let far: UnsafeMutableBufferPointer<Float>
    private let cleaned: UnsafeMutableBufferPointer<Float>
    private var nearCount = 0
    /// The 16 kHz frame position and instant of `near[0]`.
    private var nearStamp = CapturedBlockStamp(framePosition: 0, instant: 0)
    private let frameStart: UnsafeMutablePointer<Int16>
    private let frame: UnsafeMutableBufferPointer<Int16>
    private let frameFloats: UnsafeMutableBufferPointer<Float>
    private var frameCount = 0
    private var framesDelivered = 0
    private var samplesDelivered = 0

    /// Blocks the canceller processed.
    public private(set) var blocksProcessed = 0
    /// Times the delay estimator moved the reference (each time the canceller starts afresh).
    public private(set) var delayCorrections = 0
    /// Times a new capture stream began (a microphone opened again, its frame positions counted
    /// from nothing): the canceller, the guard and the delay search each start afresh.
    public private(set) var captureRestarts = 0
    private var lastStampFrame: Int?
    /// Blocks the canceller failed on, sent on unprocessed.
    public private(set) var blocksPassedThrough = 0
    /// The first failure of the canceller, if any.
    public private(set) var firstFailure: EchoControlError?
    /// Energy (sum of squares, full scale 1) of the microphone and of the cleaned signal, over every block.
    public private(set) var microphoneEnergy = 0.0
    public private(set) var cleanedEnergy = 0.0
    /// Sees each 10 ms block as it was cleaned: the microphone's samples, the aligned reference,
    /// the cleaned samples (full scale ±1, valid only during the call) and the block's stamp; on
    /// the stage's thread. How a simulated room scores the echo removed against what it knows.
    public var blockObserver: ((_ microphone: UnsafeBufferPointer<Float>, _ reference: UnsafeBufferPointer<Float>, _ cleaned: UnsafeBufferPointer<Float>, _ stamp: CapturedBlockStamp) -> Void)?

    /// - Parameters:
    ///   - frameSamples: the length of the frames delivered (the capture's frame length).
    ///   - convergenceGuard: how the guard decides, or nil for none (the canceller's output as it is).
    ///   - delayEstimation: how the echo's delay is checked against the stamps, or nil to trust them.
    /// - Throws: ``EchoControlError/wrongBlockLength(near:far:output:)`` for a frame length below 1.
    public init(canceller: any EchoCanceller, reference: EchoReferenceAligner, frameSamples: Int,
                convergenceGuard: EchoConvergenceGuardOptions? = EchoConvergenceGuardOptions(),
                delayEstimation: EchoDelayEstimatorOptions? = EchoDelayEstimatorOptions()) throws(EchoControlError) {
        guard frameSamples > 0 else { throw .wrongBlockLength(near: frameSamples, far: EchoBlock.frameCount, output: frameSamples) }
        self.convergenceGuard = convergenceGuard.map { EchoConvergenceGuard(options: $0) }
        delayEstimator = delayEstimation.map { EchoDelayEstimator(options: $0) }
        self.canceller = canceller
        self.reference = reference
        self.frameSamples = frameSamples
        near = .allocate(capacity: EchoBlock.frameCount)
        far = .allocate(capacity: EchoBlock.frameCount)
        cleaned = .allocate(capacity: EchoBlock.frameCount)
        frameStart = .allocate(capacity: frameSamples)
        frame = UnsafeMutableBufferPointer(start: frameStart, count: frameSamples)
        frameFloats = .allocate(capacity: frameSamples)
    }

    deinit {
        near.deallocate()
        far.deallocate()
        cleaned.deallocate()
        frame.deallocate()
        frameFloats.deallocate()
    }

    /// Cleans `samples`, 16 kHz mono from the capture converter, whose first sample is at `stamp`
    /// (its 16 kHz frame position and the instant it was captured); `deliver` gets each whole
    /// frame of ``frameSamples`` and its peak, valid only during the call.
    public func process(_ samples: UnsafeBufferPointer<Int16>, stamp: CapturedBlockStamp,
                        _ deliver: (UnsafeBufferPointer<Int16>, PeakLevel) throws -> Void) rethrows {
        if let last = lastStampFrame, stamp.framePosition < last { restartForNewCapture() }
        lastStampFrame = stamp.framePosition
        if nearCount == 0 { nearStamp = stamp }
        for sample in samples {
            near[nearCount] = SampleConversion.float(sample)
            nearCount += 1
            if nearCount == block { try cleanBlock(deliver) }
        }
    }

    /// Cleans one frame from the capture converter whose first sample is at `stamp`; `deliver`
    /// gets each whole cleaned frame as a ``CaptureFrame`` numbered in the stage's own output
    /// (index and start sample count what the stage delivered), with the cleaned signal's peak.
    public func process(_ frame: borrowing CaptureFrame, stamp: CapturedBlockStamp, _ deliver: (borrowing CaptureFrame) throws -> Void) rethrows {
        try frame.withSamples { span in
            try span.withUnsafeBufferPointer { samples in
                try process(samples, stamp: stamp) { cleaned, level in try deliver(capturedFrame(cleaned, level)) }
            }
        }
    }

    /// Ends the stream as `flush(_:)` does (every sample given comes out), delivering ``CaptureFrame``s.
    public func flush(frames deliver: (borrowing CaptureFrame) throws -> Void) rethrows {
        try flush { cleaned, level in try deliver(capturedFrame(cleaned, level)) }
    }

    /// Ends the stream: the last partial block is cleaned (padded with silence) and the last
    /// partial frame delivered, so every sample given comes out.
    public func flush(_ deliver: (UnsafeBufferPointer<Int16>, PeakLevel) throws -> Void) rethrows {
        if nearCount > 0 {
            let real = nearCount
            for index in nearCount..<block { near[index] = 0 }
            nearCount = block
            try cleanBlock(deliver, keeping: real)
        }
        if frameCount > 0 { try deliverFrame(deliver) }
    }

    /// The echo the stage removed over the whole stream, in dB (microphone energy over cleaned
    /// energy); nil before any block or when the cleaned signal is digital silence.
    public var energyReductionDB: Double? {
        guard blocksProcessed > 0, cleanedEnergy > 0, microphoneEnergy > 0 else { return nil }
        return 10 * Elementary.log10(microphoneEnergy / cleanedEnergy)
    }

    private func cleanBlock(_ deliver: (UnsafeBufferPointer<Int16>, PeakLevel) throws -> Void, keeping count: Int = EchoBlock.frameCount) rethrows {
        let stamp = nearStamp
        reference.reference(for: stamp, into: far)
        do {
            try canceller.process(near: UnsafeBufferPointer(near), far: UnsafeBufferPointer(far), into: cleaned)
            convergenceGuard?.apply(near: UnsafeBufferPointer(near), far: UnsafeBufferPointer(far), output: cleaned)
            blocksProcessed += 1
            if let correction = delayEstimator?.observe(near: UnsafeBufferPointer(near), far: UnsafeBufferPointer(far)) {
                // The filter learnt the echo at the old offset: it starts again, and the guard
                // measures it afresh (the room, and so the echo path's gain, is the same).
                reference.delayCorrection += correction
                canceller.reset()
                convergenceGuard?.cancellerRestarted()
                delayCorrections += 1
            }
        } catch {
            firstFailure = firstFailure ?? error
            blocksPassedThrough += 1
            _ = cleaned.update(fromContentsOf: near)
        }
        nearCount = 0
        nearStamp = CapturedBlockStamp(framePosition: stamp.framePosition + block,
                                       instant: stamp.instant + Int64(block) * 1_000_000_000 / Int64(EchoBlock.sampleRate.hertz))
        blockObserver?(UnsafeBufferPointer(rebasing: near[0..<count]), UnsafeBufferPointer(rebasing: far[0..<count]), UnsafeBufferPointer(rebasing: cleaned[0..<count]), stamp)
        for index in 0..<count {
            let input = near[index], output = cleaned[index]
            microphoneEnergy += Double(input * input)
            cleanedEnergy += Double(output * output)
            frameFloats[frameCount] = output
            frame[frameCount] = SampleConversion.int16(output)
            frameCount += 1
            if frameCount == frameSamples { try deliverFrame(deliver) }
        }
    }

    /// Another microphone (or the same one opened again) hears the room from another place and
    /// another delay: what the canceller learnt and the delay found belong to the old one.
    private func restartForNewCapture() {
        captureRestarts += 1
        canceller.reset()
        convergenceGuard?.reset()
        delayEstimator?.restart()
        reference.delayCorrection = 0
    }

    /// A delivered frame (always the start of `frame`) as the capture path numbers it; counts it.
    private func capturedFrame(_ samples: UnsafeBufferPointer<Int16>, _ level: PeakLevel) -> CaptureFrame {
        defer {
            framesDelivered += 1
            samplesDelivered += samples.count
        }
        return CaptureFrame(base: UnsafePointer(frameStart), sampleCount: samples.count, level: level,
                            index: framesDelivered, startSample: samplesDelivered)
    }

    private func deliverFrame(_ deliver: (UnsafeBufferPointer<Int16>, PeakLevel) throws -> Void) rethrows {
        let count = frameCount
        frameCount = 0
        let level = PeakLevel(float: UnsafeBufferPointer(rebasing: frameFloats[0..<count]), int16: UnsafeBufferPointer(rebasing: frame[0..<count]))
        try deliver(UnsafeBufferPointer(rebasing: frame[0..<count]), level)
    }
}
