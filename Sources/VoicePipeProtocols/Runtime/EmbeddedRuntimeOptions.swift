import VoicePipeSession

/// How the embedded runtime listens, answers and (for tests) misbehaves.
public struct EmbeddedRuntimeOptions: Sendable, Hashable {
    /// How reply audio goes out.
    public enum Pacing: String, Sendable, Hashable, CaseIterable {
        /// Reply chunk k goes out at the reply's start + k × 20 ms, as a runtime streaming speech does.
        case realTime = "real-time"
        /// As fast as the transport takes the chunks; a full backlog is retried later, nothing is lost.
        case unpaced
    }

    /// Test switches that make the runtime misbehave in one way a real runtime can.
    public enum Misbehaviour: String, Sendable, Hashable, CaseIterable {
        /// On the first turn, instead of answering, send an `error` and close.
        case fail
        /// Read everything, send nothing ever (no greeting, no `session.ended`).
        case silent
        /// After the greeting, stop reading the transport, so the client's send backlog fills up.
        case stall
    }

    /// When the voice gate opens and closes on the client's audio.
    public var gate: VoiceGateOptions
    /// How long an open turn waits for more audio (clock time) before it ends anyway, since a
    /// client whose input ended sends nothing more; nil means the gate's hang-over.
    public var endOfAudioTimeout: Duration?
    /// How reply audio goes out: in real time (the default) or as fast as the transport takes it.
    public var pacing: Pacing
    /// A test switch; nil for a well-behaved runtime.
    public var misbehaviour: Misbehaviour?
    /// How long after `escalation` "requested" the runtime says an agent will join.
    public var escalationDelay: Duration
    /// The most audio one turn keeps: past it, audio without speech is dropped and a turn in
    /// speech ends, so a client that never stops sending cannot grow the runtime without bound.
    public var maxTurnAudio: Duration
    /// How long to wait before offering a message again when the transport's backlog was full.
    public var backlogRetryInterval: Duration

    public init(
        gate: VoiceGateOptions = VoiceGateOptions(),
        endOfAudioTimeout: Duration? = nil,
        pacing: Pacing = .realTime,
        misbehaviour: Misbehaviour? = nil,
        escalationDelay: Duration = .seconds(1),
        maxTurnAudio: Duration = .seconds(300),
        backlogRetryInterval: Duration = .milliseconds(5)
    ) {
        self.gate = gate
        self.endOfAudioTimeout = endOfAudioTimeout
        self.pacing = pacing
        self.misbehaviour = misbehaviour
        self.escalationDelay = escalationDelay
        self.maxTurnAudio = maxTurnAudio
        self.backlogRetryInterval = backlogRetryInterval
    }

    /// The end-of-audio timeout in force: the one given, or the gate's hang-over.
    public var effectiveEndOfAudioTimeout: Duration { endOfAudioTimeout ?? gate.hangOver }
}
