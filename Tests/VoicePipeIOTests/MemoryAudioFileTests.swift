import CSndFile
import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// A file's bytes opened from memory read exactly as the file does: the same header facts, the
/// same samples byte for byte, the same ending, and the same errors under the name given.
struct MemoryAudioFileTests {
    /// Every byte a reader delivers, in blocks of `bufferFrames`, and the error that ended it, if any.
    static func drain(_ reader: AudioFileReader, bufferFrames: Int = 1_000) -> (bytes: [UInt8], error: AudioFileError?) {
        var buffer = [UInt8](repeating: 0, count: bufferFrames * reader.format.bytesPerFrame)
        var bytes = [UInt8]()
        while true {
            let frames: Int
            do {
                frames = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            } catch let error as AudioFileError {
                return (bytes, error)
            } catch {
                Issue.record("an untyped error: \(error)")
                return (bytes, nil)
            }
            if frames == 0 { return (bytes, nil) }
            bytes += buffer.prefix(frames * reader.format.bytesPerFrame)
        }
    }

    /// Asserts a reader on `path` and a reader on its bytes agree on everything but the name.
    static func expectSameReading(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let fromFile = try AudioFileReader(path: path)
        let fromMemory = try AudioFileReader(bytes: bytes, name: "memory")
        #expect(fromMemory.info.path == "memory", sourceLocation: sourceLocation)
        #expect(fromMemory.format == fromFile.format, sourceLocation: sourceLocation)
        #expect(fromMemory.info.container == fromFile.info.container, sourceLocation: sourceLocation)
        #expect(fromMemory.info.encoding == fromFile.info.encoding, sourceLocation: sourceLocation)
        #expect(fromMemory.info.frameCount == fromFile.info.frameCount, sourceLocation: sourceLocation)
        #expect(fromMemory.info.declaredFrameCount == fromFile.info.declaredFrameCount, sourceLocation: sourceLocation)
        #expect(fromMemory.info.frameCountIsExact == fromFile.info.frameCountIsExact, sourceLocation: sourceLocation)
        let file = drain(fromFile)
        let memory = drain(fromMemory, bufferFrames: 777)
        #expect(memory.bytes.count == file.bytes.count, sourceLocation: sourceLocation)
        #expect(memory.bytes == file.bytes, "different samples", sourceLocation: sourceLocation)
        #expect(fromMemory.framesRead == fromFile.framesRead, sourceLocation: sourceLocation)
        switch (file.error, memory.error) {
        case (nil, nil):
            break
        case (.truncated(_, let fileRead, let fileDeclared), .truncated("memory", let memoryRead, let memoryDeclared)):
            #expect(memoryRead == fileRead && memoryDeclared == fileDeclared, sourceLocation: sourceLocation)
        case (.corrupt(_, let fileCode), .corrupt("memory", let memoryCode)):
            #expect(memoryCode == fileCode, sourceLocation: sourceLocation)
        default:
            Issue.record("the file ended with \(String(describing: file.error)), the bytes with \(String(describing: memory.error))", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: ["speech-8k-mono-s16.wav", "speech-22k05-mono-s16.wav", "speech-44k1-stereo-s16.wav", "speech-48k-stereo-f32.wav"])
    func aBundledSampleReadsTheSameFromMemory(name: String) throws {
        try Self.expectSameReading(CommandRunner.sample(name))
    }

    /// Containers libsndfile finds by seeking around (AIFF, CAF, AU, W64, RF64) and the decoded
    /// ones (FLAC, Ogg Vorbis, Opus, MP3) read the same from memory as from the file.
    @Test(arguments: [
        Int32(SF_FORMAT_AIFF | SF_FORMAT_PCM_24), Int32(SF_FORMAT_CAF | SF_FORMAT_FLOAT), Int32(SF_FORMAT_AU | SF_FORMAT_ULAW),
        Int32(SF_FORMAT_W64 | SF_FORMAT_PCM_32), Int32(SF_FORMAT_RF64 | SF_FORMAT_DOUBLE), Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16),
        Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS), Int32(SF_FORMAT_OGG | SF_FORMAT_OPUS), Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III),
    ])
    func aFileWrittenByLibsndfileReadsTheSameFromMemory(format: Int32) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("written")
        let samples = Fixtures.signal(frames: 12_000, channels: 2, sampleRate: 48_000).map { Float($0 * 0.5) }
        try Fixtures.writeWithLibsndfile(path, format: format, sampleRate: 48_000, channels: 2, samples: samples)
        try Self.expectSameReading(path)
    }

    /// A FLAC file cut in the middle of a frame ends in `truncated` from memory too, after the
    /// same frames: the check of the stream's last bytes reads the bytes, not a file.
    @Test func aCutFLACIsTruncatedFromMemoryAsFromTheFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("cut.flac")
        let samples = Fixtures.signal(frames: 48_000, channels: 2, sampleRate: 48_000).map { Int16($0 * 12_000) }
        try Fixtures.writeWithLibsndfile(path, format: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), sampleRate: 48_000, channels: 2, samples: samples)
        try Fixtures.truncate(path, to: try Fixtures.fileSize(path) * 2 / 3)
        let ending = Self.drain(try AudioFileReader(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))), name: "memory")).error
        guard case .truncated("memory", let framesRead, 48_000) = ending else {
            Issue.record("a cut FLAC from memory ended with \(String(describing: ending))")
            return
        }
        #expect(framesRead > 0 && framesRead < 48_000)
        try Self.expectSameReading(path)
    }

    /// A WAV cut inside its data reads the whole frames before the cut, then `truncated`.
    @Test func aCutWAVFromMemoryReadsTheFramesBeforeTheCut() throws {
        let samples = (0..<2_000).map { Int16(truncatingIfNeeded: $0 &* 37) }
        let bytes = Fixtures.wav(sampleRate: 16_000, channels: 2, declaredDataBytes: 4_000, payload: Fixtures.int16LE(samples))
        let reader = try AudioFileReader(bytes: Array(bytes.prefix(bytes.count - 1_001)), name: "cut")
        let (read, error) = AudioFiles.readAll(reader, bufferFrames: 333, as: Int16.self)
        // 4 044 bytes less 1 001 leave 2 999 of the 4 000 data bytes: 749 whole stereo frames.
        #expect(read == Array(samples.prefix(749 * 2)))
        #expect(error == .truncated(path: "cut", framesRead: 749, framesDeclared: 1_000))
    }

    @Test func noBytesAreRefusedAsEmpty() {
        #expect(caught { try AudioFileReader(bytes: [], name: "reply") } == .unrecognizedFormat(path: "reply", detail: "the file is empty", code: nil))
    }

    @Test func bytesThatAreNoAudioFileAreRefusedUnderTheirName() throws {
        let error = try #require(caught { try AudioFileReader(bytes: Array("{\"type\":\"audio.chunk\"}".utf8), name: "reply") })
        guard case .unrecognizedFormat("reply", _, _) = error else {
            Issue.record("JSON bytes gave \(error)")
            return
        }
        #expect(error.description.hasPrefix("'reply' is not an audio file"))
    }

    /// The format guard runs on bytes as on files: a header saying 0 Hz names the rate.
    @Test func aHeaderClaimingZeroHertzIsUnusableFromMemory() throws {
        let bytes = Fixtures.wav(sampleRate: 0, channels: 1, declaredDataBytes: 200, payload: [UInt8](repeating: 0, count: 200))
        let error = try #require(caught { try AudioFileReader(bytes: bytes, name: "reply") })
        guard case .unusableFormat("reply", let rejection) = error else {
            Issue.record("a 0 Hz header gave \(error)")
            return
        }
        #expect(rejection == .sampleRateNotPositive(0))
    }
}
