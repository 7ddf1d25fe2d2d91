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
    /// For WAV and AIFF this is what the file really holds; for FLAC it is the stream header's count,
    /// for Ogg the last page's position, and for MPEG an estimate from the first frames and the
    /// file's size: ``frameCountIsExact`` says which.
    public let frameCount: Int?
    /// The frames the header declares, when it declares any (WAV data size, RF64 `ds64`, AIFF
    /// `numSampleFrames`, FLAC `STREAMINFO`). A reader that finds fewer reports the file as truncated.
    public let declaredFrameCount: Int?
    /// Whether ``frameCount`` is exactly what a reader delivers, known without decoding: true for
    /// uncompressed encodings (PCM, float, µ-law, A-law) outside codec containers, where libsndfile
    /// derives the count from the data's size; false for FLAC, Ogg, MPEG and compressed encodings,
    /// whose count comes from a header that a cut or damaged stream does not honour, or is an
    /// estimate. Only decoding to the end tells those (``AudioFileReader/measureLength()``).
    public let frameCountIsExact: Bool

    /// The ``FormatGuard``'s verdict on ``format``.
    public var verdict: Result<ValidatedFormat, FormatRejection> { FormatGuard.verdict(for: format) }

    /// Whether the header declares more frames than libsndfile found in the file.
    public var isKnownTruncated: Bool {
        guard let frameCount, let declaredFrameCount else { return false }
        return frameCount < declaredFrameCount
    }

    public init(path: String, container: String, encoding: String, format: AudioFormat, frameCount: Int?, declaredFrameCount: Int?, frameCountIsExact: Bool = true) {
        self.path = path
        self.container = container
        self.encoding = encoding
        self.format = format
        self.frameCount = frameCount
        self.declaredFrameCount = declaredFrameCount
        self.frameCountIsExact = frameCountIsExact
    }
}
