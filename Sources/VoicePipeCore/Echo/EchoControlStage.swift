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
/// costs the user's words. Everything is allocated in `init`; nothing is allocated per frame. It is
/// used on one thread (the capture converter's).
public final class EchoControlStage {
    /// The backend that removes the echo.
    public let canceller: any EchoCanceller
    /// Where each block's far-end reference comes from.
    public let reference: EchoReferenceAligner
    /// Samples in each frame delivered.
    public let frameSamples: Int

    private let block = EchoBlock.frameCount
    private let near: UnsafeMutableBufferPointer<Float>
    private let far: UnsafeMutableBufferPointer<Float>
    private let cleaned: UnsafeMutableBufferPointer<Float>
    private var nearCount = 0
    /// The 16 kHz frame position and instant of `near[0]`.
    private var nearStamp = CapturedBlockStamp(framePosition: 0, instant: 0)
    private let frame: UnsafeMutableBufferPointer<Int16>
    private let frameFloats: UnsafeMutableBufferPointer<Float>
    private var frameCount = 0

    /// Blocks the canceller processed.
    public private(set) var blocksProcessed = 0
    /// Blocks the canceller failed on, sent on unprocessed.
    public private(set) var blocksPassedThrough = 0
    /// The first failure of the canceller, if any.
    public private(set) var firstFailure: EchoControlError?
    /// Energy (sum of squares, full scale 1) of the microphone and of the cleaned signal, over every block.
    public private(set) var microphoneEnergy = 0.0
    public private(set) var cleanedEnergy = 0.0

    /// - Parameter frameSamples: the length of the frames delivered (the capture's frame length).
    /// - Throws: ``EchoControlError/wrongBlockLength(near:far:output:)`` for a frame length below 1.
    public init(canceller: any EchoCanceller, reference: EchoReferenceAligner, frameSamples: Int) throws(EchoControlError) {
        guard frameSamples > 0 else { throw .wrongBlockLength(near: frameSamples, far: EchoBlock.frameCount, output: frameSamples) }
        self.canceller = canceller
        self.reference = reference
        self.frameSamples = frameSamples
        near = .allocate(capacity: EchoBlock.frameCount)
        far = .allocate(capacity: EchoBlock.frameCount)
        cleaned = .allocate(capacity: EchoBlock.frameCount)
        frame = .allocate(capacity: frameSamples)
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
        if nearCount == 0 { nearStamp = stamp }
        for sample in samples {
            near[nearCount] = SampleConversion.float(sample)
            nearCount += 1
            if nearCount == block { try cleanBlock(deliver) }
        }
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
            blocksProcessed += 1
        } catch {
            firstFailure = firstFailure ?? error
            blocksPassedThrough += 1
            _ = cleaned.update(fromContentsOf: near)
        }
        nearCount = 0
        nearStamp = CapturedBlockStamp(framePosition: stamp.framePosition + block,
                                       instant: stamp.instant + Int64(block) * 1_000_000_000 / Int64(EchoBlock.sampleRate.hertz))
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

    private func deliverFrame(_ deliver: (UnsafeBufferPointer<Int16>, PeakLevel) throws -> Void) rethrows {
        let count = frameCount
        frameCount = 0
        let level = PeakLevel(float: UnsafeBufferPointer(rebasing: frameFloats[0..<count]), int16: UnsafeBufferPointer(rebasing: frame[0..<count]))
        try deliver(UnsafeBufferPointer(rebasing: frame[0..<count]), level)
    }
}
