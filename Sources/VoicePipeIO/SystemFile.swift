#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import VoicePipeCore

/// Why a file could not be opened or created: the path, the system's code, and the reason in a
/// few words with what to do about it.
public struct SystemFileError: Error, Sendable, Hashable {
    /// What was being done with the file.
    public enum Operation: Sendable, Hashable {
        case read
        case create
        case write
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
            case ENOENT where !isDirectory(directory(of: path)):
                advice = "the directory '\(directory(of: path))' does not exist; create it first or choose another path"
            case EACCES, EPERM: advice = "permission denied; choose a directory you can write to"
            case EISDIR: advice = "it is a directory; give a file name inside it"
            case EROFS: advice = "the file system is read-only; choose another location"
            default: advice = "\(code.messageInSentence); choose another path"
            }
            throw SystemFileError(operation: .create, path: path, code: code, reason: advice)
        }
        return descriptor
    }

    /// An unlinked temporary file opened read-write in `$TMPDIR` (or /tmp): nothing is left
    /// behind however the process ends.
    /// - Throws: ``SystemFileError`` naming the temporary directory.
    public static func temporaryFile() throws(SystemFileError) -> Int32 {
        let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/voicepipe-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        guard descriptor >= 0 else {
            let code = SystemErrorCode.posix(errno)
            throw SystemFileError(operation: .create, path: directory, code: code, reason: "no temporary file could be made there: \(code.messageInSentence); set TMPDIR to a writable directory")
        }
        template.withUnsafeBufferPointer { buffer in _ = buffer.baseAddress.map { unlink($0) } }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        return descriptor
    }

    /// Standard input as a file that can be read from the start and sought in: audio readers
    /// need to seek, which a pipe cannot. The first call reads all of standard input into an
    /// unlinked temporary file; every call (a command may open its input twice, to inspect and
    /// then to read) returns a descriptor of its own at the file's start.
    /// - Throws: ``SystemFileError`` for the temporary file or a read or write that failed.
    public static func spoolStandardInput() throws(SystemFileError) -> Int32 {
        let spooled = standardInputSpool.withLock { cached -> Result<Int32, SystemFileError> in
            if let cached { return .success(cached) }
            do throws(SystemFileError) {
                let spool = try temporaryFile()
                do throws(SystemFileError) {
                    try copy(STDIN_FILENO, named: "standard input", to: spool, named: "a temporary file")
                } catch {
                    _ = close(spool)
                    throw error
                }
                cached = spool
                return .success(spool)
            } catch {
                return .failure(error)
            }
        }
        let spool = try spooled.get()
        // A new open file description, so each reader has its own offset.
        let descriptor = open("/proc/self/fd/\(spool)", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = SystemErrorCode.posix(errno)
            throw SystemFileError(operation: .read, path: "standard input", code: code, reason: code.messageInSentence)
        }
        return descriptor
    }

    /// The spooled copy of standard input, once made (kept open for the life of the process).
    private static let standardInputSpool = Mutex<Int32?>(nil)

    /// Copies a whole file, from its start, to standard output.
    /// - Throws: ``SystemFileError`` for a read or write that failed.
    public static func copyToStandardOutput(_ descriptor: Int32) throws(SystemFileError) {
        _ = lseek(descriptor, 0, SEEK_SET)
        try copy(descriptor, named: "a temporary file", to: STDOUT_FILENO, named: "standard output")
    }

    /// Copies from `source`'s position to its end into `destination`.
    private static func copy(_ source: Int32, named sourceName: String, to destination: Int32, named destinationName: String) throws(SystemFileError) {
        let size = 1 << 16
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let got = read(source, buffer, size)
            if got == 0 { return }
            if got < 0 {
                if errno == EINTR { continue }
                let code = SystemErrorCode.posix(errno)
                throw SystemFileError(operation: .read, path: sourceName, code: code, reason: code.messageInSentence)
            }
            var written = 0
            while written < got {
                let result = write(destination, buffer + written, got - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    let code = SystemErrorCode.posix(errno)
                    throw SystemFileError(operation: .write, path: destinationName, code: code, reason: code.messageInSentence)
                }
                written += result
            }
        }
    }

    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
