import CSndFile
import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// `measureLength()` says how many frames a reader delivers: from the header where that count is
/// exact, by decoding where it is not.
struct FileLengthTests {
    static func stereo(frames: Int, rate: Int) -> [Float] {
        Fixtures.signal(frames: frames, channels: 2, sampleRate: Double(rate)).map { Float($0 * 0.8) }
    }

    /// Reads the whole file and returns the frames delivered.
    static func framesDelivered(_ path: String) throws -> Int {
        let reader = try AudioFileReader(path: path)
        let ending = try reader.forEachBlock { _ in true }
        #expect(ending == .endOfFile)
        return reader.framesRead
    }

    @Test func uncompressedFilesAreMeasuredFromTheHeaderWithoutReading() throws {
        let directory = try TemporaryDirectory()
        for (name, format) in [("pcm.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_24), ("ulaw.wav", SF_FORMAT_WAV | SF_FORMAT_ULAW), ("pcm.aiff", SF_FORMAT_AIFF | SF_FORMAT_PCM_16)] {
            let path = directory.path(name)
            try SndFileFixtures.write(path, format: Int32(format), sampleRate: 48_000, channels: 2, samples: Self.stereo(frames: 10_007, rate: 48_000))
            let reader = try AudioFileReader(path: path)
            #expect(reader.info.frameCountIsExact, "\(name)")
            #expect(try reader.measureLength() == AudioFileLength(frames: 10_007, ending: .endOfFile, wasCounted: false))
            #expect(reader.framesRead == 0, "nothing was read")
        }
    }

    /// Found by the audio-file fuzz target: an AU header putting the data at offset 0 (inside
    /// the header) makes libsndfile count the whole file as samples while reading starts after
    /// the 24-byte header. A count that does not fit beside the smallest header is counted.
    @Test func anAUHeaderPuttingTheDataInsideItselfIsCountedByReading() throws {
        let directory = try TemporaryDirectory()
        let header: [UInt8] = Array(".snd".utf8) + [0, 0, 0, 0] + [0x2C, 0, 0, 0x50] + [0, 0, 0, 1] + [0, 0, 0x1F, 0x40] + [0, 0, 0, 1]
        let path = try directory.file("offset-0.au", header + [UInt8](repeating: 0xFF, count: 11))
        let reader = try AudioFileReader(path: path)
        #expect(reader.info.frameCount == 35, "libsndfile's count: the whole file")
        #expect(!reader.info.frameCountIsExact)
        #expect(try reader.measureLength() == AudioFileLength(frames: 11, ending: .endOfFile, wasCounted: true))
        #expect(try Self.framesDelivered(path) == 11)

        // The same header with its data where it belongs is exact.
        var sound = header
        sound[7] = 24
        let exact = try directory.file("offset-24.au", sound + [UInt8](repeating: 0xFF, count: 11))
        let exactReader = try AudioFileReader(path: exact)
        #expect(exactReader.info.frameCountIsExact)
        #expect(try exactReader.measureLength() == AudioFileLength(frames: 11, ending: .endOfFile, wasCounted: false))
    }

    @Test func flacAndOggAreCountedByDecoding() throws {
        let directory = try TemporaryDirectory()
        for (name, format) in [("a.flac", SF_FORMAT_FLAC | SF_FORMAT_PCM_16), ("a.ogg", SF_FORMAT_OGG | SF_FORMAT_VORBIS)] {
            let path = directory.path(name)
            try SndFileFixtures.write(path, format: Int32(format), sampleRate: 44_100, channels: 2, samples: Self.stereo(frames: 30_011, rate: 44_100))
            let reader = try AudioFileReader(path: path)
            #expect(!reader.info.frameCountIsExact, "\(name)")
            #expect(reader.info.frameCount == 30_011)
            #expect(try reader.measureLength() == AudioFileLength(frames: 30_011, ending: .endOfFile, wasCounted: true))
            #expect(reader.framesRead == 30_011)
        }
    }

    @Test func anMP3sLengthIsCountedWhereLibsndfilesIsAnEstimate() throws {
        let directory = try TemporaryDirectory()
        let frames = 122_112
        // As libsndfile writes it (LAME, with a Xing header holding the exact count and the
        // encoder's delay and padding), the count is exact.
        let tagged = directory.path("tagged.mp3")
        try SndFileFixtures.write(tagged, format: Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III), sampleRate: 44_100, channels: 2,
                                  samples: Self.stereo(frames: frames, rate: 44_100), bitrateMode: Int32(SF_BITRATE_MODE_CONSTANT))
        let taggedReader = try AudioFileReader(path: tagged)
        #expect(taggedReader.info.container == "MPEG-1/2" && taggedReader.info.encoding == "MPEG Layer III")
        #expect(!taggedReader.info.frameCountIsExact)
        #expect(taggedReader.info.frameCount == frames)
        #expect(try taggedReader.measureLength() == AudioFileLength(frames: frames, ending: .endOfFile, wasCounted: true))

        // Without that header (a constant-bitrate stream as many encoders leave it), libsndfile's
        // count is mpg123's estimate from the file's size, and reading delivers whole MPEG frames
        // of 1152 samples: a different number, which only decoding finds.
        let taggedBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: tagged)))
        // The Info header: "Info", flags (bit 0: a frame count follows), the stream's MPEG frames.
        let info = try #require(taggedBytes.prefix(1_000).firstRange(of: Array("Info".utf8))?.lowerBound)
        #expect(taggedBytes[info + 7] & 1 == 1)
        let mpegFrames = taggedBytes[(info + 8)..<(info + 12)].reduce(0) { $0 << 8 | Int($1) }
        let untagged = try directory.file("untagged.mp3", SndFileFixtures.mp3WithoutInfoFrame(taggedBytes))
        let reader = try AudioFileReader(path: untagged)
        let estimate = try #require(reader.info.frameCount)
        let measured = try reader.measureLength()
        #expect(measured.wasCounted && measured.ending == .endOfFile)
        #expect(measured.frames == mpegFrames * 1_152, "every MPEG frame, the encoder's delay and padding included")
        #expect(measured.frames > frames)
        #expect(estimate != measured.frames)
        #expect(try Self.framesDelivered(untagged) == measured.frames, "what a reader delivers")
    }
}
