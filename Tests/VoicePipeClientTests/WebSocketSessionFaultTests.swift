import Foundation
import VoicePipeCore
import VoicePipeIO
import Testing
import VoicePipeClient
import VoicePipeSession
import VoicePipeTestSupport

/// Whole sessions (a ``SessionDriver`` on a ``WebSocketTransport``) against a runtime server told
/// to misbehave in one way: each fault ends the session in `error(transport)` with a sentence
/// naming it, leaves no thread or socket behind, and keeps the user's texts for a reconnect.
@Suite(.serialized) struct WebSocketSessionFaultTests {
    /// One fault: the server's switches, and words the session's failure must contain.
    struct Fault: Sendable, CustomTestStringConvertible {
        let switches: [String]
        let reason: String
        /// The transport opens before the fault (false: the handshake itself fails).
        var opens = true
        /// The switch fires only once the server has read the typed text (a `--…-after 2`). A
        /// fault right after the greeting may come before the transport wrote the text out.
        var firesAfterTheText = false

        var testDescription: String { switches.joined(separator: " ") }
    }

    static let faults: [Fault] = [
        Fault(switches: ["--drop-after", "2"], reason: "dropped without a close frame", firesAfterTheText: true),
        Fault(switches: ["--reset-after", "2"], reason: "dropped without a close frame", firesAfterTheText: true),
        Fault(switches: ["--cut-mid-message", "drop"], reason: "dropped without a close frame"),
        Fault(switches: ["--cut-mid-message", "close"], reason: "the runtime closed the connection (1000: cut mid-message)"),
        Fault(switches: ["--close-after", "2", "--close-code", "4001", "--close-reason", "go away"],
              reason: "the runtime closed the connection with code 4001: go away", firesAfterTheText: true),
        Fault(switches: ["--invalid-utf8"], reason: "the runtime sent a text message that is not UTF-8"),
        Fault(switches: ["--oversized-ping", "200"], reason: "Control frame asking for extended length is illegal"),
        Fault(switches: ["--stall-after", "2"], reason: "the runtime sent nothing, and did not answer a ping, for 2 s", firesAfterTheText: true),
        Fault(switches: ["--wrong-accept"], reason: "Accept hash wrong", opens: false),
    ]

    static let typedEarly = "typed while connecting"
    static let typedLate = "typed after the failure"

    @Test(arguments: faults)
    func aServerFaultEndsTheSessionInErrorWithoutLeaksAndKeepsTheTextsForAReconnect(fault: Fault) async throws {
        let server = try RuntimeServer(["--pace", "fast"] + fault.switches)
        defer { server.stop() }
        let transport = WebSocketTransport(WebSocketConfiguration(url: try WebSocketURL(parsing: server.url + "/ws"), readTimeout: 2))
        let options = SessionDriverOptions(session: SessionConfiguration(sessionId: "fault"), initialTexts: [Self.typedEarly])
        let driver = SessionDriver(options: options, transport: transport, capture: .none, output: DiscardedReplyOutput())
        let result = Guarded<SessionReport?>(nil)
        Thread { let report = driver.run(); result.withLock { $0 = report } }.start()
        // A bound that only catches a hang: every fault here ends the session within 2 s.
        #expect(await WebSocketTransportTests.eventually(within: .seconds(60)) { result.withLock { $0 != nil } })
        let report = try #require(result.withLock { $0 })

        // error(transport), in the transport's words.
        guard case .error(.transport(let detail)) = report.machine.state else {
            Issue.record("the session ended in \(report.machine.state), not error(transport)")
            return
        }
        #expect(detail.contains(fault.reason), "\(detail)")
        #expect(report.closeReason?.description.contains(fault.reason) == true, "\(String(describing: report.closeReason))")

        // The text typed while connecting: handed to the transport when the connection opened,
        // else still pending. A fault right after the greeting can come before the transport
        // wrote it: then it is pending again (and the server never read it). A switch that fires
        // after the server read it leaves it sent and received.
        let early = report.machine.pendingTexts.map(\.text)
        if !fault.opens || !early.isEmpty {
            #expect(early == [Self.typedEarly])
            #expect(!fault.firesAfterTheText, "the server read it before the fault")
        }
        let received = { server.events(named: "received").contains { $0["type"] as? String == "text.input" } }
        if fault.firesAfterTheText {
            // The server prints its events on a pipe the test reads on other threads: wait for it.
            #expect(await WebSocketTransportTests.eventually(within: .seconds(20), received))
        } else if !early.isEmpty {
            #expect(!received(), "a text the connection never wrote reached the server")
        }

        // Nothing left behind: the service thread has exited, its socket is closed.
        await WebSocketTransportTests.expectNothingLeft(by: transport, to: server)

        // A text typed now is queued, not lost; reconnecting sends session.start and then every
        // pending text, in the order typed, exactly once.
        var machine = report.machine
        let now = report.finishedAt
        _ = try machine.typed(Self.typedLate, at: now)
        let expected = early + [Self.typedLate]
        #expect(machine.pendingTexts.map(\.text) == expected)
        let connecting = machine.connect(at: now)
        #expect(connecting.contains(.openTransport))
        #expect(machine.pendingTexts.map(\.text) == expected)
        let opened = machine.transportOpened(at: now + .milliseconds(1))
        let sent = opened.compactMap { action -> String? in
            switch action {
            case .send(let message): message.type.rawValue
            case .sendText(let text): text.text
            default: nil
            }
        }
        #expect(sent == ["session.start"] + expected)
    }
    /// A text typed while the server has stopped reading waits in the transport's backlog behind
    /// audio; when the read timeout ends the connection it was never written, so it is pending
    /// again (its turn withdrawn) and goes out once, after session.start, on the next connection.
    @Test func aTextStillInTheBacklogWhenTheConnectionFailsIsKeptForTheReconnect() async throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("speech.wav")
        _ = try LoadAudio.write(path: input, seconds: 300, seed: 7)
        let reader = try AudioFileReader(path: input)
        let capture = try FileCaptureSource(reader: reader, converter: CaptureConverter(input: reader.format))
        let server = try RuntimeServer(["--pace", "fast", "--stall-after", "1", "--receive-buffer", "65536", "--quiet"])
        defer { server.stop() }
        // The read timeout is the one thing that ends this session, and the text must be typed
        // before it: 10 s leaves room for that on a starved machine. The stall limit
        // (captured audio that cannot go out, here from the moment the backlog fills) is raised
        // past it, so that the read timeout, not the stall, is what ends the session.
        let transport = WebSocketTransport(WebSocketConfiguration(url: try WebSocketURL(parsing: server.url + "/ws"), readTimeout: 10))
        let session = SessionConfiguration(sessionId: "stalled", stallLimit: .seconds(60))
        let driver = SessionDriver(options: SessionDriverOptions(session: session), transport: transport,
                                   capture: .file(capture, pacing: .asFastAsTaken), output: DiscardedReplyOutput())
        let result = Guarded<SessionReport?>(nil)
        Thread { let report = driver.run(); result.withLock { $0 = report } }.start()
        // The server stopped reading after session.start: the socket fills (its buffers at their
        // limits), then the backlog, which then never drains: half a second of it holding. Watched
        // on a thread of its own, which types as soon as it holds: a task waiting on the shared
        // cooperative pool can be resumed late enough for the read timeout to come first.
        let typed = Guarded<Bool?>(nil)
        Thread {
            var holdingSince: ContinuousClock.Instant?
            let held = waitUntil(limit: .seconds(30)) {
                guard result.withLock({ $0 == nil }) else { return true }
                guard transport.backlogBytes > 0 else {
                    holdingSince = nil
                    return false
                }
                let now = ContinuousClock.now
                let since = holdingSince ?? now
                holdingSince = since
                return now - since >= .milliseconds(500)
            }
            let running = held && result.withLock { $0 == nil }
            if running { driver.type(Self.typedLate) }
            typed.withLock { $0 = running }
        }.start()
        #expect(await WebSocketTransportTests.eventually(within: .seconds(60)) { result.withLock { $0 != nil } })
        #expect(await WebSocketTransportTests.eventually(within: .seconds(60)) { typed.withLock { $0 != nil } })
        try #require(typed.withLock { $0 } == true, "the backlog never held, or the session ended before the text was typed")
        let report = try #require(result.withLock { $0 })
        guard case .error(.transport(let detail)) = report.machine.state else {
            Issue.record("the session ended in \(report.machine.state), not error(transport)")
            return
        }
        #expect(detail.contains("the runtime sent nothing, and did not answer a ping, for 10 s"), "\(detail)")
        #expect(report.machine.pendingTexts.map(\.text) == [Self.typedLate])
        #expect(report.machine.counters.textsSent == 0)
        #expect(report.machine.turns.filter { $0.kind == .text }.map(\.wasWithdrawn) == [true])

        var machine = report.machine
        _ = machine.connect(at: report.finishedAt)
        let opened = machine.transportOpened(at: report.finishedAt + .milliseconds(1))
        let sent = opened.compactMap { action -> String? in
            switch action {
            case .send(let message): message.type.rawValue
            case .sendText(let text): text.text
            default: nil
            }
        }
        #expect(sent == ["session.start", Self.typedLate])
        await WebSocketTransportTests.expectNothingLeft(by: transport, to: server)
    }

    /// A message over the transport's limit (17 MiB, one frame) is the one fault that does not end
    /// the session: skipped unbuffered, noted as malformed, and the typed turn is still answered.
    @Test func aMessageOverTheLimitIsSkippedAndTheSessionStillEndsCleanly() async throws {
        let server = try RuntimeServer(["--pace", "fast", "--oversized", "\(17 << 20)"])
        defer { server.stop() }
        let transport = WebSocketTransport(WebSocketConfiguration(url: try WebSocketURL(parsing: server.url + "/ws")))
        let options = SessionDriverOptions(session: SessionConfiguration(sessionId: "fault"), initialTexts: [Self.typedEarly])
        let malformed = Guarded<[String]>([])
        let answered = Guarded(0)
        let driver = SessionDriver(options: options, transport: transport, capture: .none, output: DiscardedReplyOutput()) { event, _ in
            if case .malformed(let reason) = event { malformed.withLock { $0.append(reason) } }
            if case .note(.turnAnswered) = event { answered.withLock { $0 += 1 } }
        }
        let result = Guarded<SessionReport?>(nil)
        Thread { let report = driver.run(); result.withLock { $0 = report } }.start()
        #expect(await WebSocketTransportTests.eventually(within: .seconds(60)) { result.withLock { $0 != nil } })
        let report = try #require(result.withLock { $0 })
        #expect(report.endedCleanly, "\(report.machine.state)")
        #expect(malformed.withLock { $0 } == ["a message of \(17 << 20) bytes is over the \(16 << 20)-byte limit; it was skipped"])
        #expect(answered.withLock { $0 } == 1)
        #expect(report.machine.pendingTexts.isEmpty)
        await WebSocketTransportTests.expectNothingLeft(by: transport, to: server)
    }
}
