/// The shape of a PCM stream: rate, channels, sample encoding and layout.
///
/// An `AudioFormat` is only a description; it may be invalid (a device can report a zero sample rate).
/// Converters and taps never take an `AudioFormat` directly: pass it through ``FormatGuard`` first to
/// get a ``ValidatedFormat``.
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second. Whole numbers for every real device and file, but any `Double` underneath
    /// because hardware can report nonsense (0, NaN) that the guard must be able to see.
    public var sampleRate: SampleRate
    /// Samples per frame.
    public var channelCount: Int
    /// How one sample is stored.
    public var sampleType: SampleType
    /// `true`: frames are stored one after another (L R L R …). `false`: each channel is one
    /// contiguous block (all of L, then all of R), the layout players and ALSA's non-interleaved access use.
    public var isInterleaved: Bool

    public init(sampleRate: SampleRate, channelCount: Int, sampleType: SampleType, isInterleaved: Bool = true) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.sampleType = sampleType
        self.isInterleaved = isInterleaved
    }

    /// The capture format VoicePipe sends: 16 000 Hz, mono, Int16, interleaved.
    public static let captureTarget = AudioFormat(sampleRate: 16_000, channelCount: 1, sampleType: .int16, isInterleaved: true)

    /// The reply audio as it arrives on the wire: 24 000 Hz, mono, Int16 (little-endian).
    public static let wirePlayback = AudioFormat(sampleRate: 24_000, channelCount: 1, sampleType: .int16, isInterleaved: true)

    /// The only format a player accepts: 24 000 Hz, mono, Float32, deinterleaved (one contiguous
    /// buffer per channel). A 16-bit player connection crashes real devices, so players refuse it.
    public static let playback = AudioFormat(sampleRate: 24_000, channelCount: 1, sampleType: .float32, isInterleaved: false)

    /// Bytes one frame occupies (all channels), or 0 when the channel count is not positive.
    public var bytesPerFrame: Int { max(channelCount, 0) * sampleType.byteCount }

    public var description: String {
        let channels = channelCount == 1 ? "mono" : channelCount == 2 ? "stereo" : "\(channelCount) ch"
        let layout = channelCount > 1 ? (isInterleaved ? ", interleaved" : ", deinterleaved") : ""
        return "\(sampleRate), \(channels), \(sampleType)\(layout)"
    }
}
