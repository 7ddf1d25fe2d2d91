import Foundation

/// Reads a file or standard input line by line (LF or CRLF), in bounded memory.
///
/// A line longer than `maximumLength` is skipped to its end and reported as too long rather than
/// buffered whole.
final class LineReader {
    enum Line {
        case text([UInt8])
        case tooLong(bytes: Int)
    }

    let path: String
    private let handle: FileHandle
    private var pending: [UInt8] = []
    private var skippingBytes: Int?
    private var atEnd = false
    private let maximumLength: Int

    /// Opens `path`, or standard input for "-".
    init(path: String, maximumLength: Int) throws(CommandFailure) {
        self.path = path
        self.maximumLength = maximumLength
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CommandFailure("cannot read '\(path)': no such file", exitCode: .noInput)
            }
            guard !isDirectory.boolValue, let handle = FileHandle(forReadingAtPath: path) else {
                throw CommandFailure("cannot read '\(path)': \(isDirectory.boolValue ? "it is a directory" : "permission denied")", exitCode: .noInput)
            }
            self.handle = handle
        }
    }

    /// The next line without its line ending, or nil at the end of the input.
    func next() throws(CommandFailure) -> Line? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(pending[..<newline])
                pending.removeSubrange(...newline)
                if let skipped = skippingBytes {
                    skippingBytes = nil
                    return .tooLong(bytes: skipped + line.count)
                }
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return .text(line)
            }
            if pending.count > maximumLength {
                skippingBytes = (skippingBytes ?? 0) + pending.count
                pending.removeAll(keepingCapacity: true)
            }
            if atEnd {
                guard !pending.isEmpty || skippingBytes != nil else { return nil }
                defer { pending.removeAll() }
                if let skipped = skippingBytes {
                    skippingBytes = nil
                    return .tooLong(bytes: skipped + pending.count)
                }
                return .text(pending)
            }
            let chunk: Data
            do {
                chunk = try handle.read(upToCount: 1 << 16) ?? Data()
            } catch {
                throw CommandFailure("reading '\(path == "-" ? "standard input" : path)' failed: \(error.localizedDescription)", exitCode: .ioError)
            }
            if chunk.isEmpty { atEnd = true } else { pending.append(contentsOf: chunk) }
        }
    }
}
