#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import VoicePipeCore

/// Why a file could not be opened or created: the path, the system's code, and the reason in a
/// few words with what to do about it.
public struct SystemFileError: Error, Sendable, Hashable {
    /// What was being done with the file.
    public enum Operation: Sendable, Hashable {
        case read
        case create
    }

    public let operation: Operation
    public let path: String
    public let code: SystemErrorCode
    /// "permission denied; choose a directory you can write to", "it is a directory, not a file".
    public let reason: String

    /// Whether nothing exists at the path that was to be read.
    public var isMissing: Bool { operation == .read && code.domain == .posix && code.value == ENOENT }
}

/// Opening and creating files for VoicePipe's readers and writers: one place for the system calls
/// and for the sentences their failures become.
public enum SystemFile {
    /// Opens `path` read-only (close-on-exec). A directory is refused, as reading it would fail later.
    /// - Throws: ``SystemFileError`` with the system's code.
    public static func openForReading(_ path: String) throws(SystemFileError) -> Int32 {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = SystemErrorCode.posix(errno)
            throw SystemFileError(operation: .read, path: path, code: code, reason: code.messageInSentence)
        }
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            _ = close(descriptor)
            throw SystemFileError(operation: .read, path: path, code: .posix(EISDIR), reason: "it is a directory, not a file")
        }
        return descriptor
    }

    /// Creates (or truncates) `path` for writing (close-on-exec, mode 0666 before the umask).
    /// - Throws: ``SystemFileError`` whose reason says what to do.
    public static func createForWriting(_ path: String) throws(SystemFileError) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            let value = errno
            let code = SystemErrorCode.posix(value)
            let advice: String
            switch value {
            case ENOENT: advice = "the directory '\(directory(of: path))' does not exist; create it first or choose another path"
            case EACCES, EPERM: advice = "permission denied; choose a directory you can write to"
            case EISDIR: advice = "it is a directory; give a file name inside it"
            case EROFS: advice = "the file system is read-only; choose another location"
            default: advice = "\(code.messageInSentence); choose another path"
            }
            throw SystemFileError(operation: .create, path: path, code: code, reason: advice)
        }
        return descriptor
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
