/// Everything that belongs to one live connection of a session: the voice gate, the timer
/// origins, the turns the connection has open or owes a reply, the end and the rotation.
///
/// It lives in the payload of ``SessionMachine``'s live state, so it exists exactly while the
/// session is live: a drop, an end or an error leaves that state and discards it whole, and the
/// next connection starts from a fresh one. The turns themselves are recorded in the
/// ``SessionLedger``, which outlives connections; this holds their indices.
///
/// Its fields live in one shared, copy-on-write box: the machine's rules take the live state out
/// of the state enum to change it, and a copy of the whole connection (its gate's arrays, its
/// turns, a few hundred bytes) on every captured frame was a tenth of a session's CPU. A copy is
/// now one reference; the box is copied only when a copy is changed while another is kept.
@dynamicMemberLookup
struct LiveConnection: Sendable {
    /// The connection's state, read and changed through the connection (`live.gate`).
    struct Fields: Sendable {
        /// Hears the user's turns in the captured frames.
        var gate: VoiceGate
        /// When the connection (or a rotation's fresh one) opened.
        var openedAt: SessionInstant
        /// The last `audio.chunk` sent (or the connection's start): the keep-alive timer counts from here.
        var keepAliveFrom: SessionInstant
        /// The last message of any kind from the runtime (it is alive).
        var lastMessageAt: SessionInstant
        /// The last message that moved a reply on (not debug, not unknown): the end-of-input wait counts from here.
        var lastProgressAt: SessionInstant
        /// The turn being spoken.
        var openTurn: Int?
        /// Ended turns with no reply audio yet, oldest first.
        var awaitingReply: [Int] = []
        /// The last reply audio: the wait for `session.ended` counts from here (or from `session.end`).
        var lastReplyAudioAt: SessionInstant?
        /// When the last reply finished playing: a turn that ended during it waits from here.
        var lastReplyEndedAt: SessionInstant?
        /// When `session.end` went out.
        var endSentAt: SessionInstant?
        /// The first instant of the current run of audio that could not go out (dropped or waiting).
        var stallStartedAt: SessionInstant?
        /// A fresh connection being opened to replace this one, and what waits for it.
        var rotation: Rotation?
        /// No rotation before this, after one failed.
        var rotationNotBefore: SessionInstant?
        /// The session's `audio.chunk` messages written before this connection opened.
        var writtenAtOpen = 0
        /// The reconnection attempt that opened this connection (0: not a reconnection).
        var reconnectedOnAttempt = 0
        /// Captured frames the transport refused because it had just closed (its closing report not
        /// yet here): a reconnection sends them first; otherwise they count as dropped.
        var refusedAtClose: [AudioFrame] = []

        init(gate: VoiceGateOptions, openedAt now: SessionInstant) {
            self.gate = VoiceGate(options: gate)
            openedAt = now
            keepAliveFrom = now
            lastMessageAt = now
            lastProgressAt = now
        }
    }

    private final class Storage: @unchecked Sendable {
        // Safety: a box is changed only through a connection that holds the only reference to it.
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private var storage: Storage

    init(gate: VoiceGateOptions, openedAt now: SessionInstant) {
        storage = Storage(Fields(gate: gate, openedAt: now))
    }

    subscript<Value>(dynamicMember field: WritableKeyPath<Fields, Value>) -> Value {
        // Lent, not copied: reading `live.gate.isOpen` must not copy the gate and its arrays.
        _read { yield storage.fields[keyPath: field] }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
            yield &storage.fields[keyPath: field]
        }
    }

    /// A rotation in progress: sends wait here until the fresh connection opens (then they go on
    /// it, after its `session.start`) or fails (then they go on this one).
    struct Rotation: Sendable {
        let startedAt: SessionInstant
        /// Messages and captured frames to send, in order.
        var held: [HeldSend] = []
        /// Samples of the held frames, against ``SessionConfiguration/rotationHoldLimit``.
        var heldSamples = 0
    }

    /// Something to send that waits for a rotation.
    enum HeldSend: Sendable {
        case message(WireMessage)
        case frame(AudioFrame)
    }

    /// True once `session.end` went out.
    var isEnding: Bool { self.endSentAt != nil }

    /// When silence is due to keep the session open.
    func keepAliveDue(_ configuration: SessionConfiguration) -> SessionInstant {
        self.keepAliveFrom + configuration.keepAliveInterval
    }

    /// After `session.end`: the end timeout from the later of `session.end` and the last reply
    /// audio (a reply still arriving is heard out), capped at ``SessionConfiguration/maximumEndWait``.
    func endDeadline(_ configuration: SessionConfiguration) -> SessionInstant? {
        guard let endSentAt = self.endSentAt else { return nil }
        return min(max(endSentAt, self.lastReplyAudioAt ?? endSentAt) + configuration.endTimeout,
                   endSentAt + configuration.maximumEndWait)
    }

    /// After the input ended: when the wait for the last reply runs out, counted from the later
    /// of the input's end and the runtime's last progress, and never more than the end wait's
    /// cap past the allowance. The allowance is worked out only then: this is asked on every
    /// captured frame, long before the input ends.
    func endOfInputDeadline(inputEndedAt: SessionInstant?, turns: [TurnRecord], _ configuration: SessionConfiguration) -> SessionInstant? {
        guard let inputEndedAt, self.endSentAt == nil else { return nil }
        let wait = allowance(turns, configuration)
        return min(max(inputEndedAt, self.lastProgressAt) + wait, inputEndedAt + wait + configuration.maximumEndWait)
    }

    /// The oldest ended turn with no reply event yet, and when its wait runs out: counted from
    /// its end, or from the end of the reply that was playing when it ended.
    func replyDeadline(_ turns: [TurnRecord], _ configuration: SessionConfiguration) -> (turn: Int, deadline: SessionInstant)? {
        guard let turn = self.awaitingReply.first(where: { turns[$0].firstReplyEventAt == nil }),
              let ended = turns[turn].endedAt else { return nil }
        return (turn, max(ended, self.lastReplyEndedAt ?? ended) + configuration.allowance(for: turns[turn]))
    }

    /// The turns still owed a reply (the open one included): the long allowance applies while
    /// any of them is long-running.
    func allowance(_ turns: [TurnRecord], _ configuration: SessionConfiguration) -> Duration {
        let longRunning = self.awaitingReply.contains { turns[$0].isLongRunning } || self.openTurn.map { turns[$0].isLongRunning } == true
        return longRunning ? configuration.longTurnAllowance : configuration.replyTimeout
    }

    /// When this connection is due to be replaced (nil: no rotation configured, one in
    /// progress, or the session ending).
    func rotationDue(_ configuration: SessionConfiguration) -> SessionInstant? {
        guard let after = configuration.rotateAfter, self.rotation == nil, self.endSentAt == nil else { return nil }
        return max(self.openedAt + after, self.rotationNotBefore ?? self.openedAt)
    }

    /// No turn open or owed a reply: a moment the connection can change.
    var isQuiet: Bool { self.openTurn == nil && self.awaitingReply.isEmpty }
}

/// What the user and the runtime are doing on a live connection.
enum LivePhase: Sendable {
    case ready
    case talking
    case thinking
    case speaking(Reply)

    /// The reply playing while speaking.
    struct Reply: Sendable {
        /// The turn it answers (none for audio that answers no turn, such as a greeting).
        var turn: Int?
        /// When its first audio arrived.
        let startedAt: SessionInstant
        /// When playback ran out of its audio.
        var drainedAt: SessionInstant?
        /// An assistant transcript came while it played: the next reply audio starts the next reply.
        var nextAnnounced = false
    }

    var state: SessionState {
        switch self {
        case .ready: .ready
        case .talking: .talking
        case .thinking: .thinking
        case .speaking: .speaking
        }
    }
}
