/// Where a captured block sits on the device's frame count and on the monotonic clock.
///
/// `framePosition` counts frames since the stream started, at the rate of the stream the block
/// belongs to; `instant` is the monotonic clock (nanoseconds, `CLOCK_MONOTONIC`) at which the
/// block's first frame reached the microphone. On ALSA that instant is "now − delay / rate" taken
/// at read time, `snd_pcm_delay` frames still being in the device when the block was read.
public struct CapturedBlockStamp: Sendable, Hashable {
    /// Frames of the stream before the block's first frame.
    public var framePosition: Int
    /// Monotonic nanoseconds at which the block's first frame was captured.
    public var instant: Int64

    public init(framePosition: Int, instant: Int64) {
        self.framePosition = framePosition
        self.instant = instant
    }

    /// The stamp of frame `frame` of a stream at `outputRate` made from this stream at `rate`,
    /// as a converter that keeps time (output frame n is the input's time n / outputRate) makes it:
    /// how a 16 kHz block after the capture converter gets its stamp from the device's.
    /// - Parameters:
    ///   - frame: the output frame, counted from the output stream's start.
    ///   - outputRate: the output stream's rate.
    ///   - rate: this stamp's stream rate (the device's).
    public func stamp(ofFrame frame: Int, atRate outputRate: SampleRate, fromRate rate: SampleRate) -> CapturedBlockStamp {
        let seconds = Double(frame) / outputRate.hertz - Double(framePosition) / rate.hertz
        return CapturedBlockStamp(framePosition: frame, instant: instant + Int64((seconds * 1e9).rounded()))
    }
}

/// Where a period the speaker plays sits on the device's frame count and on the monotonic clock.
///
/// `framePosition` counts frames written to the device since its stream started; `instant` is the
/// monotonic clock (nanoseconds, `CLOCK_MONOTONIC`) at which the period's first frame will be
/// heard: "now + delay / rate" at write time, `delay` being the frames queued ahead of it.
public struct PlayedPeriodStamp: Sendable, Hashable {
    /// Frames written to the device before the period's first frame.
    public var framePosition: Int
    /// Monotonic nanoseconds at which the period's first frame is heard.
    public var instant: Int64

    public init(framePosition: Int, instant: Int64) {
        self.framePosition = framePosition
        self.instant = instant
    }
}

/// One period as the speaker plays it: the samples after fades and cuts (silence included) at the
/// device's rate, and its stamp.
///
/// The samples are borrowed from the renderer: valid only during the call that hands the period
/// over, so an observer copies what it keeps (``EchoReferenceAligner/submit(_:)`` does).
public struct PlayedPeriod {
    /// The first channel's samples, full scale ±1 (a reply is mono; every channel carries it).
    public let samples: UnsafeBufferPointer<Float>
    /// The device's rate.
    public let sampleRate: SampleRate
    /// The period's place on the device's frame count and the monotonic clock.
    public let stamp: PlayedPeriodStamp

    public init(samples: UnsafeBufferPointer<Float>, sampleRate: SampleRate, stamp: PlayedPeriodStamp) {
        self.samples = samples
        self.sampleRate = sampleRate
        self.stamp = stamp
    }
}

/// Called by a reply output's render thread with each period it wrote, before the next period.
/// It must return quickly and never wait (no locks others hold, no actors, no allocation): the
/// usual observer is ``EchoReferenceAligner/submit(_:)``.
public typealias PlayedPeriodObserver = @Sendable (PlayedPeriod) -> Void
