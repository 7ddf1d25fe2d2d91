import CSndFile
import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// `voicepipe info` tells what `convert` will do: the frames it reads, the frames it writes, and
/// whether it can convert the file at all, with convert's reason and exit status.
struct InfoCommandTests {
    /// What `convert` printed: frames read at the input rate, and frames written at 16 kHz.
    static func convertCounts(_ path: String, _ extra: [String] = [], in directory: TemporaryDirectory) throws -> (read: Int, written: Int) {
        let output = directory.path("converted-\(URL(fileURLWithPath: path).lastPathComponent).wav")
        let result = try CommandRunner.run(["convert", path, output] + extra)
        #expect(result.status == 0, "\(result)")
        let pattern = try Regex(#": (\d+) frames at [0-9.]+ Hz \([0-9.]+ s\) -> (\d+) frames at 16000 Hz"#)
        guard let match = try pattern.firstMatch(in: result.stdout),
              let read = match.output[1].substring.flatMap({ Int($0) }), let written = match.output[2].substring.flatMap({ Int($0) }) else {
            Issue.record("no counts in \(result)")
            return (-1, -1)
        }
        #expect(try AudioFiles.read(output, as: Int16.self).samples.count == written)
        return (read, written)
    }

    /// `info --json` for one file, parsed.
    static func infoJSON(_ path: String, _ extra: [String] = []) throws -> [String: Any] {
        let result = try CommandRunner.run(["info", "--json", path] + extra)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1, "\(result)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return try #require(object)
    }

    static func expectInfoMatchesConvert(_ path: String, sampleType: String, in directory: TemporaryDirectory) throws {
        let json = try Self.infoJSON(path)
        let convert = try Self.convertCounts(path, in: directory)
        #expect(json["frames"] as? Int == convert.read, "\(path): \(json)")
        #expect(json["outputFrames"] as? Int == convert.written, "\(path): \(json)")
        #expect(json["sampleType"] as? String == sampleType, "\(path)")
        #expect(json["truncated"] as? Bool == false && json["damaged"] as? Bool == false && json["convertible"] as? Bool == true)
        #expect(json["exitStatus"] as? Int == 0)
        let rate = try #require(json["sampleRate"] as? Int)
        #expect(convert.written == (try RationalRatio(inputRate: SampleRate(hertz: Double(rate)), outputRate: 16_000)).outputFrames(forInputFrames: convert.read))
        let text = try CommandRunner.run(["info", path])
        #expect(text.status == 0 && text.stderr.isEmpty, "\(text)")
        #expect(text.stdout.contains("frames:     \(convert.read) ("), "\(text)")
        #expect(text.stdout.contains("guard:      usable; converts to 16000 Hz mono Int16 (\(convert.written) frames)"), "\(text)")
        #expect(!text.stdout.contains("truncated"))
    }

    @Test(arguments: ["speech-48k-stereo-f32.wav", "speech-44k1-stereo-s16.wav", "speech-8k-mono-s16.wav", "speech-22k05-mono-s16.wav"])
    func everyBundledSampleIsReportedAsConvertReadsAndWritesIt(sample: String) throws {
        let directory = try TemporaryDirectory()
        try Self.expectInfoMatchesConvert(CommandRunner.sample(sample), sampleType: sample.hasSuffix("f32.wav") ? "Float32" : "Int16", in: directory)
    }

    /// Generated files: name, libsndfile format, rate, channels, the decoded sample type.
    static let generated: [(name: String, format: Int32, rate: Int, channels: Int, sampleType: String)] = [
        ("s16.wav", Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16), 44_100, 2, "Int16"),
        ("s16.aiff", Int32(SF_FORMAT_AIFF | SF_FORMAT_PCM_16), 22_050, 1, "Int16"),
        ("s16.flac", Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), 48_000, 2, "Int16"),
        ("s24-96k.flac", Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_24), 96_000, 2, "Int32"),
        ("vorbis.ogg", Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS), 44_100, 2, "Float32"),
        ("layer3.mp3", Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III), 44_100, 2, "Float32"),
        ("layer3-16k.mp3", Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III), 16_000, 1, "Float32"),
        ("s24-96k.wav", Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_24), 96_000, 2, "Int32"),
        ("six-channels.wav", Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT), 48_000, 6, "Float32"),
        ("u8.wav", Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_U8), 11_025, 1, "Int16"),
        ("ulaw.wav", Int32(SF_FORMAT_WAV | SF_FORMAT_ULAW), 8_000, 1, "Int16"),
        ("alaw.wav", Int32(SF_FORMAT_WAV | SF_FORMAT_ALAW), 8_000, 1, "Int16"),
    ]

    @Test(arguments: generated.indices)
    func everyContainerAndEncodingIsReportedAsConvertReadsAndWritesIt(index: Int) throws {
        let (name, format, rate, channels, sampleType) = Self.generated[index]
        let directory = try TemporaryDirectory()
        let path = directory.path(name)
        try SndFileFixtures.write(path, format: format, sampleRate: rate, channels: channels,
                                  samples: RawInputTests.signal(frames: rate * 2 + 777, channels: channels, rate: rate))
        try Self.expectInfoMatchesConvert(path, sampleType: sampleType, in: directory)
    }

    @Test func anMP3WithoutAnInfoHeaderIsCountedNotEstimated() throws {
        let directory = try TemporaryDirectory()
        let tagged = directory.path("tagged.mp3")
        try SndFileFixtures.write(tagged, format: Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III), sampleRate: 44_100, channels: 2,
                                  samples: RawInputTests.signal(frames: 122_112, channels: 2, rate: 44_100), bitrateMode: Int32(SF_BITRATE_MODE_CONSTANT))
        let path = try directory.file("estimate.mp3", SndFileFixtures.mp3WithoutInfoFrame([UInt8](Data(contentsOf: URL(fileURLWithPath: tagged)))))
        let estimate = try #require(try AudioFileReader(path: path).info.frameCount)

        let json = try Self.infoJSON(path)
        let convert = try Self.convertCounts(path, in: directory)
        #expect(json["frames"] as? Int == convert.read)
        #expect(json["framesCounted"] as? Bool == true)
        #expect(json["headerFrames"] as? Int == estimate)
        #expect(estimate != convert.read, "libsndfile's count is an estimate here")
        #expect(json["outputFrames"] as? Int == convert.written)
        let text = try CommandRunner.run(["info", path]).stdout
        #expect(text.contains("frames:     \(convert.read) (\(String(format: "%.3f", Double(convert.read) / 44_100)) s), counted by decoding (the header estimates \(estimate))"), "\(text)")
        #expect(text.contains("samples:    Float32, decoded from MPEG Layer III"))
    }

    @Test func theSampleTypeShownIsTheDecodedType() throws {
        let directory = try TemporaryDirectory()
        for (name, format, line) in [
            ("deep.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_24, "samples:    Int32, decoded from Signed 24 bit PCM"),
            ("byte.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_U8, "samples:    Int16, decoded from Unsigned 8 bit PCM"),
            ("phone.wav", SF_FORMAT_WAV | SF_FORMAT_ULAW, "samples:    Int16, decoded from U-Law"),
            ("plain.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16, "samples:    Int16, decoded from Signed 16 bit PCM"),
        ] {
            let path = directory.path(name)
            try SndFileFixtures.write(path, format: Int32(format), sampleRate: 8_000, channels: 1, samples: RawInputTests.signal(frames: 800, channels: 1, rate: 8_000))
            let result = try CommandRunner.run(["info", path])
            #expect(result.stdout.contains("\n\(line)\n"), "\(result)")
            #expect(result.stdout.contains("\nformat:     8000 Hz, mono\n"))
        }
    }

    @Test func whatConvertRefusesInfoRefusesWithConvertsReasonAndStatus() throws {
        let directory = try TemporaryDirectory()
        let megahertz = directory.url.appendingPathComponent("1mhz.wav")
        try WAVBytes.pcm16(rate: 1_000_000, channels: 1, samples: [Int16](repeating: 1_000, count: 5_000)).write(to: megahertz)
        let raw = try directory.file("call.raw", [UInt8](repeating: 0, count: 4_000))
        let stereo = CommandRunner.sample("speech-44k1-stereo-s16.wav")
        for (path, options, status) in [(megahertz.path, [], Int32(65)), (raw, ["--raw", "500:2:int16"], 65), (stereo, ["--channel", "2"], 64)] {
            let convert = try CommandRunner.run(["convert", path, directory.path("out.wav")] + options)
            let info = try CommandRunner.run(["info", path] + options)
            #expect(convert.status == status, "\(convert)")
            #expect(info.status == status, "\(info)")
            let reason = String(convert.stderr.dropFirst("voicepipe convert: ".count).dropLast())
            #expect(info.stderr == "voicepipe info: \(reason)\n", "the same sentence")
            #expect(reason.hasPrefix("cannot convert '"))
            // The format passed the guard; convert is what refuses the file.
            #expect(info.stdout.hasSuffix("guard:      usable\nconvert:    refused: \(reason)\n"), "\(info)")
            #expect(try Self.infoJSON(path, options)["reason"] as? String == reason)
        }
        // A 1 MHz file passes the format guard (a positive rate) but no resampler takes it.
        let text = try CommandRunner.run(["info", megahertz.path]).stdout
        #expect(text.contains("frames:     5000 (0.005 s)"))
        #expect(text.contains("convert:    refused: cannot convert '\(megahertz.path)' (1000000 Hz, mono, Int16): cannot resample at 1000000 Hz: supported rates are 1000 Hz to 768000 Hz"))
    }

    @Test func severalFilesGiveOneBlockEachAndTheWorstStatus() throws {
        let directory = try TemporaryDirectory()
        let zeroRate = directory.url.appendingPathComponent("zero-rate.wav")
        try WAVBytes.pcm16(rate: 0, channels: 1, samples: [1, 2, 3]).write(to: zeroRate)
        let missing = directory.path("missing.wav")
        let first = CommandRunner.sample("speech-8k-mono-s16.wav")
        let last = CommandRunner.sample("speech-22k05-mono-s16.wav")

        let result = try CommandRunner.run(["info", first, missing, zeroRate.path, last])
        #expect(result.status == 66, "the worst of 0, 66, 65, 0")
        let blocks = result.stdout.components(separatedBy: "\n\n")
        #expect(blocks.count == 4, "\(result)")
        #expect(blocks[0].hasPrefix("file:       \(first)\n") && blocks[0].hasSuffix("guard:      usable; converts to 16000 Hz mono Int16 (44586 frames)"))
        #expect(blocks[1] == "file:       \(missing)\nerror:      cannot read '\(missing)': no such file; check the path")
        #expect(blocks[2].hasPrefix("file:       \(zeroRate.path)\n") && blocks[2].contains("format:     0 Hz, mono\n"))
        #expect(blocks[2].contains("guard:      refused: the sample rate is 0 Hz; audio needs a positive rate"))
        #expect(!blocks[2].contains("truncated"), "all three declared frames are there")
        #expect(blocks[3].hasPrefix("file:       \(last)\n") && blocks[3].hasSuffix("guard:      usable; converts to 16000 Hz mono Int16 (46592 frames)\n"))
        let errors = result.stderr.split(separator: "\n")
        #expect(errors.count == 2)
        #expect(errors.first == "voicepipe info: cannot read '\(missing)': no such file; check the path")
        #expect(errors.last?.hasPrefix("voicepipe info: '\(zeroRate.path)' cannot be used: the sample rate is 0 Hz") == true)

        #expect(try CommandRunner.run(["info", first, zeroRate.path]).status == 65)
        #expect(try CommandRunner.run(["info", first, last]).status == 0)
    }

    @Test func jsonIsOneObjectPerLineWithItsKeysInAFixedOrder() throws {
        let directory = try TemporaryDirectory()
        let sample = CommandRunner.sample("speech-8k-mono-s16.wav")
        let missing = directory.path("missing.wav")
        let result = try CommandRunner.run(["info", "--json", sample, missing])
        #expect(result.status == 66)
        #expect(result.stdout == """
            {"path":"\(sample)","container":"WAV","encoding":"Signed 16 bit PCM","sampleType":"Int16","sampleRate":8000,"channels":1,\
            "frames":22293,"framesCounted":false,"headerFrames":22293,"declaredFrames":22293,"truncated":false,"damaged":false,\
            "convertible":true,"reason":null,"outputFrames":44586,"exitStatus":0}
            {"path":"\(missing)","container":null,"encoding":null,"sampleType":null,"sampleRate":null,"channels":null,\
            "frames":null,"framesCounted":false,"headerFrames":null,"declaredFrames":null,"truncated":false,"damaged":false,\
            "convertible":false,"reason":"cannot read '\(missing)': no such file; check the path","outputFrames":null,"exitStatus":66}

            """)
        #expect(result.stderr == "voicepipe info: cannot read '\(missing)': no such file; check the path\n")
    }

    @Test func quietPrintsNothingButErrors() throws {
        let directory = try TemporaryDirectory()
        let sample = CommandRunner.sample("speech-8k-mono-s16.wav")
        let good = try CommandRunner.run(["info", "--quiet", sample])
        #expect(good.status == 0 && good.stdout.isEmpty && good.stderr.isEmpty, "\(good)")
        let missing = directory.path("missing.wav")
        let bad = try CommandRunner.run(["info", "--quiet", sample, missing])
        #expect(bad.status == 66 && bad.stdout.isEmpty)
        #expect(bad.stderr == "voicepipe info: cannot read '\(missing)': no such file; check the path\n")

        let both = try CommandRunner.run(["info", "--quiet", "--json", sample])
        #expect(both.status == 64)
        #expect(both.stderr == "voicepipe info: '--json' and '--quiet' cannot be used together (see 'voicepipe info --help')\n")
        let none = try CommandRunner.run(["info"])
        #expect(none.status == 64)
        #expect(none.stderr == "voicepipe info: missing <file> (see 'voicepipe info --help')\n")
    }
}
