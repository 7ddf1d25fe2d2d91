import Dispatch
import Foundation
import Synchronization
import VoicePipeCore
import VoicePipeIO
import VoicePipeProtocols
import VoicePipeSession

/// A voice runtime inside the process: it serves the runtime end of an ``InMemoryTransport``
/// pair, speaking the protocol as a deployed runtime does, so a WAV file can go through a
/// whole voice session with nothing deployed (`voicepipe session`'s default) and tests can run
/// sessions end to end.
///
/// ```
///  client end ──▶ InMemoryTransport ──▶ receive handler (posts events) ──▶ SessionInbox ─┐
///                                                                                  ▼
///  client end ◀── InMemoryTransport ◀── send/close ◀── EmbeddedRuntimeCore ◀── serving thread
///                                                       (deadlines from the core, time from the clock)
/// ```
///
/// Each ``connect(backlogLimit:)`` starts one session: a thread that owns an
/// ``EmbeddedRuntimeCore`` and waits on a ``SessionInbox`` until the next input or the core's
/// next deadline on the ``SessionClock`` (the real one, or a manual one in tests, which wakes
/// the thread when it moves); or, with ``init(options:loop:)``, a session stepped on a
/// ``SessionLoop``'s thread with all the others. The session ends when either end closes.
public final class EmbeddedRuntime: Sendable {
    /// What every session this runtime serves is given.
    public let options: EmbeddedRuntimeOptions
    private let clock: any SessionClock
    private let connections = Guarded<[Connection]>([])
    /// Each session's counts, kept after it finished.
    private let trafficRecords = Guarded<[TrafficRecord]>([])
    private let running = DispatchGroup()
    /// Serves every session on its thread, when given (else each session gets a thread).
    private let loop: SessionLoop?

    /// The name its session threads get.
    private let sessionThreadName: String

    /// - Parameters:
    ///   - options: how the runtime listens, answers and (for tests) misbehaves.
    ///   - clock: where time comes from; the host's monotonic clock by default.
    ///   - threadName: each session thread's name, for profilers and thread clocks.
    public init(options: EmbeddedRuntimeOptions = EmbeddedRuntimeOptions(), clock: any SessionClock = MonotonicSessionClock(),
                threadName: String = EmbeddedRuntime.threadName) {
        self.options = options
        self.clock = clock
        loop = nil
        sessionThreadName = threadName
    }

    /// A runtime that serves all its sessions on `loop`'s thread, on the loop's clock, instead
    /// of a thread each: hundreds of sessions without hundreds of threads waking for every
    /// frame. Its replies are paced to within the loop's coalescing time. Once the loop is
    /// closed, new sessions get a thread of their own.
    public init(options: EmbeddedRuntimeOptions = EmbeddedRuntimeOptions(), loop: SessionLoop) {
        self.options = options
        self.clock = loop.clock
        self.loop = loop
        sessionThreadName = Self.threadName
    }

    /// Starts serving a new session and returns the client's end of its transport; the client
    /// opens it, sends `session.start`, and so on. The runtime serves the other end until one
    /// of them closes.
    /// - Parameter backlogLimit: bytes each direction holds unread before `send` refuses.
    public func connect(backlogLimit: Int = 4 << 20) -> InMemoryTransport {
        let (client, runtimeEnd) = InMemoryTransport.pair(backlogLimit: backlogLimit)
        let connection = Connection(transport: runtimeEnd, clock: clock, options: options)
        connections.withLock { connections in
            connections.removeAll(where: \.isFinished)
            connections.append(connection)
        }
        trafficRecords.withLock { $0.append(connection.traffic) }
        running.enter()
        let (running, threadName) = (running, sessionThreadName)
        runtimeEnd.receive { event in connection.inbox.post(.event(event)) }
        if let loop {
            do {
                try loop.add(step: { limit in
                    let step = connection.step(inputLimit: limit)
                    if case .finished = step { running.leave() }
                    return step
                }, tellInputs: connection.inbox.tellPosts)
                return client
            } catch {
                // A closed loop: the session gets a thread of its own, as without one.
            }
        }
        Thread.detachNewThread {
            // Named for whoever reads this process's threads (a profiler, the scale benchmark).
            nameCurrentThread(threadName)
            connection.serve()
            running.leave()
        }
        return client
    }

    /// The name of each thread that serves a session.
    public static let threadName = "vp-runtime"

    /// Ends every session: each runtime end closes (the client sees it closed by the runtime)
    /// and its thread stops. The way to end a runtime that stalled on purpose, which no longer
    /// reads the transport and so never sees the client close.
    public func stop() {
        for connection in connections.withLock({ $0 }) { connection.stop() }
    }

    /// What each session started so far received and sent, in the order they were started: the
    /// client's audio as the runtime read it, the reply audio the transport accepted, the
    /// interruptions sent and the turns. Up to date after each event the runtime handled.
    public var traffic: [EmbeddedRuntimeTraffic] {
        trafficRecords.withLock { $0 }.map { $0.counts.withLock { $0 } }
    }

    /// True when every session started so far has finished.
    public var isFinished: Bool {
        connections.withLock { $0 }.allSatisfy(\.isFinished)
    }

    /// Waits, without blocking a thread, until every session started so far has finished.
    /// - Returns: false when `timeout` passed first.
    public func waitUntilFinished(timeout: Duration) async -> Bool {
        let once = ResumeOnce()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            once.set(continuation)
            running.notify(queue: .global()) { once.resume(returning: true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.dispatchInterval(timeout)) { once.resume(returning: false) }
        }
    }

    /// Blocks the calling thread until every session started so far has finished. For a thread
    /// of the caller's own: in async code use ``waitUntilFinished(timeout:)``, which does not
    /// hold a Swift concurrency thread.
    /// - Returns: false when `timeout` passed first.
    public func blockUntilFinished(timeout: Duration) -> Bool {
        running.wait(timeout: .now() + Self.dispatchInterval(timeout)) == .success
    }

    private static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let parts = duration.components
        let nanoseconds = parts.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow, parts.seconds >= 0 else { return parts.seconds < 0 ? .nanoseconds(0) : .never }
        return .nanoseconds(Int(nanoseconds.partialValue + parts.attoseconds / 1_000_000_000))
    }
}

/// One served session: the runtime end, its inbox, and the serving loop.
private final class Connection: @unchecked Sendable {
    // Safety: `core`, `receivingPaused` and `stalledOnPurpose` are used only by the one thread
    // that steps the session at a time (its own, or a loop's); the rest is immutable or synchronised.
    enum Input: Sendable {
        case event(TransportEvent)
        case stop
    }

    /// Most actions carried out before the inbox is looked at again, so an unpaced reply going
    /// out in one burst still lets the client's audio (and an interruption) in.
    static let actionsPerTurnOfTheLoop = 64
    /// Client events waiting in the inbox above which the runtime stops taking more from the
    /// transport (they wait there and count against the client's backlog, so a client sending as
    /// fast as it is taken slows down), and at or below which it takes them again.
    static let inboxHighWater = 256
    static let inboxLowWater = 64

    let transport: InMemoryTransport
    let clock: any SessionClock
    let inbox: SessionInbox<Input>
    let finished = Atomic<Bool>(false)
    let traffic = TrafficRecord()
    private var core: EmbeddedRuntimeCore
    /// Flow control, decided by the serving thread alone: paused while the inbox is above the
    /// high water, resumed at the low water. Without it a client faster than the runtime would
    /// queue its whole input here.
    private var receivingPaused = false
    private var stalledOnPurpose = false

    init(transport: InMemoryTransport, clock: any SessionClock, options: EmbeddedRuntimeOptions) {
        self.transport = transport
        self.clock = clock
        inbox = SessionInbox(clock: clock)
        core = EmbeddedRuntimeCore(options: options)
    }

    var isFinished: Bool { finished.load(ordering: .acquiring) }

    func stop() {
        inbox.post(.stop)
    }

    /// Counts a message the transport took, when it is reply audio or an interruption.
    private func count(sent message: WireMessage) {
        switch message {
        case .audioChunk(let chunk): traffic.counts.withLock { $0.audioSent.add(chunk.samples) }
        case .interruption: traffic.counts.withLock { $0.interruptionsSent += 1 }
        default: break
        }
    }

    /// Serves the session on the calling thread until it ends.
    func serve() {
        while true {
            switch step(inputLimit: .max) {
            case .finished: return
            case .waitUntil(let deadline): inbox.waitForInput(until: deadline)
            }
        }
    }

    /// Carries out what is due, then takes what waits in the inbox, up to `inputLimit` inputs,
    /// never blocking: the caller waits as the result says (``serve()`` on a thread of its own,
    /// or a ``SessionLoop`` serving many sessions).
    func step(inputLimit: Int) -> LoopStep {
        var handled = 0
        serving: while !core.isFinished {
            let waiting = inbox.count
            if !receivingPaused, !stalledOnPurpose, waiting > Self.inboxHighWater {
                receivingPaused = true
                transport.pauseReceiving()
            } else if receivingPaused, !stalledOnPurpose, waiting <= Self.inboxLowWater {
                receivingPaused = false
                transport.resumeReceiving()
            }
            var carriedOut = 0
            while carriedOut < Self.actionsPerTurnOfTheLoop, let action = core.nextAction(at: clock.now) {
                carriedOut += 1
                switch action {
                case .send(let message):
                    do {
                        try transport.send(WireCodec.encode(message))
                        count(sent: message)
                    } catch {
                        switch error {
                        case .backlogFull, .notOpen:
                            core.sendRefused(at: clock.now)
                        case .closed(let reason):
                            core.receive(.closed(reason), at: clock.now)
                        }
                    }
                case .stopReading:
                    // What the client sends from now on waits unread and fills its backlog;
                    // only ``EmbeddedRuntime/stop()`` ends the session.
                    stalledOnPurpose = true
                    transport.pauseReceiving()
                case .close:
                    transport.close()
                }
                if core.isFinished { break serving }
            }
            // After a full burst, only look at the inbox; otherwise wait for the core's deadline.
            guard let input = inbox.poll() else {
                if carriedOut == Self.actionsPerTurnOfTheLoop { continue }
                if let deadline = core.nextDeadline, deadline <= clock.now { continue }
                return .waitUntil(core.nextDeadline)
            }
            switch input {
            case .event(let event):
                core.receive(event, at: clock.now)
                let (audio, turns, sessionId, held) = (core.audioReceived, core.turns, core.sessionId, core.turnAudioHeldBytes)
                traffic.counts.withLock { $0.audioReceived = audio; $0.turns = turns; $0.sessionId = sessionId; $0.audioHeldBytes = held }
            case .stop:
                transport.close()
                break serving
            }
            handled += 1
            if handled >= inputLimit { return .waitUntil(clock.now) }
        }
        finished.store(true, ordering: .releasing)
        inbox.retire()
        // Events held back while paused (the close among them) go to the retired inbox, after
        // which the transport lets go of its handler, and with it of this connection.
        transport.resumeReceiving()
        return .finished
    }
}

/// What one embedded runtime session received and sent, counted as it passed.
public struct EmbeddedRuntimeTraffic: Sendable, Hashable {
    /// The session's id from its `session.start` (nil before it came): which session, among
    /// many served at once, these counts are of.
    public var sessionId: String?
    /// The client's `audio.chunk`s as the runtime read them (decoded, in order).
    public var audioReceived = AudioTally()
    /// The reply `audio.chunk`s the transport took, in order (a refused one is counted when it goes).
    public var audioSent = AudioTally()
    /// `interruption` messages the transport took.
    public var interruptionsSent = 0
    /// Turns ended, voice and typed.
    public var turns = 0
    /// Bytes of the client's audio held for the turn in progress, as of the last event.
    public var audioHeldBytes = 0

    public init() {}
}

/// One session's traffic, shared between its serving thread and the runtime.
private final class TrafficRecord: Sendable {
    let counts = Guarded(EmbeddedRuntimeTraffic())
}

/// Resumes a continuation exactly once, whichever of several callbacks comes first.
private final class ResumeOnce: Sendable {
    private let continuation = Guarded<CheckedContinuation<Bool, Never>?>(nil)

    func set(_ continuation: CheckedContinuation<Bool, Never>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(returning value: Bool) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}
