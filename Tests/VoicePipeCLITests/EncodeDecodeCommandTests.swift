import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// `voicepipe encode` and `voicepipe decode`, run as a user runs them.
struct EncodeDecodeCommandTests {
    /// Decodes every `data` field of JSON Lines back to Int16 samples (with Foundation, independently).
    static func samples(fromJSONLines text: String) throws -> [Int16] {
        var samples = [Int16]()
        for line in text.split(separator: "\n") {
            let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let text = try #require(object["data"] as? String)
            let data = try #require(Data(base64Encoded: text))
            samples += stride(from: 0, to: data.count, by: 2).map { Int16(bitPattern: UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8) }
        }
        return samples
    }

    /// An `audio.chunk` line carrying `samples` as base64 Int16 little-endian (built with Foundation,
    /// independently of the library's encoder).
    static func audioChunkLine(_ samples: some Collection<Int16>, sampleRate: Int = 24_000) -> String {
        let bytes = samples.flatMap { [UInt8(truncatingIfNeeded: UInt16(bitPattern: $0)), UInt8(UInt16(bitPattern: $0) >> 8)] }
        return #"{"type":"audio.chunk","data":"\#(Data(bytes).base64EncodedString())","sampleRate":\#(sampleRate)}"#
    }

    @Test func encodeWritesExactAudioChunksWhoseDataIsWhatConvertWrites() throws {
        let directory = try TemporaryDirectory()
        let input = CommandRunner.sample("speech-44k1-stereo-s16.wav")
        let encoded = try CommandRunner.run(["encode", input])
        #expect(encoded.status == 0, "\(encoded)")
        let lines = encoded.stdout.split(separator: "\n")
        #expect(lines.count == (43_500 + 511) / 512)
        for line in lines {
            #expect(line.wholeMatch(of: /\{"type":"audio\.chunk","data":"[A-Za-z0-9+\/]*={0,2}","sampleRate":16000\}/) != nil, "\(line.prefix(80))")
        }
        let converted = directory.path("converted.wav")
        #expect(try CommandRunner.run(["convert", input, converted]).status == 0)
        let reference = try AudioFiles.read(converted, as: Int16.self).samples
        #expect(try Self.samples(fromJSONLines: encoded.stdout) == reference)
        // The summary on stderr: chunks, duration, peaks, digital silence.
        #expect(encoded.stderr.contains("encoded \(lines.count) chunks (2.719 s at 16000 Hz) to standard output"), "\(encoded.stderr)")
        #expect(encoded.stderr.contains("dBFS loudest") && encoded.stderr.contains("dBFS quietest non-silent"))
        #expect(encoded.stderr.firstMatch(of: /(\d+) chunks digital silence/).flatMap { Int($0.1) } ?? 0 >= 4)
        // --out writes the same lines to a file.
        let file = directory.path("chunks.jsonl")
        #expect(try CommandRunner.run(["encode", input, "--out", file]).status == 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == encoded.stdout)
    }

    @Test func chunkLengthFollowsChunkMs() throws {
        let result = try CommandRunner.run(["encode", CommandRunner.sample("speech-8k-mono-s16.wav"), "--chunk-ms", "20"])
        #expect(result.status == 0)
        let samples = try Self.samples(fromJSONLines: result.stdout)
        #expect(samples.count == 44_586)
        #expect(result.stdout.split(separator: "\n").count == (44_586 + 319) / 320)
    }

    @Test func encodeThenDecodeRoundTripsExactly() throws {
        let directory = try TemporaryDirectory()
        let input = CommandRunner.sample("speech-22k05-mono-s16.wav")
        let chunks = directory.path("chunks.jsonl")
        #expect(try CommandRunner.run(["encode", input, "--out", chunks]).status == 0)
        let reply = directory.path("reply.wav")
        let decoded = try CommandRunner.run(["decode", chunks, "--out", reply, "--rate", "16000"])
        #expect(decoded.status == 0, "\(decoded)")
        let (format, floats) = try AudioFiles.read(reply, as: Float.self)
        #expect(format == AudioFormat(sampleRate: 16_000, channelCount: 1, sampleType: .float32))
        let converted = directory.path("converted.wav")
        #expect(try CommandRunner.run(["convert", input, converted]).status == 0)
        let reference = try AudioFiles.read(converted, as: Int16.self).samples
        #expect(floats.count == reference.count)
        #expect(floats == reference.map { Float($0) / 32768 }, "Int16 → Float32 is exact and nothing is lost or added")
    }

    @Test func decodePlaysAt24kHzByDefaultAndUpmixesAndResamples() throws {
        let directory = try TemporaryDirectory()
        let tone = Signals.int16(Signals.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 24_000, frames: 24_000))
        let lines = stride(from: 0, to: tone.count, by: 480).map { start in
            Self.audioChunkLine(tone[start..<min(start + 480, tone.count)])
        }
        let input = directory.path("reply.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(toFile: input, atomically: true, encoding: .utf8)

        let mono = directory.path("mono.wav")
        #expect(try CommandRunner.run(["decode", input, "--out", mono]).status == 0)
        let (monoFormat, monoSamples) = try AudioFiles.read(mono, as: Float.self)
        #expect(monoFormat == AudioFormat(sampleRate: 24_000, channelCount: 1, sampleType: .float32))
        #expect(monoSamples == tone.map { Float($0) / 32768 })

        let stereo = directory.path("stereo.wav")
        #expect(try CommandRunner.run(["decode", input, "--out", stereo, "--channels", "2", "--rate", "48000"]).status == 0)
        let (stereoFormat, interleaved) = try AudioFiles.read(stereo, as: Float.self)
        #expect(stereoFormat == AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32))
        #expect(interleaved.count == 2 * 48_000)
        let left = stride(from: 0, to: interleaved.count, by: 2).map { interleaved[$0] }
        let right = stride(from: 1, to: interleaved.count, by: 2).map { interleaved[$0] }
        #expect(left == right)
        let fit = Measurement.fitTone(left[4_800..<43_200], frequency: 1_000, sampleRate: 48_000)
        #expect(abs(Measurement.dB(fit.amplitude / 0.5)) < 0.1)
    }

    @Test func brokenLinesAreReportedAndEveryGoodChunkStillReachesTheFile() throws {
        let directory = try TemporaryDirectory()
        func chunk(_ value: Int16, count: Int) -> String {
            Self.audioChunkLine([Int16](repeating: value, count: count))
        }
        let lines = [
            #"{"type":"transcript","role":"assistant","text":"Your order ships tomorrow.","final":true}"#,
            chunk(1_000, count: 2_400),
            "this is not json",
            chunk(2_000, count: 2_400),
            #"{"type":"audio.chunk","data":"AQ==","sampleRate":24000}"#,
            #"{"type":"audio.chunk","data":"A*A=","sampleRate":24000}"#,
            "",
            #"{"type":"info.message","markdown":"**Tracking:** 1Z999"}"#,
            #"{"type":"transcript","role":"robot","text":"x"}"#,
            chunk(3_000, count: 2_400),
            #"{"type":"avatar.pose","yaw":1}"#,
            #"{"type":"transcript","role":"user","text":"thanks","final":true,"turn":3}"#,
        ]
        let input = directory.path("broken.jsonl")
        try lines.joined(separator: "\n").write(toFile: input, atomically: true, encoding: .utf8)
        let output = directory.path("reply.wav")
        let result = try CommandRunner.run(["decode", input, "--out", output])
        #expect(result.status == 65, "\(result)")
        #expect(result.stdout == "assistant: Your order ships tomorrow.\n**Tracking:** 1Z999\nuser: thanks\n")
        let errors = result.stderr.split(separator: "\n").filter { $0.hasPrefix("voicepipe decode: line ") }.map { $0.dropFirst("voicepipe decode: ".count) }
        #expect(errors.count == 4, "\(result.stderr)")
        #expect(errors[0].hasPrefix("line 3: not JSON"))
        #expect(errors[1] == "line 5: the audio.chunk data decodes to 1 byte; 16-bit audio needs an even number")
        #expect(errors[2].hasPrefix("line 6: the audio.chunk data is not valid base64: byte 0x2A ('*') at offset 1"))
        #expect(errors[3].hasPrefix("line 9: transcript field \"role\""))
        #expect(result.stderr.contains("avatar.pose") && result.stderr.contains("\"turn\""), "unknown types and extra fields are reported, not fatal")
        let samples = try AudioFiles.read(output, as: Float.self).samples
        let expected = [Float](repeating: 1_000.0 / 32768, count: 2_400) + [Float](repeating: 2_000.0 / 32768, count: 2_400) + [Float](repeating: 3_000.0 / 32768, count: 2_400)
        #expect(samples == expected)
        #expect(result.stderr.contains("4 lines rejected"))
    }

    @Test func anInterruptionCutsWhatWasStillQueuedWithAFade() throws {
        let directory = try TemporaryDirectory()
        let chunk = Self.audioChunkLine([Int16](repeating: 0x4000, count: 4_800))  // 0.5 as Float32
        let input = directory.path("interrupted.jsonl")
        try [chunk, #"{"type":"interruption"}"#, chunk].joined(separator: "\n").write(toFile: input, atomically: true, encoding: .utf8)
        let output = directory.path("reply.wav")
        let result = try CommandRunner.run(["decode", input, "--out", output])
        #expect(result.status == 0, "\(result)")
        let samples = try AudioFiles.read(output, as: Float.self).samples
        // The first reply keeps what played beyond the 60 ms pre-roll, then a 5 ms fade; the rest of it
        // is dropped; the second reply plays whole.
        #expect(samples.count == (4_800 - 1_440) + 120 + 4_800)
        let cut = samples[(4_800 - 1_440)..<(4_800 - 1_440 + 120)]
        #expect(cut.last == 0 && cut.first! > 0.49)
        let firstReply = samples[0..<(4_800 - 1_440 + 120)]
        let steepest = zip(firstReply, firstReply.dropFirst()).map { abs($0 - $1) }.max() ?? 1
        #expect(steepest < 0.01, "the cut ramps down instead of stepping from 0.5 to 0: largest step \(steepest)")
        #expect(samples[(4_800 - 1_440 + 120)...].allSatisfy { $0 == 0.5 }, "the next reply plays whole")
        #expect(result.stderr.contains("; 1 interruption;"))
    }

    @Test func decodeUsageAndInputErrors() throws {
        #expect(try CommandRunner.run(["decode", "x.jsonl"]).status == 64)
        #expect(try CommandRunner.run(["decode", "x.jsonl", "--out", "y.wav", "--channels", "0"]).status == 64)
        #expect(try CommandRunner.run(["decode", "/nonexistent/x.jsonl", "--out", "/tmp/y.wav"]).status == 66)
        #expect(try CommandRunner.run(["encode", "/nonexistent/x.wav"]).status == 66)
        #expect(try CommandRunner.run(["encode", CommandRunner.sample("speech-8k-mono-s16.wav"), "--out", "/nonexistent/dir/x.jsonl"]).status == 73)
    }
}
