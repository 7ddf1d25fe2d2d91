import VoicePipeCore

/// Why a JSON Lines stream could not be opened, read or written.
public enum JSONLinesError: SystemCodedError, Sendable, Hashable {
    /// Nothing exists at the path.
    case noSuchFile(path: String)
    /// The path exists but cannot be read (a directory, no permission).
    case cannotOpen(path: String, reason: String, code: SystemErrorCode?)
    /// Reading failed part-way; the lines before were delivered.
    case readFailed(name: String, code: SystemErrorCode)
    /// The output file could not be created; the reason says what to do.
    case cannotCreate(path: String, reason: String, code: SystemErrorCode)
    /// Writing failed; what was written before stays written.
    case writeFailed(name: String, code: SystemErrorCode)

    /// The failing call's code.
    public var code: SystemErrorCode? {
        switch self {
        case .noSuchFile: nil
        case .cannotOpen(_, _, let code): code
        case .readFailed(_, let code), .cannotCreate(_, _, let code), .writeFailed(_, let code): code
        }
    }

    public var message: String {
        switch self {
        case .noSuchFile(let path):
            "cannot read '\(path)': no such file; check the path"
        case .cannotOpen(let path, let reason, _):
            "cannot read '\(path)': \(reason)"
        case .readFailed(let name, let code):
            "reading \(name) failed: \(code.messageInSentence)"
        case .cannotCreate(let path, let reason, _):
            "cannot create '\(path)': \(reason)"
        case .writeFailed(let name, let code):
            "writing \(name) failed: \(code.messageInSentence)"
        }
    }
}
