import VoicePipeCore

/// The events from the runtime: each message type's work on the live connection, the ledger
/// and the phase.
extension SessionMachine {
    /// A message from the runtime.
    public mutating func received(_ envelope: WireEnvelope, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        if case .connecting(_, .some(let reconnection)) = current, reconnection.resumingSince != nil {
            // The runtime's first word on the new connection: what it read, or (any other message)
            // that it does not say, which the message then shows on the live connection.
            if case .sessionResumed(let audioChunks, let texts) = envelope.message {
                resume(reconnection, runtimeRead: (audioChunks, texts), at: now, &actions)
                return scheduling(&actions)
            }
            resume(reconnection, runtimeRead: nil, at: now, &actions)
        }
        guard case .live(var live, var phase) = current else {
            ignore("\(envelope.message.type) in \(state.name)", &actions)
            return scheduling(&actions)
        }
        current = .modifying
        live.lastMessageAt = now
        switch envelope.message {
        case .debug, .unknown, .sessionResumed: break
        default: live.lastProgressAt = now
        }
        switch envelope.message {
        case .transcript(let role, let text, let isFinal):
            receivedTranscript(TranscriptLine(role: role, text: text, isFinal: isFinal, receivedAt: now), &live, &phase, &actions)
        case .audioChunk(let chunk):
            receivedReplyAudio(chunk, &live, &phase, at: now, &actions)
        case .interruption:
            receivedInterruption(&live, &phase, at: now, &actions)
        case .toolCall(let id, let name, let input):
            let record = ledger.recordTool(id: id, name: name, budget: configuration.toolBudget, at: now,
                                           completing: { $0.input = input; $0.callReceivedAt = now }, isMissing: { $0.callReceivedAt == nil })
            actions.append(.note(.tool(record)))
            if configuration.longRunningTools.contains(name),
               let turn = live.awaitingReply.first(where: { ledger.turns[$0].firstReplyEventAt == nil }) ?? live.openTurn {
                ledger.turns[turn].isLongRunning = true
            }
        case .toolResult(let id, let name, let output, let milliseconds):
            let runtimeDuration = milliseconds.flatMap { $0.isFinite && $0 >= 0 && $0 < 1e12 ? Duration.milliseconds($0) : nil }
            let record = ledger.recordTool(id: id, name: name, budget: configuration.toolBudget, at: now,
                                           completing: { $0.output = output; $0.resultReceivedAt = now; $0.runtimeDuration = runtimeDuration },
                                           isMissing: { $0.resultReceivedAt == nil })
            actions.append(.note(.tool(record)))
        case .classification(let label, let confidence):
            ledger.toolDrawer.append(.classification(label: label, confidence: confidence, at: now))
            actions.append(.note(.classification(label: label, confidence: confidence)))
        case .escalation(let status):
            var updated = ledger.escalation ?? EscalationStatus(reason: nil, requestedAt: nil)
            updated.append(status, at: now)
            ledger.escalation = updated
            actions.append(.note(.escalation(updated)))
        case .infoMessage(let markdown):
            let card = InfoCard(markdown: markdown, receivedAt: now)
            ledger.infoCards.append(card)
            actions.append(.note(.infoCard(card)))
        case .sessionEnded(let reason):
            ledger.toolDrawer.append(.sessionEnded(reason: reason ?? "the runtime ended the session", at: now))
            actions.append(.closeTransport)
            leave(live, phase, for: .disconnected(awaitingClose: true), &actions)
            return scheduling(&actions)
        case .error(let message, let code):
            fail(.runtimeError(message: message, code: code), closing: true, leaving: (live, phase), at: now, &actions)
            return scheduling(&actions)
        case .debug(let message):
            actions.append(.note(.runtimeDebug(message)))
        case .sessionResumed:
            break // the answer to a rotation's session.start: its old connection closes in order, so nothing was lost
        case .unknown(let type, _):
            if ledger.noteUnknownType(type) { actions.append(.note(.unknownMessage(type: type))) }
        case .sessionStart, .textInput, .escalationRequest, .sessionEnd:
            ignore("\(envelope.message.type) from the runtime", in: phase.state, &actions)
        }
        current = .live(live, phase)
        return scheduling(&actions)
    }

    /// A message from the runtime that could not be decoded: reported and counted; the session
    /// goes on and nothing already queued is lost.
    public mutating func receivedMalformed(_ reason: String, at now: SessionInstant) -> [SessionAction] {
        var actions = [SessionAction]()
        ledger.counters.malformedMessages += 1
        if case .live(var live, let phase) = current {
            current = .modifying
            live.lastMessageAt = now
            current = .live(live, phase)
        }
        actions.append(.note(.malformedMessage(reason)))
        return scheduling(&actions)
    }

    private mutating func receivedTranscript(_ line: TranscriptLine, _ live: inout LiveConnection, _ phase: inout LivePhase, _ actions: inout [SessionAction]) {
        ledger.record(line)
        if line.isFinal { actions.append(.note(.transcript(line))) }
        switch line.role {
        case .assistant:
            noteReplyEvent(&live, at: line.receivedAt)
            if case .speaking(var reply) = phase, !live.awaitingReply.isEmpty {
                reply.nextAnnounced = true
                phase = .speaking(reply)
            }
        case .user where line.isFinal:
            // The runtime takes turns in the order they were spoken, so its final line is for the
            // oldest turn the gate ended that it has not acknowledged yet. A file sent as fast as
            // the runtime takes it puts the gate turns ahead of the runtime: the turn being spoken
            // then is later audio, and is neither acknowledged nor cut by this line.
            if let waiting = live.awaitingReply.first(where: { ledger.turns[$0].kind == .voice && !ledger.turns[$0].isAcknowledged }) {
                ledger.turns[waiting].isAcknowledged = true
            } else {
                var heardByRuntimeAlone = false
                if live.openTurn == nil, live.awaitingReply.isEmpty, case .ready = phase {
                    // The runtime heard a turn the gate did not (server-side voice detection).
                    live.openTurn = ledger.beginTurn(.voice, at: line.receivedAt)
                    heardByRuntimeAlone = true
                }
                if let open = live.openTurn {
                    ledger.turns[open].isAcknowledged = true
                    // The runtime ended the turn: the gate starts afresh, so speech that goes on is a
                    // new turn rather than lost inside this one.
                    _ = live.gate.close()
                }
                // The gate measured no speech of a turn it did not hear (its figures are the last turn's).
                endVoiceTurn(&live, &phase, at: line.receivedAt, speechMeasured: !heardByRuntimeAlone, &actions)
            }
            if case .ready = phase { Self.move(&phase, to: .thinking, &actions) }
        case .user:
            break
        }
    }

    private mutating func receivedReplyAudio(_ chunk: AudioChunk, _ live: inout LiveConnection, _ phase: inout LivePhase, at now: SessionInstant, _ actions: inout [SessionAction]) {
        ledger.counters.replyChunks += 1
        ledger.counters.replySamples += chunk.samples.count
        ledger.counters.replyAudio += .samples(chunk.samples.count, at: chunk.sampleRate)
        live.lastReplyAudioAt = now
        if case .speaking(var reply) = phase {
            // More of the reply that is playing, or, after an assistant transcript, the next
            // turn's reply queued right behind it. Turns that ended meanwhile stop waiting: this
            // audio may be their answer.
            if reply.nextAnnounced, !live.awaitingReply.isEmpty { reply.turn = startReply(&live, at: now, &actions) }
            // (Not with a runtime that acknowledges turns: see ``answersTurnsInsideReplies``.)
            if answersTurnsInsideReplies {
                for turn in live.awaitingReply where ledger.turns[turn].firstReplyEventAt == nil && (ledger.turns[turn].endedAt ?? now) < now {
                    ledger.turns[turn].firstReplyEventAt = now
                }
            }
            reply.nextAnnounced = false
            reply.drainedAt = nil
            phase = .speaking(reply)
        } else {
            noteReplyEvent(&live, at: now)
            var reply = LivePhase.Reply(startedAt: now)
            if !live.awaitingReply.isEmpty { reply.turn = startReply(&live, at: now, &actions) }
            Self.move(&phase, to: .speaking(reply), &actions)
        }
        actions.append(.playReply(chunk))
    }

    /// The oldest turn waiting for its reply gets it now: its latency is known.
    private mutating func startReply(_ live: inout LiveConnection, at now: SessionInstant, _ actions: inout [SessionAction]) -> Int {
        let turn = live.awaitingReply.removeFirst()
        if ledger.turns[turn].firstReplyEventAt == nil { ledger.turns[turn].firstReplyEventAt = now }
        ledger.turns[turn].firstReplyAudioAt = now
        actions.append(.note(.turnAnswered(ledger.turns[turn])))
        return turn
    }

    /// The oldest turn still waiting for any reply event has one now.
    private mutating func noteReplyEvent(_ live: inout LiveConnection, at now: SessionInstant) {
        if let turn = live.awaitingReply.first(where: { ledger.turns[$0].firstReplyEventAt == nil }) {
            ledger.turns[turn].firstReplyEventAt = now
        }
    }

    /// The runtime heard the user over the reply: playback is cut and a turn is under way even if
    /// the gate has not opened yet (opened here, it closes after its hang-over like any other).
    private mutating func receivedInterruption(_ live: inout LiveConnection, _ phase: inout LivePhase, at now: SessionInstant, _ actions: inout [SessionAction]) {
        guard case .speaking = phase else {
            ignore("interruption", in: phase.state, &actions)
            return
        }
        actions.append(.cutPlayback)
        ledger.counters.interruptions += 1
        actions.append(.note(.interrupted))
        if live.openTurn == nil { live.openTurn = ledger.beginTurn(.voice, at: now) }
        live.gate.open()
        Self.move(&phase, to: .talking, &actions)
    }
}
