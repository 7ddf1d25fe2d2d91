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
        #expect(run.stdout.contains("kernels: \(DSPKernels.best.name)"))
        #expect(run.stdout.contains("16000 samples at 16 kHz; peak -6.0 dBFS; 1 of 10 frames digital silence"), "\(run.stdout)")
        // Every shared library the loader would map for it, direct or not.
        let ldd = try CommandRunner.run([sample.path], executable: URL(fileURLWithPath: "/usr/bin/ldd"))
        #expect(ldd.status == 0, "\(ldd)")
        #expect(ldd.stdout.contains("libswiftCore"), "ldd lists the dependencies: \(ldd.stdout)")
        for library in ["libsndfile", "libasound", "libsamplerate", "libFoundation"] {
            #expect(!ldd.stdout.contains(library), "\(library) is linked: \(ldd.stdout)")
        }
    }
}
