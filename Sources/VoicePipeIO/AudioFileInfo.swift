import VoicePipeCore

/// What a file's header says: the facts `voicepipe info` prints, including an invalid format.
public struct AudioFileInfo: Sendable {
    /// The path the file was opened with.
    public let path: String
    /// The container as libsndfile names it: "WAV", "WAVEX", "AIFF", "FLAC", "OGG", "RF64", "RAW", ...
    public let container: String
    /// The encoding as libsndfile names it: "Signed 16 bit PCM", "32 bit float", "Vorbis", ...
    public let encoding: String
    /// The format as reported, which may be invalid (0 Hz, 0 channels). `sampleType` is the native type
    /// the reader delivers; `isInterleaved` is always `true`.
    public let format: AudioFormat
    /// The frames libsndfile reports as available (nil if unknown, e.g. an Ogg file without an end).
    /// For WAV and AIFF this is what the file really holds; for FLAC it is the stream header's count.
    public let frameCount: Int?
    /// The frames the header declares, when it declares any (WAV data size, RF64 `ds64`, AIFF
    /// `numSampleFrames`, FLAC `STREAMINFO`). A reader that finds fewer reports the file as truncated.
    public let declaredFrameCount: Int?

    /// The ``FormatGuard``'s verdict on ``format``.
    public var verdict: Result<ValidatedFormat, FormatRejection> { FormatGuard.verdict(for: format) }

    /// Whether the header declares more frames than libsndfile found in the file.
    public var isKnownTruncated: Bool {
        guard let frameCount, let declaredFrameCount else { return false }
        return frameCount < declaredFrameCount
    }

    public init(path: String, container: String, encoding: String, format: AudioFormat, frameCount: Int?, declaredFrameCount: Int?) {
        self.path = path
        self.container = container
        self.encoding = encoding
        self.format = format
        self.frameCount = frameCount
        self.declaredFrameCount = declaredFrameCount
    }
}
