import VoicePipeCore

/// The session machine's shared rules: entering and leaving states, and what the live
/// connection does on its own (texts going out, the end of an answered input, rotation, holding
/// sends for a rotation, stalls, the timers of a tick, the end of a reply). Each event in
/// `SessionMachine.swift` and `SessionMachine+RuntimeMessages.swift` calls the ones it needs,
/// by name, so the event's whole effect reads from its own function.
extension SessionMachine {
    // MARK: Leaving and entering states

    /// Enters `next` (leaving `before`), with the notes a change of state makes.
    mutating func enter(_ next: State, from before: SessionState, _ actions: inout [SessionAction]) {
        current = next
        Self.noteChange(from: before, to: state, &actions)
    }

    /// Moves between the live phases, with the notes a change of state makes.
    static func move(_ phase: inout LivePhase, to next: LivePhase, _ actions: inout [SessionAction]) {
        let before = phase.state
        phase = next
        noteChange(from: before, to: next.state, &actions)
    }

    /// A change of state is noted; leaving `speaking` also ends the reply on the output.
    static func noteChange(from before: SessionState, to after: SessionState, _ actions: inout [SessionAction]) {
        guard before != after else { return }
        if before == .speaking { actions.append(.endReply) }
        actions.append(.note(.stateChanged(from: before, to: after)))
    }

    /// Leaves the live connection for `next`: the connection is discarded whole, and frames a
    /// rotation still held for it count as dropped.
    mutating func leave(_ live: LiveConnection, _ phase: LivePhase, for next: State, _ actions: inout [SessionAction]) {
        ledger.counters.framesDropped += live.refusedAtClose.count
        if let rotation = live.rotation {
            ledger.counters.framesDropped += rotation.held.filter { if case .frame = $0 { true } else { false } }.count
        }
        enter(next, from: phase.state, &actions)
    }

    /// Fails the session (leaving the live connection, when `leaving` is it) for `error(failure)`,
    /// closing the transport when `closing`.
    mutating func fail(_ failure: SessionFailure, closing: Bool, leaving: (LiveConnection, LivePhase)? = nil, at now: SessionInstant, _ actions: inout [SessionAction]) {
        ledger.toolDrawer.append(.sessionEnded(reason: failure.description, at: now))
        if closing { actions.append(.closeTransport) }
        let next = State.error(failure, awaitingClose: closing)
        if let (live, phase) = leaving {
            leave(live, phase, for: next, &actions)
        } else {
            enter(next, from: state, &actions)
        }
    }

    mutating func ignore(_ event: String, in state: SessionState? = nil, _ actions: inout [SessionAction]) {
        let state = state ?? self.state
        ledger.countIgnored(event, in: state)
        actions.append(.note(.ignored(event: event, state: state)))
    }

    // MARK: Rules on the live connection

    /// Queued texts go out while the session is live, not ending and not rotating.
    mutating func sendQueuedTexts(_ actions: inout [SessionAction]) {
        guard case .live(let live, _) = current, !live.isEnding, live.rotation == nil, !texts.queued.isEmpty else { return }
        for text in texts.takeQueued() { actions.append(.sendText(text)) }
    }

    /// A finished input ends the session once every turn is answered and every text sent.
    mutating func endIfEverythingAnswered(at now: SessionInstant, _ actions: inout [SessionAction]) {
        guard inputEndedAt != nil, texts.waitingCount == 0, case .live(var live, .ready) = current,
              !live.isEnding, live.isQuiet else { return }
        current = .modifying
        beginEnding("the input ended and every turn was answered", &live, at: now, &actions)
        current = .live(live, .ready)
    }

    /// A connection old enough is replaced at the first quiet, ready moment.
    mutating func rotateIfDue(at now: SessionInstant, _ actions: inout [SessionAction]) {
        guard case .live(var live, let phase) = current, let due = live.rotationDue(configuration), now >= due,
              isQuietAndReady(live, phase) else { return }
        current = .modifying
        live.rotation = LiveConnection.Rotation(startedAt: now)
        current = .live(live, phase)
        actions.append(.note(.rotationStarted))
        actions.append(.rotateTransport)
    }

    func isQuietAndReady(_ live: LiveConnection, _ phase: LivePhase) -> Bool {
        guard case .ready = phase else { return false }
        return live.isQuiet && texts.waitingCount == 0
    }

    func endOfInputDeadline(_ live: LiveConnection, _ phase: LivePhase) -> SessionInstant? {
        if case .speaking = phase { return nil }
        return live.endOfInputDeadline(inputEndedAt: inputEndedAt, turns: ledger.turns, configuration)
    }

    func replyDeadline(_ live: LiveConnection, _ phase: LivePhase) -> (turn: Int, deadline: SessionInstant)? {
        if case .speaking = phase { return nil }
        return live.replyDeadline(ledger.turns, configuration)
    }

    /// Sends `message` now, or holds it while a rotation's fresh connection opens.
    static func send(_ message: WireMessage, _ live: inout LiveConnection, _ actions: inout [SessionAction]) {
        if live.rotation != nil {
            live.rotation?.held.append(.message(message))
        } else {
            actions.append(.send(message))
        }
    }

    /// Holds a frame for the rotation's fresh connection; past the hold limit it is dropped.
    mutating func hold(_ frame: AudioFrame, _ live: inout LiveConnection, at now: SessionInstant, _ actions: inout [SessionAction]) -> SessionFailure? {
        let limit = configuration.captureSampleRate.frames(in: configuration.rotationHoldLimit)
        if let held = live.rotation?.heldSamples, held + frame.samples.count <= limit {
            live.rotation?.held.append(.frame(frame))
            live.rotation?.heldSamples += frame.samples.count
            return nil
        }
        ledger.counters.framesDropped += 1
        return stall(&live, at: now, dropped: true, &actions)
    }

    /// What a rotation held, in order, as the actions that send it. Texts typed meanwhile stayed
    /// queued; an end asked for meanwhile sends them first, since they were typed before it.
    mutating func release(_ rotation: LiveConnection.Rotation, _ actions: inout [SessionAction]) {
        for held in rotation.held {
            switch held {
            case .message(.sessionEnd):
                for text in texts.takeQueued() { actions.append(.sendText(text)) }
                actions.append(.send(.sessionEnd))
            case .message(let message):
                actions.append(.send(message))
            case .frame(let frame):
                actions.append(.sendCapturedFrame(frame))
            }
        }
    }

    mutating func beginEnding(_ why: String, _ live: inout LiveConnection, at now: SessionInstant, _ actions: inout [SessionAction]) {
        actions.append(.note(.ending(why: why)))
        Self.send(.sessionEnd, &live, &actions)
        live.endSentAt = now
    }

    mutating func endVoiceTurn(_ live: inout LiveConnection, _ phase: inout LivePhase, at now: SessionInstant, speechMeasured: Bool = true, _ actions: inout [SessionAction]) {
        guard let open = live.openTurn else { return }
        ledger.turns[open].endedAt = now
        ledger.turns[open].speechDuration = speechMeasured ? max(live.gate.speechEnd - live.gate.speechStart, .zero) : nil
        live.openTurn = nil
        live.awaitingReply.append(open)
        actions.append(.note(.turnEnded(ledger.turns[open])))
        if case .talking = phase { Self.move(&phase, to: .thinking, &actions) }
    }

    mutating func recordDrop(at now: SessionInstant, _ actions: inout [SessionAction]) {
        ledger.counters.framesDropped += 1
        recordStall(at: now, dropped: true, &actions)
    }

    /// Audio could not go out (dropped, or waiting), on the connection if live.
    mutating func recordStall(at now: SessionInstant, dropped: Bool, _ actions: inout [SessionAction]) {
        guard case .live(var live, let phase) = current else { return }
        current = .modifying
        let failure = stall(&live, at: now, dropped: dropped, &actions)
        current = .live(live, phase)
        if let failure { fail(failure, closing: true, leaving: (live, phase), at: now, &actions) }
    }

    /// From the first instant of a run of audio that could not go out, the stall limit counts down.
    func stall(_ live: inout LiveConnection, at now: SessionInstant, dropped: Bool, _ actions: inout [SessionAction]) -> SessionFailure? {
        let start = live.stallStartedAt ?? now
        if live.stallStartedAt == nil {
            live.stallStartedAt = now
            actions.append(.note(dropped ? .audioDropped(totalFrames: ledger.counters.framesDropped) : .audioWaiting))
        }
        return now - start >= configuration.stallLimit ? .runtimeStalled(now - start) : nil
    }

    /// The timers of a live connection, in order; a failure leaves the connection.
    mutating func liveTick(_ live: inout LiveConnection, _ phase: inout LivePhase, at now: SessionInstant, _ actions: inout [SessionAction]) -> SessionFailure? {
        if let end = live.endDeadline(configuration), now >= end {
            return .timeout(.sessionEnd, limit: configuration.endTimeout)
        }
        if !live.isEnding, let wait = endOfInputDeadline(live, phase), now >= wait {
            beginEnding("no reply came within \(live.allowance(ledger.turns, configuration).formattedSeconds) of the end of the input", &live, at: now, &actions)
        } else if !live.isEnding, inputEndedAt == nil, let reply = replyDeadline(live, phase), now >= reply.deadline {
            let turn = ledger.turns[reply.turn]
            guard turn.kind == .voice, !turn.isAcknowledged, let ended = turn.endedAt, live.lastMessageAt > ended else {
                return .timeout(turn.isLongRunning ? .longTurn : .reply, limit: configuration.allowance(for: turn))
            }
            // The gate heard a turn (a cough, "mm-hm") that the runtime, alive and talking, never
            // took as one: it is dropped with a note, not the session.
            ledger.turns[reply.turn].ignoredByRuntime = true
            live.awaitingReply.removeAll { $0 == reply.turn }
            actions.append(.note(.turnIgnored(ledger.turns[reply.turn])))
            if case .thinking = phase, live.awaitingReply.isEmpty { Self.move(&phase, to: .ready, &actions) }
        }
        if case .speaking(let reply) = phase, let drained = reply.drainedAt, now >= drained + configuration.playbackGap {
            replyFinished(reply, &live, &phase, at: now, &actions)
        }
        if !live.isEnding, now >= live.keepAliveDue(configuration) {
            let samples = configuration.captureSampleRate.frames(in: configuration.keepAliveChunk)
            Self.send(.audioChunk(AudioChunk(sampleRate: configuration.captureSampleRate, samples: [Int16](repeating: 0, count: samples))), &live, &actions)
            ledger.counters.keepAlivesSent += 1
            deliveries.recordKeepAlive()
            live.keepAliveFrom = now
            actions.append(.note(.keepAlive))
        }
        return nil
    }

    /// Whether a turn that ended while a reply played can be answered inside it. Not once the
    /// runtime has acknowledged a turn (a final user transcript): such a runtime acknowledges each
    /// turn it takes before its reply, in order, and may be far behind the gate in audio (a file
    /// sent as fast as it is taken), so a turn it has not acknowledged yet may still be on its way
    /// to it, and one it acknowledged is owed a reply of its own. Each waits for its own reply (a
    /// turn the runtime never takes is dropped when its reply timeout ends), whatever the clock
    /// time its reply audio arrives at.
    var answersTurnsInsideReplies: Bool {
        !ledger.turns.contains(where: \.isAcknowledged)
    }

    /// The reply has played out: back to whatever the user is doing. Turns that ended while it
    /// played and had reply audio after them were answered inside it (no latency of their own).
    mutating func replyFinished(_ reply: LivePhase.Reply, _ live: inout LiveConnection, _ phase: inout LivePhase, at now: SessionInstant, _ actions: inout [SessionAction]) {
        let turns = ledger.turns
        let insideReplies = answersTurnsInsideReplies
        live.awaitingReply.removeAll { turn in
            guard insideReplies, let event = turns[turn].firstReplyEventAt, turns[turn].firstReplyAudioAt == nil else { return false }
            return event >= reply.startedAt
        }
        live.lastReplyEndedAt = now
        let next: LivePhase = live.openTurn != nil ? .talking : live.awaitingReply.isEmpty ? .ready : .thinking
        Self.move(&phase, to: next, &actions)
    }
}
