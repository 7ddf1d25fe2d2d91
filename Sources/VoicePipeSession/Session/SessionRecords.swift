/// A text the user typed that has not been handed to the transport yet.
public struct PendingText: Sendable, Hashable {
    /// Order of typing, from 1: texts are sent in this order.
    public let number: Int
    public let text: String
    /// When it was typed.
    public let typedAt: SessionInstant
}

/// One line of the conversation as the runtime transcribed it.
public struct TranscriptLine: Sendable, Hashable {
    public let role: TranscriptRole
    public let text: String
    /// False while the runtime may still revise it.
    public let isFinal: Bool
    /// When the line (in this version) arrived.
    public let receivedAt: SessionInstant
}

/// A Markdown card the runtime sent (`info.message`).
public struct InfoCard: Sendable, Hashable {
    public let markdown: String
    public let receivedAt: SessionInstant
}

/// Where an escalation to a person stands; tracked beside the voice state, never changing it.
public struct EscalationStatus: Sendable, Hashable {
    /// The reason the user gave in `escalation.request`, when this client requested it.
    public let reason: String?
    public let requestedAt: SessionInstant?
    /// Status updates from the runtime, oldest first.
    public private(set) var updates: [(status: String, at: SessionInstant)]

    init(reason: String?, requestedAt: SessionInstant?) {
        self.reason = reason
        self.requestedAt = requestedAt
        updates = []
    }

    mutating func append(_ status: String, at instant: SessionInstant) {
        updates.append((status, instant))
    }

    /// The latest status, or "requested" before the runtime answered.
    public var status: String { updates.last?.status ?? "requested" }

    /// What a banner shows: "Escalation: an agent will join shortly".
    public var banner: String { "Escalation: \(status)" }

    public static func == (lhs: EscalationStatus, rhs: EscalationStatus) -> Bool {
        lhs.reason == rhs.reason && lhs.requestedAt == rhs.requestedAt
            && lhs.updates.map(\.status) == rhs.updates.map(\.status) && lhs.updates.map(\.at) == rhs.updates.map(\.at)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(reason)
        hasher.combine(updates.map(\.status))
    }
}

/// One user turn and how quickly it was answered.
public struct TurnRecord: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// Speech on the capture path.
        case voice
        /// A typed text.
        case text
    }

    /// From 1, in the order the turns started.
    public let number: Int
    public let kind: Kind
    /// When the voice gate opened, or the text was sent.
    public let startedAt: SessionInstant
    /// When the speech ended (the end of the last loud frame), or the text was sent.
    public internal(set) var speechEndedAt: SessionInstant
    /// How long the speech lasted in audio time (the voice gate's first loud frame to its last),
    /// the same whatever the pace the audio was sent at; nil for a typed turn or one still open.
    public internal(set) var speechDuration: Duration?
    /// When the turn was judged over (the gate closed after its hang-over, the runtime's final
    /// user transcript, the end of the input); nil while the user is still speaking.
    public internal(set) var endedAt: SessionInstant?
    /// Given the long-turn allowance instead of the reply timeout.
    public internal(set) var isLongRunning: Bool
    /// The first reply event (assistant transcript or reply audio) after the turn ended.
    public internal(set) var firstReplyEventAt: SessionInstant?
    /// When the first reply audio of the turn was played.
    public internal(set) var firstReplyAudioAt: SessionInstant?
    /// The runtime took it as a turn (its final user transcript).
    public internal(set) var isAcknowledged = false
    /// A voice turn the runtime never took as one (the gate heard a cough): dropped, not an error.
    public internal(set) var ignoredByRuntime = false
    /// A typed turn whose text its connection never wrote (it was still in the transport's
    /// backlog when the connection ended): withdrawn, and the text queued again for a later turn.
    public internal(set) var wasWithdrawn = false

    /// How long after the first reply audio was handed to the output it was heard: what was
    /// queued ahead of it and the speaker's own delay (ALSA's delay report); nil for a file, or
    /// until the speaker has played it.
    public internal(set) var heardDelay: Duration?

    /// Turn latency as handed off: from the end of the user's speech to the first reply audio
    /// given to the output.
    public var latency: Duration? {
        firstReplyAudioAt.map { $0 - speechEndedAt }
    }

    /// Turn latency to the ear: from the end of the user's speech to when its first reply sample
    /// came out of the speaker; nil without a speaker that says when.
    public var latencyToEar: Duration? {
        guard let latency, let heardDelay else { return nil }
        return latency + heardDelay
    }
}

/// A tool call and its result, paired by `id`, with the times the client saw.
public struct ToolCallRecord: Sendable, Hashable {
    public let id: String
    /// From the call, or from the result when no call was seen.
    public let name: String
    public internal(set) var input: JSONValue?
    public internal(set) var output: JSONValue?
    public internal(set) var callReceivedAt: SessionInstant?
    public internal(set) var resultReceivedAt: SessionInstant?
    /// The runtime's own `durationMs`.
    public internal(set) var runtimeDuration: Duration?
    /// The tool budget the result was judged against.
    public let budget: Duration

    /// From receiving the call to receiving the result.
    public var clientDuration: Duration? {
        guard let call = callReceivedAt, let result = resultReceivedAt else { return nil }
        return result - call
    }

    /// True when the client saw, or the runtime reported, a duration over the budget.
    public var isOverBudget: Bool {
        (clientDuration.map { $0 > budget } ?? false) || (runtimeDuration.map { $0 > budget } ?? false)
    }

    /// True while only one half has arrived (a call still running, or a result with no call).
    public var isUnpaired: Bool { callReceivedAt == nil || resultReceivedAt == nil }

    /// A result arrived with no call of that id before it.
    public var isResultWithoutCall: Bool { callReceivedAt == nil }
}

/// One entry of the tool drawer, in the order the client saw them.
public enum ToolDrawerEntry: Sendable, Hashable {
    /// The session started on a connection (`session.start` sent).
    case sessionStarted(sessionId: String, at: SessionInstant)
    /// A tool call, its result, or both.
    case tool(ToolCallRecord)
    /// The runtime classified the conversation.
    case classification(label: String, confidence: Double, at: SessionInstant)
    /// The session ended or the connection was lost, and why.
    case sessionEnded(reason: String, at: SessionInstant)
}

/// What the session counted.
public struct SessionCounters: Sendable, Hashable {
    /// Captured frames handed to the transport, and their samples.
    public internal(set) var framesSent = 0
    public internal(set) var samplesSent = 0
    /// Keep-alive silences sent.
    public internal(set) var keepAlivesSent = 0
    /// Captured frames that arrived while the session was not live (not sent).
    public internal(set) var framesNotLive = 0
    /// Captured frames the transport could not take (its backlog was full).
    public internal(set) var framesDropped = 0
    /// Reply `audio.chunk` messages and their samples.
    public internal(set) var replyChunks = 0
    public internal(set) var replySamples = 0
    /// Reply audio duration, summed chunk by chunk at each chunk's rate.
    public internal(set) var replyAudio: Duration = .zero
    /// Texts handed to the transport.
    public internal(set) var textsSent = 0
    /// Events not allowed in the state they arrived in (ignored).
    public internal(set) var ignoredEvents = 0
    /// Ignored events by name ("interruption in ready").
    public internal(set) var ignoredByKind: [String: Int] = [:]
    /// Messages from the runtime that could not be decoded.
    public internal(set) var malformedMessages = 0
    /// Messages of a type this version does not know.
    public internal(set) var unknownMessages = 0
    /// Interruptions that cut playback.
    public internal(set) var interruptions = 0
    /// Connections that dropped and were replaced.
    public internal(set) var reconnections = 0
    /// Captured frames held while reconnecting and sent on the new connection.
    public internal(set) var framesHeldForReconnection = 0
    /// Of ``framesDropped``, those captured while reconnecting that were past the hold limit or
    /// still held when the session gave up or ended.
    public internal(set) var framesDroppedWhileAway = 0
    /// Captured frames a dropped connection wrote that the runtime said it never read
    /// (`session.resumed`), sent again on the new connection.
    public internal(set) var framesResent = 0
    /// Typed texts a dropped connection wrote that the runtime said it never read, sent again.
    public internal(set) var textsResent = 0
    /// `audio.chunk` messages dropped connections wrote when the runtime did not say what it
    /// read (no `session.resumed`): delivered or lost, nobody can tell.
    public internal(set) var audioUnconfirmed = 0
    /// Replies cut because the connection dropped while they played.
    public internal(set) var repliesCutByDrop = 0
    /// Times the capture device failed mid-session (the session went on as text).
    public internal(set) var audioLosses = 0
    /// From the first connect to the session being ready (its transport open, `session.start`
    /// sent); nil until then.
    public internal(set) var connectToReady: Duration?
}
