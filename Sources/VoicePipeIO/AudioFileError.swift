import VoicePipeCore

/// Why an audio file could not be opened, read or written.
///
/// Each case names the file; ``description`` is one sentence a user can act on, ending with the
/// code of the failing call (errno, or libsndfile's error number) where one failed, so that a
/// report can be matched with that library's documentation.
public enum AudioFileError: SystemCodedError, Sendable, Equatable {
    /// Nothing exists at the path.
    case fileNotFound(path: String)
    /// The path exists but cannot be opened for reading: permission denied, a directory, an I/O error.
    case cannotOpen(path: String, reason: String, code: SystemErrorCode?)
    /// The bytes are not an audio format libsndfile recognises (garbage, an empty file, an
    /// unsupported codec); `detail` is libsndfile's reason where it gave one.
    case unrecognizedFormat(path: String, detail: String, code: SystemErrorCode?)
    /// The header was read, but it reports a format the ``FormatGuard`` refuses (0 Hz, no channels).
    case unusableFormat(path: String, FormatRejection)
    /// The explicit format given for a headerless raw file is unusable: what is wrong with it and
    /// what to give instead.
    case invalidRawFormat(path: String, problem: String, code: SystemErrorCode?)
    /// libsndfile reported a read error part-way through the file; everything before it was
    /// delivered. The code carries libsndfile's own message.
    case corrupt(path: String, code: SystemErrorCode)
    /// The file's data ends early: the header declares more frames than the file holds (WAV, AIFF,
    /// FLAC), or the stream stops inside a frame or page, or without its end-of-stream page (FLAC,
    /// Ogg; `framesDeclared` is nil when the container declares no length). Every frame that is
    /// there was delivered.
    case truncated(path: String, framesRead: Int, framesDeclared: Int?)
    /// The caller's buffer cannot take this file's samples: its element type is not the file's native
    /// sample type, or it holds less than one frame. Nothing was read.
    case incompatibleBuffer(path: String, detail: String)
    /// The output file could not be created (missing directory, permission, unsupported format).
    /// The reason says what to do about it.
    case cannotCreate(path: String, reason: String, code: SystemErrorCode?)
    /// Writing or finalising the output file failed (disk full, I/O error, a misuse such as a partial
    /// frame). The reason says what to do about it.
    case writeFailed(path: String, reason: String, code: SystemErrorCode?)

    /// The code of the failing system or libsndfile call, when one failed.
    public var code: SystemErrorCode? {
        switch self {
        case .fileNotFound: SystemErrorCode(.posix, 2, message: "No such file or directory")
        case .cannotOpen(_, _, let code), .unrecognizedFormat(_, _, let code), .invalidRawFormat(_, _, let code),
             .cannotCreate(_, _, let code), .writeFailed(_, _, let code):
            code
        case .corrupt(_, let code): code
        case .unusableFormat, .truncated, .incompatibleBuffer: nil
        }
    }

    /// The file the error is about.
    public var path: String {
        switch self {
        case .fileNotFound(let path), .cannotOpen(let path, _, _), .unrecognizedFormat(let path, _, _),
             .unusableFormat(let path, _), .invalidRawFormat(let path, _, _), .corrupt(let path, _),
             .truncated(let path, _, _), .incompatibleBuffer(let path, _), .cannotCreate(let path, _, _),
             .writeFailed(let path, _, _):
            path
        }
    }

    /// The sentence without the code, for use inside another sentence that gives the code itself.
    public var message: String {
        let sentence: String
        switch self {
        case .fileNotFound(let path):
            sentence = "cannot read \(Self.name(path)): no such file; check the path"
        case .cannotOpen(let path, let reason, _):
            sentence = "cannot read \(Self.name(path)): \(reason); check that the path names a readable audio file"
        case .unrecognizedFormat(let path, let detail, _):
            sentence = "\(Self.name(path)) is not an audio file VoicePipe can read (\(Self.trimmed(detail))); convert it to WAV, AIFF, FLAC or Ogg, or read it as raw PCM with an explicit format"
        case .unusableFormat(let path, let rejection):
            sentence = "\(Self.name(path)) cannot be used: \(rejection); its header is broken, so re-export or re-record the file"
        case .invalidRawFormat(let path, let problem, _):
            sentence = "cannot read \(Self.name(path)) as raw PCM: \(problem)"
        case .corrupt(let path, let code):
            sentence = "\(Self.name(path)) is damaged: reading stopped with \"\(Self.trimmed(code.message))\" after the audio before that point was delivered; repair or re-export the file"
        case .truncated(let path, let framesRead, let framesDeclared?):
            sentence = "\(Self.name(path)) is truncated: its header declares \(framesDeclared) frames but only \(framesRead) are present (all of them were delivered); copy or export the file again"
        case .truncated(let path, let framesRead, nil):
            sentence = "\(Self.name(path)) is truncated: its stream stops before its end after \(framesRead) frames (all of them were delivered); copy or export the file again"
        case .incompatibleBuffer(let path, let detail):
            sentence = "cannot read \(Self.name(path)) into this buffer: \(detail)"
        case .cannotCreate(let path, let reason, _):
            sentence = "cannot create \(Self.name(path, writing: true)): \(reason)"
        case .writeFailed(let path, let reason, _):
            sentence = "writing \(Self.name(path, writing: true)) failed: \(reason)"
        }
        return sentence
    }

    /// How a sentence names the file: "'take 3.wav'", or "standard input" ("standard output" when
    /// `writing`) for "-".
    static func name(_ path: String, writing: Bool = false) -> String {
        guard path == "-" else { return "'\(path)'" }
        return writing ? "standard output" : "standard input"
    }

    /// libsndfile's messages end with a full stop; inside our sentence they should not.
    private static func trimmed(_ message: String) -> String {
        var text = Substring(message)
        while let last = text.last, last == "." || last == " " || last == "\n" { text = text.dropLast() }
        return String(text)
    }
}
