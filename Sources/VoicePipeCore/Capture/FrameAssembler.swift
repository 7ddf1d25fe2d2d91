/// One frame of capture output: 16 kHz mono Int16 samples and their level.
///
/// A borrowed view of the converter's own storage, valid only during the callback that receives
/// it, and the compiler holds you to that. The frame is `~Copyable` and callbacks borrow it, so
/// keeping it does not compile: `let last = frame` is "'frame' is borrowed and cannot be
/// consumed", an array of frames is "does not conform to protocol 'Copyable'". The `Span` that
/// ``withSamples(_:)`` lends cannot leave its closure either ("lifetime-dependent variable
/// escapes its scope"). Keep ``copySamples()`` or the level instead.
public struct CaptureFrame: ~Copyable {
    /// Samples in this frame (the frame length, or fewer for the last frame of a stream).
    public let sampleCount: Int
    /// Peak, dBFS and digital-silence flag of this frame.
    public let level: PeakLevel
    /// Zero-based position of this frame in the stream.
    public let index: Int
    /// Output-sample index of the frame's first sample (divide by 16 000 for seconds).
    public let startSample: Int
    @usableFromInline let base: UnsafePointer<Int16>

    init(base: UnsafePointer<Int16>, sampleCount: Int, level: PeakLevel, index: Int, startSample: Int) {
        self.base = base
        self.sampleCount = sampleCount
        self.level = level
        self.index = index
        self.startSample = startSample
    }

    /// Lends the frame's samples to `body` as a `Span`, which cannot outlive the call.
    /// - Returns: what `body` returns.
    /// - Throws: whatever `body` throws.
    @inlinable
    public func withSamples<Result, Failure: Error>(_ body: (Span<Int16>) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(Span(_unsafeStart: base, count: sampleCount))
    }

    /// An owned copy of the frame's samples, to keep after the callback.
    public func copySamples() -> [Int16] {
        Array(UnsafeBufferPointer(start: base, count: sampleCount))
    }
}

/// Cuts a stream of Float32 samples into fixed-length Int16 frames with their peak level.
///
/// The frame length is fixed at init; ``flush(_:)`` delivers the last, partial frame.
public final class FrameAssembler {
    /// Samples per full frame.
    public let frameLength: Int
    private let kernels: DSPKernels
    private let peaks: UnsafeMutablePointer<ConversionPeaks>
    private let floatFrame: UnsafeMutablePointer<Float>
    private let intFrame: UnsafeMutablePointer<Int16>
    @exclusivity(unchecked) private var filled = 0
    @exclusivity(unchecked) private var nextIndex = 0
    @exclusivity(unchecked) private var nextStart = 0

    /// - Parameters:
    ///   - frameLength: samples per full frame.
    ///   - kernels: whose Int16 conversion to use (every set converts identically).
    public init(frameLength: Int, kernels: DSPKernels = .best) {
        self.frameLength = max(frameLength, 1)
        self.kernels = kernels
        peaks = .allocate(capacity: 1)
        peaks.initialize(to: ConversionPeaks())
        floatFrame = .allocate(capacity: self.frameLength)
        floatFrame.initialize(repeating: 0, count: self.frameLength)
        intFrame = .allocate(capacity: self.frameLength)
        intFrame.initialize(repeating: 0, count: self.frameLength)
    }

    deinit {
        peaks.deallocate()
        floatFrame.deallocate()
        intFrame.deallocate()
    }

    /// Frames delivered so far in this stream.
    public var framesDelivered: Int { nextIndex }

    /// Appends samples; calls `deliver` for every frame completed.
    public func append(_ samples: UnsafeBufferPointer<Float>, _ deliver: (borrowing CaptureFrame) throws -> Void) rethrows {
        guard let base = samples.baseAddress else { return }
        var offset = 0
        while offset < samples.count {
            let take = min(frameLength - filled, samples.count - offset)
            (floatFrame + filled).update(from: base + offset, count: take)
            filled += take
            offset += take
            if filled == frameLength {
                try emit(deliver)
            }
        }
    }

    /// Delivers the partial frame, if any, and starts a new stream.
    public func flush(_ deliver: (borrowing CaptureFrame) throws -> Void) rethrows {
        if filled > 0 {
            try emit(deliver)
        }
        reset()
    }

    /// Drops any partial frame and starts a new stream.
    public func reset() {
        filled = 0
        nextIndex = 0
        nextStart = 0
    }

    private func emit(_ deliver: (borrowing CaptureFrame) throws -> Void) rethrows {
        let count = filled
        kernels.convertToInt16(floatFrame, intFrame, count, peaks)
        let frame = CaptureFrame(
            base: intFrame, sampleCount: count,
            level: PeakLevel(peak: Int(peaks.pointee.output), floatPeak: peaks.pointee.input),
            index: nextIndex,
            startSample: nextStart)
        filled = 0
        nextIndex += 1
        nextStart += count
        try deliver(frame)
    }
}
