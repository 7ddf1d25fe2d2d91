import Foundation
import Synchronization
import VoicePipeCore
import VoicePipeSession

/// One session event and the instant it happened on the session's clock: an element of
/// ``VoiceSession/events``.
public struct SessionUpdate: Sendable {
    public let event: SessionEvent
    public let instant: SessionInstant

    public init(event: SessionEvent, instant: SessionInstant) {
        self.event = event
        self.instant = instant
    }
}

/// Why ``VoiceSession/run()`` gave no report back as its result; each case but one carries the
/// report of what the session did.
public enum SessionError: Error, Sendable, CustomStringConvertible {
    /// The session ended in `error`: the failure (a timeout, the runtime's `error` message, a
    /// transport that failed) and the report up to it.
    case failed(SessionFailure, report: SessionReport)
    /// The task awaiting `run()` was cancelled, which ended the session as ``VoiceSession/end()``
    /// does; the report's state says whether the runtime confirmed the end.
    case cancelled(report: SessionReport)
    /// `run()` was called again: a session runs once, so make a new ``VoiceSession`` for another.
    case alreadyRun

    /// The report of the session that ended, when it ran.
    public var report: SessionReport? {
        switch self {
        case .failed(_, let report), .cancelled(let report): report
        case .alreadyRun: nil
        }
    }

    public var description: String {
        switch self {
        case .failed(let failure, _): "the session failed: \(failure)"
        case .cancelled: "the session was cancelled: it sent session.end and stopped"
        case .alreadyRun: "this session has already run; make a new VoiceSession to start another"
        }
    }
}

/// A voice session for async code: a ``SessionDriver`` run on a thread of its own, its events as
/// an `AsyncSequence`, its end as the result of `try await run()`.
///
/// ```swift
/// let session = VoiceSession(options: SessionDriverOptions(session: configuration), transport: runtime.connect(),
///                            capture: .none, output: DiscardedReplyOutput())
/// let timeline = Task {
///     for await update in session.events {
///         if let line = update.event.transcriptLine { print("\(line.role.rawValue): \(line.text)") }
///     }
/// }
/// do {
///     let report = try await session.run()     // cancelling this task ends the session cleanly
///     print("turns: \(report.machine.turns.count)")
/// } catch {
///     print(error)                             // SessionError: .failed, .cancelled, each with its report
/// }
/// await timeline.value                         // the events end when the session has ended
/// ```
///
/// ```
///  type, end, escalation ─────────▶ ┌────────────────────────────┐ ──▶ events (AsyncStream,
///  task cancelled ─▶ end ─────────▶ │ thread "voicepipe session" │     unbounded buffer)
///  try await run() ── suspended ──▶ │ SessionDriver.run()        │ ──▶ report: run() resumes
///                                   └────────────────────────────┘
/// ```
///
/// The driver blocks on its inbox until the session ends, so it runs on a thread of its own, never
/// on the cooperative pool. Events go through an unbounded buffer: the driver (which also carries out the audio)
/// never waits for a slow consumer and no event is lost. What a consumer has not read yet is held
/// in memory (a session nobody reads keeps all its events until it is freed), so read ``events``
/// while the session runs.
public final class VoiceSession: Sendable {
    /// Everything the session reports, in order, each with its instant; the sequence finishes
    /// once the session has ended. One consumer at a time.
    public let events: AsyncStream<SessionUpdate>
    private let continuation: AsyncStream<SessionUpdate>.Continuation
    private let driver: SessionDriver
    private let started = Atomic<Bool>(false)

    /// The same inputs as ``SessionDriver``'s; events go to ``events`` instead of an observer.
    /// - Parameters:
    ///   - transport: the first connection.
    ///   - connect: makes a fresh connection (signed anew) when the session rotates.
    ///   - clock: where time comes from: the host's monotonic clock, or a manual one in tests.
    public init(options: SessionDriverOptions, transport: any SessionTransport, connect: (@Sendable () throws -> any SessionTransport)? = nil,
                clock: any SessionClock = MonotonicSessionClock(), capture: SessionCapture, output: any ReplyOutput) {
        let (events, continuation) = AsyncStream.makeStream(of: SessionUpdate.self, bufferingPolicy: .unbounded)
        self.events = events
        self.continuation = continuation
        driver = SessionDriver(options: options, transport: transport, connect: connect, clock: clock, capture: capture, output: output) { event, instant in
            continuation.yield(SessionUpdate(event: event, instant: instant))
        }
    }

    /// The driver's figures.
    public var options: SessionDriverOptions { driver.options }

    /// The machine as of the last event: the source for a state line or a transcript view.
    public var snapshot: SessionMachine { driver.snapshot }

    /// Runs the session until it ends, on a thread of its own, and returns its report.
    ///
    /// Cancelling the task that awaits this ends the session as ``end()`` does: `session.end`,
    /// then the bounded wait for `session.ended`, then the transport closes.
    /// - Returns: the report of a session that ended cleanly (``SessionReport/endedCleanly``).
    /// - Throws: ``SessionError/failed(_:report:)`` when the session ended in `error` (a timeout,
    ///   the end wait's included, the runtime's `error`, a lost connection);
    ///   ``SessionError/cancelled(report:)`` when the awaiting task was cancelled (the report says
    ///   how the session then ended); ``SessionError/alreadyRun`` on a second call.
    public func run() async throws(SessionError) -> SessionReport {
        guard started.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { throw .alreadyRun }
        let (driver, events) = (self.driver, continuation)
        let report = await withTaskCancellationHandler {
            await withCheckedContinuation { (ended: CheckedContinuation<SessionReport, Never>) in
                let thread = Thread {
                    let report = driver.run()
                    events.finish()
                    ended.resume(returning: report)
                }
                thread.name = "voicepipe session"
                thread.start()
            }
        } onCancel: {
            driver.requestEnd()
        }
        if Task.isCancelled { throw .cancelled(report: report) }
        if let failure = report.failure { throw .failed(failure, report: report) }
        return report
    }

    /// The user typed `text` (queued while connecting, sent in order).
    public func type(_ text: String) { driver.type(text) }

    /// The user ends the session: `session.end`, then a bounded wait for `session.ended`; a second
    /// call stops waiting.
    public func end() { driver.requestEnd() }

    /// The user asks for a person.
    public func requestEscalation(reason: String) { driver.requestEscalation(reason: reason) }

    /// Marks the current (or next) turn as long-running.
    public func markTurnLongRunning() { driver.markTurnLongRunning() }
}
