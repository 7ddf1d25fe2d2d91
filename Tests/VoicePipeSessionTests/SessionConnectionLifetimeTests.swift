import Testing
import VoicePipeCore
import VoicePipeSession

/// What the state as values makes true: leaving the live connection, from any phase and by any
/// way out, leaves nothing of it behind for the next connection; a rotation holds what would be
/// sent and releases it in order; the reply ends on the output whenever `speaking` is left; a
/// frame counts as sent only once the transport took it.
struct SessionConnectionLifetimeTests {
    static let reply = AudioChunk(sampleRate: 24_000, samples: [Int16](repeating: 1_000, count: 480))

    enum Phase: String, CaseIterable, CustomStringConvertible {
        case ready, talking, thinking, speaking
        var description: String { rawValue }
    }

    enum WayOut: String, CaseIterable, CustomStringConvertible {
        case dropped, runtimeError, runtimeEnded, userEndedTwice
        var description: String { rawValue }
    }

    /// A live session in `phase`, with one turn behind it when the phase has one.
    static func session(in phase: Phase) -> SessionScript {
        var script: SessionScript
        switch phase {
        case .ready:
            script = SessionScript()
            script.connectAndOpen()
        case .talking:
            script = SessionScript()
            script.connectAndOpen()
            script.frames(SessionScript.voice, count: 5, from: .origin)
        case .thinking:
            script = SessionTransitionTests.thinking()
        case .speaking:
            script = SessionTransitionTests.thinking()
            script.receive(.audioChunk(Self.reply), at: .ms(1_500))
        }
        #expect(script.machine.state.name == phase.rawValue)
        return script
    }

    /// Leaves the live connection at 2 s.
    static func leave(_ script: inout SessionScript, by way: WayOut) {
        switch way {
        case .dropped:
            script.run { $0.transportClosed("connection reset by peer", orderly: false, at: .seconds(2)) }
        case .runtimeError:
            script.receive(.error(message: "overloaded", code: "503"), at: .seconds(2))
        case .runtimeEnded:
            script.receive(.sessionEnded(reason: nil), at: .seconds(2))
        case .userEndedTwice:
            script.run { $0.end(at: .seconds(2)) }
            script.run { $0.end(at: .seconds(2)) }
        }
        if case .error = script.machine.state {} else { #expect(script.machine.state == .disconnected) }
    }

    @Test(arguments: Phase.allCases, WayOut.allCases)
    func leavingTheLiveConnectionLeavesNothingOfItForTheNext(phase: Phase, way: WayOut) {
        var script = Self.session(in: phase)
        let turnsBefore = script.machine.turns.count
        Self.leave(&script, by: way)
        script.run { $0.transportClosed("closed by the client", orderly: true, at: .seconds(2)) }
        let reconnectedAt = SessionInstant.seconds(20)
        script.clearLog()
        script.connectAndOpen(at: reconnectedAt)

        #expect(script.machine.state == .ready)
        #expect(!script.machine.isEnding)
        #expect(!script.machine.isRotating)
        // The only timer is the new connection's keep-alive: no reply owed, no end awaited.
        #expect(script.scheduled == reconnectedAt + .seconds(40))
        #expect(script.runTimers(until: reconnectedAt + .seconds(39)) == 0)
        // No reply is playing, so a drained report does not fit.
        script.run { $0.playbackDrained(at: reconnectedAt + .seconds(1)) }
        #expect(script.machine.counters.ignoredByKind["playback drained (ready)"] == 1)
        // The gate starts closed: quiet ends no turn, voice starts a new one.
        let quietEnd = script.frames(SessionScript.room, count: 20, from: reconnectedAt + .seconds(1))
        #expect(script.machine.state == .ready)
        #expect(!script.log.contains { if case .note(.turnEnded) = $0 { true } else { false } })
        script.frames(SessionScript.voice, count: 1, from: quietEnd)
        #expect(script.machine.state == .talking)
        #expect(script.machine.turns.count == turnsBefore + 1)
        #expect(script.machine.turns.last?.startedAt == quietEnd + SessionScript.frame)
        // The records outlive connections: the turns before the drop are still there.
        #expect(script.machine.turns.prefix(turnsBefore).allSatisfy { $0.startedAt < reconnectedAt })
    }

    @Test(arguments: WayOut.allCases)
    func leavingWhileSpeakingEndsTheReplyOnTheOutputBeforeTheStateChange(way: WayOut) throws {
        var script = Self.session(in: .speaking)
        script.clearLog()
        Self.leave(&script, by: way)
        let endReply = try #require(script.log.firstIndex(of: .endReply))
        let change = try #require(script.log.firstIndex { if case .note(.stateChanged(.speaking, _)) = $0 { true } else { false } })
        #expect(endReply < change)
        #expect(script.log.filter { $0 == .endReply }.count == 1)
    }

    @Test func theReplyEndsOnTheOutputWhenItPlaysOutOrIsInterruptedAndNotOtherwise() throws {
        var played = Self.session(in: .speaking)
        played.run { $0.playbackDrained(at: .ms(1_520)) }
        let finished = played.run { $0.tick(at: .ms(1_820)) }
        #expect(finished.contains(.endReply))
        #expect(played.machine.state == .ready)

        var interrupted = Self.session(in: .speaking)
        let cut = interrupted.receive(.interruption, at: .ms(1_600))
        #expect(try #require(cut.firstIndex(of: .cutPlayback)) < #require(cut.firstIndex(of: .endReply)))
        #expect(cut.contains(.note(.stateChanged(from: .speaking, to: .talking))))

        var talking = Self.session(in: .thinking)
        talking.clearLog()
        talking.frames(SessionScript.voice, count: 2, from: .ms(1_400))
        #expect(talking.machine.state == .talking)
        #expect(!talking.log.contains(.endReply))
    }

    @Test func aCapturedFrameCountsAsSentOnlyOnceTheTransportTookIt() {
        var script = SessionScript()
        script.connectAndOpen()
        let frame = AudioFrame(samples: [Int16](repeating: 7, count: 320), level: SessionScript.room)
        let actions = script.run { $0.captured(frame, at: .seconds(30)) }
        #expect(actions.contains(.sendCapturedFrame(frame)))
        #expect(script.machine.counters.framesSent == 0)
        #expect(script.scheduled == .seconds(40), "the keep-alive still runs from the connection's start")
        script.run { $0.frameSent(frame, at: .seconds(30)) }
        #expect(script.machine.counters.framesSent == 1)
        #expect(script.machine.counters.samplesSent == 320)
        #expect(script.scheduled == .seconds(70))
    }

    // MARK: Rotation holds what it would send

    static func rotating(holdLimit: Duration = .seconds(10)) -> SessionScript {
        var configuration = SessionConfiguration(sessionId: "s-1", keepAliveInterval: .seconds(1_000), rotateAfter: .seconds(60))
        configuration.rotationHoldLimit = holdLimit
        var script = SessionScript(configuration)
        script.connectAndOpen()
        script.runTimers(until: .ms(60_000))
        #expect(script.machine.isRotating)
        script.clearLog()
        return script
    }

    static func frame(_ value: Int16) -> AudioFrame {
        AudioFrame(samples: [Int16](repeating: value, count: SessionScript.frameSamples), level: SessionScript.voice)
    }

    @Test func framesAndTextsDuringARotationGoOutInOrderOnTheFreshConnectionAfterItsSessionStart() throws {
        var script = Self.rotating()
        for (index, value) in [Int16(1), 2, 3].enumerated() {
            let actions = script.run { $0.captured(Self.frame(value), at: .ms(60_010 + 32 * index)) }
            #expect(!actions.contains { if case .sendCapturedFrame = $0 { true } else { false } })
        }
        let typed = try script.type("while rotating", at: .ms(60_020))
        #expect(typed.sentTexts.isEmpty)
        #expect(script.machine.pendingTexts.map(\.text) == ["while rotating"])

        let opened = script.run { $0.rotationOpened(at: .ms(60_100)) }
        let sends = opened.compactMap { action -> String? in
            switch action {
            case .send(.sessionStart(_, _, let continues)): "session.start continues \(continues ?? "-")"
            case .sendCapturedFrame(let frame): "frame \(frame.samples[0])"
            case .closeReplacedTransport: "close the replaced connection"
            case .sendText(let text): "text \(text.text)"
            default: nil
            }
        }
        #expect(sends == ["session.start continues s-1", "frame 1", "frame 2", "frame 3",
                          "close the replaced connection", "text while rotating"])
        #expect(script.machine.state == .talking)
        #expect(!script.machine.isRotating)
    }

    @Test func aFailedRotationSendsWhatItHeldOnTheCurrentConnection() {
        var script = Self.rotating()
        script.run { $0.captured(Self.frame(9), at: .ms(60_010)) }
        let failed = script.run { $0.rotationFailed("connection refused", at: .ms(60_050)) }
        #expect(failed.contains(.sendCapturedFrame(Self.frame(9))))
        #expect(!failed.contains(.closeReplacedTransport))
        #expect(!failed.contains { if case .send(.sessionStart) = $0 { true } else { false } })
    }

    @Test func audioPastTheHoldLimitIsDroppedAndCounted() {
        // 0.1 s at 16 kHz is 1 600 samples: three 512-sample frames fit, the fourth does not.
        var script = Self.rotating(holdLimit: .milliseconds(100))
        var notes: [SessionAction] = []
        for index in 0..<4 {
            notes += script.run { $0.captured(Self.frame(Int16(index)), at: .ms(60_010 + 32 * index)) }
        }
        #expect(script.machine.counters.framesDropped == 1)
        #expect(notes.contains(.note(.audioDropped(totalFrames: 1))))
        let opened = script.run { $0.rotationOpened(at: .ms(60_200)) }
        #expect(opened.filter { if case .sendCapturedFrame = $0 { true } else { false } }.count == 3)
    }

    @Test func anEndAskedForDuringARotationGoesOutAfterTheFreshSessionStart() throws {
        var script = Self.rotating()
        script.run { $0.end(at: .ms(60_010)) }
        #expect(!script.log.contains(.send(.sessionEnd)))
        #expect(script.machine.isEnding)
        let opened = script.run { $0.rotationOpened(at: .ms(60_050)) }
        let start = try #require(opened.firstIndex { if case .send(.sessionStart) = $0 { true } else { false } })
        let end = try #require(opened.firstIndex(of: .send(.sessionEnd)))
        #expect(start < end)
    }

    @Test func aTextTypedDuringARotationGoesOutBeforeAnEndAskedForBeforeItOpened() throws {
        var script = Self.rotating()
        try script.type("one more thing", at: .ms(60_010))
        script.run { $0.end(at: .ms(60_020)) }
        let opened = script.run { $0.rotationOpened(at: .ms(60_050)) }
        let text = try #require(opened.firstIndex { if case .sendText(let text) = $0 { text.text == "one more thing" } else { false } })
        let end = try #require(opened.firstIndex(of: .send(.sessionEnd)))
        #expect(text < end)
    }

    @Test func framesARotationStillHeldWhenTheConnectionDroppedCountAsDropped() {
        var script = Self.rotating()
        for index in 0..<3 { script.run { $0.captured(Self.frame(Int16(index)), at: .ms(60_010 + 32 * index)) } }
        script.run { $0.transportClosed("connection reset by peer", orderly: false, at: .ms(60_200)) }
        #expect(script.machine.counters.framesDropped == 3)
        #expect(script.machine.counters.framesSent == 0)
    }

    /// A refused text waits for its retry, and keeps a due rotation waiting: the driver is never
    /// asked to tick at an instant that has already passed, over and over.
    @Test func aRefusedTextIsRetriedOnItsOwnTimeAndARotationWaitsForIt() throws {
        var script = SessionScript(SessionConfiguration(sessionId: "s-1", keepAliveInterval: .seconds(1_000), rotateAfter: .seconds(60)))
        script.connectAndOpen()
        let sent = try #require(script.machine.typed("hello", at: .ms(59_990)).sentTexts.first)
        script.run { $0.textNotSent(sent, reason: "backlog full", at: .ms(59_990)) }
        #expect(script.scheduled == .ms(60_000))
        let retry = script.run { $0.tick(at: .ms(60_000)) }
        #expect(retry.sentTexts.map(\.text) == ["hello"])
        #expect(!retry.contains(.rotateTransport))
        script.run { $0.textNotSent(sent, reason: "backlog full", at: .ms(60_000)) }
        #expect(script.scheduled == .ms(60_010))
        // A tick before the retry is due sends nothing again.
        #expect(script.run { $0.tick(at: .ms(60_005)) }.sentTexts.isEmpty)
        let again = script.run { $0.tick(at: .ms(60_010)) }
        #expect(again.sentTexts.map(\.text) == ["hello"])
        script.confirmTexts(in: again, at: .ms(60_010))
        #expect(script.machine.state == .thinking)
        #expect(!script.log.contains(.rotateTransport))
    }
}
