import VoicePipeCore
import VoicePipeSession

/// The embedded runtime's protocol logic as a value: what the client sent and the time go in,
/// the messages to send and the next deadline come out. No threads, no clock, no transport.
///
/// ```
///  receive(event, at:) ──▶ gate, turn audio, timers ──▶ queued answers
///  nextAction(at:)     ◀── one due action at a time: send a message, stop reading, close
///  sendRefused(at:)    ──▶ the message just handed out goes back to the front (backlog full)
///  nextDeadline        ──▶ when nextAction will have something without a new event
/// ```
///
/// Every call takes the instant its caller read from its clock, so a test replays a session
/// with explicit instants and a timing rule is exact to the nanosecond. Actions come out one at
/// a time so that a full transport backlog loses nothing: the caller hands a refused message
/// back with ``sendRefused(at:)`` and it is offered again after
/// ``EmbeddedRuntimeOptions/backlogRetryInterval``.
///
/// Not copyable: the core owns a streaming resampler (a reference), and two copies would feed it
/// two streams.
///
/// Ordering: messages that answer something at once (the greeting, `debug`, `escalation`,
/// `interruption`) go ahead of queued turns; turns are answered in the order they ended, each
/// with its messages and then its reply audio, and a turn that ends while a reply is still
/// going out waits for it.
public struct EmbeddedRuntimeCore: ~Copyable {
    /// What the runtime's shell does next.
    public enum Action: Sendable, Hashable, CustomStringConvertible {
        /// Send this message to the client.
        case send(WireMessage)
        /// Stop reading the transport (the ``EmbeddedRuntimeOptions/Misbehaviour/stall`` switch).
        case stopReading
        /// Close the runtime's end of the transport; the core has finished.
        case close

        public var description: String {
            switch self {
            case .send(.audioChunk(let chunk)): "send audio.chunk (\(chunk.samples.count) samples at \(chunk.sampleRate))"
            case .send(let message): "send \(WireCodec.encode(message))"
            case .stopReading: "stop reading"
            case .close: "close"
            }
        }
    }

    /// Rate of the reply audio.
    public static let replyRate = SampleRate(hertz: Double(TurnRecorder.replyRate))
    /// Samples per reply chunk: 20 ms at 24 kHz (the last chunk of a reply may be shorter).
    public static let replyChunkFrames = 480
    /// Time between reply chunks when paced in real time.
    public static let replyChunkDuration: Duration = .milliseconds(20)

    private enum Phase {
        /// Listening and answering.
        case running
        /// `session.end` came: what is queued goes out, then `session.ended` and the close.
        case ending
        /// The last actions are queued (after `session.ended`, or a failure on purpose).
        case closing
        /// Stopped reading on purpose: nothing more is taken in.
        case stalled
        /// Closed, by either side.
        case finished
    }

    /// One answered turn waiting to go out: its messages in order, then its reply audio.
    private struct Answer {
        enum Item {
            case message(WireMessage)
            /// The tool call: its hand-out starts the tool's clock.
            case toolCall(id: String, input: JSONValue)
            /// The tool result: its `durationMs` is the clock time since the call went out.
            case toolResult(id: String, output: JSONValue)
        }

        var items: [Item]
        var nextItem = 0
        /// Reply audio at 24 kHz.
        var audio: [Int16]
        var nextSample = 0
        var chunksSent = 0
        /// When chunk 0 goes (or went) out; chunk k is due 20 ms × k later.
        var replyStart: SessionInstant?
        var toolCalledAt: SessionInstant?
        /// A typed turn's answer (its reply plays at a clock time, not after a stretch of the client's audio).
        var isTyped = false

        var isComplete: Bool { nextItem == items.count && nextSample >= audio.count }
        var hasStarted: Bool { nextItem > 0 }
        var audioRemains: Bool { nextSample < audio.count }
    }

    /// What the last ``nextAction(at:)`` handed out, so a refused send can be taken back.
    private enum HandOut {
        case urgent(Action)
        case answerItem
        case answerChunk(sample: Int, streamFreeAt: SessionInstant)
    }

    /// How this session listens, answers and misbehaves.
    public let options: EmbeddedRuntimeOptions
    private var phase = Phase.running
    private var gate: VoiceGate
    private let recorder = TurnRecorder()
    /// Actions due at once, ahead of queued answers.
    private var urgent: [Action] = []
    /// Answered turns in order; finished ones are removed at the next call.
    private var answers: [Answer] = []
    private var lastHandOut: HandOut?
    /// After a refused send: nothing goes out before this instant.
    private var retryAt: SessionInstant?
    /// When the reply audio sent so far ends (real-time pacing): the next reply starts no earlier.
    private var streamFreeAt = SessionInstant.origin
    /// When the last audio arrived while a turn may be open (for the end-of-audio timeout).
    private var lastAudioAt: SessionInstant?
    /// Where, in the client's audio time, the last voice reply and its hang-over would have
    /// played out had it started as its turn closed; nil once the next turn opened.
    private var voiceReplyHeardUntil: Duration?
    private var escalationFollowUps: [SessionInstant] = []
    /// The latest instant any call was given: "now" for actions that are due at once.
    private var latest = SessionInstant.origin
    private var started = false
    private var notedEarlyMessage = false
    private var turnCount = 0
    /// Every client `audio.chunk` the core read, counted and checksummed (see ``audioReceived``).
    private var receivedAudio = AudioTally()
    private var audioRate: Int?
    private var notes = UnknownContentNotes()
    /// Types already reported as ignored after `session.end` (a capture still running sends
    /// many chunks; one note each type is enough).
    private var ignoredAfterEnd: Set<MessageType> = []

    public init(options: EmbeddedRuntimeOptions = EmbeddedRuntimeOptions()) {
        self.options = options
        gate = VoiceGate(options: options.gate)
    }

    /// The client's audio as the runtime read it: every `audio.chunk` decoded, in order, whatever
    /// the runtime then did with it (a load test compares it with what the client sent).
    public var audioReceived: AudioTally { receivedAudio }

    /// Bytes of client audio held for the turn in progress (it is answered when the turn ends).
    public var turnAudioHeldBytes: Int { recorder.heldBytes }

    /// Turns ended so far, voice and typed.
    public var turns: Int { turnCount }

    /// The id of the session as its `session.start` gave it; nil before one arrived.
    public private(set) var sessionId: String?

    /// True once the runtime's end closed (after ``Action/close``) or the client closed it.
    public var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    // MARK: Events in

    /// Takes one event from the transport, received at `now`.
    public mutating func receive(_ event: TransportEvent, at now: SessionInstant) {
        // Audio arriving shows the client still sends: the end-of-audio timeout is for a client
        // that stopped, not for a runtime that came late to audio already waiting for it.
        var decoded: Result<WireEnvelope, WireError>?
        if case .message(let text) = event { decoded = Result { () throws(WireError) in try WireCodec.decode(text) } }
        var audioArrives = false
        if case .success(let envelope)? = decoded, case .audioChunk = envelope.message { audioArrives = true }
        advance(to: now, endingQuietTurn: !audioArrives)
        lastHandOut = nil
        if case .closed = event {
            finish()
            return
        }
        guard options.misbehaviour != .silent else { return }
        switch phase {
        case .running, .ending: break
        case .closing, .stalled, .finished: return
        }
        switch event {
        case .opened, .closed:
            return
        case .oversizedMessage(let bytes, let limit):
            debug("a message of \(bytes) bytes was skipped: over the \(limit)-byte limit")
        case .message:
            if let decoded { handle(decoded, at: now) }
        }
    }

    /// Hands out the next action due at `now`, or nil when nothing is due before ``nextDeadline``.
    ///
    /// A ``Action/send(_:)`` counts as sent; if the transport refused it (backlog full), call
    /// ``sendRefused(at:)`` before anything else.
    public mutating func nextAction(at now: SessionInstant) -> Action? {
        advance(to: now)
        lastHandOut = nil
        if case .finished = phase { return nil }
        if let retryAt {
            guard now >= retryAt else { return nil }
            self.retryAt = nil
        }
        while let first = answers.first, first.isComplete { answers.removeFirst() }
        if urgent.isEmpty, answers.isEmpty, case .ending = phase {
            phase = .closing
            urgent += [.send(.sessionEnded(reason: RuntimeWording.sessionEndedReason)), .close]
        }
        if !urgent.isEmpty {
            let action = urgent.removeFirst()
            switch action {
            case .close: finish()
            case .send: lastHandOut = .urgent(action)
            case .stopReading: break
            }
            return action
        }
        guard !answers.isEmpty else { return nil }
        return nextAnswerAction(at: now)
    }

    /// Every action due at `now`, for a caller whose sends never fail (tests, a recording).
    public mutating func takeDueActions(at now: SessionInstant) -> [Action] {
        var actions: [Action] = []
        while let action = nextAction(at: now) { actions.append(action) }
        return actions
    }

    /// The message of the last ``Action/send(_:)`` was not sent (the backlog was full): it goes
    /// back to the front and is offered again ``EmbeddedRuntimeOptions/backlogRetryInterval`` after `now`.
    public mutating func sendRefused(at now: SessionInstant) {
        guard let handOut = lastHandOut else { return }
        lastHandOut = nil
        switch handOut {
        case .urgent(let action):
            urgent.insert(action, at: 0)
        case .answerItem:
            answers[0].nextItem -= 1
        case .answerChunk(let sample, let freeAt):
            answers[0].nextSample = sample
            answers[0].chunksSent -= 1
            streamFreeAt = freeAt
        }
        latest = max(latest, now)
        retryAt = now + options.backlogRetryInterval
    }

    /// When ``nextAction(at:)`` will next have something to hand out without a new event (a
    /// past instant when something is due already); nil when only an event can make more.
    public var nextDeadline: SessionInstant? {
        var deadline: SessionInstant?
        func consider(_ instant: SessionInstant) { deadline = min(deadline ?? instant, instant) }
        switch phase {
        case .finished:
            return nil
        case .running, .ending, .closing, .stalled:
            break
        }
        if let retryAt {
            consider(retryAt)
        } else if !urgent.isEmpty {
            consider(latest)
        } else if let answer = answers.first(where: { !$0.isComplete }) {
            if answer.nextItem < answer.items.count || options.pacing == .unpaced {
                consider(latest)
            } else {
                let start = answer.replyStart ?? max(latest, streamFreeAt)
                consider(start + Self.replyChunkDuration * answer.chunksSent)
            }
        } else if case .ending = phase {
            consider(latest)
        }
        if case .running = phase {
            if gate.isOpen, let lastAudioAt { consider(lastAudioAt + options.effectiveEndOfAudioTimeout) }
            if let followUp = escalationFollowUps.first { consider(followUp) }
        }
        return deadline
    }

    // MARK: Messages

    private mutating func handle(_ decoded: Result<WireEnvelope, WireError>, at now: SessionInstant) {
        let envelope: WireEnvelope
        switch decoded {
        case .success(let value): envelope = value
        case .failure(let error):
            debug("could not read the client's message: \(error)")
            return
        }
        let message = envelope.message
        if case .audioChunk(let chunk) = message { receivedAudio.add(chunk.samples) }
        if case .ending = phase {
            if ignoredAfterEnd.insert(message.type).inserted { debug("\(message.type) after session.end was ignored") }
            return
        }
        if let note = notes.note(for: envelope) { debug(note) }
        if !started, message.type != .sessionStart, !notedEarlyMessage {
            notedEarlyMessage = true
            debug("\(message.type) arrived before session.start; the runtime answers anyway")
        }
        switch message {
        case .sessionStart(let sessionId, let context, _):
            guard !started else {
                debug("a second session.start (session \(JSONWriter.string(.string(sessionId)))) was ignored")
                return
            }
            started = true
            self.sessionId = sessionId
            urgent.append(.send(.infoMessage(markdown: RuntimeWording.greeting(sessionId: sessionId, context: context))))
            if options.misbehaviour == .stall {
                urgent.append(.stopReading)
                phase = .stalled
            }
        case .audioChunk(let chunk):
            audio(chunk, at: now)
        case .textInput(let text):
            typedTurn(text)
        case .escalationRequest:
            urgent.append(.send(.escalation(status: RuntimeWording.escalationRequested)))
            escalationFollowUps.append(now + options.escalationDelay)
        case .sessionEnd:
            endSession(at: now)
        case .unknown:
            break   // noted above, once per type
        case .transcript, .toolCall, .toolResult, .classification, .escalation, .interruption,
             .infoMessage, .sessionEnded, .error, .debug, .sessionResumed:
            debug("\(message.type) is a message a runtime sends, not one it takes (ignored)")
        }
    }

    /// One chunk of the client's audio: into the turn, its peak through the gate.
    private mutating func audio(_ chunk: AudioChunk, at now: SessionInstant) {
        guard !chunk.samples.isEmpty else { return }
        // A chunk from the codec carries a positive whole number of hertz, as the wire writes it.
        let wireRate = chunk.sampleRate.roundedHertz
        if let rate = audioRate, rate != wireRate {
            debug("the audio sample rate changed from \(rate) Hz to \(wireRate) Hz")
        }
        audioRate = wireRate
        let peak = recorder.append(chunk.samples, sampleRate: wireRate)
        lastAudioAt = now
        let level = PeakLevel(peak: peak, floatPeak: Float(peak) / 32_768)
        // While a reply plays (and a hang-over after it), the client's audio is the reply or what
        // echo control left of it, not the room: no floor is learnt. A voice reply is placed in
        // the client's audio time, from its turn's close for its length, so which frames teach
        // the floor (and so the turns) is the same for audio sent in real time or as fast as taken.
        let voiceReplyPlays = voiceReplyHeardUntil.map { gate.audioTime < $0 } ?? false
        let replyPlays = voiceReplyPlays || answers.contains { $0.isTyped && $0.hasStarted && $0.audioRemains }
        switch gate.process(chunk.samples, level: level, sampleRate: chunk.sampleRate, learnsFloor: !replyPlays) {
        case .opened:
            voiceReplyHeardUntil = nil
            interruptReply(at: now)
        case .closed(let speechEnd, _):
            endVoiceTurn(speechEnd: speechEnd)
        case nil:
            break
        }
        guard case .running = phase, recorder.duration > options.maxTurnAudio else { return }
        let limit = RuntimeWording.seconds(options.maxTurnAudio, decimals: 1)
        if case .closed(let speechEnd, _)? = gate.close() {
            debug("the turn reached \(limit), the most one turn holds: it ends here")
            endVoiceTurn(speechEnd: speechEnd)
        } else {
            debug("dropped \(RuntimeWording.seconds(recorder.duration, decimals: 1)) of audio without speech: a turn holds at most \(limit)")
            recorder.discard()
        }
    }

    /// The gate opened on the client's audio: a reply still going out is cut, once.
    private mutating func interruptReply(at now: SessionInstant) {
        guard let index = answers.firstIndex(where: { !$0.isComplete }),
              answers[index].hasStarted, answers[index].audioRemains else { return }
        answers[index].audio.removeLast(answers[index].audio.count - answers[index].nextSample)
        urgent.append(.send(.interruption))
        streamFreeAt = now
    }

    /// A voice turn ended (the gate closed): its answer is queued.
    private mutating func endVoiceTurn(speechEnd: Duration) {
        let speech = speechEnd - gate.speechStart
        let loudestFrame = gate.turnPeakDBFS
        let audio = recorder.finish()
        lastAudioAt = nil
        turnCount += 1
        guard options.misbehaviour != .fail else { return failOnPurpose() }
        let peakDBFS = audio.isDigitalSilence ? nil : Elementary.decibels(amplitudeRatio: Double(audio.peak) / 32_768)
        let rmsDBFS = audio.isDigitalSilence ? nil : Elementary.decibels(amplitudeRatio: audio.rms)
        let id = "\(RuntimeWording.toolName)-\(turnCount)"
        var items: [Answer.Item] = [
            .message(.transcript(role: .user, text: RuntimeWording.speechTranscript(speech: speech, peakDBFS: loudestFrame), isFinal: true)),
            .message(.classification(label: "speech", confidence: 1)),
            .toolCall(id: id, input: .object([
                "durationSeconds": .number(RuntimeWording.rounded(audio.duration.seconds, decimals: 3)),
                "sampleRate": .integer(audio.sampleRate),
            ])),
            .toolResult(id: id, output: Self.statistics(peakDBFS: peakDBFS, rmsDBFS: rmsDBFS, samples: audio.sampleCount)),
            .message(.infoMessage(markdown: RuntimeWording.statisticsTable(
                turn: turnCount, audio: audio.duration, speech: RuntimeWording.seconds(speech, decimals: 1), peakDBFS: peakDBFS, rmsDBFS: rmsDBFS))),
        ]
        if let rate = audio.unplayableRate { items.append(.message(.debug(message: RuntimeWording.unplayableRate(rate)))) }
        items.append(.message(.transcript(role: .assistant, text: RuntimeWording.voiceReply(speech: speech, unplayableRate: audio.unplayableRate), isFinal: true)))
        answers.append(Answer(items: items, audio: audio.reply))
        voiceReplyHeardUntil = gate.audioTime + .samples(audio.reply.count, at: Self.replyRate) + options.gate.hangOver
    }

    /// A typed turn: answered at once (after any queued turn), with a short tone as its audio.
    private mutating func typedTurn(_ text: String) {
        turnCount += 1
        guard options.misbehaviour != .fail else { return failOnPurpose() }
        let id = "\(RuntimeWording.toolName)-\(turnCount)"
        let items: [Answer.Item] = [
            .message(.transcript(role: .user, text: text, isFinal: true)),
            .message(.classification(label: "text", confidence: 1)),
            .toolCall(id: id, input: .object([
                "durationSeconds": .integer(0),
                "sampleRate": .integer(AudioFormat.captureTarget.sampleRate.roundedHertz),
                "source": .string("text"),
            ])),
            .toolResult(id: id, output: Self.statistics(peakDBFS: nil, rmsDBFS: nil, samples: 0)),
            .message(.infoMessage(markdown: RuntimeWording.statisticsTable(turn: turnCount, audio: .zero, speech: "typed", peakDBFS: nil, rmsDBFS: nil))),
            .message(.transcript(role: .assistant, text: RuntimeWording.typedReply(text), isFinal: true)),
        ]
        answers.append(Answer(items: items, audio: TypedTurnTone.samples, isTyped: true))
    }

    /// `session.end`: the open turn is answered, what is queued goes out, then `session.ended`.
    private mutating func endSession(at now: SessionInstant) {
        if case .closed(let speechEnd, _)? = gate.close() {
            endVoiceTurn(speechEnd: speechEnd)
        } else {
            recorder.discard()
        }
        lastAudioAt = nil
        escalationFollowUps.removeAll()
        if case .running = phase { phase = .ending }
    }

    /// The ``EmbeddedRuntimeOptions/Misbehaviour/fail`` switch: an `error`, then the close.
    private mutating func failOnPurpose() {
        answers.removeAll()
        escalationFollowUps.removeAll()
        lastAudioAt = nil
        urgent += [.send(.error(message: RuntimeWording.failMessage, code: RuntimeWording.failCode)), .close]
        phase = .closing
    }

    /// The `audio_stats` tool's output: levels rounded to 0.1 dB, null for digital silence.
    private static func statistics(peakDBFS: Double?, rmsDBFS: Double?, samples: Int) -> JSONValue {
        .object([
            "peakDBFS": peakDBFS.map { .number(RuntimeWording.rounded($0, decimals: 1)) } ?? .null,
            "rmsDBFS": rmsDBFS.map { .number(RuntimeWording.rounded($0, decimals: 1)) } ?? .null,
            "samples": .integer(samples),
        ])
    }

    private mutating func debug(_ message: String) {
        urgent.append(.send(.debug(message: message)))
    }

    // MARK: Time and output

    /// Runs the timers due by `now`, earliest first: the end-of-audio timeout and escalation follow-ups.
    private mutating func advance(to now: SessionInstant, endingQuietTurn: Bool = true) {
        latest = max(latest, now)
        while case .running = phase {
            let timeout = gate.isOpen && endingQuietTurn ? lastAudioAt.map { $0 + options.effectiveEndOfAudioTimeout } : nil
            let followUp = escalationFollowUps.first
            if let timeout, timeout <= now, followUp.map({ timeout <= $0 }) ?? true {
                if case .closed(let speechEnd, _)? = gate.close() { endVoiceTurn(speechEnd: speechEnd) }
                lastAudioAt = nil
            } else if let followUp, followUp <= now {
                escalationFollowUps.removeFirst()
                urgent.append(.send(.escalation(status: RuntimeWording.escalationJoining)))
            } else {
                return
            }
        }
    }

    /// The front answer's next message, or its next reply chunk when it is due.
    private mutating func nextAnswerAction(at now: SessionInstant) -> Action? {
        if answers[0].nextItem < answers[0].items.count {
            let item = answers[0].items[answers[0].nextItem]
            answers[0].nextItem += 1
            lastHandOut = .answerItem
            switch item {
            case .message(let message):
                return .send(message)
            case .toolCall(let id, let input):
                answers[0].toolCalledAt = now
                return .send(.toolCall(id: id, name: RuntimeWording.toolName, input: input))
            case .toolResult(let id, let output):
                let elapsed = now - (answers[0].toolCalledAt ?? now)
                return .send(.toolResult(id: id, name: RuntimeWording.toolName, output: output,
                                         durationMilliseconds: RuntimeWording.rounded(elapsed.milliseconds, decimals: 3)))
            }
        }
        let start = answers[0].nextSample
        let count = answers[0].audio.count
        guard start < count else { return nil }
        let freeBefore = streamFreeAt
        switch options.pacing {
        case .realTime:
            let replyStart = answers[0].replyStart ?? max(now, streamFreeAt)
            answers[0].replyStart = replyStart
            guard now >= replyStart + Self.replyChunkDuration * answers[0].chunksSent else { return nil }
            if start + Self.replyChunkFrames >= count {
                streamFreeAt = replyStart + .samples(count, at: Self.replyRate)
            }
        case .unpaced:
            streamFreeAt = now
        }
        let end = min(start + Self.replyChunkFrames, count)
        answers[0].nextSample = end
        answers[0].chunksSent += 1
        lastHandOut = .answerChunk(sample: start, streamFreeAt: freeBefore)
        return .send(.audioChunk(AudioChunk(sampleRate: Self.replyRate, samples: Array(answers[0].audio[start..<end]))))
    }

    /// The transport closed: nothing more goes out.
    private mutating func finish() {
        phase = .finished
        urgent.removeAll()
        answers.removeAll()
        escalationFollowUps.removeAll()
        lastAudioAt = nil
        retryAt = nil
        recorder.discard()
    }
}
