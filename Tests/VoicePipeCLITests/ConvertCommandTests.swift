import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// `voicepipe convert` and `voicepipe info`, run as a user runs them.
struct ConvertCommandTests {
    static let samples: [(name: String, rate: Double, frames: Int)] = [
        ("speech-48k-stereo-f32.wav", 48_000, 140_687),
        ("speech-44k1-stereo-s16.wav", 44_100, 119_896),
        ("speech-8k-mono-s16.wav", 8_000, 22_293),
        ("speech-22k05-mono-s16.wav", 22_050, 64_209),
    ]

    @Test(arguments: samples)
    func convertsEverySampleToTheCaptureFormat(name: String, rate: Double, frames: Int) throws {
        let directory = try TemporaryDirectory()
        let output = directory.path("out.wav")
        let result = try CommandRunner.run(["convert", CommandRunner.sample(name), output])
        #expect(result.status == 0, "\(result)")
        let expectedFrames = Int((Double(frames) * 16_000 / rate).rounded())
        let (format, samples) = try AudioFiles.read(output, as: Int16.self)
        #expect(format == AudioFormat.captureTarget)
        #expect(samples.count == expectedFrames)
        // One summary line: frames in and out, durations, peak, digital-silence frames.
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(result.stdout.contains("\(frames) frames at \(Int(rate)) Hz"))
        #expect(result.stdout.contains("\(expectedFrames) frames at 16000 Hz"))
        // The reported peak is the loudest frame's, before rounding: within 0.05 dB of the file's.
        let peak = try #require(result.stdout.firstMatch(of: /peak (-?\d+\.\d) dBFS/))
        let loudest = Double(samples.map { Int($0).magnitude }.max() ?? 0) / 32768
        #expect(abs((Double(peak.1) ?? 0) - Measurement.dB(loudest)) <= 0.06, "\(result.stdout)")
        // The samples begin and end with 100 ms of exact zeros: at least four 32 ms frames are silent.
        let silent = try #require(result.stdout.firstMatch(of: /(\d+) of (\d+) frames digital silence/))
        #expect(Int(silent.1) ?? 0 >= 4)
        #expect(Int(silent.2) == (expectedFrames + 511) / 512)
        #expect(result.stderr.isEmpty, "no progress when stderr is not a terminal")
    }

    @Test func theCLIWritesExactlyWhatTheAPIProduces() throws {
        let directory = try TemporaryDirectory()
        let output = directory.path("out.wav")
        let input = CommandRunner.sample("speech-44k1-stereo-s16.wav")
        #expect(try CommandRunner.run(["convert", input, output, "--chunk-ms", "20"]).status == 0)
        let cli = try AudioFiles.read(output, as: Int16.self).samples
        let (format, source) = try AudioFiles.read(input, as: Int16.self)
        // The CLI runs the fastest kernels this CPU has; so does this side.
        let resampler = try BuiltInResampler(inputRate: format.sampleRate, outputRate: 16_000, kernels: DSPKernels.best)
        let converter = try CaptureConverter(input: FormatGuard.validate(format), resampler: resampler)
        var api = [Int16]()
        try source.withUnsafeBufferPointer { try converter.process($0) { api += $0.copySamples() } }
        try converter.flush { api += $0.copySamples() }
        #expect(cli == api)
    }

    @Test(arguments: ["src-best", "src-medium", "src-fastest", "src-linear", "builtin"])
    func everyResamplerGivesTheExactLength(resampler: String) throws {
        let directory = try TemporaryDirectory()
        let output = directory.path("out.wav")
        let result = try CommandRunner.run(["convert", CommandRunner.sample("speech-22k05-mono-s16.wav"), output, "--resampler", resampler])
        #expect(result.status == 0, "\(result)")
        #expect(try AudioFiles.read(output, as: Int16.self).samples.count == Int((64_209.0 * 16_000 / 22_050).rounded()))
    }

    @Test func rawInputWithAnExplicitFormat() throws {
        let directory = try TemporaryDirectory()
        let raw = directory.url.appendingPathComponent("tone.raw")
        let tone = Signals.int16(Signals.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 48_000, frames: 48_000))
        try tone.withUnsafeBytes { Data($0) }.write(to: raw)
        let output = directory.path("out.wav")
        let result = try CommandRunner.run(["convert", raw.path, output, "--raw", "48000:1:int16"])
        #expect(result.status == 0, "\(result)")
        let samples = try AudioFiles.read(output, as: Int16.self).samples
        #expect(samples.count == 16_000)
        let fit = Measurement.fitTone(samples[1_000..<15_000].map { Double($0) / 32768 }, frequency: 1_000, sampleRate: 16_000)
        #expect(abs(Measurement.dB(fit.amplitude / 0.5)) < 0.1)
        #expect(try CommandRunner.run(["convert", raw.path, output, "--raw", "48000:one:int16"]).status == 64)
        #expect(try CommandRunner.run(["convert", raw.path, output, "--raw", "0:1:int16"]).status == 64)
    }

    @Test func usageErrorsExit64WithOneLine() throws {
        let input = CommandRunner.sample("speech-8k-mono-s16.wav")
        for arguments in [
            ["convert", input, "/tmp/x.wav", "--bogus"],
            ["convert", input],
            ["convert", input, "/tmp/x.wav", "extra"],
            ["convert", input, "/tmp/x.wav", "--chunk-ms", "5"],
            ["convert", input, "/tmp/x.wav", "--chunk-ms", "abc"],
            ["convert", input, "/tmp/x.wav", "--resampler", "sox"],
            ["convert", input, "/tmp/x.wav", "--channel", "1"],
            ["convert", input, input],
            ["frobnicate"],
            [],
        ] {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result)")
            #expect(result.stdout.isEmpty || arguments.isEmpty)
            if !arguments.isEmpty {
                #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            }
        }
    }

    @Test func badInputFilesGetOneLineAndTheirStatus() throws {
        let directory = try TemporaryDirectory()
        let garbage = directory.url.appendingPathComponent("garbage.wav")
        try Data("this is not audio, just text pretending to be a wave file".utf8).write(to: garbage)
        let zeroRate = directory.url.appendingPathComponent("zero-rate.wav")
        try WAVBytes.pcm16(rate: 0, channels: 1, samples: [1, 2, 3, 4]).write(to: zeroRate)
        let zeroChannels = directory.url.appendingPathComponent("zero-channels.wav")
        try WAVBytes.pcm16(rate: 16_000, channels: 0, samples: [1, 2, 3, 4]).write(to: zeroChannels)
        let output = directory.path("out.wav")
        let cases: [(String, Int32, String)] = [
            (directory.path("missing.wav"), 66, "missing.wav"),
            (garbage.path, 65, "garbage.wav"),
            (zeroRate.path, 65, "0 Hz"),
            (zeroChannels.path, 65, "0 channels"),
        ]
        for (input, status, mention) in cases {
            let result = try CommandRunner.run(["convert", input, output])
            #expect(result.status == status, "\(input): \(result)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains(mention), "\(result.stderr)")
        }
        let unwritable = try CommandRunner.run(["convert", CommandRunner.sample("speech-8k-mono-s16.wav"), directory.path("no/such/dir/out.wav")])
        #expect(unwritable.status == 73, "\(unwritable)")
    }

    @Test func aTruncatedFileConvertsWhatItHoldsWithAWarning() throws {
        let directory = try TemporaryDirectory()
        let truncated = directory.url.appendingPathComponent("truncated.wav")
        let present = Signals.int16(Signals.sine(frequency: 440, amplitude: 0.3, sampleRate: 16_000, frames: 8_000))
        try WAVBytes.pcm16(rate: 16_000, channels: 1, samples: present, declaredFrames: 20_000).write(to: truncated)
        let output = directory.path("out.wav")
        let result = try CommandRunner.run(["convert", truncated.path, output])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("truncated") && result.stderr.contains("20000") && result.stderr.contains("8000"))
        #expect(try AudioFiles.read(output, as: Int16.self).samples == present)
    }

    @Test func infoPrintsTheFormatAndTheGuardsVerdict() throws {
        let result = try CommandRunner.run(["info", CommandRunner.sample("speech-48k-stereo-f32.wav")])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("format:     48000 Hz, stereo\nsamples:    Float32, decoded from 32 bit float"))
        #expect(result.stdout.contains("frames:     140687 (2.931 s)"))
        #expect(result.stdout.contains("guard:      usable; converts to 16000 Hz mono Int16 (46896 frames)"))

        let directory = try TemporaryDirectory()
        let zeroRate = directory.url.appendingPathComponent("zero-rate.wav")
        try WAVBytes.pcm16(rate: 0, channels: 2, samples: [1, 2, 3, 4]).write(to: zeroRate)
        let refused = try CommandRunner.run(["info", zeroRate.path])
        #expect(refused.status == 65)
        #expect(refused.stdout.contains("format:     0 Hz, stereo"))
        #expect(refused.stdout.contains("guard:      refused: the sample rate is 0 Hz"))
        #expect(refused.stderr.split(separator: "\n").count == 1)
    }

    @Test func helpIsAvailableEverywhere() throws {
        for arguments in [["--help"], ["help"], ["convert", "--help"], ["info", "-h"], ["help", "convert"]] {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == 0, "\(arguments)")
            #expect(result.stdout.contains("USAGE: voicepipe"))
        }
        let version = try CommandRunner.run(["--version"]).stdout
        #expect(version.contains("libsndfile"))
        // Its own calibration's choice, which may mix the vector sets differently from this process's.
        let kernels = try #require(KernelChoices.reported(in: version, after: "resampler kernels: "))
        #expect(KernelChoices.possibleBestNames.contains(kernels), "\(kernels)")
    }
}
