import Foundation
import Synchronization
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// Many real-time sessions in one process against one in-process runtime, as a team testing its
/// runtime on a corpus runs them: how late their frames go out, what each costs in CPU and
/// memory, and whether any frame is lost.
///
/// ```
///  one WAV ─▶ N × (FileCaptureSource ─▶ SessionDriver, real-time pace, a thread each "vp-scale-client")
///                                          │ InMemoryTransport                  (or all on SessionLoops)
///                                          ▼
///              EmbeddedRuntime (paced replies, a thread per session "vp-runtime") (or all on one loop)
/// ```
///
/// Each session's frames are due at their audio time (the session's capture start plus the
/// frames before them); a frame's lateness is from then to when the transport took it. CPU is
/// read per thread from `/proc/self/task` over a steady window in which every session runs (all
/// started, none ended), client threads and runtime threads apart; memory is the resident set
/// in that window against before the first session started.
public struct SessionScaleRun: Sendable {
    /// What every session sends.
    public enum Input: String, Sendable {
        /// Speech-like bursts and pauses (``LoadAudio``): turns, replies, interruptions.
        case speech
        /// Quiet room noise: a connected user who says nothing (no turn, no reply).
        case idle
    }

    /// How the client's sessions get a thread.
    public enum Threading: Sendable, Hashable, CustomStringConvertible {
        /// Each session's driver runs on a thread of its own (``SessionDriver/run()``), and so
        /// does each session the runtime serves.
        case threadPerSession
        /// The client's sessions are shared round robin among this many ``SessionLoop``s, a
        /// thread each; the runtime serves its sessions on one loop of its own.
        case loops(Int)

        public var description: String {
            switch self {
            case .threadPerSession: "a thread per session"
            case .loops(let count): count == 1 ? "one session loop" : "\(count) session loops"
            }
        }
    }

    public var sessions: Int
    /// Audio each session sends, in seconds.
    public var seconds: Double
    /// Between one session's start and the next.
    public var stagger: Duration
    public var input: Input
    public var threading: Threading
    /// Where the input file goes (deleted afterwards).
    public var directory: String = NSTemporaryDirectory()

    public init(sessions: Int, seconds: Double, stagger: Duration = .milliseconds(4), input: Input = .speech,
                threading: Threading = .threadPerSession) {
        self.threading = threading
        self.sessions = sessions
        self.seconds = seconds
        self.stagger = stagger
        self.input = input
    }

    /// The name of each client thread (a session's, or a loop's).
    public static let clientThreadName = "vp-scale-client"
    /// The name of each thread of the run's runtime (a session's, or its loop's): its own, so
    /// that other runtimes in the process (other tests') are not counted.
    public static let runtimeThreadName = "vp-scale-rt"

    /// Runs the sessions to their end; throws only when the run cannot be set up.
    /// - Throws: ``SessionScaleError`` for no session or no audio; file errors for the input.
    public func run() throws -> SessionScaleReport {
        guard sessions >= 1, seconds > 0, stagger >= .zero else { throw SessionScaleError.nothingToRun(sessions: sessions, seconds: seconds) }
        if case .loops(let count) = threading, count < 1 { throw SessionScaleError.noLoop }
        let path = "\(directory)/voicepipe-scale-\(getpid())-\(input.rawValue).wav"
        defer { unlink(path) }
        switch input {
        case .speech: _ = try LoadAudio.write(path: path, seconds: seconds)
        case .idle: try Self.writeRoomNoise(path: path, seconds: seconds)
        }
        let runtimeLoop: SessionLoop? = if case .loops = threading { SessionLoop(threadName: Self.runtimeThreadName) } else { nil }
        defer { runtimeLoop?.close() }
        // Idle sessions never start a turn: the runtime lets go of their room noise after a second
        // (instead of holding up to 300 s of it), so that the memory measured is the sessions'.
        let options = input == .idle ? EmbeddedRuntimeOptions(maxTurnAudio: .seconds(1)) : EmbeddedRuntimeOptions()
        let runtime = runtimeLoop.map { EmbeddedRuntime(options: options, loop: $0) } ?? EmbeddedRuntime(options: options, threadName: Self.runtimeThreadName)
        let residentBefore = ResidentMemory.bytes() ?? 0
        let records = (0..<sessions).map { _ in SessionRecord() }
        let running = DispatchGroup()
        let loops: [SessionLoop]
        if case .loops(let count) = threading {
            let clock = MonotonicSessionClock()
            loops = (0..<count).map { _ in SessionLoop(clock: clock, threadName: Self.clientThreadName) }
        } else {
            loops = []
        }
        defer { for loop in loops { loop.close() } }
        let firstStart = ContinuousClock.now
        var drivers: [SessionDriver] = []
        for (index, record) in records.enumerated() {
            let reader = try AudioFileReader(path: path)
            let capture = try FileCaptureSource(reader: reader, converter: CaptureConverter(input: reader.format))
            let loop = loops.isEmpty ? nil : loops[index % loops.count]
            let driver = SessionDriver(options: SessionDriverOptions(session: SessionConfiguration(sessionId: "scale-\(UUID().uuidString)")),
                                       transport: runtime.connect(), clock: loop?.clock ?? MonotonicSessionClock(),
                                       capture: .file(capture, pacing: .realTime),
                                       output: DiscardedReplyOutput()) { event, instant in record.observe(event, at: instant) }
            drivers.append(driver)
            running.enter()
            if let loop {
                try loop.add(driver) { report in
                    record.finish(report)
                    running.leave()
                }
            } else {
                Thread.detachNewThread {
                    nameCurrentThread(Self.clientThreadName)
                    record.finish(driver.run())
                    running.leave()
                }
            }
            Thread.sleep(forTimeInterval: stagger.seconds)
        }
        // The steady window: every session has started and none has reached the end of its audio.
        let lastStart = ContinuousClock.now
        let windowStart = lastStart + .milliseconds(500)
        let windowEnd = firstStart + .seconds(seconds) - .milliseconds(500)
        var window: (cpu: [String: Double], resident: Int, held: Int, seconds: Double)?
        if windowEnd > windowStart + .milliseconds(500) {
            Thread.sleep(until: Date(timeIntervalSinceNow: (windowStart - .now).seconds))
            let before = ThreadCPU.byThread()
            let opened = ContinuousClock.now
            Thread.sleep(until: Date(timeIntervalSinceNow: (windowEnd - .now).seconds))
            let after = ThreadCPU.byThread()
            let resident = ResidentMemory.bytes() ?? 0
            let length = (ContinuousClock.now - opened).seconds
            // The audio held then: each client's kept for resending, the runtime's turns in progress.
            let clientHeld = drivers.reduce(0) { $0 + $1.snapshot.samplesKeptForResending * MemoryLayout<Int16>.size }
            let runtimeHeld = runtime.traffic.reduce(0) { $0 + $1.audioHeldBytes }
            window = (ThreadCPU.spent(from: before, to: after), resident, clientHeld + runtimeHeld, length)
        }
        running.wait()
        _ = runtime.blockUntilFinished(timeout: .seconds(30))
        return SessionScaleReport(sessions: sessions, seconds: seconds, input: input, threading: threading, records: records.map { $0.snapshot },
                                  windowSeconds: window?.seconds, clientCPUSeconds: window?.cpu[Self.clientThreadName],
                                  runtimeCPUSeconds: window?.cpu[Self.runtimeThreadName],
                                  residentBefore: residentBefore, residentInWindow: window?.resident, heldAudioInWindow: window?.held)
    }

    /// Room noise around −66 dBFS, below the voice gate: a microphone in a quiet room.
    static func writeRoomNoise(path: String, seconds: Double) throws {
        let writer = try AudioFileWriter(path: path, sampleRate: .capture, channelCount: 1, encoding: .int16)
        var random = SplitMix64(seed: 7)
        let samples = (0..<Int(seconds * SampleRate.capture.hertz)).map { _ in Int16(random.uniform(-16, 16).rounded()) }
        try samples.withUnsafeBufferPointer { try writer.write($0) }
        try writer.close()
    }

    /// One session's figures, written on its driver's thread, read when it has finished.
    final class SessionRecord: @unchecked Sendable {
        // Safety: `observe` runs on the thread that runs the session only; `finish` on the same thread
        // after it; `snapshot` is read after the run's DispatchGroup says that thread is done.
        private var lateness: [Duration] = []
        private var pendingDue: SessionInstant?
        private var outcome: (sent: Int, dropped: Int, failure: String?) = (0, 0, nil)

        init() { lateness.reserveCapacity(1_024) }

        func observe(_ event: SessionEvent, at instant: SessionInstant) {
            switch event {
            case .fileFrameTaken(let due):
                pendingDue = due
            case .frameSent:
                if let due = pendingDue { lateness.append(max(instant - due, .zero)) }
                pendingDue = nil
            default:
                break
            }
        }

        func finish(_ report: SessionReport) {
            let counters = report.machine.counters
            var failure: String?
            if case .error(let reason) = report.machine.state { failure = reason.description }
            outcome = (counters.framesSent, counters.framesDropped + counters.framesNotLive, failure)
        }

        var snapshot: SessionScaleReport.Session {
            SessionScaleReport.Session(lateness: lateness, framesSent: outcome.sent, framesLost: outcome.dropped, failure: outcome.failure)
        }
    }
}

/// A scale run that cannot start.
public enum SessionScaleError: Error, CustomStringConvertible {
    case nothingToRun(sessions: Int, seconds: Double)
    case noLoop

    public var description: String {
        switch self {
        case .nothingToRun(let sessions, let seconds):
            "a scale run needs at least one session, some audio and a stagger of zero or more (\(sessions) sessions of \(seconds) s)"
        case .noLoop:
            "sessions shared among loops need at least one loop"
        }
    }
}

/// What a ``SessionScaleRun`` measured.
public struct SessionScaleReport: Sendable {
    public struct Session: Sendable {
        /// Each sent frame's lateness against its audio time, in order.
        public let lateness: [Duration]
        public let framesSent: Int
        /// Frames dropped or captured while the session was not live.
        public let framesLost: Int
        /// Why the session failed, when it did.
        public let failure: String?
    }

    public let sessions: Int
    public let seconds: Double
    public let input: SessionScaleRun.Input
    public let threading: SessionScaleRun.Threading
    public let records: [Session]
    /// The steady window's length and the CPU each kind of thread used in it (nil: the run was
    /// too short for a window in which every session ran).
    public let windowSeconds: Double?
    public let clientCPUSeconds: Double?
    public let runtimeCPUSeconds: Double?
    public let residentBefore: Int
    public let residentInWindow: Int?
    /// Bytes of audio held at the window's end: what the clients keep to send again after a
    /// drop (up to the reconnection hold limit) and the runtime's turns in progress.
    public let heldAudioInWindow: Int?

    /// Frames every session sent, and lost.
    public var framesSent: Int { records.reduce(0) { $0 + $1.framesSent } }
    public var framesLost: Int { records.reduce(0) { $0 + $1.framesLost } }
    public var failures: [String] { records.compactMap(\.failure) }

    /// Every frame's lateness, sorted.
    public var allLateness: [Duration] { records.flatMap(\.lateness).sorted() }

    /// The lateness at quantile `q` (nearest rank), or nil for no frame.
    public func lateness(atQuantile q: Double) -> Duration? {
        let sorted = allLateness
        guard !sorted.isEmpty else { return nil }
        return sorted[min(sorted.count - 1, max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))]
    }

    /// Client (driver) CPU per second of one session's audio, in seconds, over the window.
    public var clientCPUPerSessionSecond: Double? {
        guard let cpu = clientCPUSeconds, let window = windowSeconds, window > 0 else { return nil }
        return cpu / (window * Double(sessions))
    }

    /// The embedded runtime's CPU per session-second, measured apart from the client's.
    public var runtimeCPUPerSessionSecond: Double? {
        guard let cpu = runtimeCPUSeconds, let window = windowSeconds, window > 0 else { return nil }
        return cpu / (window * Double(sessions))
    }

    /// Resident memory per running session (runtime included), in bytes.
    public var residentPerSession: Int? {
        residentInWindow.map { ($0 - residentBefore) / sessions }
    }

    /// Resident memory per session beyond the audio the sessions hold: what a session costs in itself.
    public var residentPerSessionBeyondHeldAudio: Int? {
        guard let residentInWindow, let heldAudioInWindow else { return nil }
        return (residentInWindow - residentBefore - heldAudioInWindow) / sessions
    }
}

/// CPU time of this process's threads, summed by thread name (Linux).
///
/// Each thread's own CPU clock, read with nanosecond precision: `/proc/self/task/*/stat` counts in
/// clock ticks, truncated per thread, so hundreds of threads using a few milliseconds each would
/// read as none. The clock of thread `tid` is the kernel's `(~tid << 3) | 6` (per thread,
/// scheduler time), the id glibc's `pthread_getcpuclockid` returns.
public enum ThreadCPU {
    /// Each thread alive now: its name and seconds of CPU, by thread id.
    public static func byThread() -> [Int32: (name: String, seconds: Double)] {
        var threads: [Int32: (name: String, seconds: Double)] = [:]
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return threads }
        for task in tasks {
            guard let tid = Int32(task),
                  let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8) else { continue }
            var time = timespec()
            guard clock_gettime(clockid_t((~tid) << 3 | 6), &time) == 0 else { continue }
            threads[tid] = (comm.trimmingCharacters(in: .newlines), Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
        }
        return threads
    }

    /// Seconds of CPU by thread name, for the threads alive now.
    public static func byName() -> [String: Double] {
        byThread().values.reduce(into: [:]) { $0[$1.name, default: 0] += $1.seconds }
    }

    /// CPU spent between two readings by name, over the threads alive at both (one that ended
    /// between them, another test's, cannot make a total go down).
    public static func spent(from before: [Int32: (name: String, seconds: Double)], to after: [Int32: (name: String, seconds: Double)]) -> [String: Double] {
        after.reduce(into: [:]) { totals, thread in
            guard let earlier = before[thread.key], earlier.name == thread.value.name else { return }
            totals[thread.value.name, default: 0] += thread.value.seconds - earlier.seconds
        }
    }
}
