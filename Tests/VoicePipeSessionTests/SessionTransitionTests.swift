import Testing
import VoicePipeCore
import VoicePipeSession

/// Every row of the transition table in SESSION.md, in its order, and the events each state ignores.
struct SessionTransitionTests {
    static let reply = AudioChunk(sampleRate: 24_000, samples: [Int16](repeating: 1_000, count: 480))

    /// A session that is ready, talking and then thinking about one voice turn ending at 1.312 s.
    static func thinking() -> SessionScript {
        var script = SessionScript()
        script.connectAndOpen()
        let spoken = script.frames(SessionScript.voice, count: 25, from: .origin)
        script.frames(SessionScript.room, count: 16, from: spoken)
        return script
    }

    @Test func row1DisconnectedConnectOpensTheTransport() {
        var script = SessionScript()
        let actions = script.run { $0.connect(at: .origin) }
        #expect(script.machine.state == .connecting)
        #expect(actions.first == .note(.stateChanged(from: .disconnected, to: .connecting)))
        #expect(actions.contains(.openTransport))
        #expect(actions.last == .scheduleTick(at: .seconds(10)))
    }

    @Test func row2ErrorConnectTriesAgain() {
        var script = SessionScript()
        script.run { $0.connect(at: .origin) }
        script.run { $0.transportClosed("refused", orderly: false, at: .ms(5)) }
        #expect(script.machine.state == .error(.transport("refused")))
        let actions = script.run { $0.connect(at: .seconds(1)) }
        #expect(script.machine.state == .connecting)
        #expect(actions.contains(.openTransport))
    }

    @Test func row3ConnectingOpenedSendsSessionStartAndIsReady() {
        var script = SessionScript(SessionConfiguration(sessionId: "s-42", context: ["persona": .string("Dana")]))
        script.run { $0.connect(at: .origin) }
        let actions = script.run { $0.transportOpened(at: .ms(120)) }
        #expect(script.machine.state == .ready)
        #expect(actions.contains(.send(.sessionStart(sessionId: "s-42", context: ["persona": .string("Dana")]))))
        #expect(script.transitions == ["disconnected→connecting", "connecting→ready"])
    }

    @Test func row4ConnectingTimesOutAfterTenSeconds() {
        var script = SessionScript()
        script.run { $0.connect(at: .origin) }
        #expect(script.run { $0.tick(at: .seconds(9.999)) }.isEmpty)
        #expect(script.machine.state == .connecting)
        let actions = script.run { $0.tick(at: .seconds(10)) }
        #expect(script.machine.state == .error(.timeout(.connect, limit: .seconds(10))))
        #expect(actions.contains(.closeTransport))
        #expect(script.machine.stateLine == "Error: the connection to the runtime did not open within 10.000 s")
    }

    @Test func row5ConnectingTransportClosedIsATransportError() {
        var script = SessionScript()
        script.run { $0.connect(at: .origin) }
        script.run { $0.transportClosed("could not start the runtime 'nope': command not found", orderly: false, at: .ms(30)) }
        #expect(script.machine.state == .error(.transport("could not start the runtime 'nope': command not found")))
    }

    @Test func row6ConnectingEndAbandonsTheAttempt() {
        var script = SessionScript()
        script.run { $0.connect(at: .origin) }
        let actions = script.run { $0.end(at: .ms(50)) }
        #expect(script.machine.state == .disconnected)
        #expect(actions.contains(.closeTransport))
        // The transport's own closing report is expected, not an ignored event.
        script.run { $0.transportClosed("closed by the client", orderly: true, at: .ms(51)) }
        #expect(script.machine.counters.ignoredEvents == 0)
    }

    @Test func row7ReadyVoiceIsTalkingAndEveryFrameIsSent() {
        var script = SessionScript()
        script.connectAndOpen()
        script.frames(SessionScript.room, count: 3, from: .origin)
        #expect(script.machine.state == .ready)
        script.frames(SessionScript.voice, count: 1, from: .ms(96))
        #expect(script.machine.state == .talking)
        #expect(script.sent.filter { $0 == "frame" }.count == 4)
        #expect(script.machine.counters.samplesSent == 4 * 512)
    }

    @Test func row8ThinkingVoiceIsTalkingAgain() {
        var script = Self.thinking()
        #expect(script.machine.state == .thinking)
        script.frames(SessionScript.voice, count: 1, from: .ms(1_400))
        #expect(script.machine.state == .talking)
        #expect(script.machine.turns.count == 2)
    }

    @Test func row9TalkingGateClosesAfterItsHangOver() {
        var script = SessionScript()
        script.connectAndOpen()
        let spoken = script.frames(SessionScript.voice, count: 25, from: .origin)
        // 15 quiet frames are 480 ms: still inside the 500 ms hang-over.
        let after15 = script.frames(SessionScript.room, count: 15, from: spoken)
        #expect(script.machine.state == .talking)
        script.frames(SessionScript.room, count: 1, from: after15)
        #expect(script.machine.state == .thinking)
        #expect(script.machine.turns[0].speechEndedAt == spoken)
        #expect(script.machine.turns[0].endedAt == after15 + SessionScript.frame)
    }

    @Test func row10TalkingRuntimeFinalUserTranscriptEndsTheTurn() {
        var script = SessionScript()
        script.connectAndOpen()
        let spoken = script.frames(SessionScript.voice, count: 10, from: .origin)
        script.receive(.transcript(role: .user, text: "book a service", isFinal: false), at: spoken)
        #expect(script.machine.state == .talking)
        script.receive(.transcript(role: .user, text: "book a service", isFinal: true), at: spoken + .milliseconds(5))
        #expect(script.machine.state == .thinking)
        // The gate closing later does not end a second turn.
        script.frames(SessionScript.room, count: 20, from: spoken)
        #expect(script.machine.turns.count == 1)
        #expect(script.machine.state == .thinking)
    }

    @Test func row11TalkingInputEndedEndsTheTurn() {
        var script = SessionScript()
        script.connectAndOpen()
        let spoken = script.frames(SessionScript.voice, count: 10, from: .origin)
        script.run { $0.inputEnded(at: spoken) }
        #expect(script.machine.state == .thinking)
        #expect(script.machine.turns[0].endedAt == spoken)
    }

    @Test func row12ReadyRuntimeFinalUserTranscriptIsATurnTheGateMissed() {
        var script = SessionScript()
        script.connectAndOpen()
        script.receive(.transcript(role: .user, text: "hello?", isFinal: true), at: .seconds(2))
        #expect(script.machine.state == .thinking)
        #expect(script.machine.turns.map(\.kind) == [.voice])
    }

    @Test func row13ReadyTextSentIsThinking() throws {
        var script = SessionScript()
        script.connectAndOpen()
        try script.type("what is my tyre pressure?", at: .seconds(1))
        #expect(script.machine.state == .thinking)
        #expect(script.sent.last == "text.input what is my tyre pressure?")
        #expect(script.machine.turns.map(\.kind) == [.text])
    }

    @Test(arguments: ["ready", "talking", "thinking"])
    func row14FirstReplyAudioIsSpeaking(from: String) {
        var script = SessionScript()
        script.connectAndOpen()
        switch from {
        case "talking": script.frames(SessionScript.voice, count: 2, from: .origin)
        case "thinking": script = Self.thinking()
        default: break
        }
        #expect(script.machine.state.name == from)
        let actions = script.receive(.audioChunk(Self.reply), at: .seconds(2))
        #expect(script.machine.state == .speaking)
        #expect(actions.contains(.playReply(Self.reply)))
    }

    @Test func row15SpeakingPlayedOutWithAGapIsReady() {
        var script = Self.thinking()
        script.receive(.audioChunk(Self.reply), at: .seconds(2))
        script.run { $0.playbackDrained(at: .ms(2_020)) }
        #expect(script.scheduled == .ms(2_320))
        // More audio inside the gap keeps the reply going.
        script.receive(.audioChunk(Self.reply), at: .ms(2_200))
        script.run { $0.tick(at: .ms(2_320)) }
        #expect(script.machine.state == .speaking)
        script.run { $0.playbackDrained(at: .ms(2_220)) }
        script.run { $0.tick(at: .ms(2_519)) }
        #expect(script.machine.state == .speaking)
        script.run { $0.tick(at: .ms(2_520)) }
        #expect(script.machine.state == .ready)
    }

    @Test func row15SpeakingPlayedOutReturnsToTheUserWhoIsSpeaking() {
        var script = Self.thinking()
        script.receive(.audioChunk(Self.reply), at: .ms(1_400))
        // The user speaks over the reply, and the runtime does not interrupt.
        script.frames(SessionScript.voice, count: 3, from: .ms(1_400))
        #expect(script.machine.state == .speaking)
        script.run { $0.playbackDrained(at: .ms(1_500)) }
        script.run { $0.tick(at: .ms(1_800)) }
        #expect(script.machine.state == .talking)
    }

    @Test func row16SpeakingInterruptionCutsPlaybackFirstAndIsTalking() {
        var script = Self.thinking()
        script.receive(.audioChunk(Self.reply), at: .seconds(2))
        let actions = script.receive(.interruption, at: .ms(2_100))
        #expect(actions.first == .cutPlayback)
        #expect(script.machine.state == .talking)
        #expect(script.machine.counters.interruptions == 1)
    }

    @Test(arguments: ["ready", "talking", "thinking", "speaking"])
    func row17SessionEndedIsDisconnected(from: String) {
        var script = Self.thinking()
        switch from {
        case "ready": script = SessionScript(); script.connectAndOpen()
        case "talking": script.frames(SessionScript.voice, count: 1, from: .seconds(2))
        case "speaking": script.receive(.audioChunk(Self.reply), at: .seconds(2))
        default: break
        }
        #expect(script.machine.state.name == from)
        let actions = script.receive(.sessionEnded(reason: "bye"), at: .seconds(3))
        #expect(script.machine.state == .disconnected)
        #expect(actions.contains(.closeTransport))
        #expect(script.machine.toolDrawer.last == .sessionEnded(reason: "bye", at: .seconds(3)))
    }

    @Test func row18ErrorMessageIsARuntimeError() {
        var script = Self.thinking()
        let actions = script.receive(.error(message: "model overloaded", code: "503"), at: .seconds(2))
        #expect(script.machine.state == .error(.runtimeError(message: "model overloaded", code: "503")))
        #expect(actions.contains(.closeTransport))
        #expect(script.machine.stateLine == "Error: the runtime reported an error: model overloaded (code 503)")
    }

    @Test func row19UnexpectedCloseIsATransportError() {
        var script = Self.thinking()
        script.run { $0.transportClosed("the runtime exited with status 3", orderly: true, at: .seconds(2)) }
        #expect(script.machine.state == .error(.transport("the runtime exited with status 3")))
    }

    @Test func row20OrderlyCloseAfterSessionEndIsDisconnected() {
        var script = SessionScript()
        script.connectAndOpen()
        script.run { $0.end(at: .seconds(1)) }
        #expect(script.sent.last == "session.end")
        script.run { $0.transportClosed("the runtime closed its output", orderly: true, at: .seconds(2)) }
        #expect(script.machine.state == .disconnected)
    }

    @Test func row21ThinkingReplyTimeout() {
        var script = Self.thinking()
        let ended = script.machine.turns[0].endedAt ?? .origin
        #expect(script.scheduled == ended + .seconds(15))
        script.run { $0.tick(at: ended + .seconds(15) - .nanoseconds(1)) }
        #expect(script.machine.state == .thinking)
        let actions = script.run { $0.tick(at: ended + .seconds(15)) }
        #expect(script.machine.state == .error(.timeout(.reply, limit: .seconds(15))))
        #expect(actions.contains(.closeTransport))
    }

    @Test func row22LongRunningTurnGetsTheLongAllowance() {
        var script = Self.thinking()
        let ended = script.machine.turns[0].endedAt ?? .origin
        script.run { $0.markTurnLongRunning(at: ended) }
        script.run { $0.tick(at: ended + .seconds(15)) }
        #expect(script.machine.state == .thinking)
        script.run { $0.tick(at: ended + .seconds(90)) }
        #expect(script.machine.state == .error(.timeout(.longTurn, limit: .seconds(90))))
    }

    @Test func row23SessionEndUnconfirmedTimesOut() {
        var script = SessionScript()
        script.connectAndOpen()
        script.run { $0.end(at: .seconds(1)) }
        // Reply audio restarts the wait: a reply still arriving is heard out.
        script.receive(.audioChunk(Self.reply), at: .seconds(3))
        script.run { $0.tick(at: .seconds(6)) }
        #expect(script.machine.isEnding)
        script.run { $0.tick(at: .seconds(8)) }
        #expect(script.machine.state == .error(.timeout(.sessionEnd, limit: .seconds(5))))
    }

    @Test func row24AudioThatCannotBeSentForTheStallLimitIsAnError() {
        var script = SessionScript()
        script.connectAndOpen()
        var instant = SessionInstant.origin
        for _ in 0..<200 {
            instant = instant + SessionScript.frame
            script.capture(SessionScript.room, at: instant, refused: true)
            if case .error = script.machine.state { break }
        }
        // The first drop was at 32 ms; five seconds later the session gives up.
        #expect(instant == .ms(32 + 5_024))
        #expect(script.machine.state == .error(.runtimeStalled(.milliseconds(5_024))))
        #expect(script.machine.counters.framesSent == 0)
        #expect(script.machine.counters.framesDropped == 158)
    }

    @Test func row24ADropFollowedBySentAudioStartsTheStreakAgain() {
        var script = SessionScript()
        script.connectAndOpen()
        var instant = SessionInstant.origin
        for index in 0..<400 {
            instant = instant + SessionScript.frame
            script.capture(SessionScript.room, at: instant, refused: index % 10 != 0)
        }
        #expect(script.machine.state == .ready)
    }

    @Test func row25ARefusedControlMessageIsATransportError() {
        var script = SessionScript()
        script.connectAndOpen()
        script.run { $0.sendFailed(.sessionStart, reason: "the transport is closed", at: .ms(1)) }
        #expect(script.machine.state == .error(.transport("session.start could not be sent: the transport is closed")))
    }

    static func reconnecting(attempts: Int = 2) -> SessionScript {
        var script = SessionScript(SessionConfiguration(sessionId: "s-1", reconnect: ReconnectPolicy(attempts: attempts, jitter: 0)))
        script.connectAndOpen()
        script.run { $0.transportClosed("reset", orderly: false, at: .seconds(1)) }
        return script
    }

    @Test func row27ADropWithAttemptsLeftIsReconnecting() {
        let script = Self.reconnecting()
        #expect(script.machine.state == .connecting)
        #expect(script.machine.isReconnecting)
        #expect(script.scheduled == .ms(1_500))
    }

    @Test func row28TheBackoffOpensAFreshConnection() {
        var script = Self.reconnecting()
        script.clearLog()
        script.runTimers(until: .ms(1_500))
        #expect(script.log.contains(.openTransport))
        #expect(script.scheduled == .ms(11_500))
    }

    @Test func row29TheNewConnectionContinuesTheSessionAndWaitsForTheRuntimesWord() {
        var script = Self.reconnecting()
        script.runTimers(until: .ms(1_500))
        script.run { $0.transportOpened(at: .ms(1_600)) }
        #expect(script.machine.state == .connecting)
        #expect(script.machine.isReconnecting)
        #expect(script.log.contains(.send(.sessionStart(sessionId: "s-1", context: JSONObject(), continuesSessionId: "s-1"))))
        #expect(script.scheduled == .ms(3_600))
    }

    @Test func row30AFailedAttemptWithAttemptsLeftWaitsTheNextBackoff() {
        var script = Self.reconnecting()
        script.runTimers(until: .ms(1_500))
        script.run { $0.transportClosed("refused", orderly: false, at: .ms(1_600)) }
        #expect(script.machine.isReconnecting)
        #expect(script.scheduled == .ms(2_600))
    }

    @Test func row31NoAttemptLeftIsATransportError() {
        var script = Self.reconnecting(attempts: 1)
        script.runTimers(until: .ms(1_500))
        script.run { $0.transportClosed("refused", orderly: false, at: .ms(1_600)) }
        #expect(script.machine.state == .error(.transport("refused; gave up after 1 attempt to reconnect")))
    }

    @Test func row32TheMicrophoneLostWhileTalkingEndsTheTurnAndLeavesText() throws {
        var script = SessionScript()
        script.connectAndOpen()
        let spoken = script.frames(SessionScript.voice, count: 10, from: .origin)
        #expect(script.machine.state == .talking)
        let actions = script.run { $0.audioLost("microphone 'usb' failed: no such device", at: spoken) }
        #expect(script.machine.state == .thinking)
        #expect(actions.contains(.note(.audioLost("microphone 'usb' failed: no such device"))))
        #expect(script.machine.turns.count == 1 && script.machine.turns[0].endedAt == spoken)
        #expect(script.machine.stateLine == "Thinking — audio unavailable: microphone 'usb' failed: no such device; text only")
        #expect(script.machine.counters.audioLosses == 1)
        // Frames that still come are not sent; typed text is, as in any text session.
        script.clearLog()
        script.frames(SessionScript.voice, count: 3, from: spoken)
        #expect(!script.sent.contains("frame"))
        try script.type("still here", at: spoken + .seconds(1))
        #expect(script.sent.contains("text.input still here"))
    }

    @Test func row33TheMicrophoneBackSendsFramesAndOpensTurnsAgain() {
        var script = SessionScript()
        script.connectAndOpen()
        script.run { $0.audioLost("microphone 'usb' failed", at: .seconds(1)) }
        let actions = script.run { $0.audioRestored("microphone 'usb' is back at 16000 Hz, mono, Int16", at: .seconds(3)) }
        #expect(actions.contains(.note(.audioRestored("microphone 'usb' is back at 16000 Hz, mono, Int16"))))
        #expect(script.machine.stateLine == "Ready")
        script.clearLog()
        script.frames(SessionScript.voice, count: 2, from: .seconds(3))
        #expect(script.sent.filter { $0 == "frame" }.count == 2)
        #expect(script.machine.state == .talking)
        // Told twice, the machine changes nothing and counts it.
        script.run { $0.audioRestored("again", at: .seconds(4)) }
        #expect(script.machine.counters.ignoredByKind["audio restored (talking)"] == 1)
    }

    @Test func row34SessionResumedMakesTheSessionLiveAgain() {
        var script = Self.reconnecting()
        script.runTimers(until: .ms(1_500))
        script.run { $0.transportOpened(at: .ms(1_600)) }
        script.clearLog()
        script.receive(.sessionResumed(audioChunks: 0, texts: 0), at: .ms(1_650))
        #expect(script.transitions == ["connecting→ready"])
        #expect(script.machine.ledger.counters.reconnections == 1)
    }

    @Test func row35AnyOtherFirstMessageOrTheWaitGoesLiveUnconfirmed() {
        var script = Self.reconnecting()
        script.runTimers(until: .ms(1_500))
        script.run { $0.transportOpened(at: .ms(1_600)) }
        script.clearLog()
        script.receive(.transcript(role: .assistant, text: "still here", isFinal: true), at: .ms(1_650))
        #expect(script.transitions == ["connecting→ready"])
        #expect(script.machine.transcript.last?.text == "still here")

        var waited = Self.reconnecting()
        waited.runTimers(until: .ms(1_500))
        waited.run { $0.transportOpened(at: .ms(1_600)) }
        waited.clearLog()
        waited.runTimers(until: .ms(3_600))
        #expect(waited.transitions == ["connecting→ready"])
    }

    @Test func eventsAStateDoesNotAllowAreIgnoredAndCounted() {
        var script = SessionScript()
        script.receive(.audioChunk(Self.reply), at: .origin)
        script.run { $0.transportOpened(at: .origin) }
        script.connectAndOpen()
        script.receive(.interruption, at: .seconds(1))
        script.run { $0.connect(at: .seconds(1)) }
        script.run { $0.playbackDrained(at: .seconds(1)) }
        script.receive(.textInput(text: "echo"), at: .seconds(1))
        #expect(script.machine.state == .ready)
        #expect(script.machine.counters.ignoredEvents == 6)
        #expect(script.machine.counters.ignoredByKind == [
            "audio.chunk in disconnected (disconnected)": 1, "transport opened (disconnected)": 1,
            "interruption (ready)": 1, "connect (ready)": 1, "playback drained (ready)": 1,
            "text.input from the runtime (ready)": 1,
        ])
    }

    @Test func framesBeforeTheSessionIsLiveAreCountedNotSent() {
        var script = SessionScript()
        script.run { $0.connect(at: .origin) }
        script.frames(SessionScript.voice, count: 5, from: .origin)
        #expect(script.machine.counters.framesNotLive == 5)
        #expect(!script.sent.contains("frame"))
        #expect(script.machine.state == .connecting)
    }
}
