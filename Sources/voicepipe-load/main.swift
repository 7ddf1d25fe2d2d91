// The load run of issue 11 (RELIABILITY.md): a session streaming generated speech at full speed
// through the embedded runtime and through the runtime server over a WebSocket, with replies and
// interruptions throughout; the audio is counted and checksummed at both ends and this process's
// memory sampled. Exit 0 when every check passed, 1 when one failed, 64 for a usage error.
//
//   swift run -c release voicepipe-load --seconds 3600            # the hour, both runtimes in turn
//   swift run voicepipe-load --seconds 60 --runtime embedded
import Foundation
import VoicePipeTestSupport

let usage = """
usage: voicepipe-load [--seconds N] [--runtime embedded|websocket|both] [--warm-up FRACTION] [--seed N]
  --seconds N        audio to stream per runtime (default 60)
  --runtime R        which runtime (default both, one after the other)
  --warm-up F        the part of the audio counted as warm-up for the memory check (default 0.2)
  --seed N           seed of the generated speech (default 1592127501)
"""

var seconds = 60.0
var runtimes = LoadRun.Runtime.allCases
var warmUp = 0.2
var seed: UInt64 = 0x5EED_F00D
var arguments = CommandLine.arguments.dropFirst()
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("voicepipe-load: \(message)\n\(usage)\n".utf8))
    exit(64)
}
while let argument = arguments.popFirst() {
    func value() -> String {
        guard let value = arguments.popFirst() else { fail("\(argument) needs a value") }
        return value
    }
    switch argument {
    case "--seconds":
        guard let number = Double(value()), number > 0, number <= 24 * 3600 else { fail("--seconds takes a positive number up to 86400") }
        seconds = number
    case "--runtime":
        let name = value()
        if name == "both" {
            runtimes = LoadRun.Runtime.allCases
        } else if let runtime = LoadRun.Runtime(rawValue: name) {
            runtimes = [runtime]
        } else {
            fail("--runtime takes embedded, websocket or both")
        }
    case "--warm-up":
        guard let number = Double(value()), number >= 0, number < 1 else { fail("--warm-up takes a fraction from 0 to below 1") }
        warmUp = number
    case "--seed":
        guard let number = UInt64(value()) else { fail("--seed takes a whole number") }
        seed = number
    case "--help", "-h":
        print(usage)
        exit(0)
    default:
        fail("unknown argument '\(argument)'")
    }
}

var passed = true
for runtime in runtimes {
    var run = LoadRun(runtime: runtime, seconds: seconds)
    run.warmUpFraction = warmUp
    run.seed = seed
    do {
        let report = try run.run()
        print(report.summary)
        print("")
        passed = passed && report.failures.isEmpty
    } catch {
        print("runtime: \(runtime.rawValue)\nresult: FAILED\n  the run could not start: \(error)\n")
        passed = false
    }
}
exit(passed ? 0 : 1)
