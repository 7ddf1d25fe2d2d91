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

    let configuration = SessionConfiguration(sessionId: "sample-1", context: ["persona": .string("Dana")])
    let session = VoiceSession(options: SessionDriverOptions(session: configuration), transport: runtime.connect(),
                               capture: .file(capture, pacing: .asFastAsTaken), output: output)
    // As it happens: each state the session enters and each transcript line.
    let timeline = Task {
        for await update in session.events {
            let stamp = SessionTimeline.pad(update.instant)
            if let state = update.event.enteredState { print("\(stamp)  \(state.title)") }
            if let line = update.event.transcriptLine { print("\(stamp)  \(line.role.rawValue): \(line.text)") }
        }
    }
    let report: SessionReport
    do {
        report = try await session.run()    // on a thread of its own; cancelling this task ends the session
    } catch {
        await timeline.value
        print("error: \(error)")            // a SessionError, with the report of what the session did
        exit(75)
    }
    await timeline.value                    // the events end once the session has ended
    print("ended cleanly: \(report.endedCleanly); latency: \(report.machine.latencies.map(SessionTimeline.seconds))")
    print("reply: \(report.outputFrames) frames at 24 kHz in \(arguments[2])")
    exit(report.endedCleanly ? 0 : 75)
} catch {
    print("error: \(error)")
    exit(1)
}
