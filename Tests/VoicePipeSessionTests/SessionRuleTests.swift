import Testing
import VoicePipeCore
import VoicePipeSession

/// The session's rules beyond its transitions: pending text, keep-alive, timeouts, the tool
/// drawer, escalation, text-only mode, turn latency, ending.
struct SessionRuleTests {
    static let reply = AudioChunk(sampleRate: 24_000, samples: [Int16](repeating: 1_000, count: 480))

    // MARK: Pending text

    @Test func textTypedWhileConnectingIsSentInOrderExactlyOnceWhenReady() throws {
        var script = SessionScript()
        script.run { $0.connect(at: .origin) }
        try script.type("first", at: .ms(10))
        try script.type("second", at: .ms(20))
        try script.type("third", at: .ms(30))
        #expect(script.machine.pendingTexts.map(\.text) == ["first", "second", "third"])
        #expect(!script.sent.contains { $0.hasPrefix("text.input") })
        script.run { $0.transportOpened(at: .ms(500)) }
        let texts = script.log.compactMap { if case .sendText(let text) = $0 { text.text } else { nil } }
        #expect(texts == ["first", "second", "third"])
        #expect(script.sent.first == "session.start")
        // Until the transport takes them they are still pending, in order.
        #expect(script.machine.pendingTexts.map(\.number) == [1, 2, 3])
        script.confirmTexts(in: script.log, at: .ms(500))
        #expect(script.machine.pendingTexts.isEmpty)
        #expect(script.machine.counters.textsSent == 3)
        // Later events send nothing again.
        script.frames(SessionScript.room, count: 10, from: .ms(500))
        #expect(script.sent.filter { $0.hasPrefix("text.input") }.count == 3)
    }

    @Test func aDroppedConnectionKeepsUnsentTextAndSendsItOnceAfterReconnecting() throws {
        var script = SessionScript()
        script.connectAndOpen()
        try script.type("sent before the drop", at: .seconds(1))
        script.run { $0.transportClosed("connection reset by peer", orderly: false, at: .seconds(2)) }
        try script.type("typed while down", at: .seconds(3))
        try script.type("and another", at: .seconds(4))
        #expect(script.machine.pendingTexts.map(\.text) == ["typed while down", "and another"])
        script.clearLog()
        script.connectAndOpen(at: .seconds(5))
        #expect(script.sent == ["session.start", "text.input typed while down", "text.input and another"])
        #expect(script.machine.pendingTexts.isEmpty)
        #expect(script.machine.counters.textsSent == 3)
    }

    /// A text the transport took but never wrote (still in its backlog when the connection
    /// failed) never reached the runtime: it is queued again in its place, its turn withdrawn,
    /// and the next connection sends it once, after session.start, before later texts.
    @Test func aTextTheConnectionNeverWroteIsSentOnceAfterReconnecting() throws {
        var script = SessionScript()
        script.connectAndOpen()
        let first = try script.type("written", at: .seconds(1)).sentTexts
        #expect(first.count == 1)
        let second = try script.type("still in the backlog", at: .seconds(2)).sentTexts
        #expect(script.machine.counters.textsSent == 2)
        #expect(script.machine.state == .thinking)
        script.run { $0.transportClosed("connection reset by peer", orderly: false, at: .seconds(3)) }
        let requeued = script.run { $0.textsNotWritten(second.map(\.number), at: .seconds(3)) }
        #expect(requeued.contains(.note(.textRequeued(second[0], reason: "the connection ended before it was written"))))
        #expect(script.machine.pendingTexts.map(\.text) == ["still in the backlog"])
        #expect(script.machine.counters.textsSent == 1)
        #expect(script.machine.turns.map(\.wasWithdrawn) == [false, true])
        // Told twice, or about a text that was written, the machine changes nothing.
        var elsewhere = SessionScript()
        for index in 1...3 { try elsewhere.type("elsewhere \(index)", at: .ms(index)) }
        script.run { $0.textsNotWritten((second + [elsewhere.machine.pendingTexts[2]]).map(\.number), at: .seconds(3)) }
        #expect(script.machine.pendingTexts.map(\.text) == ["still in the backlog"])
        #expect(script.machine.counters.ignoredByKind["text not written (error)"] == 2)

        try script.type("typed while down", at: .seconds(4))
        script.clearLog()
        script.connectAndOpen(at: .seconds(5))
        #expect(script.sent == ["session.start", "text.input still in the backlog", "text.input typed while down"])
        #expect(script.machine.pendingTexts.isEmpty)
        #expect(script.machine.counters.textsSent == 3)
        let summary = SessionTimeline.summary(of: script.machine, duration: .seconds(6))
        #expect(summary.contains("turns: 3 (0 spoken, 3 typed); 1 typed turn withdrawn: the connection ended before the text was written"), "\(summary)")
    }

    /// On a live session (an old connection closing after a rotation) the text goes out again at once.
    @Test func aTextAnOldConnectionNeverWroteGoesOutAgainAtOnce() throws {
        var script = SessionScript()
        script.connectAndOpen()
        let text = try script.type("left behind", at: .seconds(1)).sentTexts
        #expect(script.machine.state == .thinking)
        let again = script.run { $0.textsNotWritten(text.map(\.number), at: .seconds(2)) }
        #expect(again.sentTexts == text)
        #expect(again.contains(.note(.stateChanged(from: .thinking, to: .ready))))
        script.confirmTexts(in: again, at: .seconds(2))
        #expect(script.machine.state == .thinking)
        #expect(script.machine.counters.textsSent == 1)
        #expect(script.machine.turns.map(\.wasWithdrawn) == [true, false])
    }

    @Test func aTextTheTransportRefusedGoesBackInItsPlace() throws {
        var script = SessionScript()
        script.run { $0.connect(at: .origin) }
        try script.type("one", at: .ms(1))
        try script.type("two", at: .ms(2))
        let opened = script.run { $0.transportOpened(at: .ms(10)) }
        let texts = opened.compactMap { if case .sendText(let text) = $0 { text } else { nil } }
        // The transport refuses both (its backlog is full); they keep their order.
        script.run { $0.textNotSent(texts[1], reason: "backlog full", at: .ms(10)) }
        script.run { $0.textNotSent(texts[0], reason: "backlog full", at: .ms(10)) }
        #expect(script.machine.pendingTexts.map(\.text) == ["one", "two"])
        // The next event sends them again, in order.
        let retry = script.run { $0.tick(at: .ms(20)) }
        #expect(retry.compactMap { if case .sendText(let text) = $0 { text.text } else { nil } } == ["one", "two"])
    }

    @Test func aFullQueueIsAnErrorAndQueuesNothing() throws {
        var script = SessionScript(SessionConfiguration(sessionId: "s", pendingTextLimit: 3))
        for index in 0..<3 { try script.type("text \(index)", at: .ms(index)) }
        #expect(throws: SessionInputError.pendingTextQueueFull(limit: 3)) { try script.type("one too many", at: .ms(5)) }
        #expect(script.machine.pendingTexts.count == 3)
        #expect("\(SessionInputError.pendingTextQueueFull(limit: 32))" == "32 texts are already waiting for the connection; wait until they are sent")
        #expect(throws: SessionInputError.emptyText) { try script.type("  \n", at: .ms(6)) }
    }

    // MARK: Keep-alive

    @Test func keepAliveSilenceGoesOutAtExactlyFortySecondsOfQuiet() {
        var script = SessionScript()
        script.connectAndOpen(at: .seconds(1))
        #expect(script.scheduled == .seconds(41))
        script.run { $0.tick(at: .seconds(41) - .nanoseconds(1)) }
        #expect(script.log.sentAudio.isEmpty)
        let actions = script.run { $0.tick(at: .seconds(41)) }
        #expect(actions.sentAudio == [AudioChunk(sampleRate: 16_000, samples: [Int16](repeating: 0, count: 1_600))])
        #expect(actions.contains(.note(.keepAlive)))
        #expect(script.scheduled == .seconds(81))
    }

    @Test func sentAudioResetsTheKeepAliveTimer() {
        var script = SessionScript()
        script.connectAndOpen()
        script.capture(SessionScript.room, at: .seconds(30))
        #expect(script.scheduled == .seconds(70))
        script.run { $0.tick(at: .seconds(40)) }
        #expect(script.log.sentAudio.isEmpty)
        script.run { $0.tick(at: .seconds(70)) }
        #expect(script.log.sentAudio.count == 1)
    }

    @Test func tenMinutesOfQuietSessionRunWithoutWaitingForRealTime() {
        var script = SessionScript()
        let wall = ContinuousClock()
        let started = wall.now
        script.connectAndOpen()
        let ticks = script.runTimers(until: .seconds(600))
        let elapsed = wall.now - started
        #expect(script.machine.counters.keepAlivesSent == 15)
        #expect(ticks == 15)
        #expect(script.machine.state == .ready)
        // Nothing waits for real time: ten minutes of session take microseconds, not minutes. The
        // bound is far from both, so a starved host's pauses cannot reach it, and far below 600 s.
        #expect(elapsed < .seconds(60))
    }

    // MARK: Timeouts

    @Test func aToolListedAsLongRunningGivesTheTurnTheLongAllowance() {
        var script = SessionTransitionTests.thinking()
        let ended = script.machine.turns[0].endedAt ?? .origin
        script.receive(.transcript(role: .user, text: "book it", isFinal: true), at: ended)
        script.receive(.toolCall(id: "t1", name: "commit_booking", input: .object([:])), at: ended + .seconds(1))
        script.run { $0.tick(at: ended + .seconds(15)) }
        #expect(script.machine.state == .error(.timeout(.reply, limit: .seconds(15))))

        var listed = SessionScript(SessionConfiguration(sessionId: "s", longRunningTools: ["commit_booking"]))
        listed.connectAndOpen()
        let spoken = listed.frames(SessionScript.voice, count: 5, from: .origin)
        let closed = listed.frames(SessionScript.room, count: 16, from: spoken)
        listed.receive(.transcript(role: .user, text: "book it", isFinal: true), at: closed)
        listed.receive(.toolCall(id: "t1", name: "commit_booking", input: .object([:])), at: closed + .seconds(1))
        listed.run { $0.tick(at: closed + .seconds(89)) }
        #expect(listed.machine.state == .thinking)
        listed.run { $0.tick(at: closed + .seconds(90)) }
        #expect(listed.machine.state == .error(.timeout(.longTurn, limit: .seconds(90))))
        #expect(listed.machine.stateLine == "Error: the runtime did not reply to the long-running turn within 90.000 s")
    }

    @Test func anAssistantTranscriptIsAReplyEventThatStopsTheReplyTimer() {
        var script = SessionTransitionTests.thinking()
        let ended = script.machine.turns[0].endedAt ?? .origin
        script.receive(.transcript(role: .assistant, text: "Let me check", isFinal: false), at: ended + .seconds(14))
        script.run { $0.tick(at: ended + .seconds(30)) }
        #expect(script.machine.state == .thinking)
        #expect(script.machine.turns[0].firstReplyEventAt == ended + .seconds(14))
    }

    @Test func aGateTurnTheRuntimeNeverTookIsDroppedWhileTheRuntimeTalksOn() {
        var script = SessionTransitionTests.thinking()
        let ended = script.machine.turns[0].endedAt ?? .origin
        // The runtime is alive (a debug line) but never acknowledges the turn: a cough.
        script.receive(.debug(message: "heartbeat"), at: ended + .seconds(1))
        let actions = script.run { $0.tick(at: ended + .seconds(15)) }
        #expect(script.machine.state == .ready)
        #expect(script.machine.turns[0].ignoredByRuntime)
        #expect(actions.contains { if case .note(.turnIgnored) = $0 { true } else { false } })
    }

    @Test func aCoughDuringALongReplyDoesNotEndTheSession() {
        var script = SessionScript()
        script.connectAndOpen()
        let spoken = script.frames(SessionScript.voice, count: 10, from: .origin)
        let closed = script.frames(SessionScript.room, count: 16, from: spoken)
        script.receive(.transcript(role: .user, text: "tell me a story", isFinal: true), at: closed)
        // A 30 s reply streams in; three loud frames (a cough) and their hang-over in the middle.
        var instant = closed + .milliseconds(100)
        for index in 0..<1_500 {
            script.receive(.audioChunk(Self.reply), at: instant)
            script.run { $0.playbackDrained(at: instant) }
            if index == 500 { script.frames(SessionScript.voice, count: 3, from: instant) }
            if index == 503 { script.frames(SessionScript.room, count: 16, from: instant) }
            instant = instant + .milliseconds(20)
            script.runTimers(until: instant)
        }
        #expect(script.machine.state == .speaking)
        script.runTimers(until: instant + .seconds(20))
        #expect(script.machine.state == .ready)
        #expect(script.machine.turns.count == 2)
        #expect(script.machine.latencies.count == 1)
    }

    @Test func speechThatGoesOnAfterTheRuntimeEndedTheTurnIsANewTurn() {
        var script = SessionScript()
        script.connectAndOpen()
        let spoken = script.frames(SessionScript.voice, count: 10, from: .origin)
        script.receive(.transcript(role: .user, text: "first part", isFinal: true), at: spoken)
        #expect(script.machine.state == .thinking)
        script.frames(SessionScript.voice, count: 3, from: spoken)
        #expect(script.machine.state == .talking)
        #expect(script.machine.turns.count == 2)
    }

    /// A file sent as fast as the runtime takes it: the gate has ended every turn before the
    /// runtime acknowledges the first. Each final user line is for the oldest turn it has not
    /// acknowledged, each turn waits for its own reply however long the runtime pauses between
    /// replies, and no turn is counted twice.
    @Test func turnsTheGateEndedAheadOfTheRuntimeAreEachAnsweredByTheirOwnReply() {
        var script = SessionScript()
        script.connectAndOpen()
        var instant = SessionInstant.origin
        for _ in 0..<3 {
            instant = script.frames(SessionScript.voice, count: 10, from: instant)
            instant = script.frames(SessionScript.room, count: 30, from: instant)
        }
        script.run { $0.inputEnded(at: instant) }
        #expect(script.machine.turns.count == 3)
        var replies: [SessionInstant] = []
        for index in 0..<3 {
            // The runtime is slow: more than the playback gap passes between one reply and the next turn's.
            let at = instant + .seconds(5 + index)
            script.runTimers(until: at)
            #expect(!script.sent.contains("session.end"))
            script.receive(.transcript(role: .user, text: "turn \(index + 1)", isFinal: true), at: at)
            script.receive(.transcript(role: .assistant, text: "reply \(index + 1)", isFinal: true), at: at)
            for chunk in 0..<5 {
                let chunkAt = at + .milliseconds(10 + 20 * chunk)
                script.receive(.audioChunk(Self.reply), at: chunkAt)
                script.run { $0.playbackDrained(at: chunkAt) }
            }
            replies.append(at + .milliseconds(10))
        }
        let actions = script.run { $0.tick(at: instant + .seconds(9)) }
        #expect(actions.contains(.send(.sessionEnd)))
        #expect(script.machine.turns.count == 3)
        #expect(script.machine.turns.map(\.isAcknowledged) == [true, true, true])
        #expect(script.machine.turns.map(\.firstReplyAudioAt) == replies)
        #expect(script.machine.turns.allSatisfy { $0.speechDuration == .milliseconds(320) })
    }

    /// The runtime's final user line for a turn the gate already ended leaves the turn being
    /// spoken alone: it is later audio, not a turn the runtime ended.
    @Test func aFinalUserLineForAnEarlierTurnDoesNotCutTheTurnBeingSpoken() {
        var script = SessionScript()
        script.connectAndOpen()
        var instant = script.frames(SessionScript.voice, count: 10, from: .origin)
        instant = script.frames(SessionScript.room, count: 30, from: instant)
        instant = script.frames(SessionScript.voice, count: 5, from: instant)
        #expect(script.machine.state == .talking)
        script.receive(.transcript(role: .user, text: "first", isFinal: true), at: instant)
        #expect(script.machine.state == .talking)
        #expect(script.machine.turns[0].isAcknowledged && !script.machine.turns[1].isAcknowledged)
        instant = script.frames(SessionScript.voice, count: 5, from: instant)
        script.frames(SessionScript.room, count: 30, from: instant)
        #expect(script.machine.turns.count == 2)
        #expect(script.machine.turns[1].speechDuration == .milliseconds(320))
    }

    /// A turn only the runtime heard has no speech of its own: the gate's figures are the last turn's.
    @Test func aTurnOnlyTheRuntimeHeardHasNoSpeechDuration() {
        var script = SessionScript()
        script.connectAndOpen()
        var instant = script.frames(SessionScript.voice, count: 10, from: .origin)
        instant = script.frames(SessionScript.room, count: 30, from: instant)
        script.receive(.transcript(role: .user, text: "first", isFinal: true), at: instant)
        script.receive(.audioChunk(Self.reply), at: instant + .milliseconds(100))
        script.run { $0.playbackDrained(at: instant + .milliseconds(120)) }
        script.runTimers(until: instant + .seconds(1))
        #expect(script.machine.state == .ready)
        script.receive(.transcript(role: .user, text: "heard by the runtime alone", isFinal: true), at: instant + .seconds(2))
        #expect(script.machine.turns.count == 2)
        #expect(script.machine.turns[0].speechDuration == .milliseconds(320))
        #expect(script.machine.turns[1].speechDuration == nil)
    }

    @Test func aFrameTheTransportRefusedDoesNotResetTheKeepAliveTimer() {
        var script = SessionScript()
        script.connectAndOpen()
        script.capture(SessionScript.room, at: .seconds(30), refused: true)
        #expect(script.scheduled == .seconds(40))
    }

    @Test func theEndWaitIsBoundedAndAskingAgainStopsIt() {
        var script = SessionScript()
        script.connectAndOpen()
        script.run { $0.end(at: .seconds(1)) }
        // Debug lines do not keep the session waiting, and no keep-alive goes out while ending.
        for second in 2...5 { script.receive(.debug(message: "still here"), at: .seconds(Double(second))) }
        script.runTimers(until: .seconds(5.999))
        #expect(script.machine.isEnding)
        script.runTimers(until: .seconds(6))
        #expect(script.machine.state == .error(.timeout(.sessionEnd, limit: .seconds(5))))
        #expect(script.machine.counters.keepAlivesSent == 0)

        // Reply audio that never stops is heard out for at most a minute.
        var streaming = SessionScript()
        streaming.connectAndOpen()
        streaming.run { $0.end(at: .seconds(1)) }
        var instant = SessionInstant.seconds(1)
        while streaming.machine.isEnding, instant < .seconds(100) {
            instant = instant + .seconds(1)
            streaming.runTimers(until: instant)
            if streaming.machine.isEnding { streaming.receive(.audioChunk(Self.reply), at: instant) }
        }
        #expect(streaming.machine.state == .error(.timeout(.sessionEnd, limit: .seconds(5))))
        #expect(instant == .seconds(61))

        // The user asking a second time stops waiting at once.
        var impatient = SessionScript()
        impatient.connectAndOpen()
        impatient.run { $0.end(at: .seconds(1)) }
        let actions = impatient.run { $0.end(at: .seconds(2)) }
        #expect(actions.contains(.closeTransport))
        #expect(impatient.machine.state == .disconnected)
    }

    // MARK: Interruption, escalation

    @Test func interruptionDropsTheRestOfTheReplyAndTheNextReplyPlays() {
        var script = SessionTransitionTests.thinking()
        script.receive(.audioChunk(Self.reply), at: .seconds(2))
        script.receive(.interruption, at: .ms(2_010))
        #expect(script.machine.state == .talking)
        script.frames(SessionScript.room, count: 16, from: .ms(2_010))
        #expect(script.machine.state == .thinking)
        let next = script.receive(.audioChunk(Self.reply), at: .seconds(4))
        #expect(next.contains(.playReply(Self.reply)))
        #expect(script.machine.state == .speaking)
        #expect(script.machine.turns.count == 2)
        #expect(script.machine.turns[1].firstReplyAudioAt == .seconds(4))
    }

    @Test func escalationDrivesTheBannerAndLeavesTheVoiceStateAlone() throws {
        var script = SessionTransitionTests.thinking()
        let actions = try script.machine.requestEscalation(reason: "wants a person", at: .seconds(2))
        #expect(actions.contains(.send(.escalationRequest(reason: "wants a person"))))
        #expect(script.machine.state == .thinking)
        #expect(script.machine.escalationBanner == "Escalation: requested")
        script.receive(.escalation(status: "queued"), at: .seconds(3))
        script.receive(.escalation(status: "an agent will join shortly"), at: .seconds(4))
        #expect(script.machine.state == .thinking)
        #expect(script.machine.escalationBanner == "Escalation: an agent will join shortly")
        #expect(script.machine.escalation?.updates.map(\.status) == ["queued", "an agent will join shortly"])
        #expect(script.machine.escalation?.reason == "wants a person")

        var idle = SessionScript()
        #expect(throws: SessionInputError.notConnected(.disconnected)) { try idle.machine.requestEscalation(reason: "x", at: .origin) }
    }

    // MARK: Tool drawer

    @Test func toolCallsAndResultsPairByIdWithTimesAndBudgetFlags() {
        var script = SessionTransitionTests.thinking()
        script.receive(.toolCall(id: "a", name: "lookup_vehicle", input: .object(["vin": .string("5YJ")])), at: .seconds(2))
        script.receive(.toolCall(id: "b", name: "check_calendar", input: .null), at: .ms(2_100))
        script.receive(.toolResult(id: "b", name: "check_calendar", output: .array([]), durationMilliseconds: 80), at: .ms(2_200))
        script.receive(.toolResult(id: "a", name: "lookup_vehicle", output: .string("Model Y"), durationMilliseconds: 1_400), at: .ms(3_500))
        let calls = script.machine.toolCalls
        #expect(calls.map(\.id) == ["a", "b"])
        #expect(calls[0].clientDuration == .milliseconds(1_500))
        #expect(calls[0].runtimeDuration == .milliseconds(1_400))
        #expect(calls[0].isOverBudget)
        #expect(calls[0].output == .string("Model Y"))
        #expect(calls[1].clientDuration == .milliseconds(100))
        #expect(!calls[1].isOverBudget)
        #expect(calls.filter(\.isUnpaired).isEmpty)
    }

    @Test func overBudgetByTheRuntimesOwnFigureAloneIsFlagged() {
        var script = SessionTransitionTests.thinking()
        script.receive(.toolCall(id: "a", name: "slow", input: .null), at: .seconds(2))
        script.receive(.toolResult(id: "a", name: "slow", output: .null, durationMilliseconds: 2_500), at: .ms(2_001))
        #expect(script.machine.toolCalls[0].isOverBudget)
    }

    @Test func unpairedCallsAndResultsAreKeptAndMarked() {
        var script = SessionTransitionTests.thinking()
        script.receive(.toolResult(id: "orphan", name: "mystery", output: .integer(1), durationMilliseconds: nil), at: .seconds(2))
        script.receive(.toolCall(id: "open", name: "commit_booking", input: .null), at: .seconds(3))
        let calls = script.machine.toolCalls
        #expect(calls.map(\.id) == ["orphan", "open"])
        #expect(calls.filter(\.isUnpaired).count == 2)
        #expect(calls[0].isResultWithoutCall)
        #expect(!calls[1].isResultWithoutCall)
        // A result that arrives before its call is paired when the call comes.
        script.receive(.toolCall(id: "orphan", name: "mystery", input: .null), at: .seconds(4))
        #expect(!script.machine.toolCalls[0].isUnpaired)
        #expect(script.machine.toolCalls[0].output == .integer(1))
    }

    @Test func theDrawerHoldsClassificationsAndSessionBoundariesInOrder() {
        var script = SessionScript(SessionConfiguration(sessionId: "s-9"))
        script.connectAndOpen(at: .seconds(1))
        script.receive(.classification(label: "service booking", confidence: 0.93), at: .seconds(2))
        script.receive(.toolCall(id: "a", name: "t", input: .null), at: .seconds(3))
        script.receive(.sessionEnded(reason: "done"), at: .seconds(4))
        let drawer = script.machine.toolDrawer
        #expect(drawer.count == 4)
        #expect(drawer[0] == .sessionStarted(sessionId: "s-9", at: .seconds(1)))
        #expect(drawer[1] == .classification(label: "service booking", confidence: 0.93, at: .seconds(2)))
        #expect(drawer[3] == .sessionEnded(reason: "done", at: .seconds(4)))
    }

    // MARK: Derived views

    @Test func theStateLineNamesPersonaAndVehicleFromTheContext() {
        var script = SessionScript(SessionConfiguration(sessionId: "s", context: ["persona": .string("Dana"), "vehicle": .string("2022 Model Y")]))
        #expect(script.machine.stateLine == "Disconnected — Dana · 2022 Model Y")
        script.connectAndOpen()
        #expect(script.machine.stateLine == "Ready — Dana · 2022 Model Y")
        script.frames(SessionScript.voice, count: 1, from: .origin)
        #expect(script.machine.stateLine == "Talking — Dana · 2022 Model Y")

        let structured = SessionMachine(configuration: SessionConfiguration(sessionId: "s", context: [
            "persona": .object(["name": .string("Dana"), "voice": .string("warm")]),
            "vehicle": .object(["year": .integer(2022), "make": .string("Tesla"), "model": .string("Model Y")]),
        ]))
        #expect(structured.sessionTitle == "Dana · 2022 Tesla Model Y")
        #expect(SessionMachine(configuration: SessionConfiguration(sessionId: "s")).stateLine == "Disconnected")
    }

    @Test func thinkingAndListeningFollowTheState() throws {
        var script = SessionScript()
        #expect(!script.machine.isListening && !script.machine.isThinking)
        script.connectAndOpen()
        #expect(script.machine.isListening && !script.machine.isThinking)
        try script.type("hi", at: .seconds(1))
        #expect(script.machine.isThinking && !script.machine.isListening)
        script.receive(.audioChunk(Self.reply), at: .seconds(2))
        #expect(!script.machine.isThinking && !script.machine.isListening)
    }

    @Test func partialTranscriptLinesAreReplacedByTheirFinal() {
        var script = SessionScript()
        script.connectAndOpen()
        script.receive(.transcript(role: .user, text: "book a", isFinal: false), at: .ms(100))
        script.receive(.transcript(role: .user, text: "book a serv", isFinal: false), at: .ms(200))
        script.receive(.transcript(role: .assistant, text: "Sure", isFinal: false), at: .ms(250))
        script.receive(.transcript(role: .user, text: "book a service", isFinal: true), at: .ms(300))
        script.receive(.transcript(role: .assistant, text: "Sure, when?", isFinal: true), at: .ms(400))
        script.receive(.transcript(role: .user, text: "Tues", isFinal: false), at: .ms(500))
        let lines = script.machine.transcript.map { "\($0.role.rawValue):\($0.text):\($0.isFinal)" }
        #expect(lines == ["user:book a service:true", "assistant:Sure, when?:true", "user:Tues:false"])
        #expect(script.log.filter { if case .note(.transcript) = $0 { true } else { false } }.count == 2)
    }

    @Test func infoCardsKeepTheirOrder() {
        var script = SessionScript()
        script.connectAndOpen()
        script.receive(.infoMessage(markdown: "| a |\n|---|\n| 1 |"), at: .seconds(1))
        script.receive(.infoMessage(markdown: "**second**"), at: .seconds(2))
        #expect(script.machine.infoCards.map(\.markdown) == ["| a |\n|---|\n| 1 |", "**second**"])
    }

    // MARK: Text only

    @Test func whenAudioIsUnavailableTheSessionRunsAsTextAndSaysWhy() throws {
        var script = SessionScript(SessionConfiguration(sessionId: "s", context: ["persona": .string("Dana")]))
        script.run { $0.audioUnavailable("the device reports 0 Hz", at: .origin) }
        script.connectAndOpen()
        #expect(script.machine.stateLine == "Ready — Dana — audio unavailable: the device reports 0 Hz; text only")
        #expect(!script.machine.isListening)
        script.frames(SessionScript.voice, count: 3, from: .origin)
        #expect(!script.sent.contains("frame"))
        #expect(script.machine.state == .ready)
        try script.type("hello", at: .seconds(1))
        #expect(script.machine.state == .thinking)
        #expect(script.sent == ["session.start", "text.input hello"])
    }

    // MARK: Turn latency

    @Test func turnLatencyRunsFromTheEndOfSpeechToTheFirstReplyAudio() throws {
        var script = SessionScript()
        script.connectAndOpen()
        // Voice until 0.8 s, the gate closes at 1.312 s, the reply plays at 1.9 s.
        let spoken = script.frames(SessionScript.voice, count: 25, from: .origin)
        #expect(spoken == .ms(800))
        script.frames(SessionScript.room, count: 16, from: spoken)
        script.receive(.transcript(role: .assistant, text: "ok", isFinal: true), at: .ms(1_500))
        script.receive(.audioChunk(Self.reply), at: .ms(1_900))
        #expect(script.machine.turns[0].latency == .milliseconds(1_100))
        script.run { $0.playbackDrained(at: .ms(2_000)) }
        script.run { $0.tick(at: .ms(2_300)) }
        // A typed turn at 3 s answered at 3.25 s; another at 5 s answered at 5.4 s.
        try script.type("one", at: .seconds(3))
        script.receive(.audioChunk(Self.reply), at: .ms(3_250))
        script.run { $0.playbackDrained(at: .ms(3_300)) }
        script.run { $0.tick(at: .ms(3_600)) }
        try script.type("two", at: .seconds(5))
        script.receive(.audioChunk(Self.reply), at: .ms(5_400))
        #expect(script.machine.latencies == [.milliseconds(1_100), .milliseconds(250), .milliseconds(400)])
        #expect(script.machine.medianLatency == .milliseconds(400))
        #expect(script.machine.p95Latency == .milliseconds(1_100))
    }

    @Test func aReplyQueuedRightBehindAnotherAnswersTheNextTurn() throws {
        var script = SessionScript()
        script.connectAndOpen()
        try script.type("one", at: .seconds(1))
        try script.type("two", at: .seconds(1))
        script.receive(.transcript(role: .assistant, text: "first", isFinal: true), at: .ms(1_100))
        script.receive(.audioChunk(Self.reply), at: .ms(1_100))
        script.run { $0.playbackDrained(at: .ms(1_100)) }
        // The second reply follows at once, announced by its transcript.
        script.receive(.audioChunk(Self.reply), at: .ms(1_120))
        script.receive(.transcript(role: .assistant, text: "second", isFinal: true), at: .ms(1_140))
        script.receive(.audioChunk(Self.reply), at: .ms(1_140))
        script.run { $0.playbackDrained(at: .ms(1_160)) }
        #expect(script.machine.latencies == [.milliseconds(100), .milliseconds(140)])
        script.run { $0.inputEnded(at: .ms(1_200)) }
        let actions = script.run { $0.tick(at: .ms(1_460)) }
        #expect(script.machine.state == .ready)
        #expect(actions.contains(.send(.sessionEnd)))
    }

    @Test func percentilesUseTheNearestRank() throws {
        var script = SessionScript()
        script.connectAndOpen()
        var instant = SessionInstant.origin
        // Twenty typed turns answered after 10, 20, …, 200 ms.
        for index in 1...20 {
            instant = instant + .seconds(1)
            let typedAt = instant
            _ = try? script.type("turn \(index)", at: typedAt)
            script.receive(.audioChunk(Self.reply), at: typedAt + .milliseconds(index * 10))
            script.run { $0.playbackDrained(at: typedAt + .milliseconds(index * 10)) }
            instant = typedAt + .milliseconds(index * 10) + .milliseconds(300)
            script.run { $0.tick(at: instant) }
        }
        #expect(script.machine.latencies.count == 20)
        #expect(script.machine.medianLatency == .milliseconds(100))
        #expect(script.machine.p95Latency == .milliseconds(190))
        let spread = try #require(script.machine.latencyDistribution)
        #expect([spread.count] == [20])
        #expect([spread.median, spread.p90, spread.p95, spread.p99, spread.max] == [100, 180, 190, 200, 200].map { .milliseconds($0) })

        // Past eight answered turns the summary gives the distribution on one line, not twenty figures.
        let summary = SessionTimeline.summary(of: script.machine, duration: .seconds(30))
        #expect(summary.contains("turn latency over 20 answered turns: median 0.100 s, p90 0.180 s, p95 0.190 s, max 0.200 s (end of speech to first reply audio; --json gives each turn's)"), "\(summary)")
        #expect(!summary.contains { $0.contains("turn 1 ") })
        // The JSON keeps every turn's figure raw, in turn order, beside the same distribution.
        let json = SessionSummary.json(of: script.machine, duration: .seconds(30))
        #expect(json["turnLatencies"] == .array((1...20).map { .number(Double($0) / 100) }))
        #expect(JSONWriter.string(json["turnLatency"] ?? .null) == #"{"count":20,"median":0.1,"p90":0.18,"p95":0.19,"p99":0.2,"max":0.2}"#)
    }

    @Test func aShortSessionsSummaryListsEachTurnAndItsJSONHasTheDocumentedShape() throws {
        var script = SessionScript()
        script.connectAndOpen()
        let spoken = script.frames(SessionScript.voice, count: 25, from: .origin)
        script.frames(SessionScript.room, count: 16, from: spoken)
        script.receive(.audioChunk(Self.reply), at: .ms(1_900))
        script.run { $0.playbackDrained(at: .ms(2_000)) }
        script.run { $0.tick(at: .ms(2_300)) }
        try script.type("one", at: .seconds(3))
        script.receive(.audioChunk(Self.reply), at: .ms(3_250))
        script.run { $0.playbackDrained(at: .ms(3_300)) }
        script.run { $0.tick(at: .ms(3_600)) }
        let summary = SessionTimeline.summary(of: script.machine, duration: .seconds(4))
        #expect(summary.contains("turn latency: turn 1 1.100 s, turn 2 0.250 s"), "\(summary)")
        var json = SessionSummary.json(of: script.machine, duration: .seconds(4))
        #expect(json["sessionId"] == .string(script.machine.configuration.sessionId))
        json["sessionId"] = nil
        // Still connected: the session has not ended, so it is reported as stopped, not ok.
        #expect(JSONWriter.string(.object(json)) == """
            {"version":1,"status":"stopped","failure":"stopped ready","failureKind":"stopped","durationSeconds":4,"connectToReadySeconds":0,\
            "turns":[{"number":1,"kind":"voice","speechSeconds":0.8,"latencySeconds":1.1,"latencyToEarSeconds":null},\
            {"number":2,"kind":"text","speechSeconds":null,"latencySeconds":0.25,"latencyToEarSeconds":null}],\
            "turnLatencies":[1.1,0.25],"turnLatency":{"count":2,"median":0.25,"p90":1.1,"p95":1.1,"p99":1.1,"max":1.1},"turnLatencyToEar":null,\
            "audioSent":{"seconds":1.312,"frames":41,"keepAlives":0,"framesDropped":0},"audioReceived":{"seconds":0.04,"chunks":2},\
            "interruptions":0,"toolCalls":{"count":0,"overBudget":0,"unpaired":0},\
            "reconnections":{"count":0,"framesHeld":0,"framesDroppedWhileAway":0,"repliesCut":0,"framesResent":0,"textsResent":0,"audioUnconfirmed":0},"audioLosses":0,"typedTextsNeverSent":0}
            """)
    }

    // MARK: Ending

    @Test func whenTheInputEndsTheSessionEndsAfterTheLastReplyHasPlayed() {
        var script = SessionScript()
        script.connectAndOpen()
        let spoken = script.frames(SessionScript.voice, count: 10, from: .origin)
        script.run { $0.inputEnded(at: spoken) }
        #expect(!script.sent.contains("session.end"))
        script.receive(.audioChunk(Self.reply), at: .ms(500))
        script.run { $0.playbackDrained(at: .ms(520)) }
        #expect(!script.sent.contains("session.end"))
        let actions = script.run { $0.tick(at: .ms(820)) }
        #expect(script.machine.state == .ready)
        #expect(actions.contains(.send(.sessionEnd)))
        #expect(actions.contains(.note(.ending(why: "the input ended and every turn was answered"))))
        script.receive(.sessionEnded(reason: nil), at: .ms(900))
        #expect(script.machine.state == .disconnected)
    }

    @Test func aRuntimeThatRepliesOnlyAfterSessionEndIsStillHeardAndTheWaitIsNoError() {
        var script = SessionScript()
        script.connectAndOpen()
        let spoken = script.frames(SessionScript.voice, count: 10, from: .origin)
        script.run { $0.inputEnded(at: spoken) }
        // No reply: after the reply timeout the session ends on its own, without an error.
        let actions = script.run { $0.tick(at: spoken + .seconds(15)) }
        #expect(actions.contains(.send(.sessionEnd)))
        #expect(script.machine.state == .thinking)
        // The reply that follows session.end still plays, then the runtime confirms.
        let late = script.receive(.audioChunk(Self.reply), at: spoken + .seconds(16))
        #expect(late.contains(.playReply(Self.reply)))
        script.receive(.sessionEnded(reason: "the client ended the session"), at: spoken + .seconds(17))
        #expect(script.machine.state == .disconnected)
        #expect(script.machine.turns[0].latency == .seconds(16))
    }

    @Test func anInputWithNoSpeechEndsAtOnce() {
        var script = SessionScript()
        script.connectAndOpen()
        script.frames(SessionScript.digitalSilence, count: 30, from: .origin)
        let actions = script.run { $0.inputEnded(at: .ms(960)) }
        #expect(actions.contains(.send(.sessionEnd)))
        #expect(script.machine.turns.isEmpty)
        #expect(throws: SessionInputError.sessionEnding) { try script.type("too late", at: .seconds(1)) }
    }
}
