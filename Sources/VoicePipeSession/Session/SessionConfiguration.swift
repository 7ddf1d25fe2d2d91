import VoicePipeCore

/// The figures a session runs by; every one has a default that suits a voice runtime that closes
/// idle sessions at 55 s.
public struct SessionConfiguration: Sendable, Hashable {
    /// Sent in `session.start`.
    public var sessionId: String
    /// Sent in `session.start`; `persona` and `vehicle` also name the session in its state line.
    public var context: JSONObject
    /// The voice gate on captured frames.
    public var gate: VoiceGateOptions
    /// Rate of the captured frames (the capture target, 16 kHz); the wire carries it in whole hertz.
    public var captureSampleRate: SampleRate
    /// With no `audio.chunk` sent for this long, a live session sends silence to stay open.
    public var keepAliveInterval: Duration
    /// Length of the keep-alive silence.
    public var keepAliveChunk: Duration
    /// From connecting to open: longer is `error(connect timeout)`.
    public var connectTimeout: Duration
    /// From the end of a user's turn to the first reply event (assistant transcript or reply audio).
    public var replyTimeout: Duration
    /// Replaces the reply timeout for a turn marked long-running, or one in which the runtime
    /// calls a tool listed in ``longRunningTools``.
    public var longTurnAllowance: Duration
    /// Tools that may take long (a booking commit): calling one gives the turn the long allowance.
    public var longRunningTools: Set<String>
    /// A tool result that took longer than this is flagged in the tool drawer.
    public var toolBudget: Duration
    /// Reply audio played out with no new reply audio for this long: the reply is over.
    public var playbackGap: Duration
    /// Texts that can wait for a connection; one more is refused.
    public var pendingTextLimit: Int
    /// After `session.end`, how long to wait for `session.ended`, counted from the later of
    /// `session.end` and the last reply audio (so a reply still arriving is heard out).
    public var endTimeout: Duration
    /// Captured audio that cannot be sent for this long (the runtime stopped reading) is an error.
    public var stallLimit: Duration
    /// The longest the session waits for `session.ended` after `session.end`, however long reply
    /// audio keeps coming (and past the allowance, for the last reply once the input has ended).
    public var maximumEndWait: Duration
    /// Open a fresh connection at the first ready moment once the current one is this old (AWS
    /// runtimes close streams after a fixed time, and credentials expire); nil never rotates.
    public var rotateAfter: Duration?
    /// After a rotation that failed, the wait before the next attempt.
    public var rotationRetryDelay: Duration
    /// Captured audio held for a rotation's fresh connection while it opens; frames past it are dropped and counted.
    public var rotationHoldLimit: Duration
    /// After the transport refused a text (its backlog was full), the wait before it is sent again.
    public var textRetryDelay: Duration
    /// How a dropped connection is replaced; ``ReconnectPolicy/never`` (the default) ends the
    /// session in `error(transport)` as before.
    public var reconnect: ReconnectPolicy
    /// Whether the capture can hear the reply (a microphone beside a speaker). When it cannot (a
    /// file), every frame teaches the voice gate's noise floor whenever a reply plays, so the
    /// turns depend on the audio alone and not on when replies happened to arrive.
    public var captureHearsReplies: Bool

    /// How long a turn may wait for its reply: the long-turn allowance for a long-running turn,
    /// else the reply timeout.
    public func allowance(for turn: TurnRecord) -> Duration {
        turn.isLongRunning ? longTurnAllowance : replyTimeout
    }

    public init(
        sessionId: String,
        context: JSONObject = JSONObject(),
        gate: VoiceGateOptions = VoiceGateOptions(),
        captureSampleRate: SampleRate = .capture,
        keepAliveInterval: Duration = .seconds(40),
        keepAliveChunk: Duration = .milliseconds(100),
        connectTimeout: Duration = .seconds(10),
        replyTimeout: Duration = .seconds(15),
        longTurnAllowance: Duration = .seconds(90),
        longRunningTools: Set<String> = [],
        toolBudget: Duration = .seconds(1),
        playbackGap: Duration = .milliseconds(300),
        pendingTextLimit: Int = 32,
        endTimeout: Duration = .seconds(5),
        stallLimit: Duration = .seconds(5),
        maximumEndWait: Duration = .seconds(60),
        rotateAfter: Duration? = nil,
        rotationRetryDelay: Duration = .seconds(10),
        rotationHoldLimit: Duration = .seconds(10),
        textRetryDelay: Duration = .milliseconds(10),
        reconnect: ReconnectPolicy = .never,
        captureHearsReplies: Bool = true
    ) {
        self.captureHearsReplies = captureHearsReplies
        self.reconnect = reconnect
        self.rotationHoldLimit = rotationHoldLimit
        self.textRetryDelay = textRetryDelay
        self.rotateAfter = rotateAfter
        self.rotationRetryDelay = rotationRetryDelay
        self.sessionId = sessionId
        self.context = context
        self.gate = gate
        self.captureSampleRate = captureSampleRate
        self.keepAliveInterval = keepAliveInterval
        self.keepAliveChunk = keepAliveChunk
        self.connectTimeout = connectTimeout
        self.replyTimeout = replyTimeout
        self.longTurnAllowance = longTurnAllowance
        self.longRunningTools = longRunningTools
        self.toolBudget = toolBudget
        self.playbackGap = playbackGap
        self.pendingTextLimit = pendingTextLimit
        self.endTimeout = endTimeout
        self.stallLimit = stallLimit
        self.maximumEndWait = maximumEndWait
    }
}

/// How a session replaces a connection that dropped (a reset, an abrupt close, a read timeout, a
/// close code that is not orderly): attempt after attempt, each on a fresh connection with the
/// same session id, waiting a backoff that doubles from ``firstDelay`` up to ``maximumDelay``
/// with ±``jitter`` of it, so many clients dropped at once do not come back at once.
public struct ReconnectPolicy: Sendable, Hashable {
    /// Attempts after one drop before the session gives up (0: a drop ends it, as before).
    /// A new connection that stays up for ``stableAfter`` starts the count afresh; one that drops
    /// sooner goes on counting, so a runtime that drops every connection at once is given up on.
    public var attempts: Int
    /// How long a new connection must stay up before its next drop counts from attempt 1.
    public var stableAfter: Duration
    /// The wait before the first attempt; each further attempt waits twice the one before.
    public var firstDelay: Duration
    /// No attempt waits longer than this.
    public var maximumDelay: Duration
    /// The fraction of each wait added or taken away, chosen from the session id and the attempt
    /// (the same session waits the same on every run; sessions differ from each other).
    public var jitter: Double
    /// Captured audio held for the new connection while the session is away; older audio is
    /// dropped and counted.
    public var holdLimit: Duration
    /// After a new connection's `session.start`, how long audio and texts wait for the
    /// runtime's `session.resumed` (what it read before the drop; the wait ends at its first
    /// message of any kind). A runtime that does not send one is not waited for again. Zero:
    /// never wait, and what a dropped connection wrote stays unconfirmed.
    public var resumptionWait: Duration

    public init(attempts: Int, firstDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(8), jitter: Double = 0.2, holdLimit: Duration = .seconds(5),
                stableAfter: Duration = .seconds(10), resumptionWait: Duration = .seconds(2)) {
        self.attempts = max(0, attempts)
        self.resumptionWait = max(resumptionWait, .zero)
        self.stableAfter = stableAfter
        self.firstDelay = firstDelay
        self.maximumDelay = maximumDelay
        self.jitter = min(max(jitter.isNaN ? 0 : jitter, 0), 1)
        self.holdLimit = holdLimit
    }

    /// A drop ends the session.
    public static let never = ReconnectPolicy(attempts: 0)

    /// The wait before attempt `attempt` (1 is the first) of the session `sessionId`.
    public func delay(beforeAttempt attempt: Int, sessionId: String) -> Duration {
        let doublings = min(max(attempt - 1, 0), 30)
        let base = min(firstDelay * (1 << doublings), maximumDelay)
        // FNV-1a over the session id and the attempt: a fraction in [0, 1) that is the same on every run.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in sessionId.utf8 + withUnsafeBytes(of: UInt32(attempt).littleEndian, Array.init) {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let unit = Double(hash >> 11) / Double(1 << 53)
        return base * (1 + jitter * (2 * unit - 1))
    }
}
