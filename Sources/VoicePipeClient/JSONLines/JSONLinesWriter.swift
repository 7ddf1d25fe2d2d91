import Glibc
import VoicePipeCore
import VoicePipeIO

/// Buffered JSON Lines output to a file, standard output or any descriptor: one message per line.
///
/// Lines collect in a buffer that is written out when it passes 64 KiB and on ``flush()``;
/// `audio.chunk` lines are encoded straight into it, so the steady state allocates nothing.
public final class JSONLinesWriter {
    /// What to call the output in messages ("'frames.jsonl'", "standard output").
    public let name: String
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: UnsafeMutableRawBufferPointer
    private var count = 0
    private static let flushThreshold = 1 << 16

    /// Creates (or truncates) `path`, or writes to standard output for "-".
    /// - Throws: ``JSONLinesError/cannotCreate(path:reason:code:)``.
    public convenience init(path: String) throws(JSONLinesError) {
        if path == "-" {
            self.init(descriptor: STDOUT_FILENO, name: "standard output", ownsDescriptor: false)
            return
        }
        let descriptor: Int32
        do {
            descriptor = try SystemFile.createForWriting(path)
        } catch {
            throw .cannotCreate(path: path, reason: error.reason, code: error.code)
        }
        self.init(descriptor: descriptor, name: "'\(path)'", ownsDescriptor: true)
    }

    /// Writes to an open descriptor (a pipe, a socket, a file).
    /// - Parameter ownsDescriptor: whether the writer closes it when released.
    public init(descriptor: Int32, name: String, ownsDescriptor: Bool) {
        self.descriptor = descriptor
        self.name = name
        self.ownsDescriptor = ownsDescriptor
        buffer = .allocate(byteCount: 2 * Self.flushThreshold, alignment: 1)
    }

    deinit {
        buffer.deallocate()
        if ownsDescriptor { close(descriptor) }
    }

    /// Appends one `audio.chunk` message for `samples` and a newline, written by Core's
    /// ``AudioChunkJSON`` straight into the buffer.
    /// - Throws: ``JSONLinesError/writeFailed(name:code:)`` when a flush fails.
    public func appendAudioChunk(_ samples: UnsafeBufferPointer<Int16>, sampleRate: SampleRate) throws(JSONLinesError) {
        let length = AudioChunkJSON.encodedCount(sampleCount: samples.count, sampleRate: sampleRate)
        let space = try reserve(length + 1)
        let written = AudioChunkJSON.encode(samples, sampleRate: sampleRate, into: space)
        space[written] = 0x0A
        try commit(written + 1)
    }

    /// Appends `line` (one JSON text, without a newline) and a newline.
    /// - Throws: ``JSONLinesError/writeFailed(name:code:)`` when a flush fails.
    public func append(line: String) throws(JSONLinesError) {
        let length = line.utf8.count
        let space = try reserve(length + 1)
        space.copyBytes(from: line.utf8)
        space[length] = 0x0A
        try commit(length + 1)
    }

    /// Writes everything buffered to the descriptor.
    /// - Throws: ``JSONLinesError/writeFailed(name:code:)``; what was written before stays written.
    public func flush() throws(JSONLinesError) {
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        defer {
            // Keep what was not written at the front, so a later flush does not repeat bytes.
            if offset > 0 && offset < count { memmove(base, base + offset, count - offset) }
            count -= offset
        }
        while offset < count {
            let result = write(descriptor, base + offset, count - offset)
            if result < 0 {
                if errno == EINTR { continue }
                throw .writeFailed(name: name, code: .posix(errno))
            }
            offset += result
        }
    }

    /// Room for `length` more bytes at the end of the buffer (grown for an outsized line).
    private func reserve(_ length: Int) throws(JSONLinesError) -> UnsafeMutableRawBufferPointer {
        if count + length > buffer.count {
            try flush()
            if length > buffer.count {
                buffer.deallocate()
                buffer = .allocate(byteCount: length, alignment: 1)
            }
        }
        return UnsafeMutableRawBufferPointer(rebasing: buffer[count..<(count + length)])
    }

    private func commit(_ length: Int) throws(JSONLinesError) {
        count += length
        if count >= Self.flushThreshold { try flush() }
    }
}
