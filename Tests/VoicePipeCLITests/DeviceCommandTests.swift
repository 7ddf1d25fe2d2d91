import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// `voicepipe devices`, `record` and `play` against real ALSA without a sound card: the `null`
/// device and `type file` PCMs added through `ALSA_CONFIG_PATH`.
struct DeviceCommandTests {
    /// A configuration file that keeps the system's definitions and adds `vp_cap` (reading
    /// `infile`) and `vp_play` (writing `outfile`).
    static func alsaConfiguration(in directory: TemporaryDirectory, infile: String = "/dev/null", outfile: String = "/dev/null") throws -> [String: String] {
        let path = try directory.file("alsa.conf", Array("""
        </usr/share/alsa/alsa.conf>
        pcm.vp_cap { type file slave.pcm null file "/dev/null" infile "\(infile)" format raw }
        pcm.vp_play { type file slave.pcm null file "\(outfile)" format raw }

        """.utf8))
        return ["ALSA_CONFIG_PATH": path]
    }

    /// 1.5 s of 48 kHz stereo Int16 speech-band signal, as a WAV and as the same raw bytes.
    static func stereoInput(in directory: TemporaryDirectory) throws -> (wav: String, raw: String, frames: Int) {
        let frames = 72_000
        let left = Signals.sine(frequency: 440, amplitude: 0.4, sampleRate: 48_000, frames: frames)
        let right = Signals.sweep(from: 100, to: 7_000, amplitude: 0.3, sampleRate: 48_000, frames: frames)
        let samples = Signals.int16(Signals.interleave([left, right]))
        let wav = directory.path("in.wav")
        try WAVBytes.pcm16(rate: 48_000, channels: 2, samples: samples).write(to: URL(fileURLWithPath: wav))
        let raw = try directory.file("in.raw", samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] })
        return (wav, raw, frames)
    }

    @Test func devicesListsNullWithTheGuardsVerdict() throws {
        let result = try CommandRunner.run(["devices"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("null: Discard all samples"))
        #expect(result.stdout.contains("  capture:  48000 Hz, 2 channels, Float32, interleaved — guard: usable"))
        #expect(result.stdout.contains("  playback: 48000 Hz, 2 channels, Float32, deinterleaved — guard: usable"))
    }

    /// A user's PCM whose open blocks (a file PCM reading a FIFO nobody writes) no longer hangs
    /// the listing: it is listed as not answering, and every other device still is.
    @Test func devicesListsAPCMWhoseOpenBlocksAsNotAnsweringAndEndsInTime() throws {
        let home = try TemporaryDirectory()
        let fifo = home.path("capture.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        _ = try home.file(".asoundrc", Array("""
            pcm.fifocap { type file slave.pcm null file "/dev/null" infile "\(fifo)" format raw hint { show on description "capture from a FIFO" } }
            """.utf8))
        let started = Date()
        let result = try CommandRunner.run(["devices"], environment: ["HOME": home.path("")])
        #expect(result.status == 0, "\(result)")
        #expect(Date().timeIntervalSince(started) < 15)
        #expect(result.stdout.contains("fifocap: capture from a FIFO\n  capture:  unavailable: it did not answer within 2 s (its open blocks, as a file PCM on a FIFO nobody has open does)\n  playback: 48000 Hz, 2 channels, Float32, deinterleaved — guard: usable"), "\(result.stdout)")
        #expect(result.stdout.contains("null: Discard all samples"))
    }

    @Test func recordAndPlayOnAMissingDeviceExit69WithOneLineAndNoOutput() throws {
        let directory = try TemporaryDirectory()
        let out = directory.path("never.wav")
        let record = try CommandRunner.run(["record", "--device", "voicepipe_missing", "--seconds", "1", "--out", out])
        #expect(record.status == 69, "\(record)")
        #expect(record.stderr == "voicepipe record: audio capture on 'voicepipe_missing' is unavailable: there is no such device; see 'voicepipe devices' for the ones this system has\n")
        #expect(!FileManager.default.fileExists(atPath: out))
        let play = try CommandRunner.run(["play", CommandRunner.sample("speech-8k-mono-s16.wav"), "--device", "voicepipe_missing"])
        #expect(play.status == 69, "\(play)")
        #expect(play.stderr == "voicepipe play: audio playback on 'voicepipe_missing' is unavailable: there is no such device; see 'voicepipe devices' for the ones this system has\n")
    }

    @Test func recordFromAFileBackedDeviceWritesExactlyWhatConvertWrites() throws {
        let directory = try TemporaryDirectory()
        let input = try Self.stereoInput(in: directory)
        let environment = try Self.alsaConfiguration(in: directory, infile: input.raw)
        let recorded = directory.path("recorded.wav"), converted = directory.path("converted.wav")
        let record = try CommandRunner.run(["record", "--device", "vp_cap", "--rate", "48000", "--channels", "2", "--sample-type", "int16",
                                            "--seconds", "1.5", "--out", recorded], environment: environment)
        #expect(record.status == 0, "\(record)")
        #expect(record.stderr.hasPrefix("recorded 1.500 s from 'vp_cap' (48000 Hz, 2 channels, Int16, interleaved) to '\(recorded)': 24000 frames at 16000 Hz;"), "\(record)")
        let convert = try CommandRunner.run(["convert", input.wav, converted])
        #expect(convert.status == 0, "\(convert)")
        let fromDevice = try AudioFiles.read(recorded, as: Int16.self).samples
        #expect(fromDevice.count == 24_000)
        #expect(fromDevice == (try AudioFiles.read(converted, as: Int16.self).samples))
    }

    @Test func recordingFramesGivesAudioChunksOfTheSameSamples() throws {
        let directory = try TemporaryDirectory()
        let input = try Self.stereoInput(in: directory)
        let environment = try Self.alsaConfiguration(in: directory, infile: input.raw)
        let record = try CommandRunner.run(["record", "--device", "vp_cap", "--rate", "48000", "--channels", "2", "--sample-type", "int16",
                                            "--seconds", "1.5", "--frames", "-", "--chunk-ms", "20"], environment: environment)
        #expect(record.status == 0, "\(record)")
        let lines = record.stdout.split(separator: "\n")
        #expect(lines.count == 75)
        #expect(lines.allSatisfy { $0.hasPrefix("{\"type\":\"audio.chunk\",\"data\":\"") && $0.hasSuffix("\",\"sampleRate\":16000}") })
        let converted = directory.path("converted.wav")
        #expect(try CommandRunner.run(["convert", input.wav, converted]).status == 0)
        #expect(try EncodeDecodeCommandTests.samples(fromJSONLines: record.stdout) == AudioFiles.read(converted, as: Int16.self).samples)
    }

    @Test func recordingTheNullDeviceIsReportedAsDigitalSilence() throws {
        let directory = try TemporaryDirectory()
        let out = directory.path("dead.wav")
        let record = try CommandRunner.run(["record", "--device", "null", "--seconds", "0.64", "--out", out])
        #expect(record.status == 0, "\(record)")
        #expect(record.stderr.hasSuffix("10240 frames at 16000 Hz; peak -inf dBFS; 20 of 20 frames digital silence\n"), "\(record)")
        #expect(try AudioFiles.read(out, as: Int16.self).samples == [Int16](repeating: 0, count: 10_240))
    }

    @Test func playWritesTheFileAsFloat32ToAFileBackedDevice() throws {
        let directory = try TemporaryDirectory()
        let outfile = directory.path("played.raw")
        let environment = try Self.alsaConfiguration(in: directory, outfile: outfile)
        var samples = (0..<24_000).map { Int16(truncatingIfNeeded: $0 &* 7_919) }
        samples[0..<3] = [Int16.min, Int16.max, 0]
        let wav = directory.path("reply.wav")
        try WAVBytes.pcm16(rate: 24_000, channels: 1, samples: samples).write(to: URL(fileURLWithPath: wav))
        let play = try CommandRunner.run(["play", wav, "--device", "vp_play"], environment: environment)
        #expect(play.status == 0, "\(play)")
        #expect(play.stderr == "played 1.000 s of '\(wav)' (24000 Hz, 1 channel, Int16) on 'vp_play' (24000 Hz, 1 channel, Float32)\n")
        let written = try Data(contentsOf: URL(fileURLWithPath: outfile))
        let expected = samples.flatMap { value -> [UInt8] in
            let bits = (Float(value) / 32768).bitPattern
            return [UInt8(bits & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits >> 16 & 0xFF), UInt8(bits >> 24)]
        }
        #expect(Array(written) == expected)
    }

    @Test func recordUsageErrorsExit64() throws {
        for arguments in [["record", "--seconds", "1"], ["record", "--out", "a.wav", "--frames", "b.jsonl"],
                          ["record", "--out", "a.wav", "--seconds", "0"], ["record", "--out", "a.wav", "--sample-type", "int8"],
                          ["play"], ["devices", "extra"]] {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result)")
        }
    }

    @Test func ctrlCStopsARecordingCleanlyAndKeepsWhatWasRecorded() throws {
        let directory = try TemporaryDirectory()
        let out = directory.path("interrupted.wav")
        let process = Process()
        process.executableURL = CommandRunner.binary
        process.arguments = ["record", "--device", "null", "--rate", "8000", "--channels", "1", "--out", out]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        // The file appears once the device streams; interrupt a little after that.
        for _ in 0..<1_000 where !FileManager.default.fileExists(atPath: out) { usleep(10_000) }
        usleep(200_000)
        process.interrupt()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stderr)")
        #expect(stderr.contains("recorded ") && stderr.contains(" from 'null' (8000 Hz, 1 channel, Float32) to '\(out)'"), "\(stderr)")
        // Without --seconds, a device with no clock is named as such, once.
        #expect(stderr.components(separatedBy: "note: 'null' delivers audio faster than real time").count == 2, "\(stderr)")
        // A complete WAV: its header agrees with its data, all of it digital silence.
        let samples = try AudioFiles.read(out, as: Int16.self).samples
        #expect(!samples.isEmpty && samples.allSatisfy { $0 == 0 })
    }
}
