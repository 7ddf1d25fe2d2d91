import Foundation
import VoicePipeCore

/// Buffered byte output to a file or standard output, for JSON Lines.
final class OutputFile {
    /// The path as given ("-" for standard output).
    let path: String
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    private static let flushThreshold = 1 << 16

    /// Opens `path` for writing (created or truncated), or standard output for "-".
    init(path: String) throws(CommandFailure) {
        self.path = path
        if path == "-" {
            descriptor = STDOUT_FILENO
            ownsDescriptor = false
        } else {
            let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw CommandFailure("cannot create '\(path)': \(String(cString: strerror(errno)))", exitCode: .cannotCreate)
            }
            descriptor = fd
            ownsDescriptor = true
        }
        buffer.reserveCapacity(Self.flushThreshold * 2)
    }

    deinit {
        if ownsDescriptor { Glibc.close(descriptor) }
    }

    /// Appends bytes produced by `body` into spare capacity of at most `count` bytes.
    func append(reservingCapacity count: Int, _ body: (UnsafeMutableRawBufferPointer) -> Int) throws(CommandFailure) {
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: count))
        let written = buffer.withUnsafeMutableBytes { body(UnsafeMutableRawBufferPointer(rebasing: $0[start..<(start + count)])) }
        buffer.removeLast(count - written)
        if buffer.count >= Self.flushThreshold { try flush() }
    }

    /// Appends one `audio.chunk` message for `samples` and a newline (a JSON Lines record).
    func appendAudioChunkLine(_ samples: UnsafeBufferPointer<Int16>, sampleRate: Int) throws(CommandFailure) {
        try append(reservingCapacity: AudioChunkJSON.encodedCount(sampleCount: samples.count, sampleRate: sampleRate) + 1) { buffer in
            let count = AudioChunkJSON.encode(samples, sampleRate: sampleRate, into: buffer)
            buffer[count] = UInt8(ascii: "\n")
            return count + 1
        }
    }

    /// Appends text.
    func append(_ text: String) throws(CommandFailure) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= Self.flushThreshold { try flush() }
    }

    /// Writes everything buffered.
    func flush() throws(CommandFailure) {
        var offset = 0
        while offset < buffer.count {
            let result = buffer.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if result < 0 {
                if errno == EINTR { continue }
                throw CommandFailure("writing '\(path == "-" ? "standard output" : path)' failed: \(String(cString: strerror(errno)))", exitCode: .ioError)
            }
            offset += result
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
