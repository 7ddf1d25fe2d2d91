import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// `voicepipe session` run as an integrator runs it: a bundled sample through the embedded
/// runtime, typed turns, a scripted runtime on a pipe, and every way it can fail.
struct SessionCommandTests {
    @Test(arguments: ["speech-48k-stereo-f32.wav", "speech-8k-mono-s16.wav"])
    func theReplyIsTheInputResampledTo24kHz(name: String) throws {
        let directory = try TemporaryDirectory()
        let reply = directory.path("reply.wav")
        let captured = directory.path("captured.wav")
        let result = try CommandRunner.run(["session", CommandRunner.sample(name), "--fast", "--out", reply, "--session-id", "s-test"])
        #expect(result.status == 0, "\(result)")
        #expect(try CommandRunner.run(["convert", CommandRunner.sample(name), captured]).status == 0)

        // What the runtime heard: the input through the capture path. Its reply is that at 24 kHz.
        let (_, heard) = try AudioFiles.read(captured, as: Int16.self)
        let (format, played) = try AudioFiles.read(reply, as: Float.self)
        #expect(format.sampleRate == 24_000 && format.channelCount == 1 && format.sampleType == .float32)
        #expect(played.count == Int((Double(heard.count) * 1.5).rounded()))

        // Exactly Core's resampler at 24 kHz, rounded to Int16 on the wire, x / 32768 in the file.
        let core = try ResamplerHarness.stream(BuiltInResampler(inputRate: 16_000, outputRate: 24_000), heard.map(SampleConversion.float), chunkSizes: [512])
        #expect(played == core.map { Float(SampleConversion.int16($0)) / 32_768 })

        // An independent resampling of the same audio (libsamplerate's best) agrees within the two
        // resamplers' passband tolerances (±0.1 dB each): the difference is 40 dB below the reply
        // (measured −41.9 dB for the 48 kHz sample, −43.8 dB for the 8 kHz one).
        let reference = try ResamplerHarness.stream(LibsamplerateResampler(inputRate: 16_000, outputRate: 24_000, quality: .sincBest), heard.map { Float($0) / 32_768 }, chunkSizes: [4_096])
        let count = min(reference.count, played.count)
        let signal = zip(played.prefix(count), reference.prefix(count)).map { Double($0.0) * Double($0.0) }.reduce(0, +)
        let error = zip(played.prefix(count), reference.prefix(count)).map { Double($0.0 - $0.1) * Double($0.0 - $0.1) }.reduce(0, +)
        let errorDB = 10 * log10(error / signal)
        #expect(errorDB < -40, "difference \(errorDB) dB")

        #expect(result.stdout.contains("session s-test ended cleanly"))
        #expect(result.stdout.contains("turns: 1 (1 spoken, 0 typed)"))
        #expect(result.stdout.contains("user: "))
        #expect(result.stdout.contains("| turn | audio"))
        #expect(result.stdout.contains("turn latency median"))
        #expect(result.stdout.contains("reply audio: \(Self.seconds(played.count)) to '\(reply)'"))
    }

    /// A session's account of its audio does not depend on its pace: the turns, each turn's
    /// length of speech (audio time, not the wall clock) and the audio sent are the same with
    /// `--fast` as in real time, run after run.
    @Test(arguments: ["speech-44k1-stereo-s16.wav", "speech-22k05-mono-s16.wav"])
    func turnsAndSpeechLengthsAreTheSameUnderFastAsInRealTime(name: String) throws {
        func account(_ fast: Bool) throws -> [String] {
            let result = try CommandRunner.run(["session", CommandRunner.sample(name)] + (fast ? ["--fast"] : []))
            #expect(result.status == 0, "\(result)")
            return result.stdout.split(separator: "\n").map(String.init).compactMap { line in
                if let range = line.range(of: "turn ", options: .anchored, range: line.drop { $0 == " " || $0.isNumber || $0 == "." }.startIndex..<line.endIndex),
                   line[range.upperBound...].contains("ended:") { return String(line[range.lowerBound...]) }
                return line.hasPrefix("turns: ") || line.hasPrefix("audio sent: ") ? line : nil
            }
        }
        let realTime = try account(false)
        #expect(realTime.count == 3, "\(realTime)")
        #expect(realTime.first?.hasSuffix(" s of speech") == true, "\(realTime)")
        for _ in 0..<3 { #expect(try account(true) == realTime) }
    }

    /// Five utterances of the bundled speech, 0.8 to 2 s apart over a quiet room: in real time the
    /// replies overlap the next utterance (the runtime interrupts them, as a person talking over
    /// them would), with `--fast` they never do; the account of the audio is the same either way:
    /// turns, each turn's speech length, frames sent, tool calls.
    @Test func aConversationOfFiveUtterancesIsAccountedTheSameUnderFastAsInRealTime() throws {
        let directory = try TemporaryDirectory()
        var utterances: [[Int16]] = []
        for name in ["speech-22k05-mono-s16.wav", "speech-8k-mono-s16.wav", "speech-44k1-stereo-s16.wav"] {
            let converted = directory.path("\(name).16k.wav")
            #expect(try CommandRunner.run(["convert", CommandRunner.sample(name), converted]).status == 0)
            utterances.append(try AudioFiles.read(converted, as: Int16.self).1)
        }
        var samples = [Int16](repeating: 0, count: 8_000)
        for (index, pause) in [0.8, 2.0, 1.2, 1.6, 1.0].enumerated() {
            samples += utterances[index % 3] + [Int16](repeating: 0, count: Int(16_000 * pause))
        }
        let noise = Signals.int16(Signals.noise(amplitude: 0.001, frames: samples.count, seed: 5))
        samples = zip(samples, noise).map { Int16(clamping: Int($0) + Int($1)) }
        let input = try directory.file("conversation.wav", Array(WAVBytes.pcm16(rate: 16_000, channels: 1, samples: samples)))
        func account(_ fast: Bool) throws -> (turns: [Double?], frames: Int, tools: Int) {
            let result = try CommandRunner.run(["session", input, "--json"] + (fast ? ["--fast"] : []))
            #expect(result.status == 0, "\(result)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let turns = try #require(object["turns"] as? [[String: Any]])
            let sent = try #require(object["audioSent"] as? [String: Any]), tools = try #require(object["toolCalls"] as? [String: Any])
            return (turns.map { $0["speechSeconds"] as? Double }, try #require(sent["frames"] as? Int), try #require(tools["count"] as? Int))
        }
        let realTime = try account(false)
        #expect(realTime.turns.count == 5 && realTime.tools == 5, "\(realTime)")
        for _ in 0..<2 {
            let fast = try account(true)
            #expect(fast.turns == realTime.turns && fast.frames == realTime.frames && fast.tools == realTime.tools, "fast \(fast), real time \(realTime)")
        }
    }

    /// `--json`: nothing but one object on stdout (or on stderr when stdout carries the reply),
    /// its figures the session's own.
    @Test func withJSONTheSummaryIsOneObjectAndNothingElse() throws {
        let directory = try TemporaryDirectory()
        let reply = directory.path("reply.wav")
        let sample = CommandRunner.sample("speech-8k-mono-s16.wav")
        let result = try CommandRunner.run(["session", sample, "--text", "and a typed one", "--fast", "--out", reply, "--session-id", "s-json", "--json"])
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stdout)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(object["version"] as? Int == 1)
        #expect(object["sessionId"] as? String == "s-json")
        #expect(object["status"] as? String == "ok")
        #expect(object["exitStatus"] as? Int == 0)
        #expect(object["input"] as? String == "'\(sample)'")
        let turns = try #require(object["turns"] as? [[String: Any]])
        #expect(turns.first?["kind"] as? String == "text" && turns.dropFirst().allSatisfy { $0["kind"] as? String == "voice" } && turns.count >= 2)
        let latencies = try #require(object["turnLatencies"] as? [Double])
        #expect(latencies == turns.compactMap { $0["latencySeconds"] as? Double })
        #expect(latencies.count >= 2 && latencies.allSatisfy { $0 > 0 && $0 < 5 })
        let spread = try #require(object["turnLatency"] as? [String: Double])
        #expect(spread["max"] == latencies.max())
        let replyObject = try #require(object["reply"] as? [String: Any])
        let (_, played) = try AudioFiles.read(reply, as: Float.self)
        #expect(replyObject["seconds"] as? Double == (Double(played.count) / 24).rounded() / 1000)
        #expect(result.stderr.isEmpty, "\(result.stderr)")

        let toStandardOutput = try CommandRunner.run(["session", "--text", "hello", "--out", "-", "--json", "--session-id", "s-json-2"])
        #expect(toStandardOutput.status == 0)
        let errorLines = toStandardOutput.stderr.split(separator: "\n")
        #expect(errorLines.count == 1 && errorLines[0].hasPrefix(#"{"version":1,"sessionId":"s-json-2","status":"ok""#), "\(toStandardOutput.stderr)")
    }

    /// Ten answered turns: the summary gives their distribution on one line, not ten figures.
    @Test func pastEightTurnsTheSummaryGivesTheLatencyDistribution() throws {
        let result = try CommandRunner.run(["session"] + (1...10).flatMap { ["--text", "turn \($0)"] })
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("turn latency over 10 answered turns: median "), "\(result.stdout)")
        #expect(result.stdout.contains(" max ") && result.stdout.contains("--json gives each turn's"))
        #expect(!result.stdout.contains("turn latency: turn 1"))
    }

    /// `--keep-alive` reaches the session: a typed session (nothing captured to send) sends a
    /// keep-alive silence every interval while it is idle, none at the default 40 s.
    @Test func theKeepAliveIntervalGivenIsTheOneTheSessionKeeps() throws {
        func keepAlives(_ arguments: [String]) throws -> (count: Int, duration: Double) {
            let result = try CommandRunner.run(["session", "--text", "hello", "--json"] + arguments)
            #expect(result.status == 0, "\(result)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let sent = try #require(object["audioSent"] as? [String: Any])
            return (try #require(sent["keepAlives"] as? Int), try #require(object["durationSeconds"] as? Double))
        }
        let frequent = try keepAlives(["--keep-alive", "0.1"])
        #expect(frequent.count >= 3 && Double(frequent.count) <= frequent.duration / 0.1 + 1, "\(frequent)")
        #expect(try keepAlives([]).count == 0)
    }

    /// `--record`: one stereo 16 kHz file; the left channel is exactly what the capture path sent
    /// (the sample through `convert`), the right is the reply as played, at 16 kHz, from the
    /// moment it arrived: after the speech ended, as long as the reply (2/3 of its 24 kHz samples).
    @Test func theRecordingHoldsTheCapturedAudioExactlyOnTheLeftAndTheReplyAfterItOnTheRight() throws {
        let directory = try TemporaryDirectory()
        let recording = directory.path("both.wav"), reply = directory.path("reply.wav"), captured = directory.path("captured.wav")
        let sample = CommandRunner.sample("speech-8k-mono-s16.wav")
        let result = try CommandRunner.run(["session", sample, "--record", recording, "--out", reply])
        #expect(result.status == 0, "\(result)")
        #expect(try CommandRunner.run(["convert", sample, captured]).status == 0)
        let (format, both) = try AudioFiles.read(recording, as: Int16.self)
        #expect(format.sampleRate == 16_000 && format.channelCount == 2 && format.sampleType == .int16)
        let left = stride(from: 0, to: both.count, by: 2).map { both[$0] }
        let right = stride(from: 1, to: both.count, by: 2).map { both[$0] }
        let (_, heard) = try AudioFiles.read(captured, as: Int16.self)
        #expect(Array(left.prefix(heard.count)) == heard)
        #expect(left.dropFirst(heard.count).allSatisfy { $0 == 0 })
        let (_, played) = try AudioFiles.read(reply, as: Float.self)
        let voiced = heard.lastIndex { abs(Int($0)) > 300 } ?? 0
        let onset = right.firstIndex { $0 != 0 } ?? -1
        #expect(onset > voiced, "the reply starts at \(onset), before the speech ended at \(voiced)")
        // The reply's span of sound, from its first to its last sample that is not zero, is 2/3 as long at 16 kHz.
        let end = (right.lastIndex { $0 != 0 } ?? 0) + 1
        let playedSpan = (played.lastIndex { $0 != 0 } ?? 0) + 1 - (played.firstIndex { $0 != 0 } ?? 0)
        #expect(abs((end - onset) - playedSpan * 2 / 3) <= 40, "\(end - onset) samples against \(playedSpan * 2 / 3)")
        #expect(result.stdout.contains("recorded both sides: \(String(format: "%.3f", Double(left.count) / 16_000)) s to '\(recording)'"), "\(result)")
    }

    @Test func aRecordingThatCannotBeCreatedIsRefusedBeforeTheSession() throws {
        let result = try CommandRunner.run(["session", CommandRunner.sample("speech-8k-mono-s16.wav"), "--record", "/nonexistent/both.wav"])
        #expect(result.status == 73, "\(result)")
        #expect(result.stderr.contains("cannot create '/nonexistent/both.wav': the directory '/nonexistent' does not exist"), "\(result)")
    }

    @Test func typedTurnsAreAnsweredInOrderAndTheStateLineNamesTheSession() throws {
        let directory = try TemporaryDirectory()
        let reply = directory.path("reply.wav")
        let result = try CommandRunner.run(["session", "--text", "first", "--text", "second", "--out", reply,
                                            "--context", "persona=Dana", "--context", "vehicle=2022 Model Y"])
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasSuffix("with the embedded runtime — Dana · 2022 Model Y") == true)
        let typed = lines.filter { $0.contains("typed (pending until connected)") }
        #expect(typed.count == 2)
        let users = lines.filter { $0.contains("user: ") }.map { $0.components(separatedBy: "user: ")[1] }
        #expect(users == ["first", "second"])
        #expect(result.stdout.contains("turns: 2 (0 spoken, 2 typed)"))
        #expect(result.stdout.contains("turn latency: turn 1 "))
        #expect(result.stdout.contains(", turn 2 "))
        // Each typed turn is answered with 450 ms of tones: 2 × 10 800 samples at 24 kHz.
        let (_, played) = try AudioFiles.read(reply, as: Float.self)
        #expect(played.count == 21_600)
    }

    @Test func theLogHoldsEveryMessageBothWaysWithAudioSummarised() throws {
        let directory = try TemporaryDirectory()
        let log = directory.path("session.jsonl")
        let result = try CommandRunner.run(["session", CommandRunner.sample("speech-8k-mono-s16.wav"), "--fast", "--log", log, "--session-id", "s-log", "--quiet"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.isEmpty)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.first?.hasSuffix(#","transport":"opened"}"#) == true)
        #expect(lines.contains { $0.contains(#""direction":"sent","message":{"type":"session.start","sessionId":"s-log","context":{}}"#) })
        let sentAudio = lines.filter { $0.contains(#""direction":"sent","message":{"type":"audio.chunk","sampleRate":16000,"samples":"#) }
        // 2.787 s at 16 kHz is 44 592 samples: 87 frames of 512 and one of 48.
        #expect(sentAudio.count == 88)
        #expect(!lines.contains { $0.contains(#""data":"#) })
        #expect(lines.contains { $0.contains(#""direction":"received","message":{"type":"audio.chunk","sampleRate":24000,"samples":480,"peakDBFS":"#) })
        #expect(lines.contains { $0.contains(#""direction":"received","message":{"type":"session.ended","reason":"the client ended the session"}"#) })
    }

    @Test(arguments: [
        ("fail", "the runtime reported an error: the embedded runtime failed on purpose (test switch) (code embedded.fail)"),
        // Typed text is all the input: its reply's wait running out ends the session in order,
        // and the silent runtime never confirms that end.
        ("silent", "the runtime did not confirm the end of the session within 5.000 s"),
    ])
    func aRuntimeThatFailsOrTimesOutExits75WithTheReason(fault: String, reason: String) throws {
        let result = try CommandRunner.run(["session", "--text", "hello", "--embedded-fault", fault, "--reply-timeout", "2", "--quiet"])
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("voicepipe session: \(reason)"), "\(result)")
    }

    @Test func aRuntimeThatStopsReadingIsReportedNotAllowedToGrowMemory() throws {
        // The stalled runtime never reads: the file's audio fills the backlog, and five seconds
        // of audio that cannot be sent end the session.
        let directory = try TemporaryDirectory()
        let long = try directory.file("long.wav", Array(WAVBytes.pcm16(rate: 16_000, channels: 1, samples: Signals.int16(Signals.sine(frequency: 300, amplitude: 0.5, sampleRate: 16_000, frames: 16_000 * 400)))))
        let result = try CommandRunner.run(["session", long, "--fast", "--embedded-fault", "stall"])
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("the runtime stopped taking audio"), "\(result)")
        #expect(result.stdout.contains("the runtime is not taking audio as fast as the input is read: waiting"))
    }

    @Test func aScriptedRuntimeOnAPipeReceivesExactlyTheseBytes() throws {
        let directory = try TemporaryDirectory()
        let received = directory.path("received.jsonl")
        let script = try directory.file("runtime.py", Array("""
        import sys
        out = open(sys.argv[1], "wb")
        for line in sys.stdin.buffer:
            out.write(line); out.flush()
            if b'"type":"text.input"' in line:
                sys.stdout.write('{"type":"transcript","role":"assistant","text":"ok","final":true}\\n')
                sys.stdout.write('{"type":"audio.chunk","data":"AAABAA==","sampleRate":24000}\\n')
                sys.stdout.flush()
            if b'"type":"session.end"' in line:
                sys.stdout.write('{"type":"session.ended","reason":"bye"}\\n'); sys.stdout.flush()
        """.utf8))
        let result = try CommandRunner.run(["session", "--text", "hi \"there\"", "--text", "ünïcode", "--session-id", "s-pipe",
                                            "--context", "persona=Dana", "--runtime-command", "python3 \(script) \(received)", "--quiet"])
        #expect(result.status == 0, "\(result)")
        let bytes = try String(contentsOfFile: received, encoding: .utf8)
        #expect(bytes == """
        {"type":"session.start","sessionId":"s-pipe","context":{"persona":"Dana"}}
        {"type":"text.input","text":"hi \\"there\\""}
        {"type":"text.input","text":"ünïcode"}
        {"type":"session.end"}

        """)
    }

    @Test func aScriptedRuntimeGetsTheCaptureFramesByteForByteAsEncodeWritesThem() throws {
        let directory = try TemporaryDirectory()
        let received = directory.path("received.jsonl")
        let input = CommandRunner.sample("speech-8k-mono-s16.wav")
        let script = try directory.file("runtime.py", Array("""
        import sys
        out = open(sys.argv[1], "wb")
        for line in sys.stdin.buffer:
            out.write(line); out.flush()
            if b'"type":"session.end"' in line:
                sys.stdout.write('{"type":"session.ended","reason":"bye"}\\n'); sys.stdout.flush()
        """.utf8))
        // The runtime never answers: after the input, the session waits 0.5 s and ends.
        let result = try CommandRunner.run(["session", input, "--fast", "--reply-timeout", "0.5", "--session-id", "s-bytes",
                                            "--runtime-command", "python3 \(script) \(received)", "--quiet"])
        #expect(result.status == 0, "\(result)")
        let encoded = try CommandRunner.run(["encode", input, "--quiet"])
        #expect(encoded.status == 0)
        let bytes = try String(contentsOfFile: received, encoding: .utf8)
        #expect(bytes == #"{"type":"session.start","sessionId":"s-bytes","context":{}}"# + "\n" + encoded.stdout + #"{"type":"session.end"}"# + "\n")
    }

    @Test func ctrlCEndsTheSessionCleanlyAndKeepsTheReplyAndTheLog() throws {
        let directory = try TemporaryDirectory()
        let reply = directory.path("reply.wav"), log = directory.path("session.jsonl")
        let long = try directory.file("long.wav", Array(WAVBytes.pcm16(rate: 16_000, channels: 1, samples: Signals.int16(Signals.sine(frequency: 300, amplitude: 0.5, sampleRate: 16_000, frames: 16_000 * 30)))))
        // Interrupt once the session has sent its first frames (the log shows them: it is written
        // line by line), long before the 30 s file ends.
        let line = """
        \(CommandRunner.binary.path) session \(long) --out \(reply) --log \(log) & pid=$!
        until grep -q audio.chunk \(log) 2>/dev/null; do sleep 0.05; done
        kill -INT $pid; wait $pid
        """
        let result = try CommandRunner.run(["-c", line], executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("ending: the user ended the session"), "\(result)")
        #expect(result.stdout.contains("ended cleanly"), "\(result)")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.last?.contains(#""transport":"closed""#) == true)
        // The reply file is a finished WAV (its header has its length), here with the reply so far.
        let (format, _) = try AudioFiles.read(reply, as: Float.self)
        #expect(format.sampleRate == 24_000)
    }

    @Test func theStdioRuntimeSpeaksOnStandardInputAndOutput() throws {
        // A runtime connected to the client's standard input and output through a FIFO.
        let directory = try TemporaryDirectory()
        let fifo = directory.path("to-client")
        let received = directory.path("received.jsonl")
        #expect(mkfifo(fifo, 0o600) == 0)
        let script = try directory.file("runtime.py", Array("""
        import sys
        seen = open(sys.argv[1], "w")
        for line in sys.stdin:
            seen.write(line); seen.flush()
            if '"type":"text.input"' in line:
                print('{"type":"transcript","role":"assistant","text":"hello","final":true}', flush=True)
                print('{"type":"audio.chunk","data":"AAABAA==","sampleRate":24000}', flush=True)
            if '"type":"session.end"' in line:
                print('{"type":"session.ended","reason":"done"}', flush=True)
                break
        """.utf8))
        let line = "python3 \(script) \(received) < \(fifo) | \(CommandRunner.binary.path) session --text hi --stdio --session-id s-io > \(fifo)"
        let result = try CommandRunner.run(["-c", line], executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("assistant: hello"), "\(result)")
        #expect(result.stderr.contains("session s-io ended cleanly"), "\(result)")
        let sent = try String(contentsOfFile: received, encoding: .utf8)
        #expect(sent == """
        {"type":"session.start","sessionId":"s-io","context":{}}
        {"type":"text.input","text":"hi"}
        {"type":"session.end"}

        """)
    }

    @Test(arguments: [
        (["session"], "say what to send: an input file, '--mic <device>' or '--text <text>'"),
        (["session", "a.wav", "--mic", "default"], "give an input file or '--mic', not both"),
        (["session", "--text", "x", "--stdio", "--runtime-command", "cat"], "'--stdio' and '--runtime-command' cannot be combined"),
        (["session", "--text", "x", "--fast"], "'--fast' applies to an input file"),
        (["session", "--text", "x", "--out", "reply.flac"], "reply audio is Float32, which FLAC cannot hold"),
        (["session", "--text", "x", "--context", "novalue"], "'--context' takes key=value, not 'novalue'"),
        (["session", "--text", "x", "--embedded-fault", "explode"], "'--embedded-fault' must be one of fail, silent, stall"),
        (["session", "--text", "x", "--stdio", "--out", "-"], "with '--stdio', standard output carries messages"),
    ])
    func usageErrorsExit64BeforeAnythingRuns(arguments: [String], message: String) throws {
        let result = try CommandRunner.run(arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
    }

    @Test func aMissingInputExits66AndAMicrophoneThatIsNotThereExits69() throws {
        let missing = try CommandRunner.run(["session", "/nonexistent/take.wav"])
        #expect(missing.status == 66, "\(missing)")
        let noDevice = try CommandRunner.run(["session", "--mic", "hw:97,0"])
        #expect(noDevice.status == 69, "\(noDevice)")
        #expect(noDevice.stderr.contains("audio capture on 'hw:97,0' is unavailable"), "\(noDevice)")
    }

    @Test func withTypedTextAnUnavailableMicrophoneLeavesATextSession() throws {
        let result = try CommandRunner.run(["session", "--mic", "hw:97,0", "--text", "hello"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("audio unavailable: audio capture on 'hw:97,0' is unavailable"), "\(result)")
        #expect(result.stdout.contains("user: hello"))
    }

    @Test func aRuntimeCommandThatCannotStartIsAClearFailure() throws {
        let result = try CommandRunner.run(["session", "--text", "x", "--runtime-command", "voicepipe-no-such-runtime"])
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("could not start the runtime 'voicepipe-no-such-runtime': command not found"), "\(result)")
    }

    static func seconds(_ frames: Int) -> String {
        String(format: "%.3f s", Double(frames) / 24_000)
    }
}
