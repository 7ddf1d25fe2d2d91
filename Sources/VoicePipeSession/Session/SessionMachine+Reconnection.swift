import VoicePipeCore

/// A session between connections: the last one dropped and a new one is being made
/// (``ReconnectPolicy``). What the user was doing carries over to the new connection: the voice
/// gate, the turn being spoken, the turns owed a reply; captured audio waits here for it, up to
/// ``ReconnectPolicy/holdLimit``, older audio dropped and counted.
struct Reconnection: Sendable {
    /// Why the connection ended, or why the last attempt failed.
    var reason: String
    /// When the connection dropped.
    let droppedAt: SessionInstant
    /// The attempt under way, or the next one (1 is the first).
    var attempt: Int
    /// When the next attempt opens; nil while one is open.
    var retryAt: SessionInstant?
    var gate: VoiceGate
    var openTurn: Int?
    var awaitingReply: [Int]
    /// Captured frames for the new connection, oldest first, and their samples.
    var held: [AudioFrame] = []
    var heldSamples = 0
    /// `audio.chunk` messages written before the dropped connection opened: the ones after are
    /// the connection's, whose fate `session.resumed` tells.
    let writtenBeforeDroppedConnection: Int
    /// The new connection is open and its `session.start` went out: sends wait (up to
    /// ``ReconnectPolicy/resumptionWait``) for the runtime's `session.resumed`.
    var resumingSince: SessionInstant?
    /// Captured frames and texts (by number) the dropped connection handed back as not written,
    /// oldest first. While the runtime may say what it read they stay written (its count decides);
    /// otherwise ``SessionMachine/settleHandedBack(_:_:)`` takes them back.
    var framesHandedBack: [AudioFrame] = []
    var textsHandedBack: [Int] = []
}

extension SessionMachine {
    /// True while the session is away between connections (a drop is being replaced).
    public var isReconnecting: Bool {
        if case .connecting(_, .some) = current { return true }
        return false
    }

    /// The live connection dropped: with attempts left in the policy, the session waits the
    /// backoff and tries again (`connecting`); a reply that was playing is cut and said to be. A
    /// connection that a reconnection opened and that dropped within
    /// ``ReconnectPolicy/stableAfter`` goes on with the next attempt, not the first.
    mutating func beginReconnecting(_ live: LiveConnection, _ phase: LivePhase, reason: String, at now: SessionInstant, _ actions: inout [SessionAction]) {
        if case .speaking = phase {
            actions.append(.cutPlayback)
            ledger.counters.repliesCutByDrop += 1
            actions.append(.note(.replyCutByDrop))
        }
        let policy = configuration.reconnect
        let attempt = now - live.openedAt < policy.stableAfter ? live.reconnectedOnAttempt + 1 : 1
        guard attempt <= policy.attempts else {
            fail(.transport("\(reason); gave up after \(policy.attempts) attempt\(policy.attempts == 1 ? "" : "s") to reconnect"),
                 closing: false, leaving: (live, phase), at: now, &actions)
            return
        }
        let delay = policy.delay(beforeAttempt: attempt, sessionId: configuration.sessionId)
        var reconnection = Reconnection(reason: reason, droppedAt: now, attempt: attempt, retryAt: now + delay, gate: live.gate,
                                        openTurn: live.openTurn, awaitingReply: live.awaitingReply,
                                        writtenBeforeDroppedConnection: live.writtenAtOpen)
        // Frames the closed transport refused, then any a rotation was holding: both go out on the new connection.
        let heldForRotation = live.rotation?.held.compactMap { held -> AudioFrame? in if case .frame(let frame) = held { frame } else { nil } } ?? []
        reconnection.held = live.refusedAtClose + heldForRotation
        reconnection.heldSamples = reconnection.held.reduce(0) { $0 + $1.samples.count }
        trimHeld(&reconnection)
        enter(.connecting(since: now, reconnection: reconnection), from: phase.state, &actions)
        actions.append(.note(.reconnecting(attempt: attempt, of: policy.attempts, in: delay, reason: reason)))
    }

    /// An attempt failed (`reason`): the next one is scheduled, or, with none left or when
    /// retrying cannot help, the session fails. `closing`: the attempt is still open and is closed.
    mutating func attemptFailed(_ reconnection: Reconnection, reason: String, retryable: Bool, closing: Bool = false, at now: SessionInstant, _ actions: inout [SessionAction]) {
        var next = reconnection
        let policy = configuration.reconnect
        guard retryable, next.attempt < policy.attempts else {
            let handedBack = settleHandedBack(&next, &actions)
            ledger.counters.framesDropped += next.held.count + handedBack.count
            ledger.counters.framesDroppedWhileAway += next.held.count + handedBack.count
            let why = retryable ? "\(reason); gave up after \(next.attempt) attempt\(next.attempt == 1 ? "" : "s") to reconnect"
                                : "\(reason); reconnecting cannot help, so no further attempt was made"
            fail(.transport(why), closing: closing, at: now, &actions)
            return
        }
        if closing { actions.append(.closeTransport) }
        next.resumingSince = nil
        next.attempt += 1
        next.reason = reason
        let delay = policy.delay(beforeAttempt: next.attempt, sessionId: configuration.sessionId)
        next.retryAt = now + delay
        current = .connecting(since: now, reconnection: next)
        actions.append(.note(.reconnecting(attempt: next.attempt, of: policy.attempts, in: delay, reason: reason)))
    }

    /// The new connection opened: `session.start` goes out with the same session id and
    /// `continuesSessionId`. Unless the runtime is known not to answer it, what waits to be sent
    /// waits on for its `session.resumed` (``resume(_:runtimeRead:at:_:)``); otherwise the
    /// session resumes at once.
    mutating func reconnectionOpened(_ reconnection: Reconnection, at now: SessionInstant, _ actions: inout [SessionAction]) {
        actions.append(.send(.sessionStart(sessionId: configuration.sessionId, context: configuration.context,
                                           continuesSessionId: configuration.sessionId)))
        ledger.toolDrawer.append(.sessionStarted(sessionId: configuration.sessionId, at: now))
        guard deliveries.runtimeConfirms != false else {
            resume(reconnection, runtimeRead: nil, at: now, &actions)
            return
        }
        var resuming = reconnection
        resuming.resumingSince = now
        current = .connecting(since: now, reconnection: resuming)
    }

    /// The session is live again on the new connection: first what the runtime said it never
    /// read (`runtimeRead`, from `session.resumed`: those frames and texts again; nil: nobody
    /// knows, and the dropped connection's audio is counted unconfirmed), then the held audio,
    /// then the queued texts; the state is what the user was doing (talking, thinking, or ready).
    mutating func resume(_ reconnection: Reconnection, runtimeRead: (audioChunks: Int, texts: Int)?, at now: SessionInstant, _ actions: inout [SessionAction]) {
        var reconnection = reconnection
        var unread: [AudioFrame] = []
        if runtimeRead == nil {
            // Without the runtime's word, what the transport handed back goes out first.
            unread = settleHandedBack(&reconnection, &actions)
            ledger.counters.framesHeldForReconnection += unread.count
        }
        var awaitingReply = reconnection.awaitingReply
        if let runtimeRead {
            deliveries.runtimeConfirms = true
            let taken = deliveries.takeUnread(runtimeRead: runtimeRead.audioChunks)
            unread = taken.frames
            ledger.counters.framesSent -= unread.count + taken.tooOld
            ledger.counters.samplesSent -= unread.reduce(0) { $0 + $1.samples.count } + taken.tooOldSamples
            ledger.counters.framesResent += unread.count
            ledger.counters.framesDropped += taken.tooOld
            ledger.counters.framesDroppedWhileAway += taken.tooOld
            let texts = withdrawNewestTexts(ledger.counters.textsSent - runtimeRead.texts, reason: "the runtime never read it before the connection dropped", &actions)
            ledger.counters.textsResent += texts.count
            awaitingReply.removeAll { texts.contains($0) }
            if !unread.isEmpty || !texts.isEmpty || taken.tooOld > 0 {
                actions.append(.note(.unreadSentAgain(frames: unread.count, texts: texts.count, lost: taken.tooOld)))
            }
        } else {
            if reconnection.resumingSince != nil { deliveries.runtimeDoesNotConfirm() }
            let unconfirmed = deliveries.written - reconnection.writtenBeforeDroppedConnection
            ledger.counters.audioUnconfirmed += unconfirmed
            if unconfirmed > 0 { actions.append(.note(.readNotConfirmed(audioChunks: unconfirmed))) }
        }
        var live = LiveConnection(gate: configuration.gate, openedAt: now)
        live.writtenAtOpen = deliveries.written
        live.gate = reconnection.gate
        live.reconnectedOnAttempt = reconnection.attempt
        live.openTurn = reconnection.openTurn
        live.awaitingReply = awaitingReply
        // Turns owed a reply wait afresh from here: the runtime could not answer while away.
        live.lastReplyEndedAt = now
        ledger.counters.reconnections += 1
        ledger.counters.framesHeldForReconnection += reconnection.held.count
        let phase: LivePhase = live.openTurn != nil ? .talking : live.awaitingReply.isEmpty ? .ready : .thinking
        enter(.live(live, phase), from: .connecting, &actions)
        actions.append(.note(.reconnected(attempt: reconnection.attempt, gap: now - reconnection.droppedAt, heldFrames: reconnection.held.count)))
        for frame in unread + reconnection.held { actions.append(.sendCapturedFrame(frame)) }
        sendQueuedTexts(&actions)
        endIfEverythingAnswered(at: now, &actions)
    }

    /// A frame captured while away: the gate hears it (turns go on), and it waits for the new
    /// connection; past the hold limit the oldest waiting frame is dropped and counted.
    mutating func holdWhileAway(_ frame: AudioFrame, _ reconnection: inout Reconnection, at now: SessionInstant) {
        reconnection.held.append(frame)
        reconnection.heldSamples += frame.samples.count
        trimHeld(&reconnection)
        switch reconnection.gate.process(frame.samples, level: frame.level, sampleRate: configuration.captureSampleRate) {
        case .opened:
            if reconnection.openTurn == nil { reconnection.openTurn = ledger.beginTurn(.voice, at: now) }
        case .closed:
            endTurnWhileAway(&reconnection, at: now)
        case nil:
            if reconnection.gate.isOpen, reconnection.gate.speechEnd == reconnection.gate.audioTime, let open = reconnection.openTurn {
                ledger.turns[open].speechEndedAt = now
            }
        }
    }

    /// What the dropped connection handed back as not written, taken back as such: the frames no
    /// longer count as sent (returned, oldest first, to go out again or be dropped), the texts
    /// are queued again and their turns withdrawn.
    mutating func settleHandedBack(_ reconnection: inout Reconnection, _ actions: inout [SessionAction]) -> [AudioFrame] {
        let frames = reconnection.framesHandedBack
        reconnection.framesHandedBack = []
        takeBack(frames)
        let withdrawn = withdrawTexts(reconnection.textsHandedBack, reason: "the connection ended before it was written", &actions)
        reconnection.textsHandedBack = []
        reconnection.awaitingReply.removeAll { withdrawn.contains($0) }
        return frames
    }

    /// Frames a transport handed back as never written no longer count as sent or written.
    mutating func takeBack(_ frames: [AudioFrame]) {
        ledger.counters.framesSent -= frames.count
        ledger.counters.samplesSent -= frames.reduce(0) { $0 + $1.samples.count }
        deliveries.forget(frames)
    }

    /// Past the hold limit, the oldest held frames are dropped and counted.
    mutating func trimHeld(_ reconnection: inout Reconnection) {
        let limit = configuration.captureSampleRate.frames(in: configuration.reconnect.holdLimit)
        while reconnection.heldSamples > limit, !reconnection.held.isEmpty {
            reconnection.heldSamples -= reconnection.held.removeFirst().samples.count
            ledger.counters.framesDropped += 1
            ledger.counters.framesDroppedWhileAway += 1
        }
    }

    mutating func endTurnWhileAway(_ reconnection: inout Reconnection, at now: SessionInstant) {
        guard let open = reconnection.openTurn else { return }
        ledger.turns[open].endedAt = now
        ledger.turns[open].speechDuration = max(reconnection.gate.speechEnd - reconnection.gate.speechStart, .zero)
        reconnection.openTurn = nil
        reconnection.awaitingReply.append(open)
    }
}
