import Glibc
import VoicePipeCore
import VoicePipeIO

/// Reads a file, standard input or any descriptor line by line (LF or CRLF), in bounded memory:
/// JSON Lines, one message per line.
///
/// A line longer than `maximumLength` is skipped to its end and reported as ``Line/tooLong(bytes:)``
/// instead of being buffered whole, so a hostile or mistaken input (a WAV file given as messages)
/// cannot grow memory. The last line needs no line ending.
public final class JSONLinesReader {
    /// One line of input.
    public enum Line: Sendable, Hashable {
        /// The line's bytes without the line ending.
        case text([UInt8])
        /// A line longer than the limit; its `bytes` were skipped.
        case tooLong(bytes: Int)
    }

    /// What to call the input in messages ("'messages.jsonl'", "standard input").
    public let name: String
    /// The longest line delivered as text, in bytes.
    public let maximumLength: Int
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: UnsafeMutableRawBufferPointer
    /// Unconsumed bytes are buffer[start..<end].
    private var start = 0
    private var end = 0
    /// Bytes of an over-long line skipped so far, while its end has not been found.
    private var skipping: Int?
    private var atEnd = false
    /// Readable (a byte written, or its write end closed) when another thread wants reading to end.
    private let stopDescriptor: Int32?
    /// True once ``next()`` returned nil because `stopDescriptor` became readable, not at the end.
    private(set) var wasStopped = false
    private static let readSize = 1 << 16

    /// Opens `path` for reading, or standard input for "-".
    /// - Throws: ``JSONLinesError/noSuchFile(path:)`` or ``JSONLinesError/cannotOpen(path:reason:code:)``.
    public convenience init(path: String, maximumLength: Int) throws(JSONLinesError) {
        if path == "-" {
            self.init(descriptor: STDIN_FILENO, name: "standard input", maximumLength: maximumLength, ownsDescriptor: false)
            return
        }
        let descriptor: Int32
        do {
            descriptor = try SystemFile.openForReading(path)
        } catch {
            if error.isMissing { throw .noSuchFile(path: path) }
            throw .cannotOpen(path: path, reason: error.reason, code: error.code)
        }
        self.init(descriptor: descriptor, name: "'\(path)'", maximumLength: maximumLength, ownsDescriptor: true)
    }

    /// Reads from an open descriptor (a pipe, a socket, a file).
    /// - Parameter ownsDescriptor: whether the reader closes it when released.
    public convenience init(descriptor: Int32, name: String, maximumLength: Int, ownsDescriptor: Bool) {
        self.init(descriptor: descriptor, name: name, maximumLength: maximumLength, ownsDescriptor: ownsDescriptor, stopDescriptor: nil)
    }

    /// Reads from an open descriptor until its end or until `stopDescriptor` becomes readable:
    /// a read blocked on a quiet pipe cannot be interrupted otherwise, and a transport's close
    /// must end its reader thread.
    init(descriptor: Int32, name: String, maximumLength: Int, ownsDescriptor: Bool, stopDescriptor: Int32?) {
        self.descriptor = descriptor
        self.name = name
        self.maximumLength = max(maximumLength, 1)
        self.ownsDescriptor = ownsDescriptor
        self.stopDescriptor = stopDescriptor
        buffer = .allocate(byteCount: self.maximumLength + Self.readSize + 1, alignment: 1)
    }

    deinit {
        buffer.deallocate()
        if ownsDescriptor { close(descriptor) }
    }

    /// The next line, or `nil` at the end of the input.
    /// - Throws: ``JSONLinesError/readFailed(name:code:)``; the lines before it were delivered.
    public func next() throws(JSONLinesError) -> Line? {
        var scanFrom = start
        while true {
            if let newline = firstNewline(from: scanFrom) {
                let lineEnd = newline
                let lineStart = start
                start = newline + 1
                if let skipped = skipping {
                    skipping = nil
                    return .tooLong(bytes: skipped + (lineEnd - lineStart))
                }
                let line = bytes(lineStart, trimmingCarriageReturnBefore: lineEnd)
                // A long line can arrive whole in one read: the limit holds however it came.
                return line.count > maximumLength ? .tooLong(bytes: lineEnd - lineStart) : .text(line)
            }
            scanFrom = end
            if end - start > maximumLength {
                // Too long to deliver: drop what is buffered and keep counting until its end.
                skipping = (skipping ?? 0) + (end - start)
                start = 0
                end = 0
                scanFrom = 0
            }
            if atEnd {
                guard end > start || skipping != nil else { return nil }
                defer { start = end }
                if let skipped = skipping {
                    skipping = nil
                    return .tooLong(bytes: skipped + (end - start))
                }
                let line = bytes(start, trimmingCarriageReturnBefore: end)
                return line.count > maximumLength ? .tooLong(bytes: end - start) : .text(line)
            }
            let shift = start
            try fill()
            if wasStopped { return nil }
            scanFrom -= shift
        }
    }

    private func firstNewline(from offset: Int) -> Int? {
        guard offset < end, let base = buffer.baseAddress else { return nil }
        guard let found = memchr(base + offset, 0x0A, end - offset) else { return nil }
        return base.distance(to: UnsafeMutableRawPointer(found))
    }

    private func bytes(_ from: Int, trimmingCarriageReturnBefore to: Int) -> [UInt8] {
        var last = to
        if last > from, buffer[last - 1] == 0x0D { last -= 1 }
        return Array(UnsafeRawBufferPointer(rebasing: buffer[from..<last]))
    }

    /// Moves the unconsumed bytes to the front and reads more after them.
    private func fill() throws(JSONLinesError) {
        if start > 0 {
            if end > start, let base = buffer.baseAddress { memmove(base, base + start, end - start) }
            end -= start
            start = 0
        }
        let room = buffer.count - end
        guard let base = buffer.baseAddress else { return }
        if let stopDescriptor, try !waitUntilReadable(orStopped: stopDescriptor) {
            wasStopped = true
            return
        }
        while true {
            let got = read(descriptor, base + end, room)
            if got > 0 {
                end += got
                return
            }
            if got == 0 {
                atEnd = true
                return
            }
            if errno == EINTR { continue }
            throw .readFailed(name: name, code: .posix(errno))
        }
    }

    /// Waits until the input has bytes (or its end, or an error) for `read`, or until `stop` is readable.
    /// - Returns: false when stopped (a stop wins when both are ready).
    private func waitUntilReadable(orStopped stop: Int32) throws(JSONLinesError) -> Bool {
        var watched = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: stop, events: Int16(POLLIN), revents: 0)]
        while poll(&watched, nfds_t(watched.count), -1) < 0 {
            if errno == EINTR { continue }
            throw .readFailed(name: name, code: .posix(errno))
        }
        return watched[1].revents == 0
    }
}
