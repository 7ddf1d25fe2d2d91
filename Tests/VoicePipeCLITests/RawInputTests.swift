import CSndFile
import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// `--raw RATE:CHANNELS:TYPE` takes every encoding telephony and capture hardware produce, and a
/// headerless file converts exactly as the same audio in a WAV file does.
struct RawInputTests {
    static let cases: [(type: String, subtype: Int32, rate: Int, channels: Int)] = [
        ("u8", Int32(SF_FORMAT_PCM_U8), 8_000, 1),
        ("int16", Int32(SF_FORMAT_PCM_16), 44_100, 2),
        ("int24", Int32(SF_FORMAT_PCM_24), 96_000, 2),
        ("int32", Int32(SF_FORMAT_PCM_32), 48_000, 6),
        ("float32", Int32(SF_FORMAT_FLOAT), 22_050, 1),
        ("float64", Int32(SF_FORMAT_DOUBLE), 32_000, 2),
        ("mulaw", Int32(SF_FORMAT_ULAW), 8_000, 1),
        ("alaw", Int32(SF_FORMAT_ALAW), 8_000, 1),
    ]

    /// A speech-like test signal: two tones and a little noise per channel, at -6 dBFS or so.
    static func signal(frames: Int, channels: Int, rate: Int) -> [Double] {
        let perChannel = (0..<channels).map { channel in
            let low = Signals.sine(frequency: 300 + 110 * Double(channel), amplitude: 0.3, sampleRate: Double(rate), frames: frames)
            let high = Signals.sine(frequency: 2_500, amplitude: 0.15, sampleRate: Double(rate), frames: frames)
            let noise = Signals.noise(amplitude: 0.05, frames: frames, seed: UInt64(channel + 1))
            return (0..<frames).map { low[$0] + high[$0] + noise[$0] }
        }
        return Signals.interleave(perChannel)
    }

    @Test(arguments: cases.indices)
    func aRawFileConvertsSampleForSampleAsTheSameAudioInAWAV(index: Int) throws {
        let (type, subtype, rate, channels) = Self.cases[index]
        let directory = try TemporaryDirectory()
        let wav = directory.path("call.wav")
        let frames = 12_345
        try SndFileFixtures.write(wav, format: Int32(SF_FORMAT_WAV) | subtype, sampleRate: rate, channels: channels,
                                  samples: Self.signal(frames: frames, channels: channels, rate: rate))
        let raw = try directory.file("call.raw", SndFileFixtures.wavData(wav))

        let fromRaw = try CommandRunner.run(["convert", "--raw", "\(rate):\(channels):\(type)", raw, directory.path("from-raw.wav")])
        let fromWAV = try CommandRunner.run(["convert", wav, directory.path("from-wav.wav")])
        #expect(fromRaw.status == 0, "\(fromRaw)")
        #expect(fromWAV.status == 0, "\(fromWAV)")
        #expect(fromRaw.stderr.isEmpty)

        let expectedFrames = try RationalRatio(inputRate: SampleRate(hertz: Double(rate)), outputRate: 16_000).outputFrames(forInputFrames: frames)
        let rawOutput = try AudioFiles.read(directory.path("from-raw.wav"), as: Int16.self)
        let wavOutput = try AudioFiles.read(directory.path("from-wav.wav"), as: Int16.self)
        #expect(rawOutput.format == AudioFormat.captureTarget)
        #expect(rawOutput.samples.count == expectedFrames, "\(type)")
        #expect(rawOutput.samples == wavOutput.samples, "\(type)")
        #expect(rawOutput.samples.contains { $0 != 0 })
        #expect(fromRaw.stdout.contains("\(frames) frames at \(rate) Hz"))
        #expect(fromRaw.stdout.contains("-> \(expectedFrames) frames at 16000 Hz"))

        // info reads the raw file as convert does.
        let info = try CommandRunner.run(["info", "--raw", "\(rate):\(channels):\(type)", raw])
        #expect(info.status == 0, "\(info)")
        #expect(info.stdout.contains("frames:     \(frames) ("))
        #expect(info.stdout.contains("guard:      usable; converts to 16000 Hz mono Int16 (\(expectedFrames) frames)"))
    }

    @Test func eightKilohertzMuLawIsReadAsTelephoneMediaStreamsCarryIt() throws {
        // 0xFF is µ-law's zero: a second of it is a second of digital silence.
        let directory = try TemporaryDirectory()
        let raw = try directory.file("call.ulaw", [UInt8](repeating: 0xFF, count: 8_000))
        let result = try CommandRunner.run(["convert", "--raw", "8000:1:MULAW", raw, directory.path("out.wav")])
        #expect(result.status == 0, "\(result)")
        let output = try AudioFiles.read(directory.path("out.wav"), as: Int16.self)
        #expect(output.samples == [Int16](repeating: 0, count: 16_000))
        #expect(result.stdout.hasSuffix("8000 frames at 8000 Hz (1.000 s) -> 16000 frames at 16000 Hz (1.000 s); peak -inf dBFS; 32 of 32 frames digital silence\n"))
    }

    @Test func theHelpListsEveryTypeAndABadTypeSaysWhichAreTaken() throws {
        for command in ["convert", "encode", "info", "play"] {
            let help = try CommandRunner.run([command, "--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(help.contains("types: u8, int16, int24, int32, float32, float64, mulaw, alaw"), "\(command)")
        }
        let directory = try TemporaryDirectory()
        let raw = try directory.file("call.raw", [0, 0])
        let bad = try CommandRunner.run(["convert", "--raw", "8000:1:ulaw16", raw, directory.path("out.wav")])
        #expect(bad.status == 64)
        #expect(bad.stderr == "voicepipe convert: '--raw' type 'ulaw16' is not one of u8, int16, int24, int32, float32, float64, mulaw, alaw (see 'voicepipe convert --help')\n")
        #expect(!FileManager.default.fileExists(atPath: directory.path("out.wav")))
    }

    @Test func aRateOrChannelCountOutOfRangeIsAUsageErrorBeforeTheFileIsTouched() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.path("missing.raw")
        for (raw, problem) in [("0:1:mulaw", "rate must be a whole number of hertz from 1 to 768000, not '0'"),
                               ("nan:1:mulaw", "rate must be a whole number of hertz from 1 to 768000, not 'nan'"),
                               ("99999999999999999999:1:int16", "rate must be a whole number of hertz from 1 to 768000, not '99999999999999999999'"),
                               ("44100.5:1:int16", "rate must be a whole number of hertz from 1 to 768000, not '44100.5'"),
                               ("8000:0:alaw", "channels must be 1 to 1024, not '0'"), ("8000:65536:u8", "channels must be 1 to 1024, not '65536'")] {
            let result = try CommandRunner.run(["convert", "--raw", raw, missing, directory.path("out.wav")])
            #expect(result.status == 64, "\(raw)")
            #expect(result.stderr == "voicepipe convert: '--raw' \(problem) (see 'voicepipe convert --help')\n", "\(result)")
        }
    }
}
