import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// Broken files made on purpose from the bundled samples and from headers written by hand: each
/// opens to a typed error, or reads exactly the samples its bytes hold, never more and never
/// other ones. (A 0 Hz WAV and a data size larger than the file are in AudioFileErrorTests.)
struct AudioFileFaultTests {
    /// Where a WAV's `data` chunk starts and how many bytes a frame takes, read from its chunks.
    static func dataLayout(_ bytes: [UInt8]) -> (offset: Int, blockAlign: Int)? {
        func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        var cursor = 12
        var blockAlign: Int?
        while cursor + 8 <= bytes.count {
            let id = String(decoding: bytes[cursor..<cursor + 4], as: UTF8.self)
            let size = u32(cursor + 4)
            if id == "fmt " { blockAlign = Int(bytes[cursor + 20]) | Int(bytes[cursor + 21]) << 8 }
            if id == "data", let blockAlign { return (cursor + 8, blockAlign) }
            cursor += 8 + size + size % 2
        }
        return nil
    }

    /// Cuts the sample at every multiple of 1024 bytes: a cut inside the header is a typed error
    /// when opening; a cut inside the data reads exactly the whole frames before the cut, equal
    /// to the uncut file's, and then says `truncated` with both counts.
    @Test(arguments: ["speech-8k-mono-s16.wav", "speech-22k05-mono-s16.wav"])
    func aSampleWAVCutAtEveryKilobyteReadsExactlyTheWholeFramesBeforeTheCut(name: String) throws {
        let source = CommandRunner.sample(name)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: source)))
        let layout = try #require(Self.dataLayout(bytes))
        let whole = try AudioFiles.read(source, as: Int16.self)
        let channels = whole.format.channelCount
        let declaredFrames = (bytes.count - layout.offset) / layout.blockAlign
        #expect(whole.samples.count == declaredFrames * channels)
        let directory = try TemporaryDirectory()
        var cuts = 0, headerCuts = 0
        for length in stride(from: 1_024, to: bytes.count, by: 1_024) {
            let path = try directory.file("cut-\(length).wav", Array(bytes[..<length]))
            defer { try? FileManager.default.removeItem(atPath: path) }
            cuts += 1
            let reader: AudioFileReader
            do {
                reader = try AudioFileReader(path: path)
            } catch {
                // Only a cut inside the header may refuse to open.
                #expect(length < layout.offset, "\(length) bytes: \(error)")
                headerCuts += 1
                continue
            }
            let present = max(0, length - layout.offset) / layout.blockAlign
            let (read, error) = AudioFiles.readAll(reader, bufferFrames: 1_000, as: Int16.self)
            #expect(read.count == present * channels, "\(length) bytes")
            #expect(read[...] == whole.samples.prefix(present * channels), "\(length) bytes: other samples")
            #expect(error == .truncated(path: path, framesRead: present, framesDeclared: declaredFrames), "\(length) bytes")
        }
        #expect(cuts == (bytes.count - 1) / 1_024)
        #expect(headerCuts == 0)  // the samples' headers are 44 bytes
    }

    /// A data chunk that says it is shorter than the bytes after it: exactly the declared frames,
    /// the rest is not audio. An odd size keeps only whole frames.
    @Test(arguments: [2_000, 1_999, 0])
    func aDataSizeSmallerThanTheFileReadsOnlyTheDeclaredFrames(declaredBytes: Int) throws {
        let directory = try TemporaryDirectory()
        let samples = (0..<2_000).map { Int16(truncatingIfNeeded: $0 &* 37) }  // 1000 stereo frames, 4000 bytes
        let path = try directory.file("short.wav", Fixtures.wav(sampleRate: 16_000, channels: 2, declaredDataBytes: UInt32(declaredBytes), payload: Fixtures.int16LE(samples)))
        let frames = declaredBytes / 4
        let reader = try AudioFileReader(path: path)
        let (read, error) = AudioFiles.readAll(reader, bufferFrames: 333, as: Int16.self)
        #expect(error == nil)
        #expect(read == Array(samples.prefix(frames * 2)))
    }

    /// The RIFF size in front of everything, too large or too small, changes nothing: the data
    /// chunk's own size counts.
    @Test(arguments: [UInt32(8), UInt32(0xFFFF_FFF0)])
    func aWrongRIFFSizeStillReadsEveryDeclaredFrame(riffSize: UInt32) throws {
        let directory = try TemporaryDirectory()
        let samples = (0..<800).map { Int16(truncatingIfNeeded: $0 &* 101) }
        var bytes = Fixtures.wav(sampleRate: 8_000, channels: 1, payload: Fixtures.int16LE(samples))
        withUnsafeBytes(of: riffSize.littleEndian) { bytes.replaceSubrange(4..<8, with: $0) }
        let path = try directory.file("riff.wav", bytes)
        let (read, error) = AudioFiles.readAll(try AudioFileReader(path: path), as: Int16.self)
        #expect(error == nil)
        #expect(read == samples)
    }

    /// WAV holds 16 bits of channel count; AU holds 32, so an AU header can claim 2^31 channels
    /// (and 2^31 − 1, and 2^32 − 1): refused with a typed error before a buffer is sized by it.
    @Test(arguments: [UInt32(1) << 31, UInt32(Int32.max), UInt32.max, UInt32(65_535)])
    func anAUHeaderClaimingBillionsOfChannelsIsATypedError(channels: UInt32) throws {
        let directory = try TemporaryDirectory()
        var header = Fixtures.Bytes()
        header.ascii(".snd")
        for field in [UInt32(24), UInt32(64), UInt32(3), UInt32(16_000), channels] {  // offset, size, 16-bit PCM, rate
            header.bytes += withUnsafeBytes(of: field.bigEndian, Array.init)
        }
        let path = try directory.file("channels.au", header.bytes + [UInt8](repeating: 1, count: 64))
        // libsndfile reads the field as a C int: 2^31 and more are negative ("channel count is
        // zero", its error 32), the rest over its limit ("too many channels", 33).
        Self.expectRefusedForItsChannels(path)
        #expect(throws: AudioFileError.self) { try AudioFileReader.inspect(path: path) }
    }

    @Test func aWAVHeaderClaimingTheMostChannelsItCanHoldIsATypedError() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("wide.wav", Fixtures.wav(sampleRate: 16_000, channels: 65_535, payload: [UInt8](repeating: 0, count: 4 * 65_535)))
        Self.expectRefusedForItsChannels(path)
    }

    static func expectRefusedForItsChannels(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try AudioFileReader(path: path)
            Issue.record("opened", sourceLocation: sourceLocation)
        } catch {
            guard case .unrecognizedFormat(path, let detail, let code) = error else {
                Issue.record("\(error)", sourceLocation: sourceLocation)
                return
            }
            #expect(detail.contains("channel"), "\(detail)", sourceLocation: sourceLocation)
            #expect(code?.domain == .libsndfile && [32, 33].contains(code?.value), sourceLocation: sourceLocation)
        }
    }
}
