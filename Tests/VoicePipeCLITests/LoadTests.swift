import Foundation
import Testing
import VoicePipeTestSupport

/// The load run (issue 11, RELIABILITY.md): 15 minutes of generated speech streamed at full speed
/// through each runtime, with replies and interruptions throughout; no sample lost or repeated
/// either way (counts and CRC-32 at both ends) and memory flat after warm-up (< 10 MB growth).
/// Each runtime runs in a `voicepipe-load` process of its own, so the memory it samples is the
/// session's alone. `VOICEPIPE_LOAD_SECONDS=3600 swift test --filter LoadTests` runs the hour;
/// `swift run -c release voicepipe-load --seconds 3600` does it faster.
@Suite(.serialized) struct LoadTests {
    static var seconds: String {
        ProcessInfo.processInfo.environment["VOICEPIPE_LOAD_SECONDS"] ?? "900"
    }

    @Test(arguments: LoadRun.Runtime.allCases)
    func aLongSessionAtFullSpeedLosesNoSampleAndKeepsItsMemoryFlat(runtime: LoadRun.Runtime) async throws {
        let result = try await CommandRunner.runOnOwnThread(["--seconds", Self.seconds, "--runtime", runtime.rawValue],
                                                            executable: CommandRunner.executable(named: "voicepipe-load"))
        print(result.stdout)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("runtime: \(runtime.rawValue)\n"))
        #expect(result.stdout.hasSuffix("result: passed\n\n"), "\(result)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }
}
