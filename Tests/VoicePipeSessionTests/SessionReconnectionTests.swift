import Testing
import VoicePipeCore
import VoicePipeSession

/// Reconnection: a drop with attempts left in the policy leaves `live` for `connecting`, waits a
/// backoff that doubles, and enters `live` again on a new connection that continues the session;
/// nothing the user said or typed meanwhile is lost, and what cannot be kept is counted.
struct SessionReconnectionTests {
    /// A policy that resumes at once on a new connection (no wait for `session.resumed`), unless
    /// `resumptionWait` is given: the tests of what the runtime says it read give one.
    static func configuration(attempts: Int = 3, jitter: Double = 0, holdLimit: Duration = .seconds(5), resumptionWait: Duration = .zero) -> SessionConfiguration {
        SessionConfiguration(sessionId: "s-1", context: ["persona": .string("Dana")], keepAliveInterval: .seconds(1_000),
                             reconnect: ReconnectPolicy(attempts: attempts, jitter: jitter, holdLimit: holdLimit, resumptionWait: resumptionWait))
    }

    /// Captures a frame carrying `marker` at `instant` and reports it written, as a driver does.
    static func sendFrame(_ script: inout SessionScript, marker: Int16, at instant: SessionInstant) {
        let actions = script.run { $0.captured(Self.frame(SessionScript.room, marker: marker), at: instant) }
        for case .sendCapturedFrame(let frame) in actions { script.run { $0.frameSent(frame, at: instant) } }
    }

    static let reset = "the connection to ws://127.0.0.1:9/voice dropped without a close frame"

    static func opens(_ actions: [SessionAction]) -> Int { actions.filter { $0 == .openTransport }.count }

    static func frame(_ level: PeakLevel, marker: Int16) -> AudioFrame {
        AudioFrame(samples: [Int16](repeating: marker, count: SessionScript.frameSamples), level: level)
    }

    /// The `audio.chunk` frames sent, by the marker sample each carries.
    static func sentMarkers(_ actions: [SessionAction]) -> [Int16] {
        actions.compactMap { if case .sendCapturedFrame(let frame) = $0 { frame.samples.first } else { nil } }
    }

    @Test func theBackoffDoublesFromHalfASecondUpToItsCapWithNoJitter() {
        let policy = ReconnectPolicy(attempts: 8, jitter: 0)
        let delays = (1...7).map { policy.delay(beforeAttempt: $0, sessionId: "s-1") }
        #expect(delays == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8), .seconds(8)])
    }

    @Test func theJitterStaysWithinItsFractionIsTheSameOnEveryRunAndDiffersBetweenSessions() {
        let policy = ReconnectPolicy(attempts: 8, jitter: 0.2)
        for attempt in 1...6 {
            let base = ReconnectPolicy(attempts: 8, jitter: 0).delay(beforeAttempt: attempt, sessionId: "x")
            let delay = policy.delay(beforeAttempt: attempt, sessionId: "s-1")
            #expect(delay >= base * 0.8 && delay <= base * 1.2, "attempt \(attempt): \(delay) against \(base)")
            #expect(delay == policy.delay(beforeAttempt: attempt, sessionId: "s-1"))
        }
        let one = (1...6).map { policy.delay(beforeAttempt: $0, sessionId: "session-a") }
        let other = (1...6).map { policy.delay(beforeAttempt: $0, sessionId: "session-b") }
        #expect(one != other)
    }

    @Test func aDropWaitsTheFirstBackoffThenContinuesTheSessionOnANewConnection() {
        var script = SessionScript(Self.configuration())
        script.connectAndOpen(at: .origin)
        script.clearLog()
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(10_000)) }
        #expect(script.transitions == ["ready→connecting"])
        #expect(script.log.contains(.note(.reconnecting(attempt: 1, of: 3, in: .milliseconds(500), reason: Self.reset))))
        #expect(script.machine.isReconnecting)
        #expect(script.scheduled == .ms(10_500))
        script.runTimers(until: .ms(10_499))
        #expect(Self.opens(script.log) == 0)
        script.runTimers(until: .ms(10_500))
        #expect(Self.opens(script.log) == 1)
        script.clearLog()
        let opened = script.run { $0.transportOpened(at: .ms(10_620)) }
        #expect(opened.first == .send(.sessionStart(sessionId: "s-1", context: ["persona": .string("Dana")], continuesSessionId: "s-1")))
        #expect(opened.contains(.note(.reconnected(attempt: 1, gap: .milliseconds(620), heldFrames: 0))))
        #expect(script.transitions == ["connecting→ready"])
        #expect(script.machine.state == .ready)
        #expect(script.machine.ledger.counters.reconnections == 1)
    }

    @Test func failedAttemptsBackOffAndTheSessionGivesUpAfterTheLastWithTheReason() {
        var script = SessionScript(Self.configuration(attempts: 3))
        script.connectAndOpen(at: .origin)
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(1_000)) }
        script.runTimers(until: .ms(1_500))
        script.clearLog()
        script.run { $0.transportClosed("could not connect: connection refused", orderly: false, at: .ms(1_510)) }
        #expect(script.log.contains(.note(.reconnecting(attempt: 2, of: 3, in: .seconds(1), reason: "could not connect: connection refused"))))
        #expect(script.scheduled == .ms(2_510))
        script.runTimers(until: .ms(2_510))
        script.run { $0.transportClosed("could not connect: connection refused", orderly: false, at: .ms(2_520)) }
        #expect(script.scheduled == .ms(4_520))
        script.runTimers(until: .ms(4_520))
        #expect(Self.opens(script.log) == 2)
        script.run { $0.transportClosed("could not connect: connection refused", orderly: false, at: .ms(4_530)) }
        #expect(script.machine.state == .error(.transport("could not connect: connection refused; gave up after 3 attempts to reconnect")))
    }

    @Test(arguments: [(orderly: true, retryable: true), (orderly: false, retryable: false)])
    func anOrderlyCloseOrARefusalIsNotRetried(orderly: Bool, retryable: Bool) {
        var script = SessionScript(Self.configuration())
        script.connectAndOpen(at: .origin)
        script.clearLog()
        script.run { $0.transportClosed("why", orderly: orderly, retryable: retryable, at: .ms(1_000)) }
        script.runTimers(until: .ms(60_000))
        #expect(script.machine.state == .error(.transport("why")))
        #expect(Self.opens(script.log) == 0)
    }

    @Test func aRefusedAttemptEndsTheRetriesWithTheReason() {
        var script = SessionScript(Self.configuration(attempts: 5))
        script.connectAndOpen(at: .origin)
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(1_000)) }
        script.runTimers(until: .ms(1_500))
        script.run { $0.transportClosed("refused the WebSocket handshake with HTTP status 403", orderly: false, retryable: false, at: .ms(1_600)) }
        #expect(script.machine.state == .error(.transport("refused the WebSocket handshake with HTTP status 403; reconnecting cannot help, so no further attempt was made")))
    }

    @Test func aNewConnectionThatDropsSoonGoesOnCountingAndOneThatStayedUpStartsAfresh() {
        var script = SessionScript(Self.configuration(attempts: 2))
        script.connectAndOpen(at: .origin)
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(1_000)) }
        script.runTimers(until: .ms(1_500))
        script.run { $0.transportOpened(at: .ms(1_600)) }
        // Up 20 s (past the 10 s that make it stable): the next drop is attempt 1 again.
        script.clearLog()
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(21_600)) }
        #expect(script.log.contains(.note(.reconnecting(attempt: 1, of: 2, in: .milliseconds(500), reason: Self.reset))))
        script.runTimers(until: .ms(22_100))
        script.run { $0.transportOpened(at: .ms(22_200)) }
        // Up 1 s: attempt 2; then up 1 s again: no attempt is left.
        script.clearLog()
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(23_200)) }
        #expect(script.log.contains(.note(.reconnecting(attempt: 2, of: 2, in: .seconds(1), reason: Self.reset))))
        script.runTimers(until: .ms(24_200))
        script.run { $0.transportOpened(at: .ms(24_300)) }
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(25_300)) }
        #expect(script.machine.state == .error(.transport(Self.reset + "; gave up after 2 attempts to reconnect")))
    }

    @Test func withNoAttemptsADropEndsTheSessionAsBefore() {
        var script = SessionScript(Self.configuration(attempts: 0))
        script.connectAndOpen(at: .origin)
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(1_000)) }
        #expect(script.machine.state == .error(.transport(Self.reset)))
    }

    @Test func anAttemptThatDoesNotOpenInTheConnectTimeoutIsClosedAndTheNextOneWaits() {
        var configuration = Self.configuration(attempts: 3)
        configuration.connectTimeout = .seconds(10)
        var script = SessionScript(configuration)
        script.connectAndOpen(at: .origin)
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(1_000)) }
        script.runTimers(until: .ms(1_500))
        script.clearLog()
        script.runTimers(until: .ms(11_500))
        #expect(script.log.contains(.closeTransport))
        #expect(script.log.contains(.note(.reconnecting(attempt: 2, of: 3, in: .seconds(1), reason: "the connection did not open within 10.000 s"))))
        // The abandoned attempt's closing report changes nothing; the next attempt opens on time.
        script.run { $0.transportClosed("closed by the client", orderly: true, at: .ms(11_510)) }
        #expect(script.machine.isReconnecting)
        script.runTimers(until: .ms(12_500))
        #expect(Self.opens(script.log) == 1)
    }

    @Test func audioCapturedWhileAwayGoesOutInOrderAfterSessionStartAndTheOldestPastTheLimitIsCounted() {
        // A hold of 0.32 s: ten 32 ms frames.
        var script = SessionScript(Self.configuration(holdLimit: .milliseconds(320)))
        script.connectAndOpen(at: .origin)
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(1_000)) }
        for marker in Int16(1)...15 {
            script.run { $0.captured(Self.frame(SessionScript.room, marker: marker), at: .ms(1_000 + 32 * Int(marker))) }
        }
        script.runTimers(until: .ms(1_500))
        script.clearLog()
        let opened = script.run { $0.transportOpened(at: .ms(1_600)) }
        guard case .send(.sessionStart) = opened.first else {
            Issue.record("session.start is not first: \(opened)")
            return
        }
        #expect(Self.sentMarkers(opened) == Array(6...15))
        #expect(opened.contains(.note(.reconnected(attempt: 1, gap: .milliseconds(600), heldFrames: 10))))
        #expect(script.machine.ledger.counters.framesDropped == 5)
        #expect(script.machine.ledger.counters.framesDroppedWhileAway == 5)
        #expect(script.machine.ledger.counters.framesHeldForReconnection == 10)
    }

    @Test func framesTheDroppedConnectionNeverWroteGoOutFirstOnTheNewConnectionAndNoLongerCountAsSent() {
        var script = SessionScript(Self.configuration())
        script.connectAndOpen(at: .origin)
        for marker in Int16(1)...5 {
            let actions = script.run { $0.captured(Self.frame(SessionScript.room, marker: marker), at: .ms(32 * Int(marker))) }
            for case .sendCapturedFrame(let frame) in actions { script.run { $0.frameSent(frame, at: .ms(32 * Int(marker))) } }
        }
        #expect(script.machine.ledger.counters.framesSent == 5)
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(200)) }
        // The transport had written frames 1 to 3; 4 and 5 were still in its backlog.
        script.run { $0.framesNotWritten([Self.frame(SessionScript.room, marker: 4), Self.frame(SessionScript.room, marker: 5)], at: .ms(200)) }
        #expect(script.machine.ledger.counters.framesSent == 3)
        script.run { $0.captured(Self.frame(SessionScript.room, marker: 6), at: .ms(250)) }
        script.runTimers(until: .ms(700))
        let opened = script.run { $0.transportOpened(at: .ms(750)) }
        #expect(Self.sentMarkers(opened) == [4, 5, 6])
    }

    @Test func aFrameTheClosedTransportRefusedBeforeItsCloseWasReportedGoesOutOnTheNewConnection() {
        var script = SessionScript(Self.configuration())
        script.connectAndOpen(at: .origin)
        let actions = script.run { $0.captured(Self.frame(SessionScript.room, marker: 9), at: .ms(32)) }
        for case .sendCapturedFrame(let frame) in actions {
            script.run { $0.frameNotSent(frame, transportClosed: true, at: .ms(32)) }
        }
        #expect(script.machine.ledger.counters.framesDropped == 0)
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(40)) }
        script.runTimers(until: .ms(600))
        let opened = script.run { $0.transportOpened(at: .ms(650)) }
        #expect(Self.sentMarkers(opened) == [9])
    }

    @Test func framesNeverWrittenAfterTheSessionFailedCountAsDropped() {
        var script = SessionScript(Self.configuration(attempts: 0))
        script.connectAndOpen(at: .origin)
        let actions = script.run { $0.captured(Self.frame(SessionScript.room, marker: 1), at: .ms(32)) }
        for case .sendCapturedFrame(let frame) in actions { script.run { $0.frameSent(frame, at: .ms(32)) } }
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(100)) }
        script.run { $0.framesNotWritten([Self.frame(SessionScript.room, marker: 1)], at: .ms(100)) }
        #expect(script.machine.ledger.counters.framesSent == 0)
        #expect(script.machine.ledger.counters.framesDropped == 1)
    }

    @Test func aTurnSpokenAcrossTheDropIsOneTurnAndTheSessionComesBackTalking() {
        var script = SessionScript(Self.configuration())
        script.connectAndOpen(at: .origin)
        let speaking = script.frames(SessionScript.voice, count: 10, from: .origin)
        #expect(script.machine.state == .talking)
        script.run { $0.transportClosed(Self.reset, orderly: false, at: speaking) }
        var instant = speaking
        for _ in 0..<10 {
            instant = instant + SessionScript.frame
            script.run { $0.captured(AudioFrame(samples: [Int16](repeating: 0, count: SessionScript.frameSamples), level: SessionScript.voice), at: instant) }
        }
        script.runTimers(until: .ms(1_000))
        script.run { $0.transportOpened(at: .ms(1_000)) }
        #expect(script.machine.state == .talking)
        script.frames(SessionScript.room, count: 20, from: .ms(1_000))
        #expect(script.machine.state == .thinking)
        #expect(script.machine.ledger.turns.count == 1)
    }

    @Test func aTurnThatEndsWhileAwayWaitsForItsReplyOnTheNewConnection() {
        var script = SessionScript(Self.configuration())
        script.connectAndOpen(at: .origin)
        let speaking = script.frames(SessionScript.voice, count: 10, from: .origin)
        script.run { $0.transportClosed(Self.reset, orderly: false, at: speaking) }
        var instant = speaking
        for _ in 0..<20 {
            instant = instant + SessionScript.frame
            script.run { $0.captured(AudioFrame(samples: [Int16](repeating: 0, count: SessionScript.frameSamples), level: SessionScript.room), at: instant) }
        }
        #expect(script.machine.ledger.turns.first?.endedAt != nil)
        script.runTimers(until: .ms(1_000))
        script.run { $0.transportOpened(at: .ms(1_000)) }
        #expect(script.machine.state == .thinking)
        // The reply timer (15 s) counts from the new connection, not from the turn's end.
        #expect(script.scheduled == .ms(16_000))
    }

    @Test func textTypedWhileAwayAndTextTheDropNeverWroteGoOutOnceAfterSessionStartInOrder() throws {
        var script = SessionScript(Self.configuration())
        script.connectAndOpen(at: .origin)
        try script.type("first", at: .ms(100))
        let first = try #require(script.log.sentTexts.first)
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(200)) }
        // The dropped connection took "first" but never wrote it.
        script.run { $0.textsNotWritten([first.number], at: .ms(200)) }
        try script.type("second", at: .ms(300))
        #expect(script.machine.state == .connecting)
        script.runTimers(until: .ms(700))
        script.clearLog()
        let opened = script.run { $0.transportOpened(at: .ms(800)) }
        script.confirmTexts(in: opened, at: .ms(800))
        #expect(script.sent == ["session.start", "text.input first", "text.input second"])
        #expect(script.machine.ledger.counters.textsSent == 2)
        #expect(script.machine.state == .thinking)
    }

    // MARK: What the runtime read (session.resumed)

    /// Frames 1-10 and a text were written; the runtime read frames 1-6 and no text before it
    /// aborted. The new connection sends 7-10 again, then what was captured while away, then the
    /// text: every frame reaches the runtime once, in order, and the text once.
    @Test func whatTheRuntimeNeverReadGoesOutAgainFirstThenTheHeldAudioThenTheTexts() throws {
        var script = SessionScript(Self.configuration(resumptionWait: .seconds(2)))
        script.connectAndOpen(at: .origin)
        for marker in Int16(1)...10 { Self.sendFrame(&script, marker: marker, at: .ms(32 * Int(marker))) }
        try script.type("typed", at: .ms(330))
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(400)) }
        script.run { $0.captured(Self.frame(SessionScript.room, marker: 11), at: .ms(432)) }
        script.runTimers(until: .ms(900))
        script.clearLog()
        let opened = script.run { $0.transportOpened(at: .ms(950)) }
        // Only session.start: the rest waits for the runtime's word, at most the 2 s wait.
        #expect(script.sent == ["session.start"])
        #expect(script.machine.state == .connecting)
        #expect(opened.last == .scheduleTick(at: .ms(2_950)))
        script.run { $0.captured(Self.frame(SessionScript.room, marker: 12), at: .ms(964)) }
        let resumed = script.receive(.sessionResumed(audioChunks: 6, texts: 0), at: .ms(980))
        script.confirmTexts(in: resumed, at: .ms(980))
        #expect(Self.sentMarkers(resumed) == [7, 8, 9, 10, 11, 12])
        #expect(script.sent.suffix(7) == ["frame", "frame", "frame", "frame", "frame", "frame", "text.input typed"])
        #expect(resumed.contains(.note(.unreadSentAgain(frames: 4, texts: 1, lost: 0))))
        #expect(resumed.contains { action in
            guard case .note(.textRequeued(let text, let reason)) = action else { return false }
            return text.text == "typed" && reason == "the runtime never read it before the connection dropped"
        })
        #expect(script.machine.state == .thinking)
        let counters = script.machine.ledger.counters
        #expect(counters.framesResent == 4 && counters.textsResent == 1 && counters.audioUnconfirmed == 0)
        #expect(counters.textsSent == 1)
        // Frames 1-6 stay sent; 7-10 count again when the transport takes them.
        #expect(counters.framesSent == 6)
        for frame in resumed.compactMap({ if case .sendCapturedFrame(let frame) = $0 { frame } else { nil } }) {
            script.run { $0.frameSent(frame, at: .ms(980)) }
        }
        #expect(script.machine.ledger.counters.framesSent == 12)
        // One typed turn: the withdrawn one is not counted twice.
        #expect(script.machine.ledger.turns.filter { !$0.wasWithdrawn }.count == 1)
    }

    /// A transport cannot always tell what it wrote: a reset can take the message it was writing
    /// either way. With a runtime that says what it read, its count decides: frames handed back as
    /// unwritten that it did read are not sent twice, and texts likewise; those it did not read go
    /// out once, in order.
    @Test(arguments: [(read: 5, texts: 1, again: [Int16]()), (read: 3, texts: 0, again: [4, 5])])
    func whatTheTransportHandsBackIsSentAgainOnlyIfTheRuntimeSaysItNeverReadIt(read: Int, texts: Int, again: [Int16]) throws {
        var script = SessionScript(Self.configuration(resumptionWait: .seconds(2)))
        script.connectAndOpen(at: .origin)
        for marker in Int16(1)...5 { Self.sendFrame(&script, marker: marker, at: .ms(32 * Int(marker))) }
        try script.type("typed", at: .ms(170))
        let typed = try #require(script.log.sentTexts.first)
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(200)) }
        script.run { $0.framesNotWritten([Self.frame(SessionScript.room, marker: 4), Self.frame(SessionScript.room, marker: 5)], at: .ms(200)) }
        script.run { $0.textsNotWritten([typed.number], at: .ms(200)) }
        script.runTimers(until: .ms(700))
        script.run { $0.transportOpened(at: .ms(750)) }
        script.clearLog()
        let resumed = script.receive(.sessionResumed(audioChunks: read, texts: texts), at: .ms(760))
        script.confirmTexts(in: resumed, at: .ms(760))
        #expect(Self.sentMarkers(resumed) == again)
        #expect(script.sent.filter { $0.hasPrefix("text.input") }.count == 1 - texts)
        #expect(script.machine.ledger.counters.framesSent == read)
        #expect(script.machine.ledger.counters.textsSent == 1)
        #expect(script.machine.ledger.turns.filter { !$0.wasWithdrawn }.count == 1)
    }

    /// Keep-alive silences are `audio.chunk` messages too: the runtime's count includes them, and
    /// one that it did not read is not sent again (it was only silence).
    @Test func anUnreadKeepAliveCountsInTheRuntimesTallyAndIsNotSentAgain() {
        var configuration = Self.configuration(resumptionWait: .seconds(2))
        configuration.keepAliveInterval = .seconds(1)
        var script = SessionScript(configuration)
        script.connectAndOpen(at: .origin)
        Self.sendFrame(&script, marker: 1, at: .ms(32))
        script.runTimers(until: .ms(1_032))
        #expect(script.machine.ledger.counters.keepAlivesSent == 1)
        Self.sendFrame(&script, marker: 2, at: .ms(1_064))
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(1_100)) }
        script.runTimers(until: .ms(1_600))
        script.run { $0.transportOpened(at: .ms(1_650)) }
        // Read: frame 1 only. Unread: the keep-alive and frame 2.
        let resumed = script.receive(.sessionResumed(audioChunks: 1, texts: 0), at: .ms(1_700))
        #expect(Self.sentMarkers(resumed) == [2])
        #expect(resumed.contains(.note(.unreadSentAgain(frames: 1, texts: 0, lost: 0))))
    }

    /// Unread audio older than the hold limit is no longer kept: it is dropped and counted.
    @Test func unreadAudioPastTheHoldLimitIsCountedAsDropped() {
        // A hold of 0.16 s: five 32 ms frames.
        var script = SessionScript(Self.configuration(holdLimit: .milliseconds(160), resumptionWait: .seconds(2)))
        script.connectAndOpen(at: .origin)
        for marker in Int16(1)...8 { Self.sendFrame(&script, marker: marker, at: .ms(32 * Int(marker))) }
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(300)) }
        script.runTimers(until: .ms(800))
        script.run { $0.transportOpened(at: .ms(850)) }
        let resumed = script.receive(.sessionResumed(audioChunks: 1, texts: 0), at: .ms(860))
        #expect(Self.sentMarkers(resumed) == [4, 5, 6, 7, 8])
        #expect(resumed.contains(.note(.unreadSentAgain(frames: 5, texts: 0, lost: 2))))
        #expect(script.machine.ledger.counters.framesDropped == 2)
        #expect(script.machine.ledger.counters.framesSent == 1)
    }

    /// A runtime whose first message on the new connection is not `session.resumed` does not
    /// say what it read: the session resumes at that message (which then counts as usual), the
    /// dropped connection's audio is counted unconfirmed, and the next reconnection does not wait.
    @Test func aRuntimeThatDoesNotSayWhatItReadIsNotWaitedForAgain() {
        var script = SessionScript(Self.configuration(resumptionWait: .seconds(2)))
        script.connectAndOpen(at: .origin)
        for marker in Int16(1)...3 { Self.sendFrame(&script, marker: marker, at: .ms(32 * Int(marker))) }
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(200)) }
        script.runTimers(until: .ms(700))
        script.run { $0.transportOpened(at: .ms(750)) }
        #expect(script.machine.state == .connecting)
        script.clearLog()
        let greeted = script.receive(.infoMessage(markdown: "hello again"), at: .ms(800))
        #expect(script.machine.state == .ready)
        #expect(greeted.contains(.note(.readNotConfirmed(audioChunks: 3))))
        #expect(script.machine.ledger.infoCards.map(\.markdown) == ["hello again"])
        #expect(script.machine.ledger.counters.audioUnconfirmed == 3)
        #expect(script.machine.ledger.counters.ignoredEvents == 0)
        // Up 20 s, two more frames, a drop: the next connection resumes at once.
        Self.sendFrame(&script, marker: 4, at: .ms(20_000))
        Self.sendFrame(&script, marker: 5, at: .ms(20_032))
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(20_100)) }
        script.runTimers(until: .ms(20_600))
        script.clearLog()
        let opened = script.run { $0.transportOpened(at: .ms(20_650)) }
        #expect(script.machine.state == .ready)
        #expect(opened.contains(.note(.readNotConfirmed(audioChunks: 2))))
        #expect(script.machine.ledger.counters.audioUnconfirmed == 5)
    }

    /// A runtime that says nothing at all within the wait: the session resumes when it runs out.
    @Test func whenTheWaitRunsOutTheSessionResumesWithTheHeldAudio() {
        var script = SessionScript(Self.configuration(resumptionWait: .seconds(2)))
        script.connectAndOpen(at: .origin)
        Self.sendFrame(&script, marker: 1, at: .ms(32))
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(100)) }
        script.run { $0.captured(Self.frame(SessionScript.room, marker: 2), at: .ms(132)) }
        script.runTimers(until: .ms(600))
        script.run { $0.transportOpened(at: .ms(650)) }
        script.clearLog()
        script.runTimers(until: .ms(2_649))
        #expect(script.machine.state == .connecting)
        script.runTimers(until: .ms(2_650))
        #expect(script.machine.state == .ready)
        #expect(Self.sentMarkers(script.log) == [2])
        #expect(script.log.contains(.note(.readNotConfirmed(audioChunks: 1))))
    }

    /// The new connection drops before the runtime answered: the next attempt waits again, and
    /// nothing held is lost.
    @Test func aConnectionThatDropsWhileWaitingForTheRuntimesWordIsRetriedAndHoldsOn() {
        var script = SessionScript(Self.configuration(resumptionWait: .seconds(2)))
        script.connectAndOpen(at: .origin)
        for marker in Int16(1)...3 { Self.sendFrame(&script, marker: marker, at: .ms(32 * Int(marker))) }
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(200)) }
        script.runTimers(until: .ms(700))
        script.run { $0.transportOpened(at: .ms(750)) }
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(800)) }
        #expect(script.log.contains(.note(.reconnecting(attempt: 2, of: 3, in: .seconds(1), reason: Self.reset))))
        script.runTimers(until: .ms(1_800))
        script.run { $0.transportOpened(at: .ms(1_850)) }
        #expect(script.machine.state == .connecting)
        let resumed = script.receive(.sessionResumed(audioChunks: 2, texts: 0), at: .ms(1_900))
        #expect(Self.sentMarkers(resumed) == [3])
        #expect(script.machine.state == .ready)
    }

    /// A rotation's fresh connection may answer `session.resumed` too: the old connection closes
    /// in order, so nothing was lost, and nothing is sent again.
    @Test func sessionResumedOnALiveConnectionChangesNothing() {
        var script = SessionScript(Self.configuration(resumptionWait: .seconds(2)))
        script.connectAndOpen(at: .origin)
        Self.sendFrame(&script, marker: 1, at: .ms(32))
        script.clearLog()
        let actions = script.receive(.sessionResumed(audioChunks: 0, texts: 0), at: .ms(40))
        #expect(Self.sentMarkers(actions).isEmpty)
        #expect(script.machine.ledger.counters.ignoredEvents == 0)
        #expect(script.machine.ledger.counters.framesResent == 0)
    }

    @Test func aReplyPlayingWhenTheConnectionDropsIsCutAndSaidToBe() {
        var script = SessionScript(Self.configuration())
        script.connectAndOpen(at: .origin)
        script.receive(.audioChunk(SessionRuleTests.reply), at: .ms(500))
        #expect(script.machine.state == .speaking)
        script.clearLog()
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(600)) }
        #expect(script.log.contains(.cutPlayback))
        #expect(script.log.contains(.note(.replyCutByDrop)))
        #expect(script.transitions == ["speaking→connecting"])
        #expect(script.machine.ledger.counters.repliesCutByDrop == 1)
    }

    @Test func endingWhileWaitingToReconnectEndsAtOnceAndCountsTheHeldAudioAsDropped() {
        var script = SessionScript(Self.configuration())
        script.connectAndOpen(at: .origin)
        script.run { $0.transportClosed(Self.reset, orderly: false, at: .ms(1_000)) }
        script.frames(SessionScript.room, count: 4, from: .ms(1_000))
        script.clearLog()
        script.run { $0.end(at: .ms(1_200)) }
        #expect(script.machine.state == .disconnected)
        #expect(!script.log.contains(.closeTransport))
        #expect(script.machine.ledger.counters.framesDropped == 4)
        #expect(SessionTimeline.summary(of: script.machine, duration: .seconds(2))[2]
            == "audio sent: 0.000 s in 0 frames, 4 frames dropped while reconnecting (past the hold); received: 0.000 s in 0 chunks")
    }
}
