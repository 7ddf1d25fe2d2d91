import VoicePipeCore

/// The rules of a voice session, as a pure state machine: events in, actions out.
///
/// Shaped like swift-nio's and async-http-client's protocol state machines: a struct with a
/// state enum whose cases carry what exists only in them, and one `mutating` call per event
/// that takes the current instant and returns the ``SessionAction``s to carry out, in order.
/// The transport, the clock and the audio stay with the driver, so every rule here is tested
/// with explicit instants and no threads.
///
/// ```
///  disconnected ──connect──▶ connecting ──opened──▶ live(LiveConnection, ready|talking|thinking|speaking)
///       ▲                        │                        │
///       └──── ended / end ───────┴──── failure ──▶ error ◀┘      (texts and ledger outlive them all)
/// ```
///
/// What belongs to one connection is the payload of `.live`: leaving it (a drop, an end, an
/// error) discards the connection whole, and a reconnection enters it afresh. The text queue
/// and the ``SessionLedger`` belong to the session. Each event's whole effect is in its own
/// function; the one step every event shares is ``scheduling(_:)``: tell the driver the next
/// deadline. An event that is not allowed in the current state is ignored and counted
/// (``SessionCounters/ignoredEvents``), never a trap. The transitions are the table in `SESSION.md`.
public struct SessionMachine: Sendable {
    enum State: Sendable {
        /// `awaitingClose`: this side closed the transport, whose closing report is expected.
        case disconnected(awaitingClose: Bool)
        /// `reconnection`: the session is away between connections (a drop is being replaced).
        /// Boxed: a reconnection holds a voice gate (over 600 bytes), and the enum is as large
        /// as its largest case, which every event's look at the state would copy.
        indirect case connecting(since: SessionInstant, reconnection: Reconnection?)
        case live(LiveConnection, LivePhase)
        case error(SessionFailure, awaitingClose: Bool)
        /// Only inside an event that took the live payload out to change it in place (no copy on write).
        case modifying
    }

    /// The figures the session runs by.
    public let configuration: SessionConfiguration
    var current: State = .disconnected(awaitingClose: false)
    var texts = TextQueue()
    /// Turns, transcript, tool drawer, cards, escalation and counters, across connections.
    public internal(set) var ledger = SessionLedger()
    /// When the input (file, microphone) ended, if it has.
    var inputEndedAt: SessionInstant?
    /// Why audio is unavailable, when it is: the session runs as text.
    var audioUnavailableReason: String?
    /// The tick last asked of the driver.
    private var scheduledTick: SessionInstant?
    /// What the connections wrote of the session's audio, for the runtime's `session.resumed`.
    var deliveries = DeliveryLog()

    public init(configuration: SessionConfiguration) {
        self.configuration = configuration
        if configuration.reconnect.attempts == 0 || configuration.reconnect.resumptionWait == .zero {
            deliveries.runtimeDoesNotConfirm()
        }
    }

    // MARK: Connection

    /// The user (or the driver) connects: `disconnected` or `error` → `connecting`.
    public mutating func connect(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        switch current {
        case .disconnected, .error:
            enter(.connecting(since: now, reconnection: nil), from: state, &actions)
            actions.append(.openTransport)
        case .connecting, .live, .modifying:
            ignore("connect", &actions)
        }
        return scheduling(&actions)
    }

    /// The transport opened: `session.start` goes out, then any queued texts, in order → `ready`.
    /// An input that ended before, with nothing to answer, ends the session at once.
    public mutating func transportOpened(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard case .connecting(let since, let reconnection) = current else {
            ignore("transport opened", &actions)
            return scheduling(&actions)
        }
        if reconnection == nil, ledger.counters.connectToReady == nil { ledger.counters.connectToReady = now - since }
        if let reconnection {
            reconnectionOpened(reconnection, at: now, &actions)
            return scheduling(&actions)
        }
        actions.append(.send(.sessionStart(sessionId: configuration.sessionId, context: configuration.context)))
        ledger.toolDrawer.append(.sessionStarted(sessionId: configuration.sessionId, at: now))
        enter(.live(LiveConnection(gate: configuration.gate, openedAt: now), .ready), from: .connecting, &actions)
        sendQueuedTexts(&actions)
        endIfEverythingAnswered(at: now, &actions)
        return scheduling(&actions)
    }

    /// The fresh connection of a rotation opened: `session.start` goes out on it with the same
    /// session id, the same context and `continuesSessionId`, then what was held for it; the
    /// connection it replaces is closed. The state stays as it is.
    public mutating func rotationOpened(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard case .live(var live, let phase) = current, let rotation = live.rotation else {
            ignore("rotation opened", &actions)
            return scheduling(&actions)
        }
        current = .modifying
        live.rotation = nil
        live.openedAt = now
        live.writtenAtOpen = deliveries.written
        actions.append(.send(.sessionStart(sessionId: configuration.sessionId, context: configuration.context,
                                           continuesSessionId: configuration.sessionId)))
        ledger.toolDrawer.append(.sessionStarted(sessionId: configuration.sessionId, at: now))
        actions.append(.note(.rotated(gap: now - rotation.startedAt)))
        release(rotation, &actions)
        actions.append(.closeReplacedTransport)
        current = .live(live, phase)
        sendQueuedTexts(&actions)
        return scheduling(&actions)
    }

    /// The fresh connection of a rotation could not be opened: what was held goes on the
    /// current connection, and the next attempt waits ``SessionConfiguration/rotationRetryDelay``.
    public mutating func rotationFailed(_ reason: String, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard case .live(var live, let phase) = current, let rotation = live.rotation else {
            ignore("rotation failed", &actions)
            return scheduling(&actions)
        }
        current = .modifying
        live.rotation = nil
        live.rotationNotBefore = now + configuration.rotationRetryDelay
        actions.append(.note(.rotationFailed(reason)))
        release(rotation, &actions)
        current = .live(live, phase)
        sendQueuedTexts(&actions)
        return scheduling(&actions)
    }

    /// The transport closed. Expected after this side closed it; after `session.end` an orderly
    /// close ends the session (`disconnected`). A drop (not `orderly`, and `retryable`: not a
    /// refused handshake) with ``SessionConfiguration/reconnect`` attempts to make starts
    /// reconnecting (`connecting`), as does a failed attempt with attempts left; otherwise it is
    /// `error(transport)`.
    public mutating func transportClosed(_ detail: String, orderly: Bool, retryable: Bool = true, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        switch current {
        case .disconnected(awaitingClose: true):
            current = .disconnected(awaitingClose: false)
        case .error(let failure, awaitingClose: true):
            current = .error(failure, awaitingClose: false)
        case .connecting(_, .some(let reconnection)) where reconnection.retryAt != nil:
            break // the closing report of an attempt that timed out and was abandoned
        case .connecting(_, .some(let reconnection)):
            attemptFailed(reconnection, reason: detail, retryable: retryable && !orderly, at: now, &actions)
        case .connecting:
            fail(.transport(detail), closing: false, at: now, &actions)
        case .live(let live, let phase) where live.isEnding && orderly:
            ledger.toolDrawer.append(.sessionEnded(reason: "the runtime closed the connection without session.ended", at: now))
            leave(live, phase, for: .disconnected(awaitingClose: false), &actions)
        case .live(let live, let phase) where !orderly && retryable && !live.isEnding && configuration.reconnect.attempts > 0:
            beginReconnecting(live, phase, reason: detail, at: now, &actions)
        case .live(let live, let phase):
            fail(.transport(detail), closing: false, leaving: (live, phase), at: now, &actions)
        case .disconnected, .error, .modifying:
            ignore("transport closed", &actions)
        }
        return scheduling(&actions)
    }

    /// The transport refused a message other than a text or captured audio (its backlog was full,
    /// or it had closed): the session cannot go on → `error(transport)`. Keep-alive audio that
    /// does not fit counts as dropped audio instead.
    public mutating func sendFailed(_ type: MessageType, reason: String, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        if type == .audioChunk {
            deliveries.forgetKeepAlive()
            recordDrop(at: now, &actions)
        } else if case .live(let live, let phase) = current {
            fail(.transport("\(type) could not be sent: \(reason)"), closing: true, leaving: (live, phase), at: now, &actions)
        } else {
            ignore("send failed", &actions)
        }
        return scheduling(&actions)
    }

    /// The user ends the session: `session.end` goes out and the session waits (bounded by the end
    /// timeout) for `session.ended`; asked again, it stops waiting; while connecting, the attempt
    /// is abandoned → `disconnected`.
    public mutating func end(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        switch current {
        case .connecting(_, .some(var reconnection)):
            let handedBack = settleHandedBack(&reconnection, &actions)
            ledger.counters.framesDropped += reconnection.held.count + handedBack.count
            ledger.counters.framesDroppedWhileAway += reconnection.held.count + handedBack.count
            ledger.toolDrawer.append(.sessionEnded(reason: "the user ended the session while it was reconnecting", at: now))
            let attemptOpen = reconnection.retryAt == nil
            if attemptOpen { actions.append(.closeTransport) }
            enter(.disconnected(awaitingClose: attemptOpen), from: .connecting, &actions)
        case .connecting:
            actions.append(.closeTransport)
            enter(.disconnected(awaitingClose: true), from: .connecting, &actions)
        case .live(var live, let phase) where !live.isEnding:
            current = .modifying
            beginEnding("the user ended the session", &live, at: now, &actions)
            current = .live(live, phase)
        case .live(let live, let phase):
            ledger.toolDrawer.append(.sessionEnded(reason: "the user ended the session before the runtime confirmed it", at: now))
            actions.append(.closeTransport)
            leave(live, phase, for: .disconnected(awaitingClose: true), &actions)
        case .disconnected, .error, .modifying:
            ignore("end", &actions)
        }
        return scheduling(&actions)
    }

    // MARK: Audio

    /// Audio is unavailable (the format guard refused the device, or there is none): the session
    /// runs as a text conversation and its state line says why.
    public mutating func audioUnavailable(_ reason: String, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        audioUnavailableReason = reason
        actions.append(.note(.audioUnavailable(reason)))
        return scheduling(&actions)
    }

    /// The capture device failed mid-session (unplugged, its stream lost): the turn the user was
    /// speaking ends there (and is answered like any other), and the session goes on as text
    /// until ``audioRestored(_:at:)``; its state line says why.
    public mutating func audioLost(_ reason: String, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard audioUnavailableReason == nil else {
            ignore("audio lost", &actions)
            return scheduling(&actions)
        }
        audioUnavailableReason = reason
        ledger.counters.audioLosses += 1
        actions.append(.note(.audioLost(reason)))
        switch current {
        case .connecting(let since, .some(var reconnection)):
            _ = reconnection.gate.close()
            endTurnWhileAway(&reconnection, at: now)
            current = .connecting(since: since, reconnection: reconnection)
        case .live(var live, var phase):
            current = .modifying
            _ = live.gate.close()
            endVoiceTurn(&live, &phase, at: now, &actions)
            current = .live(live, phase)
        default:
            break
        }
        return scheduling(&actions)
    }

    /// The capture device is back (reopened, its format guarded again): captured frames are sent
    /// and heard by the gate again.
    public mutating func audioRestored(_ description: String, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard audioUnavailableReason != nil else {
            ignore("audio restored", &actions)
            return scheduling(&actions)
        }
        audioUnavailableReason = nil
        actions.append(.note(.audioRestored(description)))
        return scheduling(&actions)
    }

    /// The first reply audio of turn `number` was heard `delay` after it was handed to the
    /// output (the speaker's report): the turn's latency to the ear is known.
    public mutating func replyHeard(turn number: Int, after delay: Duration, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard let index = ledger.turns.firstIndex(where: { $0.number == number }), ledger.turns[index].firstReplyAudioAt != nil,
              ledger.turns[index].heardDelay == nil else {
            ignore("reply heard", &actions)
            return scheduling(&actions)
        }
        ledger.turns[index].heardDelay = max(delay, .zero)
        return scheduling(&actions)
    }

    /// One captured frame (16 kHz mono, as the capture converter makes them): sent while the
    /// session is live (held while a rotation opens), and fed to the voice gate. The gate opening
    /// is `talking`; closing after its hang-over ends the turn → `thinking`. The driver reports
    /// the send with ``frameSent(_:at:)`` or ``frameNotSent(at:)``.
    public mutating func captured(_ frame: AudioFrame, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        if case .connecting(let since, .some(var reconnection)) = current, audioUnavailableReason == nil {
            holdWhileAway(frame, &reconnection, at: now)
            current = .connecting(since: since, reconnection: reconnection)
            return scheduling(&actions)
        }
        guard case .live(var live, var phase) = current, !live.isEnding, audioUnavailableReason == nil else {
            ledger.counters.framesNotLive += 1
            return scheduling(&actions)
        }
        current = .modifying
        if live.rotation == nil {
            actions.append(.sendCapturedFrame(frame))
        } else if let failure = hold(frame, &live, at: now, &actions) {
            fail(failure, closing: true, leaving: (live, phase), at: now, &actions)
            return scheduling(&actions)
        }
        let replyPlays: Bool
        if case .speaking = phase { replyPlays = true } else { replyPlays = false }
        let learnsFloor = !(replyPlays && configuration.captureHearsReplies)
        switch live.gate.process(frame.samples, level: frame.level, sampleRate: configuration.captureSampleRate, learnsFloor: learnsFloor) {
        case .opened:
            if live.openTurn == nil { live.openTurn = ledger.beginTurn(.voice, at: now) }
            if case .ready = phase { Self.move(&phase, to: .talking, &actions) }
            if case .thinking = phase { Self.move(&phase, to: .talking, &actions) }
        case .closed:
            endVoiceTurn(&live, &phase, at: now, &actions)
        case nil:
            if live.gate.isOpen, live.gate.speechEnd == live.gate.audioTime, let open = live.openTurn {
                ledger.turns[open].speechEndedAt = now
            }
        }
        current = .live(live, phase)
        return scheduling(&actions)
    }

    /// The transport took a captured frame: it counts as sent, and the keep-alive timer restarts.
    public mutating func frameSent(_ frame: AudioFrame, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        ledger.counters.framesSent += 1
        ledger.counters.samplesSent += frame.samples.count
        deliveries.recordFrame(frame, limit: configuration.captureSampleRate.frames(in: configuration.reconnect.holdLimit))
        if case .live(var live, let phase) = current {
            current = .modifying
            live.keepAliveFrom = now
            live.stallStartedAt = nil
            current = .live(live, phase)
        }
        return scheduling(&actions)
    }

    /// The transport could not take a captured frame (its backlog was full): it is dropped and
    /// counted; audio that cannot be sent for the stall limit is `error(runtime stalled)`.
    public mutating func frameNotSent(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        recordDrop(at: now, &actions)
        return scheduling(&actions)
    }

    /// The transport refused a captured frame because it has closed; its closing report is on
    /// the way. The frame waits for it: a reconnection sends it first on the new connection;
    /// otherwise it counts as dropped.
    public mutating func frameNotSent(_ frame: AudioFrame, transportClosed: Bool, at now: SessionInstant) -> [SessionAction] {
        guard transportClosed, case .live(var live, let phase) = current, configuration.reconnect.attempts > 0 else {
            return frameNotSent(at: now)
        }
        var actions = [SessionAction]()
        current = .modifying
        live.refusedAtClose.append(frame)
        current = .live(live, phase)
        return scheduling(&actions)
    }

    /// Captured audio is waiting because the transport has no room (a file sent as fast as the
    /// runtime takes it): nothing is dropped, but a runtime that takes nothing for the stall
    /// limit is `error(runtime stalled)`, as when audio has to be dropped.
    public mutating func audioWaiting(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        recordStall(at: now, dropped: false, &actions)
        return scheduling(&actions)
    }

    /// The input ended (the file ran out; the user has nothing more to say): an open turn ends, and
    /// once the last reply has played (or its wait runs out) `session.end` goes out by itself.
    public mutating func inputEnded(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard inputEndedAt == nil else {
            ignore("input ended", &actions)
            return scheduling(&actions)
        }
        inputEndedAt = now
        if case .connecting(let since, .some(var reconnection)) = current {
            _ = reconnection.gate.close()
            endTurnWhileAway(&reconnection, at: now)
            current = .connecting(since: since, reconnection: reconnection)
        }
        if case .live(var live, var phase) = current {
            current = .modifying
            _ = live.gate.close()
            endVoiceTurn(&live, &phase, at: now, &actions)
            current = .live(live, phase)
            endIfEverythingAnswered(at: now, &actions)
        }
        return scheduling(&actions)
    }

    /// Everything given to the player has played.
    public mutating func playbackDrained(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        if case .live(let live, .speaking(var reply)) = current {
            reply.drainedAt = reply.drainedAt ?? now
            current = .live(live, .speaking(reply))
        } else {
            ignore("playback drained", &actions)
        }
        return scheduling(&actions)
    }

    // MARK: Text and requests

    /// The user typed `text`. Sent at once when the session is live; otherwise queued, marked
    /// pending, and sent in order exactly once when it is. A typed text is a turn of its own.
    /// - Throws: ``SessionInputError/emptyText``, ``SessionInputError/sessionEnding``, or
    ///   ``SessionInputError/pendingTextQueueFull(limit:)`` (nothing was queued).
    public mutating func typed(_ text: String, at now: SessionInstant) throws(SessionInputError) -> [SessionAction] {
        guard text.contains(where: { !$0.isWhitespace }) else { throw .emptyText }
        guard !isEnding else { throw .sessionEnding }
        guard texts.waitingCount < configuration.pendingTextLimit else {
            throw .pendingTextQueueFull(limit: configuration.pendingTextLimit)
        }
        var actions = [SessionAction]()
        let pending = texts.append(text, at: now)
        if case .live = current {
            sendQueuedTexts(&actions)
        } else {
            actions.append(.note(.textQueued(pending)))
        }
        return scheduling(&actions)
    }

    /// The transport took a text: it is a turn now, and the reply timer runs.
    public mutating func textSent(_ text: PendingText, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard texts.inFlight.contains(text) else {
            ignore("text sent", &actions)
            return scheduling(&actions)
        }
        let turn = ledger.beginTurn(.text, at: now, endedAt: now)
        _ = texts.markSent(text, turn: turn)
        ledger.counters.textsSent += 1
        actions.append(.note(.textSent(text)))
        actions.append(.note(.turnEnded(ledger.turns[turn])))
        if case .live(var live, var phase) = current {
            current = .modifying
            live.awaitingReply.append(turn)
            if case .ready = phase { Self.move(&phase, to: .thinking, &actions) }
            current = .live(live, phase)
        }
        return scheduling(&actions)
    }

    /// The transport refused a text: it goes back into the queue, in its place, and is sent again
    /// after ``SessionConfiguration/textRetryDelay`` (a full backlog needs time to drain).
    public mutating func textNotSent(_ text: PendingText, reason: String, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard texts.markRefused(text, retryAt: now + configuration.textRetryDelay) else {
            ignore("text not sent", &actions)
            return scheduling(&actions)
        }
        actions.append(.note(.textRequeued(text, reason: reason)))
        return scheduling(&actions)
    }

    /// The connection that took these texts (by ``PendingText/number``, the identity the
    /// transport reports) closed before it wrote them, so the runtime never saw them: each goes
    /// back into the queue in its place and its turn is withdrawn. They are sent once more, in
    /// order: at once while the session is live (an old connection closing after a rotation),
    /// else after the next `session.start`. A text that was not sent, or already withdrawn, is ignored.
    public mutating func textsNotWritten(_ numbers: [Int], at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        if case .connecting(let since, .some(var reconnection)) = current, deliveries.runtimeConfirms != false {
            // Whether the runtime read them is what its session.resumed says (see framesNotWritten).
            reconnection.textsHandedBack += numbers
            current = .connecting(since: since, reconnection: reconnection)
            return scheduling(&actions)
        }
        let withdrawn = withdrawTexts(numbers, reason: "the connection ended before it was written", &actions)
        if case .connecting(let since, .some(var reconnection)) = current {
            reconnection.awaitingReply.removeAll { withdrawn.contains($0) }
            current = .connecting(since: since, reconnection: reconnection)
        }
        if case .live(var live, var phase) = current {
            current = .modifying
            live.awaitingReply.removeAll { withdrawn.contains($0) }
            if case .thinking = phase, live.isQuiet { Self.move(&phase, to: .ready, &actions) }
            current = .live(live, phase)
        }
        sendQueuedTexts(&actions)
        endIfEverythingAnswered(at: now, &actions)
        return scheduling(&actions)
    }

    /// Sent texts (by number) that the runtime never saw go back into the queue in their places
    /// and their turns are withdrawn; returns those turns. A number not sent is ignored.
    mutating func withdrawTexts(_ numbers: [Int], reason: String, _ actions: inout [SessionAction]) -> [Int] {
        var withdrawn: [Int] = []
        for number in numbers {
            guard let (text, turn) = texts.withdraw(number: number) else {
                ignore("text not written", &actions)
                continue
            }
            ledger.turns[turn].wasWithdrawn = true
            ledger.counters.textsSent -= 1
            withdrawn.append(turn)
            actions.append(.note(.textRequeued(text, reason: reason)))
        }
        return withdrawn
    }

    /// The `count` texts sent last, withdrawn as ``withdrawTexts(_:reason:_:)`` does.
    mutating func withdrawNewestTexts(_ count: Int, reason: String, _ actions: inout [SessionAction]) -> [Int] {
        withdrawTexts(texts.newestSent(count), reason: reason, &actions)
    }

    /// The connection that took these captured frames closed before it wrote them: they no
    /// longer count as sent. While reconnecting they go to the front of the held audio (older
    /// than anything captured since), to go out on the new connection; on a live connection (an
    /// old one closing after a rotation) they go out now; otherwise they count as dropped.
    public mutating func framesNotWritten(_ frames: [AudioFrame], at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        if case .connecting(let since, .some(var reconnection)) = current, deliveries.runtimeConfirms != false {
            // A transport cannot always tell what it wrote (a reset can take the message it was
            // writing either way), and the runtime's session.resumed will say what it read: until
            // then they stay written; without that word they go out first, as below.
            reconnection.framesHandedBack += frames
            current = .connecting(since: since, reconnection: reconnection)
            return scheduling(&actions)
        }
        takeBack(frames)
        switch current {
        case .connecting(let since, .some(var reconnection)):
            reconnection.held.insert(contentsOf: frames, at: 0)
            reconnection.heldSamples += frames.reduce(0) { $0 + $1.samples.count }
            trimHeld(&reconnection)
            current = .connecting(since: since, reconnection: reconnection)
        case .live(let live, _) where !live.isEnding:
            for frame in frames { actions.append(.sendCapturedFrame(frame)) }
        default:
            ledger.counters.framesDropped += frames.count
            ledger.counters.framesDroppedWhileAway += frames.count
        }
        return scheduling(&actions)
    }

    /// Asks the runtime to hand the user to a person. Tracked beside the voice state.
    /// - Throws: ``SessionInputError/notConnected(_:)`` unless live; ``SessionInputError/sessionEnding``.
    public mutating func requestEscalation(reason: String, at now: SessionInstant) throws(SessionInputError) -> [SessionAction] {
        guard case .live(var live, let phase) = current else { throw .notConnected(state) }
        guard !live.isEnding else { throw .sessionEnding }
        var actions = [SessionAction]()
        current = .modifying
        Self.send(.escalationRequest(reason: reason), &live, &actions)
        current = .live(live, phase)
        let escalation = EscalationStatus(reason: reason, requestedAt: now)
        ledger.escalation = escalation
        actions.append(.note(.escalation(escalation)))
        return scheduling(&actions)
    }

    /// Marks the turn being spoken (or, when none, the latest waiting for its reply, or else the
    /// next one) as long-running: it gets the long-turn allowance instead of the reply timeout.
    public mutating func markTurnLongRunning(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        if case .live(let live, _) = current, let turn = live.openTurn ?? live.awaitingReply.last {
            ledger.turns[turn].isLongRunning = true
        } else {
            ledger.nextTurnIsLongRunning = true
        }
        return scheduling(&actions)
    }

    // MARK: Time

    /// The scheduled instant came (or any later one): timeouts, the end of a reply, keep-alive,
    /// texts to retry, the end of an answered input, rotation.
    public mutating func tick(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        switch current {
        case .connecting(_, .some(let reconnection)) where reconnection.resumingSince != nil:
            if let since = reconnection.resumingSince, now >= since + configuration.reconnect.resumptionWait {
                resume(reconnection, runtimeRead: nil, at: now, &actions)
            }
        case .connecting(_, .some(var reconnection)):
            if let retryAt = reconnection.retryAt {
                guard now >= retryAt else { break }
                reconnection.retryAt = nil
                current = .connecting(since: now, reconnection: reconnection)
                actions.append(.openTransport)
            } else if let since = connectingSince, now >= since + configuration.connectTimeout {
                attemptFailed(reconnection, reason: "the connection did not open within \(configuration.connectTimeout.formattedSeconds)", retryable: true, closing: true, at: now, &actions)
            }
        case .connecting(let since, nil) where now >= since + configuration.connectTimeout:
            fail(.timeout(.connect, limit: configuration.connectTimeout), closing: true, at: now, &actions)
        case .live(var live, var phase):
            current = .modifying
            if let failure = liveTick(&live, &phase, at: now, &actions) {
                fail(failure, closing: true, leaving: (live, phase), at: now, &actions)
                break
            }
            current = .live(live, phase)
            if texts.retryAt.map({ now >= $0 }) ?? true { sendQueuedTexts(&actions) }
            endIfEverythingAnswered(at: now, &actions)
            rotateIfDue(at: now, &actions)
        case .connecting, .disconnected, .error, .modifying:
            break
        }
        return scheduling(&actions)
    }

    /// The earliest instant at which ``tick(at:)`` has work to do, if any.
    public var nextDeadline: SessionInstant? {
        switch current {
        case .connecting(let since, let reconnection):
            if let resuming = reconnection?.resumingSince { return resuming + configuration.reconnect.resumptionWait }
            return reconnection?.retryAt ?? since + configuration.connectTimeout
        case .live(let live, let phase):
            // The earliest of the live timers, kept as it goes (an array for this cost an
            // allocation on every event).
            var earliest: SessionInstant?
            func consider(_ deadline: SessionInstant) { earliest = min(earliest ?? deadline, deadline) }
            if let end = live.endDeadline(configuration) {
                consider(end)
            } else {
                consider(live.keepAliveDue(configuration))
                if let wait = endOfInputDeadline(live, phase) {
                    consider(wait)
                } else if let reply = replyDeadline(live, phase) {
                    consider(reply.deadline)
                }
                if let retry = texts.retryAt, live.rotation == nil { consider(retry) }
            }
            if case .speaking(let reply) = phase, let drained = reply.drainedAt { consider(drained + configuration.playbackGap) }
            if let due = live.rotationDue(configuration), isQuietAndReady(live, phase) { consider(due) }
            return earliest
        case .disconnected, .error, .modifying:
            return nil
        }
    }

    /// When the current connection attempt began, while connecting.
    var connectingSince: SessionInstant? {
        if case .connecting(let since, _) = current { return since }
        return nil
    }

    // MARK: The step every event shares

    /// Tells the driver when to tick next, if that moved; returns the event's actions.
    mutating func scheduling(_ actions: inout [SessionAction]) -> [SessionAction] {
        let next = nextDeadline
        if next != scheduledTick {
            scheduledTick = next
            actions.append(.scheduleTick(at: next))
        }
        return actions
    }
}
