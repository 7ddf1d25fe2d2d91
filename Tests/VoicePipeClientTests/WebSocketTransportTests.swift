import Foundation
import Glibc
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession
import VoicePipeTestSupport

/// The WebSocket transport against the runtime server of Samples/runtime-server on 127.0.0.1:
/// the wire both ways, TLS trust, and every misbehaviour the server can be told to show.
@Suite(.serialized) struct WebSocketTransportTests {
    static let sessionStart = #"{"type":"session.start","sessionId":"ws-test","context":{}}"#

    /// Opens a transport to `server` (path `/ws`), returning it and the events up to `.opened` or a close.
    static func open(_ server: RuntimeServer, configure: (inout WebSocketConfiguration) -> Void = { _ in }) async throws
        -> (WebSocketTransport, [TransportEvent]) {
        var configuration = WebSocketConfiguration(url: try WebSocketURL(parsing: server.url + "/ws"))
        configure(&configuration)
        let transport = WebSocketTransport(configuration)
        transport.open()
        let events = await TransportTesting.events(of: transport, within: 30) { $0 == .opened || TransportTesting.isClosed($0) }
        return (transport, events)
    }

    static func closeReason(of transport: WebSocketTransport) async -> TransportCloseReason? {
        TransportTesting.closeReason(await TransportTesting.events(of: transport, within: 30))
    }

    /// Checks that `transport`, which has ended, left nothing behind: its service thread (found by
    /// its name) has exited and no socket of this process is still connected to `server`, within a
    /// bound that only catches a leak, not a slow exit. The process-wide totals are shown beside.
    static func expectNothingLeft(by transport: WebSocketTransport, to server: RuntimeServer,
                                  sourceLocation: SourceLocation = #_sourceLocation) async {
        let name = transport.serviceThreadName
        let gone = await eventually(within: .seconds(20)) {
            ProcessResources.threads(named: name) == 0 && ProcessResources.tcpSockets(toPort: server.port) == 0
        }
        #expect(gone, "thread \(name): \(ProcessResources.threads(named: name)) left; sockets to port \(server.port): \(ProcessResources.tcpSockets(toPort: server.port)) left; process: \(ProcessResources.summary)",
                sourceLocation: sourceLocation)
    }

    /// A transport's events, each stamped when the transport handed it over, on its own thread
    /// (through ``SessionTransport/receive(_:)``): a test times the connection by these stamps,
    /// not by when its own task got to run again, which a busy cooperative pool can delay.
    final class StampedEvents: Sendable {
        private let stamped = Guarded<[(event: TransportEvent, at: ContinuousClock.Instant)]>([])

        /// Set before `transport.open()`: it then sees every event.
        init(_ transport: some SessionTransport) {
            transport.receive { [stamped] event in
                let now = ContinuousClock.now
                stamped.withLock { $0.append((event, now)) }
            }
        }

        /// The first event that `matches` and when it came, waiting for it (a bound that only
        /// catches a hang); nil if none came.
        func first(within limit: Duration = .seconds(30), where matches: (TransportEvent) -> Bool) async
            -> (event: TransportEvent, at: ContinuousClock.Instant)? {
            func find() -> (event: TransportEvent, at: ContinuousClock.Instant)? {
                stamped.withLock { events in events.first { matches($0.event) } }
            }
            _ = await WebSocketTransportTests.eventually(within: limit) { find() != nil }
            return find()
        }

        /// How the transport closed, and when.
        func closed(within limit: Duration = .seconds(30)) async -> (reason: TransportCloseReason, at: ContinuousClock.Instant)? {
            guard let found = await first(within: limit, where: TransportTesting.isClosed),
                  let reason = TransportTesting.closeReason([found.event]) else { return nil }
            return (reason, found.at)
        }
    }

    /// Whether `condition` holds within `limit`, polled every 10 ms without holding a thread of
    /// the cooperative pool between polls (a bound that only catches a hang).
    static func eventually(within limit: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Checks that the leak probes see an open transport's thread and socket (so that seeing none
    /// later means they are gone).
    static func expectVisible(_ transport: WebSocketTransport, to server: RuntimeServer, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(ProcessResources.threads(named: transport.serviceThreadName) == 1, sourceLocation: sourceLocation)
        #expect(ProcessResources.tcpSockets(toPort: server.port) == 1, sourceLocation: sourceLocation)
    }

    /// The messages of `events` decoded, with their types.
    static func types(_ events: [TransportEvent]) -> [String] {
        TransportTesting.messages(events).compactMap { try? WireCodec.decode($0).message.type.rawValue }
    }

    // MARK: The wire

    @Test func messagesGoBothWaysAndTheServerSeesExactlyTheBytesSent() async throws {
        let server = try RuntimeServer(["--pace", "fast", "--subprotocol", "voicepipe.v1"])
        defer { server.stop() }
        let trace = try HTTPHeaderField(parsing: "X-Trace: 42")
        let (transport, opening) = try await Self.open(server) {
            $0.subprotocols = ["voicepipe.v2", "voicepipe.v1"]
            $0.headers = [trace]
        }
        #expect(opening == [.opened])
        #expect(transport.selectedSubprotocol == "voicepipe.v1")
        try transport.send(Self.sessionStart)
        try transport.send(#"{"type":"text.input","text":"héllo wörld"}"#)
        let events = await TransportTesting.events(of: transport, within: 30) { event in
            if case .message(let text) = event { return text.contains("\"assistant\"") }
            return false
        }
        let transcript = TransportTesting.messages(events).first { $0.contains("\"user\"") } ?? ""
        #expect(transcript.contains("héllo wörld"))
        transport.close()
        #expect(await Self.closeReason(of: transport) == .closedByClient)
        let received = server.events(named: "received").map { [$0["type"] as? String ?? "", "\($0["bytes"] ?? "")"] }
        #expect(received.prefix(2) == [["session.start", "\(Self.sessionStart.utf8.count)"],
                                       ["text.input", "\(#"{"type":"text.input","text":"héllo wörld"}"#.utf8.count)"]])
        let connection = try #require(server.events(named: "connection").first)
        #expect(connection["subprotocol"] as? String == "voicepipe.v1")
        let headers = (connection["headers"] as? [any Sendable])?.compactMap { $0 as? [any Sendable] } ?? []
        #expect(headers.contains { ($0.first as? String) == "X-Trace" && ($0.last as? String) == "42" })
        let closed = try #require(server.waitForEvent(named: "closed"))
        #expect(closed["code"] as? Int == 1000)
        #expect(closed["by"] as? String == "client")
    }

    @Test func fragmentedMessagesArriveWholeAndIdentical() async throws {
        var runs = [[String]]()
        for fragment in [nil, "7"] {
            let server = try RuntimeServer(["--pace", "fast"] + (fragment.map { ["--fragment", $0] } ?? []))
            defer { server.stop() }
            let (transport, _) = try await Self.open(server)
            try transport.send(Self.sessionStart)
            try transport.send(#"{"type":"text.input","text":"a typed turn"}"#)
            let events = await TransportTesting.events(of: transport, within: 30) { event in
                if case .message(let text) = event { return text.contains("\"assistant\"") }
                return false
            }
            // The runtime's own timing of its tool differs from run to run.
            runs.append(TransportTesting.messages(events).map { $0.replacing(/"durationMs":[0-9.]+/, with: "\"durationMs\":_") })
            transport.close()
        }
        #expect(runs[0].count >= 4)
        #expect(runs[0] == runs[1])
    }

    @Test func theServersPingsAreAnswered() async throws {
        let server = try RuntimeServer(["--ping-interval", "0.2"])
        defer { server.stop() }
        let (transport, _) = try await Self.open(server)
        #expect(server.waitForEvents(named: "pong", count: 2, within: 10))
        transport.close()
    }

    @Test func theClientsOwnPingsKeepAQuietConnectionAlivePastTheReadTimeout() async throws {
        let server = try RuntimeServer(["--pace", "fast"])
        defer { server.stop() }
        let (transport, _) = try await Self.open(server) { $0.readTimeout = 2 }
        try transport.send(Self.sessionStart)
        // Nothing to say for twice the read timeout: a ping goes out after 1 s of quiet, the
        // server's pong counts as hearing from it, and the connection stays.
        try await Task.sleep(for: .seconds(4))
        try transport.send(#"{"type":"text.input","text":"still here"}"#)
        let events = await TransportTesting.events(of: transport, within: 30) { event in
            if case .message(let text) = event { return text.contains("still here") }
            return TransportTesting.isClosed(event)
        }
        #expect(TransportTesting.messages(events).contains { $0.contains("still here") }, "\(events.suffix(2))")
        transport.close()
    }

    @Test(arguments: [
        (1000, "see you", TransportCloseReason.closedByRuntime("the runtime closed the connection (1000: see you)")),
        (4001, "bye now", TransportCloseReason.failed("the runtime closed the connection with code 4001: bye now", code: nil)),
    ])
    func aCloseFrameGivesItsCodeAndReason(code: Int, reason: String, expected: TransportCloseReason) async throws {
        let server = try RuntimeServer(["--close-after", "1", "--close-code", "\(code)", "--close-reason", reason])
        defer { server.stop() }
        let (transport, _) = try await Self.open(server)
        try transport.send(Self.sessionStart)
        #expect(await Self.closeReason(of: transport) == expected)
    }

    /// In frames of 4 KiB, or as one frame of 300 000 bytes (lws hands a frame over in pieces,
    /// so neither is ever buffered whole).
    @Test(arguments: [["--fragment", "4096"], []])
    func aMessageOverTheLimitIsSkippedAndTheConnectionGoesOn(framing: [String]) async throws {
        let server = try RuntimeServer(["--pace", "fast", "--oversized", "300000"] + framing)
        defer { server.stop() }
        let (transport, _) = try await Self.open(server) { $0.maximumMessageLength = 65_536 }
        try transport.send(Self.sessionStart)
        let oversized = await TransportTesting.events(of: transport, within: 30) {
            if case .oversizedMessage = $0 { return true }
            return TransportTesting.isClosed($0)
        }
        #expect(oversized.last == .oversizedMessage(bytes: 300_000, limit: 65_536))
        try transport.send(#"{"type":"text.input","text":"still there?"}"#)
        let after = await TransportTesting.events(of: transport, within: 30) { event in
            if case .message(let text) = event { return text.contains("still there?") }
            return TransportTesting.isClosed(event)
        }
        #expect(TransportTesting.messages(after).contains { $0.contains("still there?") })
        Self.expectVisible(transport, to: server)
        transport.close()
        #expect(await Self.closeReason(of: transport) == .closedByClient)
        await Self.expectNothingLeft(by: transport, to: server)
    }

    // MARK: Refusals and failures

    @Test func aRefusedHandshakeShowsItsStatus() async throws {
        let server = try RuntimeServer(["--refuse-status", "403", "--refuse-body", "not for you"])
        defer { server.stop() }
        let (_, events) = try await Self.open(server)
        let reason = try #require(TransportTesting.closeReason(events))
        #expect(reason.description.contains("refused the WebSocket handshake with HTTP status 403"), "\(reason)")
        #expect(!reason.isOrderly)
    }

    @Test func aWrongAcceptKeyIsRefused() async throws {
        let server = try RuntimeServer(["--wrong-accept"])
        defer { server.stop() }
        let (transport, events) = try await Self.open(server)
        let reason = try #require(TransportTesting.closeReason(events))
        #expect(reason.description.contains("Accept hash wrong"), "\(reason)")
        #expect(!reason.isOrderly)
        await Self.expectNothingLeft(by: transport, to: server)
    }

    @Test func aTextMessageThatIsNotUTF8EndsTheConnectionWith1007() async throws {
        let server = try RuntimeServer(["--invalid-utf8"])
        defer { server.stop() }
        let (transport, _) = try await Self.open(server)
        Self.expectVisible(transport, to: server)
        try transport.send(Self.sessionStart)
        let reason = try #require(await Self.closeReason(of: transport))
        #expect(reason.description.hasPrefix("the runtime sent a text message that is not UTF-8"), "\(reason)")
        #expect(!reason.isOrderly)
        let closed = try #require(server.waitForEvent(named: "closed"))
        #expect(closed["code"] as? Int == 1007)
        await Self.expectNothingLeft(by: transport, to: server)
    }

    @Test func aDroppedConnectionIsAFailure() async throws {
        let server = try RuntimeServer(["--drop-after", "1"])
        defer { server.stop() }
        let (transport, _) = try await Self.open(server)
        Self.expectVisible(transport, to: server)
        try transport.send(Self.sessionStart)
        let reason = try #require(await Self.closeReason(of: transport))
        #expect(reason.description.contains("dropped without a close frame"), "\(reason)")
        #expect(!reason.isOrderly)
        await Self.expectNothingLeft(by: transport, to: server)
    }

    @Test func aResetConnectionIsAFailureAndLeavesNothingBehind() async throws {
        let server = try RuntimeServer(["--reset-after", "1"])
        defer { server.stop() }
        let (transport, _) = try await Self.open(server)
        Self.expectVisible(transport, to: server)
        try transport.send(Self.sessionStart)
        let reason = try #require(await Self.closeReason(of: transport))
        #expect(reason == .failed("the connection to \(transport.configuration.url) dropped without a close frame", code: nil))
        #expect(server.waitForEvent { $0["event"] as? String == "misbehaved" && $0["switch"] as? String == "reset-after" } != nil)
        await Self.expectNothingLeft(by: transport, to: server)
    }

    @Test func aMessageCutInTheMiddleByADropIsNeverDeliveredAndIsAFailure() async throws {
        let server = try RuntimeServer(["--cut-mid-message", "drop"])
        defer { server.stop() }
        let (transport, _) = try await Self.open(server)
        try transport.send(Self.sessionStart)
        let events = await TransportTesting.events(of: transport, within: 30)
        // The greeting, whole; never the half message.
        #expect(Self.types(events) == ["info.message"], "\(events)")
        let reason = try #require(TransportTesting.closeReason(events))
        #expect(reason.description.contains("dropped without a close frame"), "\(reason)")
        #expect(!reason.isOrderly)
        await Self.expectNothingLeft(by: transport, to: server)
    }

    @Test func aCloseFrameInTheMiddleOfAMessageEndsTheConnectionWithoutDeliveringIt() async throws {
        let server = try RuntimeServer(["--cut-mid-message", "close"])
        defer { server.stop() }
        let (transport, _) = try await Self.open(server)
        try transport.send(Self.sessionStart)
        let events = await TransportTesting.events(of: transport, within: 30)
        #expect(Self.types(events) == ["info.message"], "\(events)")
        let reason = try #require(TransportTesting.closeReason(events))
        #expect(reason == .closedByRuntime("the runtime closed the connection (1000: cut mid-message)"), "\(reason)")
        await Self.expectNothingLeft(by: transport, to: server)
    }

    @Test func aPingLongerThan125BytesEndsTheConnectionAsAProtocolViolation() async throws {
        let server = try RuntimeServer(["--oversized-ping", "200"])
        defer { server.stop() }
        let (transport, _) = try await Self.open(server)
        try transport.send(Self.sessionStart)
        let events = await TransportTesting.events(of: transport, within: 30)
        let reason = try #require(TransportTesting.closeReason(events))
        #expect(reason == .failed("libwebsockets ended the connection to \(transport.configuration.url): Control frame asking for extended length is illegal", code: nil))
        await Self.expectNothingLeft(by: transport, to: server)
    }

    @Test func aStalledServerIsNoticedWithinTheReadTimeout() async throws {
        let server = try RuntimeServer(["--stall-after", "1"])
        defer { server.stop() }
        var configuration = WebSocketConfiguration(url: try WebSocketURL(parsing: server.url + "/ws"))
        configuration.readTimeout = 2
        let transport = WebSocketTransport(configuration)
        let events = StampedEvents(transport)
        transport.open()
        try #require(await events.first { $0 == .opened || TransportTesting.isClosed($0) }?.event == .opened)
        try transport.send(Self.sessionStart)
        let started = ContinuousClock.now
        // The close is timed when the transport's thread handed it over: a test task resumed late
        // would otherwise add its own wait to the read timeout's.
        let (reason, closedAt) = try #require(await events.closed())
        #expect(reason == .failed("the runtime sent nothing, and did not answer a ping, for 2 s", code: nil))
        #expect(closedAt - started < .seconds(10))
        await Self.expectNothingLeft(by: transport, to: server)
    }

    @Test func aServerThatStopsReadingFillsTheBacklogAndNoMore() async throws {
        let server = try RuntimeServer(["--stall-after", "1"])
        defer { server.stop() }
        let (transport, _) = try await Self.open(server) { $0.backlogLimit = 1 << 20 }
        try transport.send(Self.sessionStart)
        let chunk = #"{"type":"debug","text":""# + String(repeating: "x", count: 16_000) + #""}"#
        var refusal: TransportError?
        for _ in 0..<10_000 where refusal == nil {
            do {
                try transport.send(chunk)
            } catch {
                refusal = error
            }
            usleep(100)
        }
        guard case .backlogFull(let bytes, let limit)? = refusal else {
            Issue.record("the backlog never filled: \(String(describing: refusal))")
            return
        }
        #expect(limit == 1 << 20)
        #expect(bytes <= limit)
        #expect(transport.backlogBytes <= limit)
        transport.close()
        #expect(await Self.closeReason(of: transport) == .closedByClient)
    }

    /// What the backlog still held when the connection failed comes back, in order, once: the
    /// last messages sent, never handed to the socket. Before the close there is nothing to take.
    @Test func theMessagesNeverWrittenComeBackAfterTheConnectionFails() async throws {
        let server = try RuntimeServer(["--stall-after", "1"])
        defer { server.stop() }
        let (transport, _) = try await Self.open(server) { $0.backlogLimit = 1 << 20; $0.readTimeout = 2 }
        try transport.send(Self.sessionStart)
        var sent: [String] = []
        var full = false
        for number in 0..<10_000 where !full {
            let message = #"{"type":"text.input","text":"message \#(number) "# + String(repeating: "x", count: 16_000) + #""}"#
            do {
                try transport.send(message, tag: number)
                sent.append(message)
            } catch {
                full = true
            }
            usleep(100)
        }
        try #require(full, "the backlog never filled")
        #expect(transport.takeUnwrittenMessages().isEmpty, "nothing is taken while the connection lives")
        let reason = try #require(await Self.closeReason(of: transport))
        #expect(reason == .failed("the runtime sent nothing, and did not answer a ping, for 2 s", code: nil))
        let queued = transport.backlogBytes
        let unwrittenMessages = transport.takeUnwrittenMessages()
        let unwritten = unwrittenMessages.map(\.text)
        #expect(!unwritten.isEmpty)
        #expect(unwritten == Array(sent.suffix(unwritten.count)), "the last messages sent, in order")
        #expect(unwrittenMessages.map(\.tag) == Array((sent.count - unwritten.count)..<sent.count), "each with the tag it was sent with")
        #expect(unwritten.reduce(0) { $0 + $1.utf8.count } == queued, "exactly what the backlog held")
        #expect(transport.backlogBytes == 0)
        #expect(transport.takeUnwrittenMessages().isEmpty, "each is returned once")
        await Self.expectNothingLeft(by: transport, to: server)
    }

    @Test func aServerThatNeverAnswersTheHandshakeTimesOut() async throws {
        // A listening socket nobody accepts: the kernel completes TCP, no HTTP answer comes.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(listener) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let transport = WebSocketTransport(WebSocketConfiguration(url: try WebSocketURL(parsing: "ws://127.0.0.1:\(port)/ws"), connectTimeout: 1))
        // Timed to when the transport's thread handed the close over, not to when this task ran again.
        let events = StampedEvents(transport)
        let started = ContinuousClock.now
        transport.open()
        let (reason, closedAt) = try #require(await events.closed())
        #expect(reason == .failed("could not connect to ws://127.0.0.1:\(port)/ws within 1.0 s", code: nil))
        #expect(closedAt - started < .seconds(5))
    }

    @Test func closingAtOnceAfterOpeningEndsAsClosedByTheClient() async throws {
        let server = try RuntimeServer()
        defer { server.stop() }
        let url = try WebSocketURL(parsing: server.url + "/ws")
        for _ in 0..<20 {
            let transport = WebSocketTransport(WebSocketConfiguration(url: url))
            transport.open()
            transport.close()
            let events = await TransportTesting.events(of: transport, within: 10)
            #expect(TransportTesting.closeReason(events) == .closedByClient, "\(events)")
        }
    }

    @Test func nothingListeningIsAFailureSayingSo() async throws {
        let port = try Self.closedPort()
        let transport = WebSocketTransport(WebSocketConfiguration(url: try WebSocketURL(parsing: "ws://127.0.0.1:\(port)/ws")))
        transport.open()
        let reason = try #require(await Self.closeReason(of: transport))
        #expect(reason.description.hasPrefix("could not connect to ws://127.0.0.1:\(port)/ws: "), "\(reason)")
        #expect(throws: TransportError.closed(reason)) { try transport.send("{}") }
    }

    /// A loopback port nothing listens on (one the system just handed out and took back).
    static func closedPort() throws -> Int {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(probe) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length) == 0 && getsockname(probe, $0, &length) == 0 }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // MARK: TLS

    @Test func wssIsTrustedThroughItsCAFileOnlyAndForTheRightHostOnly() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("voicepipe-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let right = try TestCertificate.make(in: directory, name: "right", alternativeNames: ["IP:127.0.0.1", "DNS:localhost"])
        let wrong = try TestCertificate.make(in: directory, name: "wrong", alternativeNames: ["DNS:elsewhere.example"])

        let server = try RuntimeServer(["--tls-cert", right.certificate, "--tls-key", right.key])
        defer { server.stop() }
        #expect(server.url.hasPrefix("wss://127.0.0.1:"))
        let (trusted, opened) = try await Self.open(server) { $0.caFile = right.certificate }
        #expect(opened == [.opened])
        try trusted.send(Self.sessionStart)
        let greeting = await TransportTesting.events(of: trusted, within: 30) { if case .message = $0 { true } else { false } }
        #expect(Self.types(greeting) == ["info.message"])
        trusted.close()
        let (_, untrusted) = try await Self.open(server)
        let refusal = try #require(TransportTesting.closeReason(untrusted))
        #expect(refusal.description.contains("is not trusted: self-signed certificate"), "\(refusal)")

        let misnamed = try RuntimeServer(["--tls-cert", wrong.certificate, "--tls-key", wrong.key])
        defer { misnamed.stop() }
        let (_, mismatch) = try await Self.open(misnamed) { $0.caFile = wrong.certificate }
        let hostRefusal = try #require(TransportTesting.closeReason(mismatch))
        #expect(hostRefusal.description.contains("is not trusted: IP address mismatch"), "\(hostRefusal)")
    }

    @Test func aCAFileThatIsNoCertificateIsRefusedBeforeConnecting() async throws {
        let transport = WebSocketTransport(WebSocketConfiguration(url: try WebSocketURL(parsing: "wss://127.0.0.1:1/ws"), caFile: "/etc/hostname"))
        transport.open()
        #expect(await Self.closeReason(of: transport) == .failed("the CA file /etc/hostname holds no certificate in PEM form", code: nil))
    }

    // MARK: SigV4

    @Test(arguments: HandshakeSigning.Placement.allCases)
    func aSignedHandshakeIsAcceptedByBotocoreAndAWrongSecretIsRefused(placement: HandshakeSigning.Placement) async throws {
        let key = "AKIDVOICEPIPETEST", secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYVOICEPIPE"
        let server = try RuntimeServer(["--require-sigv4", placement.rawValue, "--aws-access-key-id", key, "--aws-secret-access-key", secret,
                                        "--aws-region", "us-west-2"])
        defer { server.stop() }
        let url = try WebSocketURL(parsing: server.url + "/runtimes/arn%3Aaws%3Abedrock-agentcore%3Aus-west-2%3A123456789012%3Aruntime%2Fagent-1/ws?qualifier=DEFAULT")
        for (secretUsed, accepted) in [(secret, true), (secret + "x", false)] {
            let signing = HandshakeSigning(placement: placement, signer: try SigV4Signer(region: "us-west-2"),
                                           credentials: AWSCredentials(accessKeyID: key, secretAccessKey: secretUsed))
            let transport = try WebSocketConnector(WebSocketConfiguration(url: url), signing: signing).makeTransport(at: Int(time(nil)))
            transport.open()
            let events = await TransportTesting.events(of: transport, within: 30) { $0 == .opened || TransportTesting.isClosed($0) }
            if accepted {
                #expect(events == [.opened], "\(server.events(named: "sigv4"))")
                transport.close()
            } else {
                let reason = try #require(TransportTesting.closeReason(events))
                #expect(reason.description.contains("HTTP status 403"), "\(reason)")
                #expect(!reason.description.contains(secretUsed))
            }
        }
        // The server prints its verdict as it refuses; the client may hear of the refusal first.
        _ = server.waitForEvents(named: "sigv4", count: 2, within: 10)
        let outcomes = server.events(named: "sigv4").map { ["1", "1.0", "true"].contains("\($0["accepted"] ?? "")") ? "accepted" : "refused" }
        #expect(outcomes == ["accepted", "refused"], "\(server.events(named: "sigv4"))")
    }
}
