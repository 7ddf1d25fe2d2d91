import VoicePipeCore

/// Why a JSON Lines stream could not be opened, read or written.
public enum JSONLinesError: Error, Sendable, Hashable, CustomStringConvertible {
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

    public var description: String {
        switch self {
        case .noSuchFile(let path):
            "cannot read '\(path)': no such file; check the path"
        case .cannotOpen(let path, let reason, let code):
            "cannot read '\(path)': \(reason)" + (code.map { " (\($0))" } ?? "")
        case .readFailed(let name, let code):
            "reading \(name) failed: \(code.messageInSentence) (\(code))"
        case .cannotCreate(let path, let reason, let code):
            "cannot create '\(path)': \(reason) (\(code))"
        case .writeFailed(let name, let code):
            "writing \(name) failed: \(code.messageInSentence) (\(code))"
        }
    }
}
