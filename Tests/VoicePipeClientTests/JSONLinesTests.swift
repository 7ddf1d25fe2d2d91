import Foundation
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeTestSupport

/// JSON Lines in and out on descriptors: every line exactly once, bounded memory, typed errors.
struct JSONLinesTests {
    /// All lines of `bytes`, read through a pipe written in pieces of `piece` bytes.
    static func lines(of bytes: [UInt8], maximumLength: Int, piece: Int) throws -> [JSONLinesReader.Line] {
        let pipe = Pipe()
        let writer = Thread {
            for start in stride(from: 0, to: bytes.count, by: piece) {
                pipe.fileHandleForWriting.write(Data(bytes[start..<min(start + piece, bytes.count)]))
            }
            try? pipe.fileHandleForWriting.close()
        }
        writer.start()
        let reader = JSONLinesReader(descriptor: pipe.fileHandleForReading.fileDescriptor, name: "the pipe", maximumLength: maximumLength, ownsDescriptor: false)
        var lines = [JSONLinesReader.Line]()
        while let line = try reader.next() { lines.append(line) }
        return lines
    }

    @Test(arguments: [1, 3, 7, 64, 1 << 16])
    func linesArriveWholeWithoutTheirEndingsHoweverTheInputIsCut(piece: Int) throws {
        let text = "{\"a\":1}\n{\"b\":2}\r\n\n   \n{\"c\":\"é\"}"
        let lines = try Self.lines(of: Array(text.utf8), maximumLength: 100, piece: piece)
        #expect(lines == [.text(Array("{\"a\":1}".utf8)), .text(Array("{\"b\":2}".utf8)), .text([]), .text(Array("   ".utf8)), .text(Array("{\"c\":\"é\"}".utf8))])
    }

    @Test(arguments: [5, 4_096])
    func aLineOverTheLimitIsSkippedAndCountedNotBuffered(piece: Int) throws {
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 50_000)
        let bytes = Array("ok\n".utf8) + long + Array("\nafter\n".utf8) + long
        let lines = try Self.lines(of: bytes, maximumLength: 1_000, piece: piece)
        #expect(lines == [.text(Array("ok".utf8)), .tooLong(bytes: 50_000), .text(Array("after".utf8)), .tooLong(bytes: 50_000)])
    }

    @Test func aLineOverTheLimitInARegularFileIsSkippedToo() throws {
        // A file hands the reader a long line and its newline in one read.
        let directory = try TemporaryDirectory()
        let long = [UInt8](repeating: UInt8(ascii: "z"), count: 50_000)
        let path = try directory.file("lines.jsonl", Array("ok\n".utf8) + long + Array("\nafter\n".utf8) + long)
        let reader = try JSONLinesReader(path: path, maximumLength: 1_000)
        var lines = [JSONLinesReader.Line]()
        while let line = try reader.next() { lines.append(line) }
        #expect(lines == [.text(Array("ok".utf8)), .tooLong(bytes: 50_000), .text(Array("after".utf8)), .tooLong(bytes: 50_000)])
    }

    @Test func aLineOfExactlyTheLimitIsText() throws {
        let line = [UInt8](repeating: UInt8(ascii: "y"), count: 1_000)
        #expect(try Self.lines(of: line + [0x0A] + line, maximumLength: 1_000, piece: 333) == [.text(line), .text(line)])
    }

    @Test func missingFilesAndDirectoriesAreTypedErrorsWithTheirCode() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.path("none.jsonl")
        #expect(throws: JSONLinesError.noSuchFile(path: missing)) { try JSONLinesReader(path: missing, maximumLength: 10) }
        do {
            _ = try JSONLinesReader(path: directory.url.path, maximumLength: 10)
            Issue.record("a directory opened as JSON Lines")
        } catch {
            guard case .cannotOpen(_, let reason, let code) = error else { Issue.record("\(error)"); return }
            #expect(reason == "it is a directory, not a file" && code?.value == EISDIR)
        }
        #expect(throws: JSONLinesError.self) { try JSONLinesWriter(path: directory.path("no/such/dir/out.jsonl")) }
    }

    @Test func audioChunkLinesAreCoresBytesExactlyWithANewline() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("chunks.jsonl")
        let samples: [Int16] = (0..<512).map { Int16(truncatingIfNeeded: $0 &* 977) }
        let writer = try JSONLinesWriter(path: path)
        // Enough lines to pass the flush threshold several times.
        for _ in 0..<100 { try samples.withUnsafeBufferPointer { try writer.appendAudioChunk($0, sampleRate: 16_000) } }
        try writer.append(line: #"{"type":"session.end"}"#)
        try writer.flush()
        let expected = samples.withUnsafeBufferPointer { AudioChunkJSON.encode($0, sampleRate: 16_000) } + "\n"
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written == String(repeating: expected, count: 100) + "{\"type\":\"session.end\"}\n")
    }

    @Test func aFullDiskIsAWriteErrorWithTheSystemsCode() throws {
        let writer = try JSONLinesWriter(path: "/dev/full")
        try writer.append(line: "{}")
        do {
            try writer.flush()
            Issue.record("writing to /dev/full succeeded")
        } catch {
            #expect(error == .writeFailed(name: "'/dev/full'", code: SystemErrorCode(.posix, ENOSPC, message: String(cString: strerror(ENOSPC)))))
            #expect(error.description.hasSuffix("(errno \(ENOSPC))"))
        }
    }
}
