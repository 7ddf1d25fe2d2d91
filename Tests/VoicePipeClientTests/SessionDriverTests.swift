import Foundation
import Synchronization
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession
import VoicePipeTestSupport

/// The session driver with a manual clock and an in-memory runtime end scripted by the test:
/// the machine's actions carried out on the clock's instants, without sleeping.
struct SessionDriverTests {
    /// A driver running on its own thread, and what it finally reported.
    final class Running: @unchecked Sendable {
        let driver: SessionDriver
        let runtime: InMemoryTransport
        let clock: ManualSessionClock
        private let result = Locked<SessionReport?>(nil)
        let events = Locked<[(SessionEvent, SessionInstant)]>([])
        /// Everything the runtime end received so far, decoded, in order.
        private(set) var received: [WireMessage] = []

        init(options: SessionDriverOptions, capture: SessionCapture = .none, output: any ReplyOutput = DiscardedReplyOutput()) {
            let (client, runtime) = InMemoryTransport.pair()
            let clock = ManualSessionClock()
            let events = self.events
            driver = SessionDriver(options: options, transport: client, clock: clock, capture: capture, output: output) { event, instant in
                events.withLock { $0.append((event, instant)) }
            }
            self.runtime = runtime
            self.clock = clock
            let (driver, result) = (driver, self.result)
            Thread { let report = driver.run(); result.withLock { $0 = report } }.start()
        }

        var report: SessionReport? { result.value }

        /// Reads what the runtime end has been sent since the last call.
        @discardableResult
        func collect() -> [WireMessage] {
            var fresh = [WireMessage]()
            for event in runtime.takeReceived() {
                if case .message(let text) = event, let envelope = try? WireCodec.decode(text) { fresh.append(envelope.message) }
            }
            received += fresh
            return fresh
        }

        /// Waits until the runtime end has received `count` messages in all.
        func waitForMessages(_ count: Int) -> Bool {
            waitUntil { collect(); return received.count >= count }
        }

        func send(_ message: WireMessage) throws {
            try runtime.send(WireCodec.encode(message))
        }

        /// Ends the session from the runtime's side and waits for the driver to finish.
        func finish() throws -> SessionReport? {
            try send(.sessionEnded(reason: "test over"))
            waitUntil { report != nil }
            return report
        }
    }

    static func options(replyTimeout: Duration = .seconds(300), texts: [String] = []) -> SessionDriverOptions {
        SessionDriverOptions(session: SessionConfiguration(sessionId: "s-1", replyTimeout: replyTimeout), initialTexts: texts)
    }

    @Test func theDriverSendsKeepAliveSilenceAtFortySecondsOnTheManualClock() throws {
        let running = Running(options: Self.options(texts: ["hello"]))
        #expect(running.waitForMessages(2))
        #expect(running.received == [.sessionStart(sessionId: "s-1", context: [:]), .textInput(text: "hello")])
        let silence = AudioChunk(sampleRate: 16_000, samples: [Int16](repeating: 0, count: 1_600))
        var fresh = [WireMessage]()
        running.clock.advance(to: .seconds(40) - .nanoseconds(1))
        fresh = running.collect()
        #expect(fresh.isEmpty)
        running.clock.advance(to: .seconds(40))
        fresh = running.collect()
        #expect(fresh.count == 1)
        #expect(fresh.first == .audioChunk(silence))
        running.clock.advance(to: .seconds(79))
        fresh = running.collect()
        #expect(fresh.isEmpty)
        running.clock.advance(to: .seconds(80))
        fresh = running.collect()
        #expect(fresh.count == 1)
        #expect(fresh.first == .audioChunk(silence))
        let report = try running.finish()
        #expect(report?.machine.counters.keepAlivesSent == 2)
        #expect(report?.endedCleanly == true)
        #expect(report?.closeReason == .closedByClient)
    }

    @Test func aFileAtRealTimePaceSendsAFrameEvery32Milliseconds() throws {
        let samples = Signals.int16(Signals.sine(frequency: 440, amplitude: 0.5, sampleRate: 16_000, frames: 16_000))
        let path = try TemporaryWAV.write(samples, sampleRate: 16_000)
        defer { unlink(path) }
        let reader = try AudioFileReader(path: path)
        let source = try FileCaptureSource(reader: reader, converter: CaptureConverter(input: reader.format))
        let running = Running(options: Self.options(), capture: .file(source, pacing: .realTime))
        #expect(running.waitForMessages(1))
        running.clock.advance(to: .origin + .milliseconds(32 * 10 - 1))
        #expect(running.collect().count == 9)
        running.clock.advance(to: .origin + .milliseconds(32 * 10))
        #expect(running.collect().count == 1)
        // One second of audio is 31 full frames and a last one of 128 samples, flushed at the end.
        running.clock.advance(to: .seconds(2))
        running.collect()
        let chunks = running.received.compactMap { if case .audioChunk(let chunk) = $0 { chunk } else { nil } }
        #expect(chunks.count == 32)
        #expect(chunks.last?.samples.count == 16_000 - 31 * 512)
        #expect(chunks.flatMap(\.samples).count == 16_000)
        _ = try running.finish()
    }
}

extension SessionDriverTests {
    @Test func anInterruptionCutsTheReplyFileWithinOneBuffer() throws {
        let directory = NSTemporaryDirectory() + "voicepipe-cut-\(UUID().uuidString).wav"
        defer { unlink(directory) }
        let output = try FileReplyOutput(path: directory)
        let running = Running(options: Self.options(texts: ["hello"]), output: output)
        #expect(running.waitForMessages(2))
        // Ten 20 ms chunks of reply (4 800 frames), then the runtime hears the user.
        let chunk = AudioChunk(sampleRate: 24_000, samples: [Int16](repeating: 8_192, count: 480))
        try running.send(.transcript(role: .assistant, text: "a long answer", isFinal: true))
        for _ in 0..<10 { try running.send(.audioChunk(chunk)) }
        try running.send(.interruption)
        #expect(waitUntil { running.driver.snapshot.counters.interruptions == 1 })
        // What a player had not heard yet (the 60 ms pre-roll) is gone; what was playing fades
        // out within 5 ms: 4 800 − 1 440 + 120 frames reach the file, not one buffer more.
        #expect(output.framesPlayed == 4_800 - 1_440 + 120)
        #expect(running.driver.snapshot.state == .talking)
        _ = try running.finish()
        let (_, samples) = try AudioFiles.read(directory, as: Float.self)
        #expect(samples.count == 3_480)
        // The fade ends at silence: the last frame written is (within rounding) zero.
        #expect(abs(samples.last ?? 1) < 1e-3)
    }

    @Test func aDeviceThatReports0HzLeavesATextSessionThatSaysWhy() throws {
        let hardware = FakeAudioDevice(name: "usb-mic", format: AudioFormat(sampleRate: 0, channelCount: 1, sampleType: .int16))
        var reason: String?
        do {
            _ = try CaptureDevice(hardware)
        } catch {
            reason = error.message
        }
        let why = try #require(reason)
        #expect(hardware.tapInstallations == 0)
        var options = Self.options(texts: ["is my battery ok?"])
        options.audioUnavailable = why
        options.session.context = ["persona": .string("Dana"), "vehicle": .string("2022 Model Y")]
        let running = Running(options: options)
        #expect(running.waitForMessages(2))
        #expect(running.received == [.sessionStart(sessionId: "s-1", context: ["persona": .string("Dana"), "vehicle": .string("2022 Model Y")]), .textInput(text: "is my battery ok?")])
        // The runtime can read the text before the driver has published the state it led to
        // (a window ThreadSanitizer's slowdown widened until the test saw "Connecting").
        #expect(waitUntil { running.driver.snapshot.stateLine.hasPrefix("Thinking") })
        let line = running.driver.snapshot.stateLine
        #expect(line == "Thinking — Dana · 2022 Model Y — audio unavailable: \(why); text only")
        #expect(why.contains("0 Hz"))
        _ = try running.finish()
    }
}

/// A session whose reply goes to a speaker: the render thread plays it at real-time pace and says
/// when it has played everything, which ends the reply.
struct DeviceReplyOutputTests {
    @Test func aSpeakerPlaysTheReplyAndItsDrainEndsIt() throws {
        let speaker = FakeAudioDevice(name: "fake-speaker", format: AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: false))
        let output = try DeviceReplyOutput(device: PlaybackDevice(speaker))
        let (client, runtime) = InMemoryTransport.pair()
        let events = Locked<[String]>([])
        let driver = SessionDriver(options: SessionDriverOptions(session: SessionConfiguration(sessionId: "s-1"), initialTexts: ["hi"]),
                                   transport: client, capture: .none, output: output) { event, _ in
            if case .note(.stateChanged(_, let to)) = event { events.withLock { $0.append(to.name) } }
        }
        let report = Locked<SessionReport?>(nil)
        Thread { let result = driver.run(); report.withLock { $0 = result } }.start()
        #expect(waitUntil { runtime.unreadEventCount >= 3 })
        // 200 ms of reply at 24 kHz, in ten chunks: 400 ms at 48 kHz on two channels.
        let chunk = AudioChunk(sampleRate: 24_000, samples: [Int16](repeating: 8_192, count: 480))
        for _ in 0..<10 { try runtime.send(WireCodec.encode(.audioChunk(chunk))) }
        // Played out, and the gap after it: the reply is over, so the session ends by itself.
        #expect(waitUntil { events.value.filter { $0 == "ready" }.count == 2 })
        try runtime.send(WireCodec.encode(.sessionEnded(reason: "bye")))
        #expect(waitUntil { report.value != nil })
        #expect(report.value?.endedCleanly == true)
        #expect(events.value == ["connecting", "ready", "thinking", "speaking", "ready", "disconnected"])
        // Every frame of the reply reached both channels at the device's rate, then silence.
        let played = speaker.played
        #expect(played.count == 2)
        let audible = played[0].filter { abs($0 - 0.25) < 0.01 }.count
        #expect(abs(audible - 9_600) <= 96, "\(audible) frames near the reply's level")
        #expect(speaker.drained)
    }

    @Test func aSpeakerReportsEachDrainOnceWithTheChunksItCovers() throws {
        let speaker = FakeAudioDevice(name: "fake-speaker", format: AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: false))
        let output = try DeviceReplyOutput(device: PlaybackDevice(speaker))
        let reports = Locked<[Int]>([])
        output.reportDrained { chunks in reports.withLock { $0.append(chunks) } }
        // 20 ms at 24 kHz: 960 frames at 48 kHz.
        let chunk = AudioChunk(sampleRate: 24_000, samples: [Int16](repeating: 8_192, count: 480))
        #expect(try output.play(chunk) == false)
        #expect(waitUntil { reports.value == [1] })
        // 100 ms of silence periods after the drain add no report.
        let afterFirst = speaker.played[0].count
        #expect(waitUntil { speaker.played[0].count >= afterFirst + 4_800 })
        #expect(reports.value == [1])
        #expect(try output.play(chunk) == false)
        #expect(try output.play(chunk) == false)
        #expect(waitUntil { reports.value.last == 3 })
        // A cut drains at once (or the chunk has played out): either way the report covers it.
        #expect(try output.play(AudioChunk(sampleRate: 24_000, samples: [Int16](repeating: 8_192, count: 24_000))) == false)
        try output.cut()
        #expect(waitUntil { reports.value.last == 4 })
        try output.finish()
        let reported = reports.value
        #expect(reported.first == 1 && reported.last == 4)
        #expect(reported == reported.sorted() && Set(reported).count == reported.count, "\(reported): one report per drain")
        #expect(output.chunksQueued == 4)
    }
}

/// Turn latency to the ear: the speaker says when the first reply sample was heard, and the
/// device's reported delay is in it.
struct LatencyToTheEarTests {
    /// A typed turn answered with 200 ms of reply on a speaker that reports `delayFrames` at 48 kHz.
    static func session(speakerDelayFrames delayFrames: Int) throws -> SessionReport {
        let speaker = FakeAudioDevice(name: "speaker", format: AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: false))
        speaker.playbackDelayFrames = delayFrames
        let output = try DeviceReplyOutput(device: PlaybackDevice(speaker))
        let (client, runtime) = InMemoryTransport.pair()
        let driver = SessionDriver(options: SessionDriverOptions(session: SessionConfiguration(sessionId: "s-1"), initialTexts: ["hi"]),
                                   transport: client, capture: .none, output: output)
        let report = Locked<SessionReport?>(nil)
        Thread { let result = driver.run(); report.withLock { $0 = result } }.start()
        #expect(waitUntil { runtime.unreadEventCount >= 3 })
        let chunk = AudioChunk(sampleRate: 24_000, samples: [Int16](repeating: 8_192, count: 480))
        for _ in 0..<10 { try runtime.send(WireCodec.encode(.audioChunk(chunk))) }
        #expect(waitUntil { driver.snapshot.turns.first?.heardDelay != nil })
        try runtime.send(WireCodec.encode(.sessionEnded(reason: "bye")))
        #expect(waitUntil { report.value != nil })
        return try #require(report.value)
    }

    @Test func theSpeakersDelayIsAddedToTheHandOffLatency() throws {
        let near = try #require(try Self.session(speakerDelayFrames: 4_800).machine.turns.first)
        let far = try #require(try Self.session(speakerDelayFrames: 28_800).machine.turns.first)
        let (nearDelay, farDelay) = (try #require(near.heardDelay), try #require(far.heardDelay))
        // 100 ms of device delay, less the period just written, plus the pre-roll's wait: at least 90 ms.
        #expect(nearDelay >= .milliseconds(90) && nearDelay < .milliseconds(400), "\(nearDelay)")
        // 500 ms more of device delay is 500 ms more to the ear.
        let difference = farDelay - nearDelay
        #expect(difference > .milliseconds(450) && difference < .milliseconds(550), "\(difference)")
        #expect(near.latencyToEar == near.latency.map { $0 + nearDelay })
    }

    @Test func theSummaryGivesBothFiguresAndSaysWhichIsWhich() throws {
        let report = try Self.session(speakerDelayFrames: 4_800)
        let summary = SessionTimeline.summary(of: report.machine, duration: report.finishedAt - report.startedAt)
        #expect(summary.contains { $0.hasPrefix("turn latency median") && $0.hasSuffix("(end of speech to first reply audio)") }, "\(summary)")
        #expect(summary.contains { $0.hasPrefix("turn latency to the ear: median ") && $0.contains("the speaker's delay") }, "\(summary)")
        let json = SessionSummary.json(of: report.machine, duration: .seconds(1))
        guard case .object(let spread)? = json["turnLatencyToEar"], case .number(let count)? = spread["count"] else {
            Issue.record("no turnLatencyToEar: \(JSONWriter.string(.object(json)))")
            return
        }
        #expect(count == 1)
    }
}

/// Reply audio that arrives in bursts over a poor network: the jitter buffer learns how late the
/// chunks come and, once it has, the speaker plays the reply without a hole.
struct JitterBufferTests {
    /// Sends `count` 20 ms chunks of `level` as a network holding them back would: chunk k is due
    /// 20 ms × k after the start and goes out at the next multiple of 200 ms (up to 180 ms late,
    /// real-time pace on average).
    static func sendInBursts(_ output: DeviceReplyOutput, level: Int16, count: Int) throws {
        let chunk = AudioChunk(sampleRate: 24_000, samples: [Int16](repeating: level, count: 480))
        let start = ContinuousClock.now
        for k in 0..<count {
            let release = start + .milliseconds(((20 * k + 199) / 200) * 200)
            let wait = release - ContinuousClock.now
            if wait > .zero { Thread.sleep(forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18) }
            _ = try output.play(chunk)
        }
        try output.replyEnded()
    }

    @Test func afterOneBurstyReplyTheNextPlaysWithoutAHole() throws {
        let speaker = FakeAudioDevice(name: "car", format: AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: false))
        let output = try DeviceReplyOutput(device: PlaybackDevice(speaker))
        let drains = Locked(0)
        output.reportDrained { _ in drains.withLock { $0 += 1 } }
        #expect(output.jitterBuffer.current == .milliseconds(40))

        // The first reply meets the gaps with a 40 ms pre-roll: it runs dry, then the buffer grows.
        try Self.sendInBursts(output, level: 8_192, count: 100)
        #expect(waitUntil { drains.value >= 1 })
        let first = output.underruns
        #expect(first >= 1 && first <= 3, "\(first) underruns")
        // 180 ms late at most, plus the 30 ms margin (and the test thread's own scheduling).
        let buffer = output.jitterBuffer
        #expect(buffer.current >= .milliseconds(205) && buffer.current <= .milliseconds(270) && buffer.largest == buffer.current, "\(buffer)")

        // The second reply, held back the same way, plays whole.
        try Self.sendInBursts(output, level: 16_384, count: 100)
        #expect(waitUntil(limit: .seconds(10)) { drains.value >= 2 })
        // A busy machine's scheduling may cost one short dry spell; the gaps themselves, none.
        #expect(output.underruns <= first + 1, "\(output.underruns - first) underruns in the second reply")
        try output.finish()
        let played = speaker.played[0]
        let loud = played.indices.filter { abs(played[$0] - 0.5) < 0.01 }
        let (begin, end) = (try #require(loud.first), try #require(loud.last))
        #expect(end - begin + 1 >= 95_000 && end - begin + 1 <= 96_100, "\(end - begin + 1) frames of the second reply")
        let holes = played[begin...end].filter { $0 < 0.4 }.count
        #expect(holes <= 720, "\(holes) frames of silence inside the second reply (a 40 ms buffer leaves 6 700)")
    }
}

/// A speaker that fails mid-session: replies go on as text, and a later chunk past the retry
/// interval opens the device again, guarded, to play the next reply.
struct ReopeningReplyOutputTests {
    @Test func aSpeakerThatFailsIsLetGoAndOpenedAgainOnALaterChunk() throws {
        let first = FakeAudioDevice(name: "headphones", format: AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: false))
        let broken = FakeAudioDevice(name: "headphones", format: AudioFormat(sampleRate: 0, channelCount: 2, sampleType: .float32, isInterleaved: false))
        let second = FakeAudioDevice(name: "headphones", format: AudioFormat(sampleRate: 16_000, channelCount: 1, sampleType: .float32, isInterleaved: false))
        let time = Locked(ContinuousClock.now)
        let attempts = Locked(0)
        let changes = Locked<[String]>([])
        let output = ReopeningReplyOutput(name: "speaker 'headphones'", first: try DeviceReplyOutput(device: PlaybackDevice(first)), now: { time.value }) {
            let attempt = attempts.withLock { $0 += 1; return $0 }
            return try DeviceReplyOutput(device: PlaybackDevice(attempt == 1 ? broken : second))
        } onChange: { change in changes.withLock { $0.append(change) } }
        let reports = Locked<[Int]>([])
        output.reportDrained { chunks in reports.withLock { $0.append(chunks) } }
        let chunk = AudioChunk(sampleRate: 24_000, samples: [Int16](repeating: 8_192, count: 480))

        #expect(try output.play(chunk) == false)
        #expect(waitUntil { reports.value == [1] })
        first.failPlayback(SystemErrorCode(.alsa, -ENODEV, message: "No such device"))
        // The render thread meets the failure; the next chunk hears of it and is let go.
        #expect(waitUntil { (try? output.play(chunk)) == true && output.losses == 1 })
        #expect(changes.value.first?.hasPrefix("speaker 'headphones' lost: ") == true, "\(changes.value)")
        #expect(changes.value.first?.hasSuffix("replies are text only until it is back (tried again every 2 s)") == true)
        // Within the interval nothing is tried; after it, a 0 Hz device is refused before a player connects.
        #expect(try output.play(chunk) == true && attempts.value == 0)
        time.withLock { $0 += .seconds(2) }
        #expect(try output.play(chunk) == true && attempts.value == 1 && broken.playerStarts == 0)
        time.withLock { $0 += .seconds(2) }
        let queued = output.chunksQueued
        #expect(try output.play(chunk) == false && attempts.value == 2)
        #expect(changes.value.last == "speaker 'headphones' is back")
        // The next reply plays on the device in the format it came back in, its drain counted whole.
        #expect(waitUntil { reports.value.last == queued + 1 })
        #expect(second.played.count == 1 && second.played[0].contains { abs($0 - 0.25) < 0.01 })
        try output.finish()
        #expect(output.framesPlayed > 0 && output.sampleRate == 48_000)
    }
}

/// The voice gate's defaults on the bundled speech: each sample is one turn, opened near the
/// first word and closed only by the end of the input.
struct VoiceGateOnSamplesTests {
    @Test(arguments: ["speech-48k-stereo-f32.wav", "speech-44k1-stereo-s16.wav", "speech-8k-mono-s16.wav", "speech-22k05-mono-s16.wav"])
    func eachBundledSampleIsOneTurn(name: String) throws {
        let reader = try AudioFileReader(path: CommandRunner.sample(name))
        var gate = VoiceGate()
        var changes = [VoiceGate.Change]()
        _ = try CaptureConverter(input: reader.format).convert(reader) { frame in
            if let change = gate.process(frame.level, duration: .samples(frame.sampleCount, at: 16_000)) { changes.append(change) }
        }
        #expect(changes.count == 1, "\(changes)")
        guard case .opened(let start) = changes.first else { return }
        // The files start with 100 ms of digital silence; speech follows at once.
        #expect(start >= .milliseconds(96) && start <= .milliseconds(200), "\(start)")
        #expect(gate.isOpen)
        #expect(gate.turnPeakDBFS > -9 && gate.turnPeakDBFS < -2)
    }
}

/// A 16-bit mono WAV in the temporary directory.
enum TemporaryWAV {
    static func write(_ samples: [Int16], sampleRate: Int) throws -> String {
        let path = NSTemporaryDirectory() + "voicepipe-\(UUID().uuidString).wav"
        let writer = try AudioFileWriter(path: path, sampleRate: SampleRate(hertz: Double(sampleRate)), channelCount: 1, encoding: .int16)
        try samples.withUnsafeBufferPointer { buffer throws(AudioFileError) in try writer.write(buffer) }
        try writer.close()
        return path
    }
}

/// A microphone that fails mid-session: the session carries on as text, the device is tried
/// again on the interval, guarded before its tap, and voice resumes in the format it came back in.
struct CaptureReopeningTests {
    static let headset = AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32)
    /// The hands-free profile the headset comes back in.
    static let handsFree = AudioFormat(sampleRate: 16_000, channelCount: 1, sampleType: .int16)

    static func pump(_ fake: FakeAudioDevice) throws -> CapturePump {
        let device = try CaptureDevice(fake)
        return try CapturePump(device: device, converter: CaptureConverter(input: device.format), whenFull: .drop)
    }

    /// The converter's frames for `samples`; with `flushing`, the tail a stream's end flushes too.
    static func converted<T>(_ samples: [T], format: AudioFormat, flushing: Bool = true) throws -> [Int16] {
        let converter = try CaptureConverter(input: try FormatGuard.validate(format))
        var out = [Int16]()
        try samples.withUnsafeBytes { bytes in try converter.process(bytes) { out += $0.copySamples() } }
        if flushing { try converter.flush { out += $0.copySamples() } }
        return out
    }

    /// Hands `bytes` to the fake in 10 ms buffers once its tap is installed.
    static func deliver(_ bytes: [UInt8], to fake: FakeAudioDevice, bytesPerBuffer: Int) {
        _ = waitUntil { fake.isStreaming }
        for start in stride(from: 0, to: bytes.count, by: bytesPerBuffer) {
            bytes[start..<min(start + bytesPerBuffer, bytes.count)].withUnsafeBytes { _ = fake.deliver($0) }
        }
    }

    @Test func aMicrophoneThatFailsLeavesTextAndComesBackGuardedInItsNewFormat() throws {
        let first = FakeAudioDevice(name: "headset", format: Self.headset)
        let broken = FakeAudioDevice(name: "headset", format: AudioFormat(sampleRate: 0, channelCount: 1, sampleType: .int16))
        let second = FakeAudioDevice(name: "headset", format: Self.handsFree)
        let attempts = Locked(0)
        let reopen = CaptureReopening(name: "microphone 'headset'", interval: .seconds(2)) {
            let attempt = attempts.withLock { $0 += 1; return $0 }
            switch attempt {
            case 1: throw AudioUnavailable(device: "headset", direction: .capture, reason: .noDevice)
            case 2: return try Self.pump(broken)  // the guard refuses 0 Hz before any tap
            default: return try Self.pump(second)
            }
        }
        let running = SessionDriverTests.Running(options: SessionDriverTests.options(), capture: .reopenableDevice(try Self.pump(first), reopen: reopen))
        #expect(running.waitForMessages(1))

        // 0.6 s of speech on the headset, then it is unplugged mid-word.
        let tone = Signals.sine(frequency: 440, amplitude: 0.5, sampleRate: 48_000, frames: 28_800)
        let stereo = Signals.interleave([tone, tone]).map(Float.init)
        Self.deliver(stereo.withUnsafeBytes { Array($0) }, to: first, bytesPerBuffer: 480 * 8)
        let before = try Self.converted(stereo, format: Self.headset)
        let unflushed = try Self.converted(stereo, format: Self.headset, flushing: false).count
        #expect(waitUntil { running.collect(); return running.received.compactMap(\.audioChunk).flatMap(\.samples).count == unflushed })
        first.fail(SystemErrorCode(.alsa, -ENODEV, message: "No such device"))
        #expect(waitUntil { running.driver.snapshot.stateLine.contains("audio unavailable") })
        let lost = running.driver.snapshot
        #expect(lost.turns.count == 1 && lost.turns[0].endedAt != nil, "the open turn ends at the loss")
        #expect(lost.counters.audioLosses == 1)
        #expect(lost.state == .thinking)

        // Every frame captured before the loss was sent, exactly as the converter makes them (its
        // tail flushed when the stream ended).
        _ = waitUntil { running.collect(); return running.received.compactMap(\.audioChunk).flatMap(\.samples).count == before.count }
        #expect(running.received.compactMap(\.audioChunk).flatMap(\.samples) == before)

        // Attempt 1: not there; attempt 2: there, but at 0 Hz, refused before a tap; attempt 3: back.
        running.clock.advance(by: .seconds(2))
        running.clock.advance(by: .seconds(2))
        #expect(attempts.value == 2 && broken.tapInstallations == 0)
        #expect(running.driver.snapshot.stateLine.contains("audio unavailable"))
        running.clock.advance(by: .seconds(2))
        #expect(waitUntil { !running.driver.snapshot.stateLine.contains("audio unavailable") })
        #expect(attempts.value == 3)

        // Voice resumes in the new format: a second turn, its frames converted from 16 kHz mono Int16.
        let again = Signals.int16(Signals.sine(frequency: 300, amplitude: 0.5, sampleRate: 16_000, frames: 8_000))
        Self.deliver(again.withUnsafeBytes { Array($0) }, to: second, bytesPerBuffer: 160 * 2)
        let after = try Self.converted(again, format: Self.handsFree, flushing: false)
        #expect(waitUntil { running.collect(); return running.received.compactMap(\.audioChunk).flatMap(\.samples).count == before.count + after.count })
        #expect(Array(running.received.compactMap(\.audioChunk).flatMap(\.samples).dropFirst(before.count)) == after)
        #expect(running.driver.snapshot.turns.count == 2)
        let notes = running.events.value.compactMap { if case .note(let note) = $0.0 { note } else { nil } }
        #expect(notes.contains(.audioLost("microphone 'headset' failed: 'headset' failed after 28800 frames: no such device; what was captured before is kept; trying it again every 2.000 s")), "\(notes)")
        #expect(notes.contains(.audioRestored("microphone 'headset' is back at 16000 Hz, mono, Int16 (it was 48000 Hz, stereo, Float32, interleaved)")), "\(notes)")
        let report = try #require(try running.finish())
        #expect(report.machine.counters.audioLosses == 1)
        #expect(report.captureProblems.isEmpty)
        #expect(second.tapInstallations == 1)
    }
}

extension WireMessage {
    /// The chunk of an `audio.chunk`, else nil.
    fileprivate var audioChunk: AudioChunk? {
        if case .audioChunk(let chunk) = self { chunk } else { nil }
    }
}
