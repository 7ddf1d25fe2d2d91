/// Per-frame levels gathered into the numbers a summary reports: frames and samples delivered,
/// the loudest frame, the quietest frame that was not digital silence, and how many frames were.
///
/// A value type with no allocation; add each ``CaptureFrame`` as it is delivered.
public struct CaptureStatistics: Sendable, Hashable {
    /// Frames added.
    public private(set) var frames = 0
    /// 16 kHz samples in those frames.
    public private(set) var samples = 0
    /// Frames that were exact digital silence (a dead microphone, a muted source).
    public private(set) var silentFrames = 0
    /// The loudest frame's peak in dBFS (−∞ before any frame).
    public private(set) var maxDBFS = -Double.infinity
    /// The quietest frame that was not digital silence, if any.
    public private(set) var minNonSilentDBFS: Double?

    public init() {}

    /// Counts one delivered frame.
    public mutating func add(_ frame: borrowing CaptureFrame) {
        frames += 1
        samples += frame.sampleCount
        maxDBFS = max(maxDBFS, frame.level.dBFS)
        if frame.level.isDigitalSilence {
            silentFrames += 1
        } else {
            minNonSilentDBFS = min(minNonSilentDBFS ?? .infinity, frame.level.dBFS)
        }
    }

    /// Seconds of capture audio added (samples at the capture rate).
    public var seconds: Double { Double(samples) / AudioFormat.captureTarget.sampleRate.hertz }

    /// "peak -3.0 dBFS; 7 of 92 frames digital silence" ("no audio" in place of the peak when
    /// nothing was added).
    public var summary: String {
        let peak = frames == 0 ? "no audio" : "peak \(PeakLevel.format(maxDBFS)) dBFS"
        return "\(peak); \(silentFrames) of \(frames) frames digital silence"
    }
}
