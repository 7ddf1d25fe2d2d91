/// A block of deinterleaved Float32 audio: one contiguous run of samples per channel.
///
/// ```
///  base ─▶ [ channel 0: frameCount samples ][ channel 1: frameCount samples ] …
///           ◀────────── channelStride ─────▶
/// ```
///
/// A borrowed view: the memory belongs to whoever handed the buffer out and is valid only for the
/// call that received it, and the compiler holds you to that. The buffer is `~Copyable` and sinks
/// and callbacks borrow it, so keeping it does not compile ("'buffer' is borrowed and cannot be
/// consumed"), nor does keeping the `Span` that ``withChannel(_:_:)`` lends ("lifetime-dependent
/// variable escapes its scope"). Keep ``copyChannel(_:)`` instead.
public struct PlaybackBuffer: ~Copyable {
    /// Frames in each channel.
    public let frameCount: Int
    /// Number of channels.
    public let channelCount: Int
    @usableFromInline let base: UnsafePointer<Float>
    @usableFromInline let channelStride: Int

    /// A view of `channelCount` runs of `frameCount` samples, `channelStride` samples apart.
    public init(base: UnsafePointer<Float>, frameCount: Int, channelCount: Int, channelStride: Int) {
        self.base = base
        self.frameCount = frameCount
        self.channelCount = channelCount
        self.channelStride = channelStride
    }

    /// Lends the samples of one channel (0-based, below ``channelCount``) to `body` as a `Span`,
    /// which cannot outlive the call.
    /// - Returns: what `body` returns.
    /// - Throws: whatever `body` throws.
    @inlinable
    public func withChannel<Result, Failure: Error>(_ index: Int, _ body: (Span<Float>) throws(Failure) -> Result) throws(Failure) -> Result {
        precondition((0..<channelCount).contains(index), "channel \(index) of a \(channelCount)-channel buffer")
        return try body(Span(_unsafeStart: base + index * channelStride, count: frameCount))
    }

    /// An owned copy of one channel's samples (0-based, below ``channelCount``), to keep after the call.
    public func copyChannel(_ index: Int) -> [Float] {
        precondition((0..<channelCount).contains(index), "channel \(index) of a \(channelCount)-channel buffer")
        return Array(UnsafeBufferPointer(start: base + index * channelStride, count: frameCount))
    }

    /// Lends the block's memory as it is laid out (see the diagram above), for a C call that takes
    /// every channel at once, such as ALSA's `snd_pcm_writen`; the pointer is valid only inside `body`.
    /// - Parameter body: gets the first sample of channel 0 and the distance between channels.
    @inlinable
    public func withUnsafeLayout<Result, Failure: Error>(_ body: (_ base: UnsafePointer<Float>, _ channelStride: Int) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(base, channelStride)
    }
}
