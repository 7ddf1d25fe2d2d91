import CSndFile
import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// A file whose data ends early converts as far as it goes with one warning, whatever its
/// container, and `info` calls it truncated; a file damaged in the middle is refused as damaged.
struct TruncatedInputTests {
    /// The frames the first `present` frames of `samples` convert to, through the CLI: what a
    /// truncated file must give.
    static func convertedPrefix<T>(_ samples: [T], present: Int, channels: Int, rate: Int, subtype: Int32, in directory: TemporaryDirectory, name: String) throws -> [Int16] {
        let prefix = directory.path("\(name)-prefix.wav")
        try SndFileFixtures.write(prefix, format: Int32(SF_FORMAT_WAV) | subtype, sampleRate: rate, channels: channels, samples: Array(samples.prefix(present * channels)))
        let output = directory.path("\(name)-prefix-out.wav")
        let result = try CommandRunner.run(["convert", prefix, output])
        #expect(result.status == 0, "\(result)")
        return try AudioFiles.read(output, as: Int16.self).samples
    }

    static func cut(_ source: String, to length: Int, as path: String) throws -> String {
        try Data(contentsOf: URL(fileURLWithPath: source)).prefix(length).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Converts `path` and checks the run: exit 0, exactly the truncation warning, `present`
    /// frames read, the output `expected`; then `info` in text and JSON.
    static func expectConvertedAsFarAsItGoes(_ path: String, rate: Int, present: Int, declared: Int?, expected: [Int16], in directory: TemporaryDirectory, decoderNoise: Bool = false) throws {
        let output = directory.path("out-\(URL(fileURLWithPath: path).lastPathComponent).wav")
        let result = try CommandRunner.run(["convert", path, output])
        #expect(result.status == 0, "\(result)")
        let warning = declared.map { "voicepipe convert: warning: '\(path)' is truncated: its header declares \($0) frames but the file holds \(present); converted the \(present) frames present\n" }
            ?? "voicepipe convert: warning: '\(path)' is truncated: its stream stops before its end; converted the \(present) frames present\n"
        // libmpg123 writes its own notes about a cut stream straight to stderr; ours is one line.
        #expect(decoderNoise ? result.stderr.hasSuffix(warning) : result.stderr == warning, "\(result.stderr)")
        let outputFrames = try RationalRatio(inputRate: SampleRate(hertz: Double(rate)), outputRate: 16_000).outputFrames(forInputFrames: present)
        #expect(result.stdout.contains(": \(present) frames at \(rate) Hz"), "\(result)")
        #expect(result.stdout.contains("-> \(outputFrames) frames at 16000 Hz"), "\(result)")
        let converted = try AudioFiles.read(output, as: Int16.self).samples
        #expect(converted.count == outputFrames)
        #expect(converted == expected, "the output is what the frames present convert to, sample for sample")

        let info = try CommandRunner.run(["info", path])
        #expect(info.status == 0, "\(info)")
        #expect(decoderNoise || info.stderr.isEmpty)
        #expect(info.stdout.contains("frames:     \(present) ("), "\(info)")
        if let declared {
            #expect(info.stdout.contains("declared:   \(declared) frames in the header (the file is truncated: its data ends after \(present))"), "\(info)")
        } else {
            #expect(info.stdout.contains("declared:   no length in the header (the file is truncated: its stream stops before its end)"), "\(info)")
        }
        #expect(info.stdout.contains("guard:      usable; converts to 16000 Hz mono Int16 (\(outputFrames) frames)"), "\(info)")
        let json = try CommandRunner.run(["info", "--json", path])
        #expect(json.stdout.contains("\"frames\":\(present),"), "\(json)")
        #expect(json.stdout.contains("\"truncated\":true,\"damaged\":false,\"convertible\":true,\"reason\":null,\"outputFrames\":\(outputFrames),\"exitStatus\":0}"), "\(json)")
    }

    @Test func aWAVFileCutAtAnyLengthConvertsAsFarAsItGoes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("call.wav")
        let frames = 30_000
        let samples = Signals.int16(RawInputTests.signal(frames: frames, channels: 2, rate: 44_100))
        try SndFileFixtures.write(path, format: Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16), sampleRate: 44_100, channels: 2, samples: samples)
        let header = try Data(contentsOf: URL(fileURLWithPath: path)).count - frames * 4
        // Whole frames only, a partial frame, a cut inside the first frame.
        for (present, extra) in [(1, 2), (4_410, 0), (12_345, 3), (29_999, 1)] {
            let cutPath = try Self.cut(path, to: header + present * 4 + extra, as: directory.path("cut-\(present)-\(extra).wav"))
            let expected = try Self.convertedPrefix(samples, present: present, channels: 2, rate: 44_100, subtype: Int32(SF_FORMAT_PCM_16), in: directory, name: "wav-\(present)")
            try Self.expectConvertedAsFarAsItGoes(cutPath, rate: 44_100, present: present, declared: frames, expected: expected, in: directory)
        }
    }

    @Test func aFLACFileCutAtAnyLengthConvertsAsFarAsItGoes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("call.flac")
        let frames = 50_000
        let samples = Signals.int16(RawInputTests.signal(frames: frames, channels: 2, rate: 48_000))
        try SndFileFixtures.write(path, format: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), sampleRate: 48_000, channels: 2, samples: samples)
        let size = try Data(contentsOf: URL(fileURLWithPath: path)).count
        for length in [size / 8, size / 2, size * 9 / 10, size - 1] {
            let cutPath = try Self.cut(path, to: length, as: directory.path("cut-\(length).flac"))
            // The frames a reader delivers (TruncationTests pins them to the whole FLAC frames).
            let present = try AudioFileReader(path: cutPath).measureLength().frames
            #expect(present > 0 && present < frames && present % 4_096 == 0, "cut at \(length): \(present)")
            let expected = try Self.convertedPrefix(samples, present: present, channels: 2, rate: 48_000, subtype: Int32(SF_FORMAT_PCM_16), in: directory, name: "flac-\(length)")
            try Self.expectConvertedAsFarAsItGoes(cutPath, rate: 48_000, present: present, declared: frames, expected: expected, in: directory)
        }
    }

    @Test func anOggFileCutAtAnyLengthConvertsAsFarAsItGoes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("call.ogg")
        let frames = 60_000
        try SndFileFixtures.write(path, format: Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS), sampleRate: 44_100, channels: 1,
                                  samples: RawInputTests.signal(frames: frames, channels: 1, rate: 44_100).map { Float($0) })
        let decoded = AudioFiles.readAll(try AudioFileReader(path: path), as: Float.self)
        #expect(decoded.error == nil && decoded.samples.count == frames)
        let size = try Data(contentsOf: URL(fileURLWithPath: path)).count
        for length in [size / 2, size * 4 / 5, size - 1] {
            let cutPath = try Self.cut(path, to: length, as: directory.path("cut-\(length).ogg"))
            let present = try AudioFileReader(path: cutPath).measureLength().frames
            #expect(present > 0 && present < frames, "cut at \(length): \(present)")
            let expected = try Self.convertedPrefix(decoded.samples, present: present, channels: 1, rate: 44_100, subtype: Int32(SF_FORMAT_FLOAT), in: directory, name: "ogg-\(length)")
            try Self.expectConvertedAsFarAsItGoes(cutPath, rate: 44_100, present: present, declared: nil, expected: expected, in: directory)
        }
    }

    @Test func anMP3FileThatStatesItsLengthAndIsCutShortConvertsAsFarAsItGoes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("call.mp3")
        let frames = 88_200
        try SndFileFixtures.write(path, format: Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III), sampleRate: 44_100, channels: 1,
                                  samples: RawInputTests.signal(frames: frames, channels: 1, rate: 44_100).map { Float($0) })
        let whole = try AudioFileReader(path: path)
        #expect(whole.info.declaredFrameCount == frames, "libsndfile writes a Xing/Info frame that states the length")
        let decoded = AudioFiles.readAll(whole, as: Float.self)
        #expect(decoded.error == nil && decoded.samples.count == frames)
        let size = try Data(contentsOf: URL(fileURLWithPath: path)).count
        let cutPath = try Self.cut(path, to: size / 2, as: directory.path("cut.mp3"))
        let present = try AudioFileReader(path: cutPath).measureLength().frames
        #expect(present > 0 && present < frames, "\(present)")
        let expected = try Self.convertedPrefix(decoded.samples, present: present, channels: 1, rate: 44_100, subtype: Int32(SF_FORMAT_FLOAT), in: directory, name: "mp3")
        try Self.expectConvertedAsFarAsItGoes(cutPath, rate: 44_100, present: present, declared: frames, expected: expected, in: directory, decoderNoise: true)
    }

    @Test func aFLACFileDamagedInTheMiddleIsRefusedAsDamaged() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("damaged.flac")
        let samples = Signals.int16(RawInputTests.signal(frames: 50_000, channels: 2, rate: 48_000))
        try SndFileFixtures.write(path, format: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), sampleRate: 48_000, channels: 2, samples: samples)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for index in (bytes.count / 2)..<(bytes.count / 2 + 200) { bytes[index] = UInt8(truncatingIfNeeded: index &* 131 &+ 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let result = try CommandRunner.run(["convert", path, directory.path("out.wav")])
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.hasPrefix("voicepipe convert: '\(path)' is damaged: reading stopped with \"Error : flac decoder lost sync\""), "\(result)")
        #expect(!result.stderr.contains("truncated"))

        let info = try CommandRunner.run(["info", path])
        #expect(info.status == 65, "\(info)")
        #expect(info.stdout.contains("damaged:    reading stops after "), "\(info)")
        #expect(!info.stdout.contains("truncated"))
        #expect(info.stderr == result.stderr.components(separatedBy: "; the ").first.map { "voicepipe info: " + $0.dropFirst("voicepipe convert: ".count) + "\n" })
    }
}
