import CThreadAnnotations
import Foundation
import Synchronization
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// Speech-like test audio for load runs: bursts of a voiced, syllable-modulated signal loud
/// enough to open the voice gate, separated by pauses of quiet noise that close it, so a session
/// fed with it makes turn after turn, and voice arrives while the runtime still replies.
public enum LoadAudio {
    /// Writes `seconds` of it as a 16 kHz mono Int16 WAV at `path`, generated from `seed`.
    /// - Returns: the samples written, tallied in order, and the bursts in it.
    public static func write(path: String, seconds: Double, seed: UInt64 = 0x5EED_F00D) throws -> (tally: AudioTally, bursts: Int) {
        let rate = SampleRate.capture
        let total = Int((seconds * rate.hertz).rounded())
        let writer = try AudioFileWriter(path: path, sampleRate: rate, channelCount: 1, encoding: .int16)
        var random = SplitMix64(seed: seed)
        var tally = AudioTally()
        var bursts = 0
        var block = [Int16](repeating: 0, count: 4_096)
        var filled = 0
        var written = 0
        var phase = 0.0
        func emit(_ sample: Int16) throws {
            block[filled] = sample
            filled += 1
            written += 1
            if filled == block.count { try flush() }
        }
        func flush() throws {
            guard filled > 0 else { return }
            try block.withUnsafeBufferPointer { buffer in
                let part = UnsafeBufferPointer(rebasing: buffer[0..<filled])
                try writer.write(part)
                tally.add(part)
            }
            filled = 0
        }
        // A short quiet lead-in, then bursts and pauses until the length is reached.
        var segment = 0
        while written < total {
            let speaking = segment % 2 == 1
            // Pauses just past the gate's 500 ms hang-over bring the next words while a runtime
            // answering at full speed is still sending the reply (an interruption); longer ones let
            // the reply finish.
            let pause = random.uniform(0, 1) < 0.5 ? random.uniform(0.53, 0.6) : random.uniform(0.8, 1.6)
            let length = speaking ? random.uniform(0.8, 3.2) : (segment == 0 ? 0.3 : pause)
            let count = min(Int(length * rate.hertz), total - written)
            if speaking {
                bursts += 1
                let pitch = random.uniform(95, 220)
                let level = random.uniform(0.12, 0.5)          // about −18 to −6 dBFS peaks
                let syllable = random.uniform(3, 6)               // syllables a second
                for n in 0..<count {
                    let t = Double(n) / rate.hertz
                    // A glottal-pulse-like buzz: the fundamental and falling harmonics, gliding in pitch.
                    let frequency = pitch * (1 + 0.08 * sin(2 * Double.pi * 0.7 * t))
                    phase += 2 * Double.pi * frequency / rate.hertz
                    if phase > 2 * Double.pi { phase -= 2 * Double.pi }
                    var voiced = 0.0
                    for harmonic in 1...6 { voiced += sin(phase * Double(harmonic)) / Double(harmonic) }
                    // Syllables: a raised-cosine envelope that never quite closes, so the gate stays open.
                    let envelope = 0.55 + 0.45 * sin(2 * Double.pi * syllable * t)
                    let fade = min(1, Double(n) / 160, Double(count - n) / 160)
                    let noise = random.uniform(-1, 1) * 0.05
                    let value = level * fade * (envelope * voiced * 0.55 + noise)
                    try emit(Int16(clamping: Int((value * 32_767).rounded())))
                }
            } else {
                // Room noise around −66 dBFS: well below the gate's close threshold, never digital silence.
                for _ in 0..<count { try emit(Int16(random.uniform(-16, 16).rounded())) }
            }
            segment += 1
        }
        try flush()
        try writer.close()
        return (tally, bursts)
    }
}

extension SplitMix64 {
    /// A uniform value in `low ..< high`.
    mutating func uniform(_ low: Double, _ high: Double) -> Double {
        low + (high - low) * nextUnit()
    }
}

/// The resident set size of a process, read from `/proc/PID/statm` (Linux).
public enum ResidentMemory {
    /// Bytes resident now, for `pid` (nil: this process); nil when it cannot be read.
    public static func bytes(of pid: Int32? = nil) -> Int? {
        let path = pid.map { "/proc/\($0)/statm" } ?? "/proc/self/statm"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// One load run: a session streaming generated speech at full speed through a runtime that
/// replies and is interrupted throughout, with the audio counted and checksummed at both ends
/// and this process's memory sampled as it goes.
///
/// ```
///  LoadAudio WAV ─▶ FileCaptureSource ─▶ SessionDriver (as fast as taken) ─▶ transport ─▶ runtime
///   tally ①                               frames sent ②                               received ③
///  reply file ◀─ FileReplyOutput ◀─ TallyingReplyOutput ◀─ driver ◀─ transport ◀─ runtime sent ④
///   played + cut ⑥                       received ⑤
/// ```
///
/// ① = ③ (samples and CRC-32), ② = ③ (chunks), ④ = ⑤ (chunks, samples, CRC-32), ⑤ = ⑥ (samples).
///
/// `VOICEPIPE_LOAD_SERVER_EVENTS=1` keeps the runtime server's per-message events and prints
/// their counts on standard error (for diagnosis only: keeping them costs this process memory).
public struct LoadRun {
    /// The runtime the session talks to.
    public enum Runtime: String, Sendable, CaseIterable {
        /// ``EmbeddedRuntime``, in this process, replies unpaced.
        case embedded
        /// The Python runtime server (`Samples/runtime-server`) over ``WebSocketTransport``, `--pace fast`.
        case webSocket = "websocket"
    }

    public var runtime: Runtime
    /// Audio to stream, in seconds.
    public var seconds: Double
    /// How often memory is sampled, in wall-clock seconds.
    public var sampleInterval: Double = 0.25
    /// The part of the audio (by samples sent) counted as warm-up: memory growth is measured from its end.
    public var warmUpFraction: Double = 0.2
    /// Where the input and reply files go (deleted afterwards).
    public var directory: String = NSTemporaryDirectory()
    /// Generator seed for the audio.
    public var seed: UInt64 = 0x5EED_F00D
    /// The most this process's memory may grow after warm-up.
    public var memoryGrowthLimit: Int = 10 << 20

    public init(runtime: Runtime, seconds: Double) {
        self.runtime = runtime
        self.seconds = seconds
    }

    /// Streams the audio and checks it; throws only when the run cannot be set up (files, server).
    public func run() throws -> LoadReport {
        let stem = "\(directory)/voicepipe-load-\(getpid())-\(runtime.rawValue)"
        let inputPath = stem + "-input.wav", replyPath = stem + "-reply.wav"
        defer {
            unlink(inputPath)
            unlink(replyPath)
        }
        let generated = try LoadAudio.write(path: inputPath, seconds: seconds, seed: seed)
        let reader = try AudioFileReader(path: inputPath)
        let capture = try FileCaptureSource(reader: reader, converter: CaptureConverter(input: reader.format))
        let output = TallyingReplyOutput(wrapping: try FileReplyOutput(path: replyPath))

        var server: RuntimeServer?
        var embedded: EmbeddedRuntime?
        let transport: any SessionTransport
        switch runtime {
        case .embedded:
            let runtime = EmbeddedRuntime(options: EmbeddedRuntimeOptions(pacing: .unpaced))
            embedded = runtime
            transport = runtime.connect()
        case .webSocket:
            let verbose = ProcessInfo.processInfo.environment["VOICEPIPE_LOAD_SERVER_EVENTS"] == "1"
            let started = try RuntimeServer(["--pace", "fast", "--summary"] + (verbose ? [] : ["--quiet"]))
            server = started
            transport = WebSocketTransport(WebSocketConfiguration(url: try WebSocketURL(parsing: started.url + "/voice")))
        }
        defer { server?.stop() }

        let samplesSent = Atomic<Int>(0)
        let framesSent = Atomic<Int>(0)
        let malformed = Guarded<[String]>([])
        let sampler = MemorySampler(interval: sampleInterval, progress: { samplesSent.load(ordering: .relaxed) },
                                    otherProcess: server?.processIdentifier)
        // The run floods the runtime, so waiting for it to take audio is its normal state; on a
        // starved host (the test suite beside it on two cores) a wait can pass the interactive 5 s
        // stall limit without anything being wrong. The limit here only ends a run that hangs.
        let session = SessionConfiguration(sessionId: "load-\(runtime.rawValue)", stallLimit: .seconds(60))
        let driver = SessionDriver(options: SessionDriverOptions(session: session), transport: transport,
                                   capture: .file(capture, pacing: .asFastAsTaken), output: output) { event, _ in
            switch event {
            case .frameSent(let count, _):
                samplesSent.add(count, ordering: .relaxed)
                framesSent.add(1, ordering: .relaxed)
            case .malformed(let reason):
                malformed.withLock { if $0.count < 5 { $0.append(reason) } }
            case .playbackFailed(let error):
                malformed.withLock { if $0.count < 5 { $0.append("playback: \(error)") } }
            default:
                break
            }
        }
        let start = ContinuousClock.now
        sampler.start()
        let report = driver.run()
        let wall = (ContinuousClock.now - start).seconds
        let samples = sampler.stop()

        var runtimeReceived: AudioTally?
        var runtimeSent: AudioTally?
        var interruptionsSent: Int?
        var runtimeTurns: Int?
        var problems: [String] = []
        if let embedded {
            if !embedded.blockUntilFinished(timeout: .seconds(10)) { problems.append("the embedded runtime did not finish") }
            if let traffic = embedded.traffic.first {
                (runtimeReceived, runtimeSent) = (traffic.audioReceived, traffic.audioSent)
                (interruptionsSent, runtimeTurns) = (traffic.interruptionsSent, traffic.turns)
            }
        }
        if let server {
            if let summary = server.waitForEvent(named: "summary", within: 30) {
                runtimeReceived = Self.tally(summary["audioReceived"])
                runtimeSent = Self.tally(summary["audioSent"])
                interruptionsSent = Self.whole(summary["interruptionsSent"])
                runtimeTurns = Self.whole(summary["turns"])
                if runtimeReceived == nil || runtimeSent == nil { problems.append("the runtime server's summary is not as expected: \(summary)") }
            } else {
                problems.append("the runtime server printed no summary")
            }
            if ProcessInfo.processInfo.environment["VOICEPIPE_LOAD_SERVER_EVENTS"] == "1" {
                var counts: [String: Int] = [:]
                for event in server.events { counts["\(event["event"] ?? "?") \(event["type"] ?? "")", default: 0] += 1 }
                FileHandle.standardError.write(Data("server events: \(counts.sorted { $0.key < $1.key })\n".utf8))
            }
            server.stop()
            if !server.standardError.isEmpty { problems.append("the runtime server wrote on stderr: \(server.standardError.prefix(2_000))") }
        }
        if !report.endedCleanly { problems.append("the session did not end cleanly: \(report.machine.state) (\(report.closeReason.map { "\($0)" } ?? "no close reason"))") }
        problems += report.captureProblems
        problems += malformed.withLock { $0 }.map { "the client could not read a message from the runtime: \($0)" }
        if let error = report.playbackError { problems.append("playback failed: \(error)") }

        return LoadReport(
            runtime: runtime, audioSeconds: Double(generated.tally.samples) / 16_000, wallSeconds: wall,
            bursts: generated.bursts, generated: generated.tally,
            framesSent: framesSent.load(ordering: .relaxed), samplesSent: samplesSent.load(ordering: .relaxed),
            runtimeReceived: runtimeReceived, runtimeSent: runtimeSent, clientReceived: output.tally,
            framesPlayed: output.framesPlayed, framesCut: output.framesCut, cuts: output.cuts,
            interruptionsSent: interruptionsSent, interruptionsApplied: report.machine.counters.interruptions,
            clientTurns: report.machine.turns.count, runtimeTurns: runtimeTurns,
            counters: report.machine.counters, memory: samples, warmUpFraction: warmUpFraction,
            memoryGrowthLimit: memoryGrowthLimit, problems: problems)
    }

    private static func tally(_ value: (any Sendable)?) -> AudioTally? {
        guard let fields = value as? [String: any Sendable], let chunks = whole(fields["chunks"]),
              let samples = whole(fields["samples"]), let crc = whole(fields["crc32"]), let crc32 = UInt32(exactly: crc) else { return nil }
        return AudioTally(chunks: chunks, samples: samples, crc32: crc32)
    }

    /// A whole number from a parsed event (Foundation gives 0 and 1 as doubles: they could be booleans).
    private static func whole(_ value: (any Sendable)?) -> Int? {
        if let number = value as? Int { return number }
        if let number = value as? Double { return Int(exactly: number) }
        return nil
    }
}

/// Samples this process's resident memory (and another's, when given) on a thread of its own.
final class MemorySampler: @unchecked Sendable {
    // Safety: `samples` is written by the sampling thread until `stop()` joins it.
    struct Sample: Sendable {
        /// Wall-clock seconds since the start.
        var seconds: Double
        /// Samples sent by then (the run's progress).
        var progress: Int
        var bytes: Int
        var otherBytes: Int?
    }

    private let interval: Double
    private let progress: @Sendable () -> Int
    private let otherProcess: Int32?
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private var samples: [Sample] = []

    init(interval: Double, progress: @escaping @Sendable () -> Int, otherProcess: Int32?) {
        self.interval = interval
        self.progress = progress
        self.otherProcess = otherProcess
        samples.reserveCapacity(1 << 16)
    }

    func start() {
        let start = ContinuousClock.now
        Thread.detachNewThread { [self] in
            repeat {
                if let bytes = ResidentMemory.bytes(), samples.count < samples.capacity {
                    samples.append(Sample(seconds: (ContinuousClock.now - start).seconds, progress: progress(), bytes: bytes,
                                          otherBytes: otherProcess.flatMap { ResidentMemory.bytes(of: $0) }))
                }
                usleep(UInt32(interval * 1_000_000))
            } while !stopping.load(ordering: .acquiring)
            done.signal()
        }
    }

    func stop() -> [Sample] {
        stopping.store(true, ordering: .releasing)
        done.wait()
        return samples
    }
}

/// What a load run measured, and every check it failed.
public struct LoadReport: Sendable {
    public let runtime: LoadRun.Runtime
    public let audioSeconds: Double
    public let wallSeconds: Double
    /// Speech bursts in the generated audio.
    public let bursts: Int
    /// The input file's samples, as generated.
    public let generated: AudioTally
    /// Frames and samples the driver sent as `audio.chunk`.
    public let framesSent: Int
    public let samplesSent: Int
    /// The client's audio as the runtime read it; nil when the runtime did not say.
    public let runtimeReceived: AudioTally?
    /// Reply audio the runtime sent; nil when it did not say.
    public let runtimeSent: AudioTally?
    /// Reply audio the client received (handed to its output).
    public let clientReceived: AudioTally
    /// Reply frames the player wrote, and dropped by cuts.
    public let framesPlayed: Int
    public let framesCut: Int
    /// Cuts the output was asked for.
    public let cuts: Int
    public let interruptionsSent: Int?
    /// Interruptions that cut the client's playback.
    public let interruptionsApplied: Int
    public let clientTurns: Int
    public let runtimeTurns: Int?
    public let counters: SessionCounters
    /// Memory samples (this process, and the server's for the WebSocket runtime).
    let memory: [MemorySampler.Sample]
    let warmUpFraction: Double
    let memoryGrowthLimit: Int
    /// Problems the run had beyond the checks (the session's end, the server's output).
    public let problems: [String]

    /// This process's memory at the end of warm-up (the first sample past it).
    public var memoryAtWarmUp: Int? { warmUpSample?.bytes }
    /// This process's memory at the last sample.
    public var memoryAtEnd: Int? { memory.last?.bytes }
    /// The most this process's memory rose above its warm-up figure afterwards.
    public var memoryGrowth: Int? {
        guard let base = warmUpSample, let index = memory.firstIndex(where: { $0.seconds >= base.seconds }) else { return nil }
        return memory[index...].map(\.bytes).max().map { $0 - base.bytes }
    }
    /// The same for the runtime server's process.
    public var serverMemoryAtWarmUp: Int? { warmUpSample?.otherBytes }
    public var serverMemoryAtEnd: Int? { memory.last(where: { $0.otherBytes != nil })?.otherBytes }
    public var memorySamples: Int { memory.count }

    /// This process's resident memory after each fifth of the audio.
    public var memoryProfile: String {
        (1...5).compactMap { fifth -> String? in
            let threshold = generated.samples * fifth / 5
            guard let sample = memory.first(where: { $0.progress >= threshold }) ?? (fifth == 5 ? memory.last : nil) else { return nil }
            return "\(fifth * 20)%: \(Self.megabytes(sample.bytes))"
        }.joined(separator: ", ")
    }

    private var warmUpSample: MemorySampler.Sample? {
        let threshold = Int(Double(generated.samples) * warmUpFraction)
        return memory.first { $0.progress >= threshold }
    }

    /// Every check that failed, in a sentence each; empty when the run passed.
    public var failures: [String] {
        var failures = problems
        if samplesSent != generated.samples { failures.append("the client sent \(samplesSent) samples of the \(generated.samples) generated") }
        if counters.framesDropped != 0 || counters.framesNotLive != 0 {
            failures.append("\(counters.framesDropped) frames dropped, \(counters.framesNotLive) captured while not live")
        }
        if let received = runtimeReceived {
            if received.samples != generated.samples || received.crc32 != generated.crc32 {
                failures.append("the runtime received \(received), the client's file was \(generated)")
            }
            if received.chunks != framesSent { failures.append("the runtime received \(received.chunks) chunks; the client sent \(framesSent)") }
        } else {
            failures.append("the runtime reported no received audio")
        }
        if let sent = runtimeSent {
            if sent != clientReceived { failures.append("the runtime sent \(sent), the client received \(clientReceived)") }
        } else {
            failures.append("the runtime reported no sent audio")
        }
        if framesPlayed + framesCut != clientReceived.samples {
            failures.append("the player wrote \(framesPlayed) frames and cut \(framesCut), of \(clientReceived.samples) received")
        }
        if let sent = interruptionsSent {
            if sent == 0 { failures.append("the runtime never interrupted a reply") }
            if interruptionsApplied + (counters.ignoredByKind.filter { $0.key.hasPrefix("interruption") }.values.reduce(0, +)) != sent {
                failures.append("the runtime sent \(sent) interruptions; the client applied \(interruptionsApplied)")
            }
        }
        if clientTurns < max(1, bursts / 2) { failures.append("only \(clientTurns) turns for \(bursts) bursts") }
        if let growth = memoryGrowth {
            // Under AddressSanitizer freed memory waits in its quarantine: growth measures that.
            if growth >= memoryGrowthLimit, vp_built_with_address_sanitizer() == 0 { failures.append("memory grew \(Self.megabytes(growth)) after warm-up (limit \(Self.megabytes(memoryGrowthLimit)))") }
        } else {
            failures.append("no memory samples after warm-up")
        }
        return failures
    }

    static func megabytes(_ bytes: Int) -> String {
        String(format: "%.1f MB", Double(bytes) / 1_048_576)
    }

    /// The figures, one per line.
    public var summary: String {
        func mb(_ bytes: Int?) -> String { bytes.map(Self.megabytes) ?? "?" }
        return """
        runtime: \(runtime.rawValue)
        audio: \(String(format: "%.1f", audioSeconds)) s in \(bursts) bursts; wall time \(String(format: "%.1f", wallSeconds)) s (\(String(format: "%.0f", audioSeconds / max(wallSeconds, 0.001)))× real time)
        client file:      \(generated)
        client sent:      \(framesSent) frames, \(samplesSent) samples
        runtime received: \(runtimeReceived.map { "\($0)" } ?? "?")
        runtime sent:     \(runtimeSent.map { "\($0)" } ?? "?")
        client received:  \(clientReceived)
        player: \(framesPlayed) frames written, \(framesCut) cut by \(cuts) cuts
        turns: client \(clientTurns), runtime \(runtimeTurns.map(String.init) ?? "?"); interruptions sent \(interruptionsSent.map(String.init) ?? "?"), applied \(interruptionsApplied)
        memory (this process): \(mb(memoryAtWarmUp)) after warm-up, \(mb(memoryAtEnd)) at the end, growth after warm-up \(mb(memoryGrowth)) (\(memorySamples) samples)\(vp_built_with_address_sanitizer() == 0 ? "" : "; not judged: built with AddressSanitizer, whose quarantine keeps freed memory")
        memory by progress: \(memoryProfile)
        """ + (runtime == .webSocket ? "\nmemory (runtime server): \(mb(serverMemoryAtWarmUp)) after warm-up, \(mb(serverMemoryAtEnd)) at the end" : "")
            + "\nresult: " + (failures.isEmpty ? "passed" : "FAILED\n  " + failures.joined(separator: "\n  "))
    }
}
