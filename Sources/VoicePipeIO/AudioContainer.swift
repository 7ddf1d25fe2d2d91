import CSndFile

/// The file containers VoicePipe writes, chosen by the output's extension as sox and ffmpeg do.
public enum AudioContainer: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// RIFF WAVE (`.wav`).
    case wav
    /// FLAC, lossless and integer-only (`.flac`).
    case flac
    /// AIFF (`.aif`, `.aiff`); float samples go into AIFF-C.
    case aiff
    /// Headerless little-endian samples (`.raw`, `.pcm`).
    case raw

    /// The container a path's extension names, or nil when it names none VoicePipe writes.
    public init?(forPath path: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "wav", "wave": self = .wav
        case "flac": self = .flac
        case "aif", "aiff", "aifc": self = .aiff
        case "raw", "pcm": self = .raw
        default: return nil
        }
    }

    /// The extensions, for help texts and errors: ".wav, .flac, .aif/.aiff, .raw/.pcm".
    public static let extensions = ".wav, .flac, .aif/.aiff, .raw/.pcm"

    /// Whether the container can hold samples of `encoding` (FLAC stores integers only).
    public func canStore(_ encoding: AudioFileWriter.Encoding) -> Bool {
        !(self == .flac && encoding == .float32)
    }

    public var description: String {
        switch self {
        case .wav: "WAV"
        case .flac: "FLAC"
        case .aiff: "AIFF"
        case .raw: "raw PCM"
        }
    }

    /// libsndfile's major format bits.
    var major: Int32 {
        switch self {
        case .wav: Int32(SF_FORMAT_WAV)
        case .flac: Int32(SF_FORMAT_FLAC)
        case .aiff: Int32(SF_FORMAT_AIFF)
        case .raw: Int32(SF_FORMAT_RAW) | Int32(SF_ENDIAN_LITTLE)
        }
    }
}
