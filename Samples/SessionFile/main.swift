// A complete program over the public API: pipe a WAV file through a voice session with the
// embedded runtime (nothing to deploy) and save the reply audio as a 24 kHz Float32 WAV.
//
//   swift run sample-session-file Samples/Audio/speech-8k-mono-s16.wav /tmp/reply.wav
import Foundation
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    print("usage: sample-session-file <input.wav> <reply.wav>")
    exit(64)
}

do {
    // The microphone: the file through the capture converter, as fast as the runtime takes it.
    let reader = try AudioFileReader(path: arguments[1])
    let capture = try FileCaptureSource(reader: reader, converter: CaptureConverter(input: reader.format))
    // The speaker: the reply player into a Float32 WAV (a player accepts nothing else).
    let output = try FileReplyOutput(path: arguments[2])
    // The runtime: in-process, answering each turn with your own audio at 24 kHz.
    let runtime = EmbeddedRuntime(options: EmbeddedRuntimeOptions(pacing: .unpaced))

    let session = SessionConfiguration(sessionId: "sample-1", context: ["persona": .string("Dana")])
    let driver = SessionDriver(options: SessionDriverOptions(session: session), transport: runtime.connect(),
                               capture: .file(capture, pacing: .asFastAsTaken), output: output) { event, instant in
        // Everything the session notes, as the timeline lines `voicepipe session` prints.
        if case .note(let note) = event {
            for line in SessionTimeline.lines(for: note, at: instant) { print(line) }
        }
    }
    let report = driver.run()    // blocks until the session has ended
    print("ended cleanly: \(report.endedCleanly); latency: \(report.machine.latencies.map(\.formattedSeconds))")
    print("reply: \(report.outputFrames) frames at 24 kHz in \(arguments[2])")
    exit(report.endedCleanly ? 0 : 75)
} catch {
    print("error: \(error)")
    exit(1)
}
