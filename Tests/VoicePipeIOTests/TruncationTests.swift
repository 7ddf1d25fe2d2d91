import CSndFile
import Foundation
import Testing
import VoicePipeCore
@testable import VoicePipeIO
import VoicePipeTestSupport

/// A file whose data simply ends early is read as far as it goes and reported as truncated in every
/// container; a file damaged in the middle is still reported as damaged.
///
/// What libsndfile 1.2.0 does on its own (the evidence behind the reader's rule):
/// - a FLAC file cut inside a frame: libFLAC stops with "lost sync" (libsndfile error 158) after
///   the whole frames before the cut, exactly as it does for a frame overwritten in the middle;
/// - an Ogg/Vorbis file cut inside a page: every whole page decodes, reading ends without an error,
///   and libsndfile reports the length as unknown (`SF_COUNT_MAX`).
/// The file's last bytes tell a cut from damage: a FLAC frame ends with a CRC-16 of itself, an Ogg
/// page states its length and the last one carries the end-of-stream flag.
struct TruncationTests {
    // MARK: Fixtures

    static let flacFrames = 40_000

    /// A 16 kHz stereo 16-bit FLAC file and its samples.
    static func flac(_ directory: TemporaryDirectory, name: String = "speech.flac") throws -> (path: String, samples: [Int16]) {
        let path = directory.path(name)
        let samples = Signals.int16(Fixtures.signal(frames: flacFrames, channels: 2, sampleRate: 16_000))
        try SndFileFixtures.write(path, format: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), sampleRate: 16_000, channels: 2, samples: samples)
        return (path, samples)
    }

    /// Where each FLAC frame starts and how many samples per channel it holds, found by hand: a valid
    /// header whose frame, up to the next header, ends with its own CRC-16.
    static func flacFrameStarts(_ bytes: [UInt8]) -> [Int] {
        let candidates = (0..<(bytes.count - 1)).filter {
            bytes[$0] == 0xFF && bytes[$0 + 1] & 0xFE == 0xF8 && StreamEndProbe.isFLACFrameHeader(bytes, at: $0)
        }
        var starts = [Int]()
        for (index, start) in candidates.enumerated() {
            let end = index + 1 < candidates.count ? candidates[index + 1] : bytes.count
            let crc = UInt16(bytes[end - 2]) << 8 | UInt16(bytes[end - 1])
            if StreamEndProbe.crc16(bytes[start..<(end - 2)]) == crc { starts.append(start) }
        }
        return starts
    }

    static func cut(_ source: String, to length: Int, as path: String) throws -> String {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        try bytes.prefix(length).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    // MARK: FLAC

    @Test func aFLACFileCutAnywhereDeliversEveryWholeFrameAndIsTruncated() throws {
        let directory = try TemporaryDirectory()
        let (path, samples) = try Self.flac(directory)
        let bytes = try Self.bytes(path)
        let starts = Self.flacFrameStarts(bytes)
        let blockSize = 4_096  // libsndfile's FLAC encoder: fixed 4096-sample blocks, the last one shorter
        #expect(starts.count == (Self.flacFrames + blockSize - 1) / blockSize)
        #expect(StreamEndProbe.probe(AudioFilesBytes.reader(bytes), size: bytes.count) == .complete)

        let cuts = [starts[0] + 10, bytes.count / 10, bytes.count / 3, starts[5], starts[5] + 1, bytes.count / 2, bytes.count - 1]
        for length in cuts {
            let cutPath = try Self.cut(path, to: length, as: directory.path("cut-\(length).flac"))
            // Frame i is whole when the next one starts at or before the cut.
            let wholeFrames = starts.dropFirst().filter { $0 <= length }.count
            let present = wholeFrames * blockSize
            #expect(StreamEndProbe.probe(AudioFilesBytes.reader(Array(bytes.prefix(length))), size: length) == (starts.contains(length) ? .complete : .cutShort), "cut at \(length)")

            for bufferFrames in [1_000, 4_096] {
                let reader = try AudioFileReader(path: cutPath)
                #expect(reader.info.declaredFrameCount == Self.flacFrames)
                let (read, error) = AudioFiles.readAll(reader, bufferFrames: bufferFrames, as: Int16.self)
                #expect(error == .truncated(path: cutPath, framesRead: present, framesDeclared: Self.flacFrames), "cut at \(length)")
                #expect(read == Array(samples.prefix(present * 2)), "cut at \(length): the frames present, exactly")
                // Every later read says the same.
                #expect(AudioFiles.readAll(reader, bufferFrames: bufferFrames, as: Int16.self).error == error)
            }
            let streamed = try AudioFileReader(path: cutPath)
            #expect(try streamed.forEachBlock { _ in true } == .truncated(framesRead: present, framesDeclared: Self.flacFrames))
            let measured = try AudioFileReader(path: cutPath).measureLength()
            #expect(measured == AudioFileLength(frames: present, ending: .truncated(framesRead: present, framesDeclared: Self.flacFrames), wasCounted: true))
        }
    }

    @Test func aFLACFileDamagedInTheMiddleIsCorruptNotTruncated() throws {
        let directory = try TemporaryDirectory()
        let (path, samples) = try Self.flac(directory)
        let bytes = try Self.bytes(path)
        let starts = Self.flacFrameStarts(bytes)
        // Noise over the middle of frame 3, and zeros over frame 6's header: the file still ends
        // with a whole frame.
        for (name, range, fill) in [("noise", (starts[3] + 500)..<(starts[3] + 550), UInt8(0x5A)), ("zeros", starts[6]..<(starts[6] + 16), 0)] {
            var damaged = bytes
            for index in range { damaged[index] = fill == 0 ? 0 : UInt8(truncatingIfNeeded: index &* 131 &+ 7) }
            let damagedPath = try directory.file("\(name).flac", damaged)
            #expect(StreamEndProbe.probe(AudioFilesBytes.reader(damaged), size: damaged.count) == .complete)
            let reader = try AudioFileReader(path: damagedPath)
            let (read, error) = AudioFiles.readAll(reader, bufferFrames: 1_000, as: Int16.self)
            guard case .corrupt(damagedPath, let code) = error else {
                Issue.record("\(name): expected corrupt, got \(String(describing: error))")
                continue
            }
            #expect(code.domain == .libsndfile && code.message.contains("flac decoder"))
            #expect(reader.framesRead < Self.flacFrames)
            #expect(read == Array(samples.prefix(read.count)), "what came before the damage is the original audio")
            #expect(caught { try AudioFileReader(path: damagedPath).measureLength() } == error)
        }
    }

    @Test func anID3TagAfterTheLastFLACFrameIsNotACut() throws {
        let directory = try TemporaryDirectory()
        let (path, _) = try Self.flac(directory)
        var bytes = try Self.bytes(path)
        bytes += Array("TAG".utf8) + [UInt8](repeating: 0x20, count: 125)
        #expect(StreamEndProbe.probe(AudioFilesBytes.reader(bytes), size: bytes.count) == .complete)
    }

    // MARK: Ogg

    /// A libsndfile-written Ogg/Vorbis file, and its pages: where each ends and its granule position.
    static func ogg(_ directory: TemporaryDirectory) throws -> (path: String, pages: [(end: Int, granule: Int64)]) {
        let path = directory.path("speech.ogg")
        let samples = Fixtures.signal(frames: 60_000, channels: 2, sampleRate: 44_100).map { Float($0) }
        try SndFileFixtures.write(path, format: Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS), sampleRate: 44_100, channels: 2, samples: samples)
        let bytes = try Self.bytes(path)
        var pages = [(end: Int, granule: Int64)]()
        var offset = 0
        while offset + 27 <= bytes.count {
            let segments = Int(bytes[offset + 26])
            let body = bytes[(offset + 27)..<(offset + 27 + segments)].reduce(0) { $0 + Int($1) }
            let granule = (0..<8).reduce(Int64(0)) { $0 | Int64(bytes[offset + 6 + $1]) << (8 * Int64($1)) }
            offset += 27 + segments + body
            pages.append((offset, granule))
        }
        return (path, pages)
    }

    @Test func anOggFileCutShortDeliversEveryWholePageAndIsTruncated() throws {
        let directory = try TemporaryDirectory()
        let (path, pages) = try Self.ogg(directory)
        let bytes = try Self.bytes(path)
        #expect(pages.last?.end == bytes.count)
        #expect(StreamEndProbe.probe(AudioFilesBytes.reader(bytes), size: bytes.count) == .complete)
        let whole = AudioFiles.readAll(try AudioFileReader(path: path), as: Float.self)
        #expect(whole.error == nil && whole.samples.count == 60_000 * 2)

        // Inside a page, at a page boundary (the stream just stops), inside a page header.
        let audioPages = pages.filter { $0.granule > 0 }
        let boundary = audioPages[audioPages.count / 2].end
        for length in [bytes.count * 2 / 5, bytes.count - 1, boundary, boundary + 2, boundary + 20] {
            let cutPath = try Self.cut(path, to: length, as: directory.path("cut-\(length).ogg"))
            #expect(StreamEndProbe.probe(AudioFilesBytes.reader(Array(bytes.prefix(length))), size: length) == .cutShort, "cut at \(length)")
            // Every page that is whole decodes: up to the granule position of the last of them.
            let present = Int(pages.last { $0.end <= length }?.granule ?? 0)
            let reader = try AudioFileReader(path: cutPath)
            let (read, error) = AudioFiles.readAll(reader, bufferFrames: 1_000, as: Float.self)
            #expect(error == .truncated(path: cutPath, framesRead: present, framesDeclared: nil), "cut at \(length)")
            #expect(read == Array(whole.samples.prefix(present * 2)), "cut at \(length)")
            #expect(try AudioFileReader(path: cutPath).forEachBlock { _ in true } == .truncated(framesRead: present, framesDeclared: nil))
            #expect(error?.description == "'\(cutPath)' is truncated: its stream stops before its end after \(present) frames (all of them were delivered); copy or export the file again")
        }
    }

    @Test func anOggFileWithJunkAfterItsLastPageIsNotACut() throws {
        let directory = try TemporaryDirectory()
        let (path, _) = try Self.ogg(directory)
        let bytes = try Self.bytes(path) + [UInt8](repeating: 0x42, count: 300)
        #expect(StreamEndProbe.probe(AudioFilesBytes.reader(bytes), size: bytes.count) == .complete)
    }

    // MARK: Other containers

    @Test func containersWithoutAStreamEndAreNeverCalledCut() throws {
        let wav = Fixtures.wav(sampleRate: 8_000, channels: 1, payload: Fixtures.int16LE([1, 2, 3]))
        #expect(StreamEndProbe.probe(AudioFilesBytes.reader(wav), size: wav.count) == .unknown)
        let noise = (0..<1_000).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        #expect(StreamEndProbe.probe(AudioFilesBytes.reader(noise), size: noise.count) == .unknown)
    }
}

/// An in-memory byte reader for the probes.
enum AudioFilesBytes {
    static func reader(_ bytes: [UInt8]) -> AudioHeaderProbe.ByteReader {
        { offset, count in
            guard offset >= 0, offset < bytes.count, count > 0 else { return [] }
            return Array(bytes[offset..<min(bytes.count, offset + count)])
        }
    }
}
