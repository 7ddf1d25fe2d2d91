import Glibc
import VoicePipeCore

/// Why a JSON Lines stream could not be opened, read or written.
public enum JSONLinesError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing exists at the path.
    case noSuchFile(path: String)
    /// The path exists but cannot be read (a directory, no permission).
    case cannotOpen(path: String, reason: String, code: SystemErrorCode?)
    /// Reading failed part-way; the lines before were delivered.
    case readFailed(name: String, code: SystemErrorCode)
    /// The output file could not be created.
    case cannotCreate(path: String, code: SystemErrorCode)
    /// Writing failed; what was written before stays written.
    case writeFailed(name: String, code: SystemErrorCode)

    public var description: String {
        switch self {
        case .noSuchFile(let path):
            "cannot read '\(path)': no such file; check the path"
        case .cannotOpen(let path, let reason, let code):
            "cannot read '\(path)': \(reason)" + (code.map { " (\($0))" } ?? "")
        case .readFailed(let name, let code):
            "reading \(name) failed: \(code.message) (\(code))"
        case .cannotCreate(let path, let code):
            "cannot create '\(path)': \(code.message.prefix(1).lowercased() + code.message.dropFirst()) (\(code))"
        case .writeFailed(let name, let code):
            "writing \(name) failed: \(code.message.prefix(1).lowercased() + code.message.dropFirst()) (\(code))"
        }
    }
}

/// An errno value with the system's text for it.
func posixCode(_ value: Int32) -> SystemErrorCode {
    SystemErrorCode(.posix, value, message: strerror(value).map { String(cString: $0) } ?? "error \(value)")
}
