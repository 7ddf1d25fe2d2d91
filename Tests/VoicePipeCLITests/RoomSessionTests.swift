import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// A live `voicepipe session --mic --speaker` on real ALSA devices with no sound card: two ALSA
/// `file` PCMs on FIFOs (the configuration `voicepipe room --alsa-config` writes), with
/// `voicepipe room` in another process playing the room between them.
///
/// What the test relies on, measured with alsa-lib 1.2.8: the file PCM's capture is paced only
/// by the room (each read of the FIFO waits for its next period), its open waits until the room
/// holds the FIFO's other end (the room opens its ends so neither process waits on the other),
/// and the playback side is held back only by the pipe filling, so the session's render thread
/// keeps its own real-time pace. The session is ended as a user ends it, with Ctrl-C, once its
/// timeline says the reply has played (state back to ready): an event, not a sleep.
struct RoomSessionTests {
    /// One process's output, read to the end on a thread of its own.
    final class Drained: @unchecked Sendable {
        // Safety: `data` is written once on the reading thread before `done` is left, and read
        // only after waiting on `done`.
        private var data = Data()
        private let done = DispatchGroup()

        init(_ pipe: Pipe) {
            done.enter()
            DispatchQueue.global().async {
                self.data = pipe.fileHandleForReading.readDataToEndOfFile()
                self.done.leave()
            }
        }

        var text: String {
            done.wait()
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// Starts `voicepipe session --mic room_mic --speaker room_speaker` with `arguments` and the
    /// room's ALSA configuration; its timeline pipe and its standard error, drained.
    static func startSession(_ arguments: [String], alsa configuration: String) throws -> (Process, Pipe, Drained) {
        let session = Process()
        session.executableURL = CommandRunner.binary
        session.arguments = ["session", "--mic", "room_mic", "--speaker", "room_speaker"] + arguments
        session.environment = ProcessInfo.processInfo.environment.merging(["ALSA_CONFIG_PATH": configuration]) { $1 }
        let timeline = Pipe(), errors = Pipe()
        session.standardOutput = timeline
        session.standardError = errors
        let drained = Drained(errors)
        try session.run()
        return (session, timeline, drained)
    }

    @Test func aLiveSessionOnALSAFilePCMsHearsTheTalkersTurnAndPlaysTheReplyIntoTheRoom() throws {
        let directory = try TemporaryDirectory()
        let microphone = directory.path("mic.fifo"), speaker = directory.path("speaker.fifo")
        #expect(mkfifo(microphone, 0o600) == 0 && mkfifo(speaker, 0o600) == 0)
        let configuration = directory.path("room.conf"), log = directory.path("session.jsonl")
        let written = try CommandRunner.run(["room", "--mic-fifo", microphone, "--speaker-fifo", speaker, "--alsa-config", "--out", configuration])
        #expect(written.status == 0, "\(written)")

        // A quiet room: the reply's echo 80 dB down (so it cannot make turns of its own), white
        // noise at −60 dBFS (below the gate, and no digital silence in the turn the runtime plays
        // back), a short response so the debug build keeps real time.
        let room = Process()
        room.executableURL = CommandRunner.binary
        room.arguments = ["room", "--mic-fifo", microphone, "--speaker-fifo", speaker, "--talker", CommandRunner.sample("speech-8k-mono-s16.wav"),
                          "--talker-at", "0.5", "--echo-gain", "-80", "--noise", "white", "--noise-level", "-60", "--reverb", "0.05", "--distance", "1"]
        let roomErrors = Pipe()
        room.standardError = roomErrors
        room.standardOutput = FileHandle.nullDevice
        let roomOutput = Drained(roomErrors)
        try room.run()

        // Echo control off: the reply the room reads is then exactly the turn the runtime heard
        // (echo control on would send its cleaned signal, digital silence where it removed noise).
        let (session, timeline, sessionErrorOutput) = try Self.startSession(["--log", log, "--session-id", "s-room", "--echo", "off"], alsa: configuration)
        // A safety net only: a session or room that hangs is stopped so the test fails instead of waiting forever.
        let watchdog = DispatchWorkItem {
            if session.isRunning { session.terminate() }
            if room.isRunning { room.terminate() }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        defer { watchdog.cancel() }

        // Read the timeline until the reply has played (speaking, then ready), then press Ctrl-C.
        var lines = [String]()
        var pending = Data()
        var spoke = false
        reading: while true {
            let chunk = timeline.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                lines.append(line)
                if line.hasSuffix("  speaking") { spoke = true }
                if spoke && line.hasSuffix("  ready") {
                    session.interrupt()
                    break reading
                }
            }
        }
        let rest = String(decoding: pending + timeline.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        session.waitUntilExit()
        room.waitUntilExit()
        let stdout = (lines + [rest]).joined(separator: "\n")
        let roomText = roomOutput.text

        // The session heard one spoken turn, answered it on the speaker, and ended cleanly.
        #expect(session.terminationStatus == 0, "\(stdout)\n\(sessionErrorOutput.text)")
        #expect(stdout.contains("input: microphone 'room_mic'; reply audio: speaker 'room_speaker'"))
        #expect(stdout.contains("session s-room ended cleanly"), "\(stdout)")
        #expect(stdout.contains("turns: 1 (1 spoken, 0 typed)"), "\(stdout)")
        // The runtime heard the talker as it hears the same file sent directly: the same speech
        // time, the same peak within 0.3 dB (the room resamples 8 → 16 → 48 → 16 kHz).
        let direct = try CommandRunner.run(["session", CommandRunner.sample("speech-8k-mono-s16.wav"), "--fast"])
        #expect(direct.status == 0, "\(direct)")
        let heard = try #require(Self.userLine(in: stdout)), expected = try #require(Self.userLine(in: direct.stdout))
        #expect(heard.speech == expected.speech, "\(stdout)")
        #expect(abs(heard.peak - expected.peak) < 0.3, "\(stdout)")

        // The reply (the turn at 24 kHz, as the log counts it) reached the room whole: at the
        // speaker's 48 kHz it is twice as many frames with sound, less at most the two periods of
        // prefill silence the turn began with (the session plays the turn back from the stream's start).
        let replyFrames = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains(#""direction":"received","message":{"type":"audio.chunk","sampleRate":24000,"samples":"#) }
            .compactMap { Self.number(in: String($0), after: #""samples":"#, before: ",").map(Int.init) }
            .reduce(0, +)
        #expect(replyFrames > 48_000, "\(replyFrames)")
        #expect(room.terminationStatus == 0, "\(roomText)")
        #expect(roomText.contains("room ended after "), "\(roomText)")
        #expect(roomText.contains("(the session closed its microphone)") || roomText.contains("(the session closed its speaker)"), "\(roomText)")
        let summary = try #require(roomText.range(of: "; speaker ").map { String(roomText[$0.upperBound...]) })
        let read = try #require(summary.components(separatedBy: " frames read").first.flatMap { Double($0) })
        let sound = try #require(Self.number(in: summary, after: "frames read (", before: " with sound"))
        #expect(Int(sound) <= 2 * replyFrames && Int(sound) >= 2 * replyFrames - 960, "\(Int(sound)) frames with sound for \(replyFrames) reply frames: \(roomText)")
        #expect(Int(read) >= Int(sound), "\(roomText)")
    }

    /// Echo control over the ALSA file PCMs, whose delay report leaves out the plugin's 80 ms
    /// buffer and the pipe (and knows nothing of the room's 60 ms latency): the stage measures
    /// the echo's real delay during the first reply, moves the reference, and the session then
    /// hears the person, not the loudspeaker: three turns, the barge-in honoured, no other cut.
    @Test func echoControlOnALSAFilePCMsFindsTheEchoDelayTheDevicesDoNotReport() throws {
        let directory = try TemporaryDirectory()
        let microphone = directory.path("mic.fifo"), speaker = directory.path("speaker.fifo")
        #expect(mkfifo(microphone, 0o600) == 0 && mkfifo(speaker, 0o600) == 0)
        let configuration = directory.path("room.conf")
        let written = try CommandRunner.run(["room", "--mic-fifo", microphone, "--speaker-fifo", speaker, "--alsa-config", "--out", configuration])
        #expect(written.status == 0, "\(written)")
        let room = Process()
        room.executableURL = CommandRunner.binary
        room.arguments = ["room", "--mic-fifo", microphone, "--speaker-fifo", speaker, "--talker", try LiveRoomSessionTests.threeTurns(in: directory),
                          "--talker-at", "0.5", "--preset", "office", "--seconds", "120"]
        // The room must outlive the session (it ends when the session closes its devices): one
        // that ended at 40 s broke the speaker's pipe of a session still playing its last reply
        // under CI's load (exit 74).
        let roomErrors = Pipe()
        room.standardError = roomErrors
        room.standardOutput = FileHandle.nullDevice
        let roomOutput = Drained(roomErrors)
        try room.run()
        let (session, timeline, sessionErrorOutput) = try Self.startSession(["--session-id", "s-echo"], alsa: configuration)
        // A safety net only: a session that hangs is stopped so the test fails instead of waiting
        // (a timer on a dispatch queue is no way to end it on time: under CI's load the queue's
        // threads were all blocked and Ctrl-C came 94 s late).
        let watchdog = DispatchWorkItem {
            if session.isRunning { session.interrupt() }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 90, execute: watchdog)
        defer { watchdog.cancel() }
        // Ctrl-C once the third turn's reply has played (the state back to ready), read from the timeline.
        var lines = [String]()
        var pending = Data()
        var answered = false
        reading: while true {
            let chunk = timeline.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                lines.append(line)
                if line.contains("turn 3 answered") { answered = true }
                if answered && line.hasSuffix("  ready") {
                    session.interrupt()
                    break reading
                }
            }
        }
        let rest = String(decoding: pending + timeline.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stdout = (lines + [rest]).joined(separator: "\n")
        session.waitUntilExit()
        if room.isRunning { room.terminate() }
        room.waitUntilExit()
        _ = roomOutput.text

        #expect(session.terminationStatus == 0, "\(stdout)\n\(sessionErrorOutput.text)")
        #expect(stdout.contains("turns: 3 (3 spoken, 0 typed)"), "\(stdout)")
        #expect(stdout.contains("interruptions: 1"), "\(stdout)")
        // Measured 158-167 ms: the plugin's buffer, the pipe and the room's own 60 ms latency.
        let moved = try #require(Self.number(in: stdout, after: "echo delay: the echo came ", before: " ms later"), "\(stdout)")
        #expect((120...220).contains(moved), "\(stdout)")
    }

    @Test func alsaConfigPrintsBothPCMsOnTheFIFOsAbsolutePaths() throws {
        let directory = try TemporaryDirectory()
        let result = try CommandRunner.run(["room", "--mic-fifo", "mic.fifo", "--speaker-fifo", "speaker.fifo", "--alsa-config"], in: directory.url)
        #expect(result.status == 0, "\(result)")
        let folder = directory.url.resolvingSymlinksInPath().path
        #expect(result.stdout.hasPrefix("</usr/share/alsa/alsa.conf>\n"))
        #expect(result.stdout.contains("pcm.room_mic {\n    type file\n    slave.pcm { type null }\n    file \"/dev/null\"\n    infile \"\(folder)/mic.fifo\"\n    format raw\n}\n"), "\(result)")
        #expect(result.stdout.contains("pcm.room_speaker {\n    type file\n    slave.pcm { type null }\n    file \"\(folder)/speaker.fifo\"\n    format raw\n}\n"), "\(result)")
        #expect(result.stderr.isEmpty)
    }

    @Test func aRoomThatCannotRunSaysWhyAndExitsWithItsStatus() throws {
        let directory = try TemporaryDirectory()
        let microphone = directory.path("mic.fifo"), speaker = directory.path("speaker.fifo")
        #expect(mkfifo(microphone, 0o600) == 0 && mkfifo(speaker, 0o600) == 0)
        let plain = try directory.file("plain.raw", [0, 0])
        let notes = try directory.file("notes.wav", Array("not audio".utf8))
        let missing = directory.path("none.fifo")
        let fifos = ["--mic-fifo", microphone, "--speaker-fifo", speaker]
        let cases: [([String], Int32, String)] = [
            (["room", "--mic-fifo", missing, "--speaker-fifo", speaker], 66, "voicepipe room: there is no microphone FIFO at '\(missing)'; create it with 'mkfifo \(missing)'\n"),
            (["room", "--mic-fifo", microphone, "--speaker-fifo", plain], 66, "voicepipe room: '\(plain)' is a regular file, not a FIFO; give the speaker a named pipe made with 'mkfifo'\n"),
            (["room", "--mic-fifo", microphone], 64, "voicepipe room: name both FIFOs: '--mic-fifo <path>' and '--speaker-fifo <path>' (make them with mkfifo) (see 'voicepipe room --help')\n"),
            (["room"] + fifos + ["--latency", "0.5"], 64, "voicepipe room: '--latency' must be a number from 0.01 to 0.2, not '0.5' (see 'voicepipe room --help')\n"),
            (["room"] + fifos + ["--reverb", "0.3"], 64, "voicepipe room: give '--reverb' and '--distance' together: they generate the room's response (see 'voicepipe room --help')\n"),
            (["room"] + fifos + ["--out", "room.conf"], 64, "voicepipe room: '--out' applies to '--alsa-config' (see 'voicepipe room --help')\n"),
            (["room"] + fifos + ["--rate", "96000", "--channels", "8"], 64, "voicepipe room: a period of 30720 bytes is more than a pipe writes in one piece (4096 bytes), so the reader could get part of one; use a shorter period, fewer channels or a lower rate (see 'voicepipe room --help')\n"),
            (["room"] + fifos + ["--talker", notes], 65, "voicepipe room: the talker cannot be used: '\(notes)' is not an audio file VoicePipe can read (format not recognised); convert it to WAV, AIFF, FLAC or Ogg, or read it as raw PCM with an explicit format\n"),
        ]
        for (arguments, status, stderr) in cases {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == status && result.stderr == stderr, "\(arguments): \(result)")
        }
    }

    /// The runtime's "user: 2.6 s of speech, peak −2.5 dBFS" line: seconds of speech as printed, and the peak.
    static func userLine(in timeline: String) -> (speech: String, peak: Double)? {
        guard let line = timeline.split(separator: "\n").first(where: { $0.contains("user: ") && $0.contains(" s of speech, peak ") }) else { return nil }
        let text = String(line).replacingOccurrences(of: "\u{2212}", with: "-")
        guard let speech = text.components(separatedBy: "user: ").last?.components(separatedBy: " s of speech").first,
              let peak = number(in: text, after: "peak ", before: " dBFS") else { return nil }
        return (speech, peak)
    }

    /// The number between `prefix` and the next `suffix` after it, if any.
    static func number(in text: String, after prefix: String, before suffix: String) -> Double? {
        guard let start = text.range(of: prefix) else { return nil }
        let tail = text[start.upperBound...]
        guard let end = tail.range(of: suffix) else { return nil }
        return Double(tail[..<end.lowerBound])
    }
}
