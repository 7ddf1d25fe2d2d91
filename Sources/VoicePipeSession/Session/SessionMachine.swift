import VoicePipeCore

/// The rules of a voice session, as a pure state machine: events in, actions out.
///
/// Shaped like swift-nio's protocol state machines: a struct with a private state enum; every
/// event is a `mutating` call that takes the current instant and returns the ``SessionAction``s
/// to carry out, in order (send a message, play reply audio, cut playback, open or close the
/// transport, schedule the next tick). The transport, the clock and the audio stay with the
/// driver, so every rule here is tested with explicit instants and no threads.
///
/// An event that is not allowed in the current state is ignored and counted
/// (``SessionCounters/ignoredEvents``), never a trap. The allowed transitions are the table in
/// `SESSION.md`.
///
/// What a UI shows (``isThinking``, ``stateLine``, ``pendingTexts``, …) is computed from the state
/// on each read, never stored beside it.
public struct SessionMachine: Sendable {
    private enum State: Sendable {
        case disconnected
        case connecting(since: SessionInstant)
        case ready
        case talking
        case thinking
        case speaking
        case error(SessionFailure)
    }

    /// The figures the session runs by.
    public let configuration: SessionConfiguration
    private var current: State = .disconnected

    // The current connection (reset by `connect`).
    private var gate: VoiceGate
    /// The last `audio.chunk` sent (or the session's start): the keep-alive timer counts from here.
    private var lastAudioSentAt: SessionInstant = .origin
    /// The last message of any kind from the runtime (it is alive).
    private var lastRuntimeMessageAt: SessionInstant = .origin
    /// The last message that moved a reply on (transcript, audio, tool, card; not debug): the
    /// end-of-input wait counts from here.
    private var lastRuntimeProgressAt: SessionInstant = .origin
    /// The last reply audio: the wait for `session.ended` counts from here (or from `session.end`).
    private var lastReplyAudioAt: SessionInstant?
    /// When the last reply finished playing: a turn that ended during it waits from here.
    private var lastReplyEndedAt: SessionInstant?
    /// When the reply now playing started.
    private var replyStartedAt: SessionInstant?
    /// The keep-alive timer's origin before the frame whose outcome is not known yet.
    private var keepAliveOriginBeforeFrame: SessionInstant?
    /// When `session.end` went out.
    private var endSentAt: SessionInstant?
    /// The turn being spoken (index into `turns`).
    private var openTurn: Int?
    /// Ended turns with no reply audio yet, oldest first.
    private var awaitingReply: [Int] = []
    /// The turn whose reply is playing.
    private var replying: Int?
    /// When playback ran out of reply audio (while speaking).
    private var drainedAt: SessionInstant?
    /// An assistant transcript came while speaking: the next reply audio starts the next reply.
    private var nextReplyAnnounced = false
    /// This side closed the transport: its closing event is expected.
    private var expectingClose = false
    /// Samples of the last captured frame handed out to send, until its outcome is known.
    private var unconfirmedFrameSamples: Int?
    /// The first captured frame of the current run that could not be sent.
    private var dropStreakStart: SessionInstant?

    // The whole session.
    private var queuedTexts: [PendingText] = []
    private var textsInFlight: [PendingText] = []
    private var nextTextNumber = 1
    private var inputEndedAt: SessionInstant?
    private var nextTurnIsLongRunning = false
    private var audioUnavailableReason: String?
    private var scheduledTick: SessionInstant?
    private var toolPairing: [String: Int] = [:]
    private var unknownTypesNoted: Set<String> = []
    /// When the current connection opened (for rotation).
    private var connectionOpenedAt: SessionInstant?
    /// When the rotation in progress began.
    private var rotationStartedAt: SessionInstant?
    /// No rotation before this, after one failed.
    private var rotationNotBefore: SessionInstant?

    /// Every user turn, in order.
    public private(set) var turns: [TurnRecord] = []
    /// The turn of each text sent, by the text's number, until the text is withdrawn.
    private var textTurns: [Int: Int] = [:]
    /// The conversation, partial lines replaced by their later versions.
    public private(set) var transcript: [TranscriptLine] = []
    /// Tool calls and results, classifications and session boundaries, in the order seen.
    public private(set) var toolDrawer: [ToolDrawerEntry] = []
    /// Markdown cards from the runtime, in order.
    public private(set) var infoCards: [InfoCard] = []
    /// The escalation, once requested or reported.
    public private(set) var escalation: EscalationStatus?
    /// What the session counted.
    public private(set) var counters = SessionCounters()

    public init(configuration: SessionConfiguration) {
        self.configuration = configuration
        gate = VoiceGate(options: configuration.gate)
    }

    // MARK: Connection

    /// The user (or the driver) connects: `disconnected` or `error` → `connecting`.
    public mutating func connect(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        switch current {
        case .disconnected, .error:
            resetConnection()
            transition(to: .connecting(since: now), &actions)
            actions.append(.openTransport)
        default:
            ignore("connect", &actions)
        }
        return finish(&actions, at: now)
    }

    /// The transport opened: `session.start` goes out, then any queued texts, in order → `ready`.
    public mutating func transportOpened(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard case .connecting = current else {
            ignore("transport opened", &actions)
            return finish(&actions, at: now)
        }
        actions.append(.send(.sessionStart(sessionId: configuration.sessionId, context: configuration.context)))
        toolDrawer.append(.sessionStarted(sessionId: configuration.sessionId, at: now))
        lastAudioSentAt = now
        lastRuntimeMessageAt = now
        lastRuntimeProgressAt = now
        connectionOpenedAt = now
        transition(to: .ready, &actions)
        return finish(&actions, at: now)
    }

    /// The fresh connection of a rotation opened: `session.start` goes out on it with the same
    /// session id, the same context and `continuesSessionId`; the state stays as it is.
    public mutating func rotationOpened(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard let started = rotationStartedAt, isLive else {
            ignore("rotation opened", &actions)
            return finish(&actions, at: now)
        }
        rotationStartedAt = nil
        connectionOpenedAt = now
        actions.append(.send(.sessionStart(sessionId: configuration.sessionId, context: configuration.context,
                                           continuesSessionId: configuration.sessionId)))
        toolDrawer.append(.sessionStarted(sessionId: configuration.sessionId, at: now))
        actions.append(.note(.rotated(gap: now - started)))
        return finish(&actions, at: now)
    }

    /// The fresh connection of a rotation could not be opened: the session goes on with the
    /// current one and tries again after ``SessionConfiguration/rotationRetryDelay``.
    public mutating func rotationFailed(_ reason: String, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard rotationStartedAt != nil else {
            ignore("rotation failed", &actions)
            return finish(&actions, at: now)
        }
        rotationStartedAt = nil
        rotationNotBefore = now + configuration.rotationRetryDelay
        actions.append(.note(.rotationFailed(reason)))
        return finish(&actions, at: now)
    }

    /// True while a fresh connection is being opened to replace the current one.
    public var isRotating: Bool { rotationStartedAt != nil }

    /// The transport closed. Expected after this side closed it; after `session.end` an orderly
    /// close ends the session (`disconnected`); otherwise it is `error(transport)`.
    public mutating func transportClosed(_ detail: String, orderly: Bool, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        if expectingClose {
            expectingClose = false
            return finish(&actions, at: now)
        }
        switch current {
        case .connecting:
            fail(.transport(detail), closing: false, at: now, &actions)
        case .ready, .talking, .thinking, .speaking:
            if endSentAt != nil && orderly {
                toolDrawer.append(.sessionEnded(reason: "the runtime closed the connection without session.ended", at: now))
                dropConnection()
                transition(to: .disconnected, &actions)
            } else {
                fail(.transport(detail), closing: false, at: now, &actions)
            }
        case .disconnected, .error:
            ignore("transport closed", &actions)
        }
        return finish(&actions, at: now)
    }

    /// The transport refused a message other than a text or captured audio (its backlog was full,
    /// or it had closed): the session cannot go on → `error(transport)`. Keep-alive audio that
    /// does not fit counts as dropped audio instead.
    public mutating func sendFailed(_ type: MessageType, reason: String, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        if type == .audioChunk {
            recordDrop(at: now, &actions)
        } else if isLive {
            fail(.transport("\(type) could not be sent: \(reason)"), closing: true, at: now, &actions)
        } else {
            ignore("send failed", &actions)
        }
        return finish(&actions, at: now)
    }

    /// The user ends the session: `session.end` goes out and the session waits (bounded by the end
    /// timeout) for `session.ended`; while connecting, the attempt is abandoned → `disconnected`.
    public mutating func end(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        switch current {
        case .connecting:
            closeTransport(&actions)
            transition(to: .disconnected, &actions)
        case .ready, .talking, .thinking, .speaking:
            if endSentAt == nil {
                beginEnding("the user ended the session", at: now, &actions)
            } else {
                // Asked again while waiting for the runtime: stop waiting.
                toolDrawer.append(.sessionEnded(reason: "the user ended the session before the runtime confirmed it", at: now))
                closeTransport(&actions)
                dropConnection()
                transition(to: .disconnected, &actions)
            }
        case .disconnected, .error:
            ignore("end", &actions)
        }
        return finish(&actions, at: now)
    }

    // MARK: Audio

    /// Audio is unavailable (the format guard refused the device, or there is none): the session
    /// runs as a text conversation and its state line says why.
    public mutating func audioUnavailable(_ reason: String, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        audioUnavailableReason = reason
        actions.append(.note(.audioUnavailable(reason)))
        return finish(&actions, at: now)
    }

    /// One captured frame, with its peak level (16 kHz mono, as the capture converter makes them):
    /// sent while the session is live, and fed to the voice gate. The gate opening is `talking`;
    /// closing after its hang-over ends the turn → `thinking`.
    public mutating func captured(_ level: PeakLevel, sampleCount: Int, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard isLive, endSentAt == nil, audioUnavailableReason == nil else {
            counters.framesNotLive += 1
            return finish(&actions, at: now)
        }
        if unconfirmedFrameSamples != nil { dropStreakStart = nil }
        actions.append(.sendCapturedFrame)
        unconfirmedFrameSamples = sampleCount
        counters.framesSent += 1
        counters.samplesSent += sampleCount
        keepAliveOriginBeforeFrame = lastAudioSentAt
        lastAudioSentAt = now

        switch gate.process(level, duration: .samples(sampleCount, at: configuration.captureSampleRate)) {
        case .opened:
            if openTurn == nil { beginVoiceTurn(at: now) }
            if case .ready = current { transition(to: .talking, &actions) }
            if case .thinking = current { transition(to: .talking, &actions) }
        case .closed:
            endVoiceTurn(at: now, &actions)
        case nil:
            if gate.isOpen, gate.speechEnd == gate.audioTime, let open = openTurn {
                turns[open].speechEndedAt = now
            }
        }
        return finish(&actions, at: now)
    }

    /// The last captured frame could not be sent (the transport's backlog was full). Audio that
    /// cannot be sent for the stall limit is `error(runtime stalled)`.
    public mutating func audioNotSent(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        if let samples = unconfirmedFrameSamples {
            counters.framesSent -= 1
            counters.samplesSent -= samples
            unconfirmedFrameSamples = nil
            // Nothing went out: the keep-alive timer still runs from the last audio that did.
            if let origin = keepAliveOriginBeforeFrame { lastAudioSentAt = origin }
        }
        recordDrop(at: now, &actions)
        return finish(&actions, at: now)
    }

    /// Captured audio is waiting because the transport has no room (a file sent as fast as the
    /// runtime takes it): nothing is dropped, but a runtime that takes nothing for the stall
    /// limit is `error(runtime stalled)`, as when audio has to be dropped.
    public mutating func audioWaiting(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        if isLive { recordStall(at: now, dropped: false, &actions) }
        return finish(&actions, at: now)
    }

    /// The input ended (the file ran out; the user has nothing more to say): an open turn ends, and
    /// once the last reply has played (or its wait runs out) `session.end` goes out by itself.
    public mutating func inputEnded(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard inputEndedAt == nil else {
            ignore("input ended", &actions)
            return finish(&actions, at: now)
        }
        inputEndedAt = now
        _ = gate.close()
        endVoiceTurn(at: now, &actions)
        return finish(&actions, at: now)
    }

    /// Everything given to the player has played.
    public mutating func playbackDrained(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        if case .speaking = current {
            drainedAt = drainedAt ?? now
        } else {
            ignore("playback drained", &actions)
        }
        return finish(&actions, at: now)
    }

    // MARK: Text and requests

    /// The user typed `text`. Sent at once when the session is live; otherwise queued, marked
    /// pending, and sent in order exactly once when it is. A typed text is a turn of its own.
    /// - Throws: ``SessionInputError/emptyText``, ``SessionInputError/sessionEnding``, or
    ///   ``SessionInputError/pendingTextQueueFull(limit:)`` (nothing was queued).
    public mutating func typed(_ text: String, at now: SessionInstant) throws(SessionInputError) -> [SessionAction] {
        guard text.contains(where: { !$0.isWhitespace }) else { throw .emptyText }
        guard endSentAt == nil else { throw .sessionEnding }
        guard queuedTexts.count + textsInFlight.count < configuration.pendingTextLimit else {
            throw .pendingTextQueueFull(limit: configuration.pendingTextLimit)
        }
        var actions = [SessionAction]()
        let pending = PendingText(number: nextTextNumber, text: text, typedAt: now)
        nextTextNumber += 1
        queuedTexts.append(pending)
        if !isLive { actions.append(.note(.textQueued(pending))) }
        return finish(&actions, at: now)
    }

    /// The transport took a text: it is a turn now, and the reply timer runs.
    public mutating func textSent(_ text: PendingText, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard let index = textsInFlight.firstIndex(of: text) else {
            ignore("text sent", &actions)
            return finish(&actions, at: now)
        }
        textsInFlight.remove(at: index)
        counters.textsSent += 1
        actions.append(.note(.textSent(text)))
        turns.append(TurnRecord(number: turns.count + 1, kind: .text, startedAt: now, speechEndedAt: now, endedAt: now, isLongRunning: takeNextTurnLongRunning()))
        textTurns[text.number] = turns.count - 1
        awaitingReply.append(turns.count - 1)
        actions.append(.note(.turnEnded(turns[turns.count - 1])))
        if case .ready = current { transition(to: .thinking, &actions) }
        return finish(&actions, at: now)
    }

    /// The transport refused a text: it goes back into the queue, in its place, to be sent when
    /// the session can (a dropped connection keeps unsent text).
    public mutating func textNotSent(_ text: PendingText, reason: String, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard let index = textsInFlight.firstIndex(of: text) else {
            ignore("text not sent", &actions)
            return finish(&actions, at: now)
        }
        textsInFlight.remove(at: index)
        let place = queuedTexts.firstIndex { $0.number > text.number } ?? queuedTexts.endIndex
        queuedTexts.insert(text, at: place)
        actions.append(.note(.textRequeued(text, reason: reason)))
        // Sent again with the next event, not now: a full backlog needs time to drain.
        return finish(&actions, at: now, sendingQueuedTexts: false)
    }

    /// The connection that took these texts closed before its transport wrote them (they were
    /// still in its backlog), so the runtime never saw them: each goes back into the queue in its
    /// place and its turn is withdrawn. They are sent once more, in order: at once while the
    /// session is live (an old connection closing after a rotation), else after the next
    /// `session.start`. A text that was not sent, or was already withdrawn, is ignored.
    public mutating func textsNotWritten(_ texts: [PendingText], at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        for text in texts {
            guard let turn = textTurns.removeValue(forKey: text.number) else {
                ignore("text not written", &actions)
                continue
            }
            turns[turn].wasWithdrawn = true
            awaitingReply.removeAll { $0 == turn }
            counters.textsSent -= 1
            let place = queuedTexts.firstIndex { $0.number > text.number } ?? queuedTexts.endIndex
            queuedTexts.insert(text, at: place)
            actions.append(.note(.textRequeued(text, reason: "the connection ended before it was written")))
        }
        if case .thinking = current, awaitingReply.isEmpty, openTurn == nil { transition(to: .ready, &actions) }
        return finish(&actions, at: now)
    }

    /// Asks the runtime to hand the user to a person. Tracked beside the voice state.
    /// - Throws: ``SessionInputError/notConnected(_:)`` unless live; ``SessionInputError/sessionEnding``.
    public mutating func requestEscalation(reason: String, at now: SessionInstant) throws(SessionInputError) -> [SessionAction] {
        guard isLive else { throw .notConnected(publicState) }
        guard endSentAt == nil else { throw .sessionEnding }
        var actions = [SessionAction]()
        actions.append(.send(.escalationRequest(reason: reason)))
        escalation = EscalationStatus(reason: reason, requestedAt: now)
        if let escalation { actions.append(.note(.escalation(escalation))) }
        return finish(&actions, at: now)
    }

    /// Marks the turn being spoken (or, when none, the latest waiting for its reply, or else the
    /// next one) as long-running: it gets the long-turn allowance instead of the reply timeout.
    public mutating func markTurnLongRunning(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        if let open = openTurn {
            turns[open].isLongRunning = true
        } else if let latest = awaitingReply.last {
            turns[latest].isLongRunning = true
        } else {
            nextTurnIsLongRunning = true
        }
        return finish(&actions, at: now)
    }

    // MARK: Messages from the runtime

    /// A message from the runtime.
    public mutating func received(_ envelope: WireEnvelope, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        guard isLive else {
            ignore("\(envelope.message.type) in \(publicState.name)", &actions)
            return finish(&actions, at: now)
        }
        lastRuntimeMessageAt = now
        switch envelope.message {
        case .debug, .unknown: break
        default: lastRuntimeProgressAt = now
        }
        switch envelope.message {
        case .transcript(let role, let text, let isFinal):
            receivedTranscript(role: role, text: text, isFinal: isFinal, at: now, &actions)
        case .audioChunk(let chunk):
            receivedReplyAudio(chunk, at: now, &actions)
        case .interruption:
            receivedInterruption(at: now, &actions)
        case .toolCall(let id, let name, let input):
            receivedToolCall(id: id, name: name, input: input, at: now, &actions)
        case .toolResult(let id, let name, let output, let milliseconds):
            receivedToolResult(id: id, name: name, output: output, milliseconds: milliseconds, at: now, &actions)
        case .classification(let label, let confidence):
            toolDrawer.append(.classification(label: label, confidence: confidence, at: now))
            actions.append(.note(.classification(label: label, confidence: confidence)))
        case .escalation(let status):
            var updated = escalation ?? EscalationStatus(reason: nil, requestedAt: nil)
            updated.append(status, at: now)
            escalation = updated
            actions.append(.note(.escalation(updated)))
        case .infoMessage(let markdown):
            let card = InfoCard(markdown: markdown, receivedAt: now)
            infoCards.append(card)
            actions.append(.note(.infoCard(card)))
        case .sessionEnded(let reason):
            toolDrawer.append(.sessionEnded(reason: reason ?? "the runtime ended the session", at: now))
            closeTransport(&actions)
            dropConnection()
            transition(to: .disconnected, &actions)
        case .error(let message, let code):
            fail(.runtimeError(message: message, code: code), closing: true, at: now, &actions)
        case .debug(let message):
            actions.append(.note(.runtimeDebug(message)))
        case .unknown(let type, _):
            counters.unknownMessages += 1
            if unknownTypesNoted.insert(type).inserted { actions.append(.note(.unknownMessage(type: type))) }
        case .sessionStart, .textInput, .escalationRequest, .sessionEnd:
            ignore("\(envelope.message.type) from the runtime", &actions)
        }
        return finish(&actions, at: now)
    }

    /// A message from the runtime that could not be decoded: reported and counted; the session
    /// goes on and nothing already queued is lost.
    public mutating func receivedMalformed(_ reason: String, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        counters.malformedMessages += 1
        if isLive { lastRuntimeMessageAt = now }
        actions.append(.note(.malformedMessage(reason)))
        return finish(&actions, at: now)
    }

    // MARK: Time

    /// The scheduled instant came (or any later one): timeouts, the end of a reply, keep-alive.
    public mutating func tick(at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        switch current {
        case .connecting(let since):
            if now >= since + configuration.connectTimeout {
                fail(.timeout(.connect, limit: configuration.connectTimeout), closing: true, at: now, &actions)
            }
        case .ready, .talking, .thinking, .speaking:
            liveTick(at: now, &actions)
        case .disconnected, .error:
            break
        }
        return finish(&actions, at: now)
    }

    /// The earliest instant at which ``tick(at:)`` has work to do, if any.
    public var nextDeadline: SessionInstant? {
        switch current {
        case .connecting(let since):
            return since + configuration.connectTimeout
        case .ready, .talking, .thinking, .speaking:
            var deadlines = [SessionInstant]()
            if let end = endDeadline {
                deadlines.append(end)
            } else {
                deadlines.append(lastAudioSentAt + configuration.keepAliveInterval)
                if let wait = endOfInputDeadline {
                    deadlines.append(wait)
                } else if let reply = replyDeadline {
                    deadlines.append(reply.deadline)
                }
            }
            if case .speaking = current, let drainedAt { deadlines.append(drainedAt + configuration.playbackGap) }
            // Only while quiet: a turn that ends later reaches `finish`, which rotates then.
            if let due = rotationDue, isQuietAndReady { deadlines.append(due) }
            return deadlines.min()
        case .disconnected, .error:
            return nil
        }
    }

    private mutating func liveTick(at now: SessionInstant, _ actions: inout [SessionAction]) {
        if let end = endDeadline, now >= end {
            fail(.timeout(.sessionEnd, limit: configuration.endTimeout), closing: true, at: now, &actions)
            return
        }
        if endSentAt == nil, let wait = endOfInputDeadline, now >= wait {
            beginEnding("no reply came within \(allowance.formattedSeconds) of the end of the input", at: now, &actions)
        } else if endSentAt == nil, inputEndedAt == nil, let reply = replyDeadline, now >= reply.deadline {
            let turn = turns[reply.turn]
            if turn.kind == .voice, !turn.isAcknowledged, let ended = turn.endedAt, lastRuntimeMessageAt > ended {
                // The gate heard a turn (a cough, "mm-hm") that the runtime, alive and talking,
                // never took as one: it is dropped with a note, not the session.
                turns[reply.turn].ignoredByRuntime = true
                awaitingReply.removeAll { $0 == reply.turn }
                actions.append(.note(.turnIgnored(turns[reply.turn])))
                if case .thinking = current, awaitingReply.isEmpty { transition(to: .ready, &actions) }
            } else {
                let which: SessionTimeout = turn.isLongRunning ? .longTurn : .reply
                fail(.timeout(which, limit: allowance(for: turn)), closing: true, at: now, &actions)
                return
            }
        }
        if case .speaking = current, let drainedAt, now >= drainedAt + configuration.playbackGap {
            replyFinished(at: now, &actions)
        }
        if endSentAt == nil, now >= lastAudioSentAt + configuration.keepAliveInterval {
            let samples = Int((configuration.keepAliveChunk.seconds * Double(configuration.captureSampleRate)).rounded())
            actions.append(.send(.audioChunk(AudioChunk(sampleRate: configuration.captureSampleRate, samples: [Int16](repeating: 0, count: samples)))))
            counters.keepAlivesSent += 1
            lastAudioSentAt = now
            actions.append(.note(.keepAlive))
        }
    }

    // MARK: Views

    /// The state as a user sees it.
    public var state: SessionState { publicState }

    /// True while waiting for the reply to the user's turn.
    public var isThinking: Bool {
        if case .thinking = current { return true }
        return false
    }

    /// True while the user's voice reaches the runtime and nobody else is speaking.
    public var isListening: Bool {
        guard audioUnavailableReason == nil else { return false }
        switch current {
        case .ready, .talking: return true
        default: return false
        }
    }

    /// True once `session.end` went out on this connection.
    public var isEnding: Bool { endSentAt != nil && isLive }

    /// Why audio is unavailable, when it is.
    public var audioUnavailability: String? { audioUnavailableReason }

    /// "Dana · 2022 Model Y", from the `persona` and `vehicle` of the `session.start` context.
    public var sessionTitle: String? {
        let parts = [Self.contextText(configuration.context["persona"], keys: ["name"]),
                     Self.contextText(configuration.context["vehicle"], keys: ["year", "make", "model"])].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }

    /// The status line: "Ready — Dana · 2022 Model Y", and when audio is unavailable
    /// "… — audio unavailable: the device reports 0 Hz; text only".
    public var stateLine: String {
        var line = state.title
        if let title = sessionTitle { line += " — \(title)" }
        if let reason = audioUnavailableReason { line += " — audio unavailable: \(reason); text only" }
        return line
    }

    /// Texts typed and not yet taken by the transport, in the order typed.
    public var pendingTexts: [PendingText] {
        (textsInFlight + queuedTexts).sorted { $0.number < $1.number }
    }

    /// The escalation banner, once there is an escalation.
    public var escalationBanner: String? { escalation?.banner }

    /// Latencies of the turns answered so far, in turn order.
    public var latencies: [Duration] { turns.compactMap(\.latency) }

    /// The median turn latency (the lower middle of an even count), nil before any answer.
    public var medianLatency: Duration? { Self.nearestRank(latencies, fraction: 0.5) }

    /// The 95th-percentile turn latency by the nearest-rank method (the ⌈0.95·n⌉-th smallest).
    public var p95Latency: Duration? { Self.nearestRank(latencies, fraction: 0.95) }

    static func nearestRank(_ values: [Duration], fraction: Double) -> Duration? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// The tool records, in the order their first half arrived.
    public var toolCalls: [ToolCallRecord] {
        toolDrawer.compactMap { if case .tool(let record) = $0 { record } else { nil } }
    }

    // MARK: Rules

    /// When the current connection is due for rotation (nil: no rotation configured, one in
    /// progress, or the session ending).
    private var rotationDue: SessionInstant? {
        guard let after = configuration.rotateAfter, let opened = connectionOpenedAt, rotationStartedAt == nil,
              endSentAt == nil, isLive else { return nil }
        return max(opened + after, rotationNotBefore ?? opened)
    }

    /// Ready, with no turn open, awaited or being answered: a moment a connection can change.
    private var isQuietAndReady: Bool {
        guard case .ready = current else { return false }
        return openTurn == nil && awaitingReply.isEmpty && replying == nil && textsInFlight.isEmpty
    }

    private var isLive: Bool {
        switch current {
        case .ready, .talking, .thinking, .speaking: true
        default: false
        }
    }

    private var publicState: SessionState {
        switch current {
        case .disconnected: .disconnected
        case .connecting: .connecting
        case .ready: .ready
        case .talking: .talking
        case .thinking: .thinking
        case .speaking: .speaking
        case .error(let failure): .error(failure)
        }
    }

    /// The allowance for a turn's reply.
    private func allowance(for turn: TurnRecord) -> Duration {
        turn.isLongRunning ? configuration.longTurnAllowance : configuration.replyTimeout
    }

    /// The allowance while the input has ended: the long one if any unanswered turn is long-running.
    private var allowance: Duration {
        let unanswered = awaitingReply + (openTurn.map { [$0] } ?? [])
        return unanswered.contains { turns[$0].isLongRunning } ? configuration.longTurnAllowance : configuration.replyTimeout
    }

    /// The oldest ended turn with no reply event yet, and when its wait runs out: counted from its
    /// end, or from the end of the reply that was playing when it ended; not while a reply plays.
    private var replyDeadline: (turn: Int, deadline: SessionInstant)? {
        if case .speaking = current { return nil }
        guard let turn = awaitingReply.first(where: { turns[$0].firstReplyEventAt == nil }),
              let ended = turns[turn].endedAt else { return nil }
        return (turn, max(ended, lastReplyEndedAt ?? ended) + allowance(for: turns[turn]))
    }

    /// After the input ended: when the wait for the last reply runs out, counted from the later of
    /// the input's end and the runtime's last progress (debug messages do not count), and never
    /// more than the end wait's cap past the allowance.
    private var endOfInputDeadline: SessionInstant? {
        guard let inputEndedAt, endSentAt == nil else { return nil }
        if case .speaking = current { return nil }
        return min(max(inputEndedAt, lastRuntimeProgressAt) + allowance,
                   inputEndedAt + allowance + configuration.maximumEndWait)
    }

    /// After `session.end`: the end timeout from the later of `session.end` and the last reply
    /// audio (a reply still arriving is heard out), capped at ``SessionConfiguration/maximumEndWait``.
    private var endDeadline: SessionInstant? {
        guard let endSentAt else { return nil }
        return min(max(endSentAt, lastReplyAudioAt ?? endSentAt) + configuration.endTimeout,
                   endSentAt + configuration.maximumEndWait)
    }

    private mutating func transition(to next: State, _ actions: inout [SessionAction]) {
        let before = publicState
        current = next
        let after = publicState
        if before != after { actions.append(.note(.stateChanged(from: before, to: after))) }
    }

    private mutating func ignore(_ event: String, _ actions: inout [SessionAction]) {
        counters.ignoredEvents += 1
        let key = "\(event) (\(publicState.name))"
        counters.ignoredByKind[key, default: 0] += 1
        actions.append(.note(.ignored(event: event, state: publicState)))
    }

    /// Common work after every event: queued texts go out while live, a finished input ends the
    /// session once everything is answered, and the tick is rescheduled if its instant moved.
    private mutating func finish(_ actions: inout [SessionAction], at now: SessionInstant, sendingQueuedTexts: Bool = true) -> [SessionAction] {
        if sendingQueuedTexts, isLive, endSentAt == nil, !queuedTexts.isEmpty {
            for text in queuedTexts {
                textsInFlight.append(text)
                actions.append(.sendText(text))
            }
            queuedTexts.removeAll()
        }
        if isLive, case .ready = current, endSentAt == nil, inputEndedAt != nil, queuedTexts.isEmpty,
           textsInFlight.isEmpty, awaitingReply.isEmpty, openTurn == nil, replying == nil {
            beginEnding("the input ended and every turn was answered", at: now, &actions)
        }
        if let due = rotationDue, now >= due, isQuietAndReady {
            rotationStartedAt = now
            actions.append(.note(.rotationStarted))
            actions.append(.rotateTransport)
        }
        let next = nextDeadline
        if next != scheduledTick {
            scheduledTick = next
            actions.append(.scheduleTick(at: next))
        }
        return actions
    }

    private mutating func beginEnding(_ why: String, at now: SessionInstant, _ actions: inout [SessionAction]) {
        actions.append(.note(.ending(why: why)))
        actions.append(.send(.sessionEnd))
        endSentAt = now
    }

    private mutating func fail(_ failure: SessionFailure, closing: Bool, at now: SessionInstant, _ actions: inout [SessionAction]) {
        toolDrawer.append(.sessionEnded(reason: failure.description, at: now))
        if closing { closeTransport(&actions) }
        dropConnection()
        transition(to: .error(failure), &actions)
    }

    private mutating func closeTransport(_ actions: inout [SessionAction]) {
        expectingClose = true
        actions.append(.closeTransport)
    }

    /// Forgets the connection's turns in flight (a closed connection answers nothing more).
    private mutating func dropConnection() {
        openTurn = nil
        awaitingReply.removeAll()
        replying = nil
        drainedAt = nil
        nextReplyAnnounced = false
        unconfirmedFrameSamples = nil
        dropStreakStart = nil
        replyStartedAt = nil
        lastReplyEndedAt = nil
        lastReplyAudioAt = nil
    }

    private mutating func resetConnection() {
        dropConnection()
        connectionOpenedAt = nil
        rotationStartedAt = nil
        rotationNotBefore = nil
        gate = VoiceGate(options: configuration.gate)
        endSentAt = nil
        expectingClose = false
    }

    private mutating func takeNextTurnLongRunning() -> Bool {
        defer { nextTurnIsLongRunning = false }
        return nextTurnIsLongRunning
    }

    private mutating func beginVoiceTurn(at now: SessionInstant) {
        turns.append(TurnRecord(number: turns.count + 1, kind: .voice, startedAt: now, speechEndedAt: now, endedAt: nil, isLongRunning: takeNextTurnLongRunning()))
        openTurn = turns.count - 1
    }

    private mutating func endVoiceTurn(at now: SessionInstant, _ actions: inout [SessionAction]) {
        guard let open = openTurn else { return }
        turns[open].endedAt = now
        openTurn = nil
        awaitingReply.append(open)
        actions.append(.note(.turnEnded(turns[open])))
        if case .talking = current { transition(to: .thinking, &actions) }
    }

    private mutating func recordDrop(at now: SessionInstant, _ actions: inout [SessionAction]) {
        counters.framesDropped += 1
        recordStall(at: now, dropped: true, &actions)
    }

    /// Audio could not go out (dropped, or waiting): from the first such instant of a run, the
    /// stall limit counts down.
    private mutating func recordStall(at now: SessionInstant, dropped: Bool, _ actions: inout [SessionAction]) {
        let start = dropStreakStart ?? now
        if dropStreakStart == nil {
            dropStreakStart = now
            actions.append(.note(dropped ? .audioDropped(totalFrames: counters.framesDropped) : .audioWaiting))
        }
        if isLive, now - start >= configuration.stallLimit {
            fail(.runtimeStalled(now - start), closing: true, at: now, &actions)
        }
    }

    /// The reply has played out: back to whatever the user is doing. Turns that ended while it
    /// played and had reply audio after them were answered inside it (no latency of their own).
    private mutating func replyFinished(at now: SessionInstant, _ actions: inout [SessionAction]) {
        if let started = replyStartedAt {
            awaitingReply.removeAll { turn in
                guard let event = turns[turn].firstReplyEventAt, turns[turn].firstReplyAudioAt == nil else { return false }
                return event >= started
            }
        }
        replying = nil
        drainedAt = nil
        replyStartedAt = nil
        lastReplyEndedAt = now
        if openTurn != nil {
            transition(to: .talking, &actions)
        } else if !awaitingReply.isEmpty {
            transition(to: .thinking, &actions)
        } else {
            transition(to: .ready, &actions)
        }
    }

    private mutating func noteReplyEvent(at now: SessionInstant) {
        if let turn = awaitingReply.first(where: { turns[$0].firstReplyEventAt == nil }) {
            turns[turn].firstReplyEventAt = now
        }
    }

    private mutating func receivedTranscript(role: TranscriptRole, text: String, isFinal: Bool, at now: SessionInstant, _ actions: inout [SessionAction]) {
        let line = TranscriptLine(role: role, text: text, isFinal: isFinal, receivedAt: now)
        if let unsettled = transcript.lastIndex(where: { $0.role == role && !$0.isFinal }) {
            transcript[unsettled] = line
        } else {
            transcript.append(line)
        }
        if isFinal { actions.append(.note(.transcript(line))) }
        switch role {
        case .assistant:
            noteReplyEvent(at: now)
            if case .speaking = current, !awaitingReply.isEmpty { nextReplyAnnounced = true }
        case .user where isFinal:
            if openTurn == nil, awaitingReply.isEmpty, case .ready = current {
                // The runtime heard a turn the gate did not (server-side voice detection).
                beginVoiceTurn(at: now)
            }
            if let open = openTurn {
                turns[open].isAcknowledged = true
                // The runtime ended the turn: the gate starts afresh, so speech that goes on is a
                // new turn rather than lost inside this one.
                _ = gate.close()
            } else if let waiting = awaitingReply.first(where: { turns[$0].kind == .voice && !turns[$0].isAcknowledged }) {
                turns[waiting].isAcknowledged = true
            }
            endVoiceTurn(at: now, &actions)
            if case .ready = current { transition(to: .thinking, &actions) }
        case .user:
            break
        }
    }

    private mutating func receivedReplyAudio(_ chunk: AudioChunk, at now: SessionInstant, _ actions: inout [SessionAction]) {
        counters.replyChunks += 1
        counters.replySamples += chunk.samples.count
        counters.replyAudio += .samples(chunk.samples.count, at: chunk.sampleRate)
        lastReplyAudioAt = now
        if case .speaking = current {
            // More of the reply that is playing, or, after an assistant transcript, the next
            // turn's reply queued right behind it. Turns that ended meanwhile stop waiting: this
            // audio may be their answer.
            if nextReplyAnnounced, !awaitingReply.isEmpty { startReply(at: now, &actions) }
            for turn in awaitingReply where turns[turn].firstReplyEventAt == nil && (turns[turn].endedAt ?? now) < now {
                turns[turn].firstReplyEventAt = now
            }
        } else {
            noteReplyEvent(at: now)
            if replying == nil, !awaitingReply.isEmpty { startReply(at: now, &actions) }
            replyStartedAt = now
            transition(to: .speaking, &actions)
        }
        nextReplyAnnounced = false
        drainedAt = nil
        actions.append(.playReply(chunk))
    }

    /// The oldest turn waiting for its reply gets it now: its latency is known.
    private mutating func startReply(at now: SessionInstant, _ actions: inout [SessionAction]) {
        let turn = awaitingReply.removeFirst()
        if turns[turn].firstReplyEventAt == nil { turns[turn].firstReplyEventAt = now }
        turns[turn].firstReplyAudioAt = now
        replying = turn
        actions.append(.note(.turnAnswered(turns[turn])))
    }

    private mutating func receivedInterruption(at now: SessionInstant, _ actions: inout [SessionAction]) {
        guard case .speaking = current else {
            ignore("interruption", &actions)
            return
        }
        actions.append(.cutPlayback)
        counters.interruptions += 1
        actions.append(.note(.interrupted))
        replying = nil
        drainedAt = nil
        // The runtime heard the user: a turn is under way even if the gate has not opened yet
        // (opened here, it closes after its hang-over of quiet like any other).
        if openTurn == nil { beginVoiceTurn(at: now) }
        gate.open()
        transition(to: .talking, &actions)
    }

    private mutating func receivedToolCall(id: String, name: String, input: JSONValue, at now: SessionInstant, _ actions: inout [SessionAction]) {
        var record: ToolCallRecord
        if let index = toolPairing[id], case .tool(let existing) = toolDrawer[index], existing.callReceivedAt == nil {
            record = existing
            record.input = input
            record.callReceivedAt = now
            toolDrawer[index] = .tool(record)
            toolPairing[id] = nil
        } else {
            record = ToolCallRecord(id: id, name: name, input: input, output: nil, callReceivedAt: now, resultReceivedAt: nil, runtimeDuration: nil, budget: configuration.toolBudget)
            toolDrawer.append(.tool(record))
            toolPairing[id] = toolDrawer.count - 1
        }
        actions.append(.note(.tool(record)))
        if configuration.longRunningTools.contains(name) {
            if let turn = awaitingReply.first(where: { turns[$0].firstReplyEventAt == nil }) ?? openTurn {
                turns[turn].isLongRunning = true
            }
        }
    }

    private mutating func receivedToolResult(id: String, name: String, output: JSONValue, milliseconds: Double?, at now: SessionInstant, _ actions: inout [SessionAction]) {
        let runtimeDuration = milliseconds.flatMap { $0.isFinite && $0 >= 0 && $0 < 1e12 ? Duration.milliseconds($0) : nil }
        var record: ToolCallRecord
        if let index = toolPairing[id], case .tool(let existing) = toolDrawer[index], existing.resultReceivedAt == nil {
            record = existing
            record.output = output
            record.resultReceivedAt = now
            record.runtimeDuration = runtimeDuration
            toolDrawer[index] = .tool(record)
            toolPairing[id] = nil
        } else {
            record = ToolCallRecord(id: id, name: name, input: nil, output: output, callReceivedAt: nil, resultReceivedAt: now, runtimeDuration: runtimeDuration, budget: configuration.toolBudget)
            toolDrawer.append(.tool(record))
            toolPairing[id] = toolDrawer.count - 1
        }
        actions.append(.note(.tool(record)))
    }

    /// A readable name from a context value: a string, or an object's `keys` joined with spaces.
    private static func contextText(_ value: JSONValue?, keys: [String]) -> String? {
        switch value {
        case .string(let text)?:
            return text.isEmpty ? nil : text
        case .object(let object)?:
            let parts = keys.compactMap { key -> String? in
                switch object[key] {
                case .string(let text)?: text
                case .integer(let number)?: String(number)
                default: nil
                }
            }
            return parts.isEmpty ? nil : parts.joined(separator: " ")
        default:
            return nil
        }
    }
}
