import Foundation
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeSession
import VoicePipeTestSupport

/// The async session: `run()` awaited from a task, its events as a sequence, cancellation and a
/// runtime's `error` as what `run()` throws. A manual clock and a scripted runtime end where the
/// test plays the runtime; the embedded runtime where a whole conversation is compared.
struct VoiceSessionTests {
    static func options(texts: [String] = []) -> SessionDriverOptions {
        SessionDriverOptions(session: SessionConfiguration(sessionId: "s-1", replyTimeout: .seconds(300)), initialTexts: texts)
    }

    /// What `run()` ended with, as a value a test can match.
    static func outcome(of session: VoiceSession) async -> Result<SessionReport, SessionError> {
        do {
            return .success(try await session.run())
        } catch {
            return .failure(error)
        }
    }

    /// The blocking driver on a thread of its own, its observer's events forwarded as a sequence
    /// that finishes when it returns: the reference the async session is held to.
    static func runBlocking(options: SessionDriverOptions, transport: any SessionTransport, clock: any SessionClock = MonotonicSessionClock())
        -> (updates: AsyncStream<SessionUpdate>, report: Task<SessionReport, Never>) {
        let (updates, continuation) = AsyncStream.makeStream(of: SessionUpdate.self)
        let driver = SessionDriver(options: options, transport: transport, clock: clock, capture: .none, output: DiscardedReplyOutput()) { event, instant in
            continuation.yield(SessionUpdate(event: event, instant: instant))
        }
        let report = Task {
            await withCheckedContinuation { (ended: CheckedContinuation<SessionReport, Never>) in
                Thread {
                    let report = driver.run()
                    continuation.finish()
                    ended.resume(returning: report)
                }.start()
            }
        }
        return (updates, report)
    }

    /// Reads `updates` until one matches; nil when the sequence finished first.
    static func next(_ updates: inout AsyncStream<SessionUpdate>.Iterator, where matches: (SessionEvent) -> Bool) async -> SessionUpdate? {
        while let update = await updates.next() {
            if matches(update.event) { return update }
        }
        return nil
    }

    /// Plays the runtime for a session typing "hello": once the turn waits for its reply and the
    /// driver is idle, the clock moves to 1 s and the runtime answers with a transcript line and
    /// ends the session. Returns every update the session gave, up to the end of its sequence.
    static func answerHello(_ updates: AsyncStream<SessionUpdate>, runtime: InMemoryTransport, clock: ManualSessionClock) async throws -> [SessionUpdate] {
        var seen: [SessionUpdate] = []
        for await update in updates {
            seen.append(update)
            if update.event.enteredState == .thinking {
                clock.settle()
                clock.advance(to: .seconds(1))
                try runtime.send(WireCodec.encode(.transcript(role: .assistant, text: "hi there", isFinal: true)))
                try runtime.send(WireCodec.encode(.sessionEnded(reason: "bye")))
            }
        }
        return seen
    }

    /// Everything the runtime end has been sent, decoded, in order.
    static func received(by runtime: InMemoryTransport) -> [WireMessage] {
        runtime.takeReceived().compactMap { event in
            guard case .message(let text) = event else { return nil }
            return try? WireCodec.decode(text).message
        }
    }

    /// A text-only session that types "hello", on a manual clock, and the runtime end of its transport.
    static func textSession() -> (VoiceSession, InMemoryTransport) {
        let (client, runtime) = InMemoryTransport.pair()
        let session = VoiceSession(options: options(texts: ["hello"]), transport: client, clock: ManualSessionClock(),
                                   capture: .none, output: DiscardedReplyOutput())
        return (session, runtime)
    }

    @Test func runFromAsyncCodeReturnsTheReportOfACleanSessionWithTheBlockingDriversTurnsAndTexts() async throws {
        let texts = ["what is my tyre pressure?", "is my battery ok?"]
        let runtime = EmbeddedRuntime(options: EmbeddedRuntimeOptions(pacing: .unpaced))
        let blocking = Self.runBlocking(options: Self.options(texts: texts), transport: runtime.connect())
        for await _ in blocking.updates {}
        let reference = await blocking.report.value

        let session = VoiceSession(options: Self.options(texts: texts), transport: runtime.connect(), capture: .none, output: DiscardedReplyOutput())
        let outcome = await Self.outcome(of: session)
        let report = try outcome.get()

        #expect(reference.endedCleanly)
        #expect(report.endedCleanly)
        #expect(report.machine.state == .disconnected)
        #expect(report.machine.turns.count == 2)
        #expect(report.machine.turns.count == reference.machine.turns.count)
        let lines = report.machine.transcript.map { "\($0.role.rawValue): \($0.text)" }
        #expect(lines == reference.machine.transcript.map { "\($0.role.rawValue): \($0.text)" })
        #expect(lines.filter { $0.hasPrefix("assistant") } == texts.map { "assistant: You typed “\($0)”. Here is a short tone for it." })
    }

    @Test func eventsArriveInTheDriversOrderWithTheirInstantsAndEndWhenTheSessionEnds() async throws {
        let blockingClock = ManualSessionClock()
        let (blockingClient, blockingRuntime) = InMemoryTransport.pair()
        let blocking = Self.runBlocking(options: Self.options(texts: ["hello"]), transport: blockingClient, clock: blockingClock)
        let reference = try await Self.answerHello(blocking.updates, runtime: blockingRuntime, clock: blockingClock)
        _ = await blocking.report.value

        let clock = ManualSessionClock()
        let (client, runtime) = InMemoryTransport.pair()
        let session = VoiceSession(options: Self.options(texts: ["hello"]), transport: client, clock: clock, capture: .none, output: DiscardedReplyOutput())
        async let seen = Self.answerHello(session.events, runtime: runtime, clock: clock)
        let report = try await Self.outcome(of: session).get()
        // The sequence finished: reading it to its end returned.
        let updates = try await seen

        #expect(updates.map { "\($0.instant) \($0.event)" } == reference.map { "\($0.instant) \($0.event)" })
        #expect(updates.compactMap(\.event.enteredState) == [.connecting, .ready, .thinking, .disconnected])
        #expect(updates.compactMap(\.event.stateChange).map { "\($0.from) → \($0.to)" }
            == ["disconnected → connecting", "connecting → ready", "ready → thinking", "thinking → disconnected"])
        let line = try #require(updates.first { $0.event.transcriptLine != nil })
        #expect(line.instant == .seconds(1))
        #expect(line.event.transcriptLine == report.machine.transcript.first)
        #expect(line.event.transcriptLine?.text == "hi there")
        guard case .transport(.closed(let reason)) = updates.last?.event else {
            Issue.record("the last event is not the transport's closing")
            return
        }
        #expect(reason == .closedByClient)
        #expect(report.endedCleanly)
    }

    @Test func cancellingTheTaskThatAwaitsRunSendsSessionEndAndTheSessionEndsCleanly() async throws {
        let (session, runtime) = Self.textSession()
        var updates = session.events.makeAsyncIterator()
        let running = Task { await Self.outcome(of: session) }
        // Waiting for the reply to "hello" (its timer does not run on the manual clock).
        #expect(await Self.next(&updates) { if case .sent(.textInput) = $0 { true } else { false } } != nil)
        running.cancel()
        #expect(await Self.next(&updates) { if case .sent(.sessionEnd) = $0 { true } else { false } } != nil)
        try runtime.send(WireCodec.encode(.sessionEnded(reason: "bye")))

        guard case .failure(.cancelled(let report)) = await running.value else {
            Issue.record("run() did not throw SessionError.cancelled")
            return
        }
        #expect(Self.received(by: runtime) == [.sessionStart(sessionId: "s-1", context: [:]), .textInput(text: "hello"), .sessionEnd])
        #expect(report.machine.state == .disconnected)
        #expect(report.endedCleanly)
        #expect(report.closeReason == .closedByClient)
        #expect(SessionError.cancelled(report: report).description == "the session was cancelled: it sent session.end and stopped")
    }

    @Test func runInATaskCancelledBeforeItStartsAbandonsTheConnectionAndKeepsTheTypedText() async throws {
        let (session, runtime) = Self.textSession()
        let running = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await Self.outcome(of: session)
        }
        guard case .failure(.cancelled(let report)) = await running.value else {
            Issue.record("run() did not throw SessionError.cancelled")
            return
        }
        // Ended while connecting, as end() does then: nothing was sent, the text still waits.
        #expect(Self.received(by: runtime).isEmpty)
        #expect(report.machine.state == .disconnected)
        #expect(report.machine.pendingTexts.map(\.text) == ["hello"])
        var updates: [SessionEvent] = []
        for await update in session.events { updates.append(update.event) }
        #expect(updates.compactMap(\.enteredState) == [.connecting, .disconnected])
    }

    @Test func aRuntimeErrorMessageMakesRunThrowTheFailureWithTheReport() async throws {
        let (session, runtime) = Self.textSession()
        var updates = session.events.makeAsyncIterator()
        let running = Task { await Self.outcome(of: session) }
        #expect(await Self.next(&updates) { if case .sent(.textInput) = $0 { true } else { false } } != nil)
        try runtime.send(WireCodec.encode(.error(message: "the model is overloaded", code: "overloaded")))
        let entered = await Self.next(&updates) { $0.failure != nil }

        guard case .failure(.failed(let failure, let report)) = await running.value else {
            Issue.record("run() did not throw SessionError.failed")
            return
        }
        #expect(failure == .runtimeError(message: "the model is overloaded", code: "overloaded"))
        #expect(entered?.event.failure == failure)
        #expect(report.machine.state == .error(failure))
        #expect(report.failure == failure)
        #expect(!report.endedCleanly)
        #expect(SessionError.failed(failure, report: report).description
            == "the session failed: the runtime reported an error: the model is overloaded (code overloaded)")
        // A session runs once.
        guard case .failure(.alreadyRun) = await Self.outcome(of: session) else {
            Issue.record("a second run() did not throw SessionError.alreadyRun")
            return
        }
    }
}
