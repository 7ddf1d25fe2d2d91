/// A block of deinterleaved Float32 audio: one contiguous run of samples per channel.
///
/// ```
///  base ─▶ [ channel 0: frameCount samples ][ channel 1: frameCount samples ] …
///           ◀────────── channelStride ─────▶
/// ```
///
/// A view: the memory belongs to whoever handed the buffer out and is valid only for the call
/// that received it.
public struct PlaybackBuffer {
    /// Frames in each channel.
    public let frameCount: Int
    /// Number of channels.
    public let channelCount: Int
    private let base: UnsafePointer<Float>
    private let channelStride: Int

    /// A view of `channelCount` runs of `frameCount` samples, `channelStride` samples apart.
    public init(base: UnsafePointer<Float>, frameCount: Int, channelCount: Int, channelStride: Int) {
        self.base = base
        self.frameCount = frameCount
        self.channelCount = channelCount
        self.channelStride = channelStride
    }

    /// The samples of one channel (0-based).
    public func channel(_ index: Int) -> UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: base + index * channelStride, count: frameCount)
    }
}
