#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
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

    /// How a reader wants standard input.
    public enum StandardInputUse: Sendable, Hashable {
        /// Read once from start to end: a pipe whose data libsndfile can read as a stream (WAV,
        /// AIFF, AU, or headerless data when `headerless`) is passed on as it arrives.
        case stream(headerless: Bool)
        /// Read with seeks (to inspect a header, or to count by decoding): a pipe is spooled.
        case seek
    }

    /// Standard input, opened for one reader at its start.
    ///
    /// A redirected regular file is reopened as it is. A pipe is either streamed — for
    /// ``StandardInputUse/stream(headerless:)`` when its first bytes are a WAV, AIFF or AU header
    /// (or the data is headerless), so audio flows as it arrives (`arecord | voicepipe encode -`) —
    /// or read into an unlinked temporary file first (FLAC, Ogg, MP3 and the rest need to seek,
    /// and ``StandardInputUse/seek`` asks for it). A spooled copy is kept, so a command may open
    /// its input twice (to inspect it and then to read it).
    /// - Throws: ``SystemFileError`` for a read or a temporary file that failed, or a pipe read
    ///   once already.
    public static func openStandardInput(_ use: StandardInputUse) throws(SystemFileError) -> Int32 {
        if let spool = standardInput.withLock({ $0.spool }) { return try reopen(spool) }
        var status = stat()
        if fstat(STDIN_FILENO, &status) == 0, status.st_mode & S_IFMT == S_IFREG { return try reopen(STDIN_FILENO) }
        if status.st_mode & S_IFMT == S_IFDIR {
            throw SystemFileError(operation: .read, path: "-", code: .posix(EISDIR), reason: "it is a directory, not a file")
        }
        guard standardInput.withLock({ state in defer { state.consumed = true }; return !state.consumed }) else {
            throw SystemFileError(operation: .read, path: "-", code: .posix(ESPIPE), reason: "it is a pipe that was read once already")
        }
        let head = try readHead(count: 12)
        if case .stream(let headerless) = use, headerless || streamsAsIs(head) { return try relay(head) }
        let spool = try temporaryFile()
        do throws(SystemFileError) {
            try writeAll(head, to: spool, named: "a temporary file")
            try copy(STDIN_FILENO, named: "standard input", to: spool, named: "a temporary file")
        } catch {
            _ = close(spool)
            throw error
        }
        standardInput.withLock { $0.spool = spool }
        return try reopen(spool)
    }

    /// What has become of standard input: read once as a stream, or kept in a temporary file.
    private struct StandardInputState {
        var consumed = false
        var spool: Int32?
    }

    private static let standardInput = Guarded(StandardInputState())

    /// Whether a stream starting with `head` is one libsndfile reads without seeking.
    private static func streamsAsIs(_ head: [UInt8]) -> Bool {
        let tag = String(decoding: head.prefix(4), as: UTF8.self)
        let form = head.count >= 12 ? String(decoding: head[8..<12], as: UTF8.self) : ""
        return (tag == "RIFF" && form == "WAVE") || (tag == "FORM" && (form == "AIFF" || form == "AIFC")) || tag == ".snd"
    }

    /// The first `count` bytes of standard input (fewer at its end).
    private static func readHead(count: Int) throws(SystemFileError) -> [UInt8] {
        var head = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = head.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress! + filled, count - filled) }
            if got > 0 { filled += got; continue }
            if got == 0 { break }
            if errno == EINTR { continue }
            let code = SystemErrorCode.posix(errno)
            throw SystemFileError(operation: .read, path: "-", code: code, reason: code.messageInSentence)
        }
        return Array(head.prefix(filled))
    }

    /// A socket that yields `head` and then the rest of standard input as it arrives, fed by a
    /// thread of its own. (A socket, not a pipe: the feeder writes with MSG_NOSIGNAL, so a reader
    /// that stops early ends the feed instead of raising SIGPIPE.)
    private static func relay(_ head: [UInt8]) throws(SystemFileError) -> Int32 {
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            let code = SystemErrorCode.posix(errno)
            throw SystemFileError(operation: .read, path: "-", code: code, reason: code.messageInSentence)
        }
        let (reader, writer) = (ends[0], ends[1])
        Thread.detachNewThread {
            defer { _ = close(writer) }
            var chunk = head
            while true {
                var sent = 0
                while sent < chunk.count {
                    let result = chunk.withUnsafeBytes { send(writer, $0.baseAddress! + sent, chunk.count - sent, Int32(MSG_NOSIGNAL)) }
                    if result < 0 { if errno == EINTR { continue }; return }
                    sent += result
                }
                chunk = [UInt8](repeating: 0, count: 1 << 16)
                let got = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress!, $0.count) }
                if got < 0 && errno == EINTR { chunk = []; continue }
                guard got > 0 else { return }
                chunk.removeLast(chunk.count - got)
            }
        }
        return reader
    }

    /// A new open file description of `descriptor`'s file, so each reader has its own offset.
    private static func reopen(_ descriptor: Int32) throws(SystemFileError) -> Int32 {
        let reopened = open("/proc/self/fd/\(descriptor)", O_RDONLY | O_CLOEXEC)
        guard reopened >= 0 else {
            let code = SystemErrorCode.posix(errno)
            throw SystemFileError(operation: .read, path: "-", code: code, reason: code.messageInSentence)
        }
        return reopened
    }

    private static func writeAll(_ bytes: [UInt8], to destination: Int32, named name: String) throws(SystemFileError) {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { write(destination, $0.baseAddress! + written, bytes.count - written) }
            if result < 0 {
                if errno == EINTR { continue }
                let code = SystemErrorCode.posix(errno)
                throw SystemFileError(operation: .write, path: name, code: code, reason: code.messageInSentence)
            }
            written += result
        }
    }

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
