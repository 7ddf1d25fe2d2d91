import VoicePipeCore

/// Why an audio file could not be opened, read or written.
///
/// Each case names the file; ``description`` is one sentence a user can act on. Where libsndfile
/// said why it refused, its own message is kept in the `reason` or `detail`.
public enum AudioFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing exists at the path.
    case fileNotFound(path: String)
    /// The path exists but cannot be opened for reading: permission denied, a directory, an I/O error.
    case cannotOpen(path: String, reason: String)
    /// The bytes are not an audio format libsndfile recognises (garbage, an empty file, an unsupported codec).
    case unrecognizedFormat(path: String, detail: String)
    /// The header was read, but it reports a format the ``FormatGuard`` refuses (0 Hz, no channels).
    case unusableFormat(path: String, FormatRejection)
    /// The explicit format given for a headerless raw file is unusable. The string is the whole
    /// sentence, naming the file.
    case invalidRawFormat(String)
    /// libsndfile reported a read error part-way through the file; everything before it was delivered.
    case corrupt(path: String, detail: String)
    /// The header declares more frames than the file holds; every frame that is there was delivered.
    case truncated(path: String, framesRead: Int, framesDeclared: Int)
    /// The caller's buffer cannot take this file's samples: its element type is not the file's native
    /// sample type, or it holds less than one frame. Nothing was read.
    case incompatibleBuffer(path: String, detail: String)
    /// The output file could not be created (missing directory, permission, unsupported format).
    /// The reason says what to do about it.
    case cannotCreate(path: String, reason: String)
    /// Writing or finalising the output file failed (disk full, I/O error, a misuse such as a partial
    /// frame). The reason says what to do about it.
    case writeFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case .fileNotFound(let path):
            "Cannot read '\(path)': no such file; check the path."
        case .cannotOpen(let path, let reason):
            "Cannot open '\(path)': \(reason); check that the path names a readable audio file."
        case .unrecognizedFormat(let path, let detail):
            "'\(path)' is not an audio file VoicePipe can read (\(Self.trimmed(detail))); convert it to WAV, AIFF, FLAC or Ogg, or read it as raw PCM with an explicit format."
        case .unusableFormat(let path, let rejection):
            "'\(path)' cannot be used: \(rejection); its header is broken, so re-export or re-record the file."
        case .invalidRawFormat(let sentence):
            sentence
        case .corrupt(let path, let detail):
            "'\(path)' is damaged: reading stopped with \"\(Self.trimmed(detail))\" after the audio before that point was delivered; repair or re-export the file."
        case .truncated(let path, let framesRead, let framesDeclared):
            "'\(path)' is truncated: its header declares \(framesDeclared) frames but only \(framesRead) are present (all of them were delivered); copy or export the file again."
        case .incompatibleBuffer(let path, let detail):
            "Cannot read '\(path)' into this buffer: \(detail)."
        case .cannotCreate(let path, let reason):
            "Cannot create '\(path)': \(reason)."
        case .writeFailed(let path, let reason):
            "Writing '\(path)' failed: \(reason)."
        }
    }

    /// libsndfile's messages end with a full stop; inside our sentence they should not.
    private static func trimmed(_ message: String) -> String {
        var text = Substring(message)
        while let last = text.last, last == "." || last == " " || last == "\n" { text = text.dropLast() }
        return String(text)
    }
}
