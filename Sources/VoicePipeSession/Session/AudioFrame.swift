import VoicePipeCore

/// One captured frame that a session sends: 16 kHz mono Int16 samples and their peak level,
/// owned. The capture converter's ``CaptureFrame`` is a view valid only inside its callback;
/// this is the copy that outlives it (queued between threads, carried by
/// ``SessionAction/sendCapturedFrame(_:)``).
public struct AudioFrame: Sendable, Hashable {
    public let samples: [Int16]
    /// The frame's peak, from the converter (before rounding to Int16).
    public let level: PeakLevel

    public init(samples: [Int16], level: PeakLevel) {
        self.samples = samples
        self.level = level
    }
}
