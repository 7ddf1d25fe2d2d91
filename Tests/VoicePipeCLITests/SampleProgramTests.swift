import Foundation
import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// The sample programs run, and a program over VoicePipeCore alone gets the fastest kernels
/// without linking any system audio library.
struct SampleProgramTests {
    @Test func aProgramOverCoreAloneLinksNoAudioLibraryAndGetsTheBestKernels() throws {
        let sample = CommandRunner.executable(named: "sample-capture-tone")
        let run = try CommandRunner.run([], executable: sample)
        #expect(run.status == 0, "\(run)")
        // Chosen by its own calibration: a vector set (or a mix of them) wherever this CPU has one.
        let kernels = try #require(KernelChoices.reported(in: run.stdout, after: "kernels: "))
        #expect(KernelChoices.possibleBestNames.contains(kernels), "\(kernels)")
        #expect(run.stdout.contains("16000 samples at 16 kHz; peak -6.0 dBFS; 1 of 10 frames digital silence"), "\(run.stdout)")
        // Every shared library the loader would map for it, direct or not.
        let ldd = try CommandRunner.run([sample.path], executable: URL(fileURLWithPath: "/usr/bin/ldd"))
        #expect(ldd.status == 0, "\(ldd)")
        #expect(ldd.stdout.contains("libswiftCore"), "ldd lists the dependencies: \(ldd.stdout)")
        for library in ["libsndfile", "libasound", "libsamplerate", "libFoundation"] {
            #expect(!ldd.stdout.contains(library), "\(library) is linked: \(ldd.stdout)")
        }
    }

    @Test func theSessionSamplePipesAWAVFileThroughTheEmbeddedRuntime() throws {
        let directory = try TemporaryDirectory()
        let reply = directory.path("reply.wav")
        let run = try CommandRunner.run([CommandRunner.sample("speech-8k-mono-s16.wav"), reply], executable: CommandRunner.executable(named: "sample-session-file"))
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("ended cleanly: true"), "\(run.stdout)")
        // 22 293 frames at 8 kHz are 44 586 at 16 kHz; the reply is those at 24 kHz.
        #expect(run.stdout.contains("reply: 66879 frames at 24 kHz"), "\(run.stdout)")
        let (format, samples) = try AudioFiles.read(reply, as: Float.self)
        #expect(format.sampleRate == 24_000 && format.sampleType == .float32)
        #expect(samples.count == 66_879)
    }

    @Test func theDecodeSampleTurnsRuntimeMessagesIntoFloat32Buffers() throws {
        let directory = try TemporaryDirectory()
        let chunk = [Int16](repeating: 8_192, count: 480).withUnsafeBufferPointer { AudioChunkJSON.encode($0, sampleRate: 24_000) }
        let messages = try directory.file("messages.jsonl", Array("""
        {"type":"transcript","role":"assistant","text":"Here you are","final":true}
        \(chunk)
        not a message
        \(chunk)

        """.utf8))
        let run = try CommandRunner.run([messages], executable: CommandRunner.executable(named: "sample-decode-reply"))
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("line 1: assistant: Here you are"))
        #expect(run.stdout.contains("line 2: 480 Float32 frames, 1 channel, peak 0.25"), "\(run.stdout)")
        #expect(run.stdout.contains("line 3: not JSON"))
        #expect(run.stdout.contains("960 frames of Float32 at 24 kHz"), "\(run.stdout)")
    }
}
