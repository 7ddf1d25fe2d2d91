import VoicePipeCore

/// What the session machine asks its driver to do, in order.
public enum SessionAction: Sendable, Hashable {
    /// Open the transport; report ``SessionMachine/transportOpened(at:)`` or
    /// ``SessionMachine/transportClosed(_:orderly:at:)``.
    case openTransport
    /// Close the transport.
    case closeTransport
    /// Send this message. If the transport refuses it, report ``SessionMachine/sendFailed(_:reason:at:)``.
    case send(WireMessage)
    /// Send this queued text as `text.input`, tagged with ``PendingText/number`` so the transport
    /// can say later that it never wrote it (``SessionMachine/textsNotWritten(_:at:)``); then report
    /// ``SessionMachine/textSent(_:at:)`` or, when the transport refused it,
    /// ``SessionMachine/textNotSent(_:reason:at:)``.
    case sendText(PendingText)
    /// Send this captured frame as `audio.chunk`; report ``SessionMachine/frameSent(_:at:)``, or
    /// ``SessionMachine/frameNotSent(at:)`` when the transport cannot take it.
    case sendCapturedFrame(AudioFrame)
    /// Queue this reply audio for playback; when everything given has played, report
    /// ``SessionMachine/playbackDrained(at:)``.
    case playReply(AudioChunk)
    /// Stop playback at once (within one buffer, with a fade of at most 5 ms) and drop what is queued.
    case cutPlayback
    /// The reply is over (the session left `speaking`): let the output play its last samples.
    case endReply
    /// Call ``SessionMachine/tick(at:)`` at this instant (nil: no timer is running). Replaces any
    /// earlier request.
    case scheduleTick(at: SessionInstant?)
    /// Something a timeline shows.
    case note(SessionNote)
    /// Open a fresh connection beside the current one, then report
    /// ``SessionMachine/rotationOpened(at:)`` once it is up (its actions go on the fresh one) or
    /// ``SessionMachine/rotationFailed(_:at:)`` and go on with the current connection. The machine
    /// holds what it would send meanwhile and releases it with either report.
    case rotateTransport
    /// Close the connection a rotation replaced; its closing report is expected, and the texts it
    /// never wrote go to ``SessionMachine/textsNotWritten(_:at:)``.
    case closeReplacedTransport
}

/// What happened, for a timeline or a log; the machine's views hold the same facts as state.
public enum SessionNote: Sendable, Hashable {
    case stateChanged(from: SessionState, to: SessionState)
    /// A text is waiting for the connection.
    case textQueued(PendingText)
    /// A text went out as `text.input` (and started a turn).
    case textSent(PendingText)
    /// The transport refused a text: it is queued again, in order.
    case textRequeued(PendingText, reason: String)
    /// A user turn ended: from here the reply timer runs.
    case turnEnded(TurnRecord)
    /// The first reply audio of a turn played: its latency is known.
    case turnAnswered(TurnRecord)
    /// A voice turn the runtime never took as one got no reply: it is dropped.
    case turnIgnored(TurnRecord)
    /// A transcript line settled (final).
    case transcript(TranscriptLine)
    /// A tool call or result arrived (the record as it stands).
    case tool(ToolCallRecord)
    case classification(label: String, confidence: Double)
    case infoCard(InfoCard)
    case escalation(EscalationStatus)
    /// Silence sent to keep the session open.
    case keepAlive
    /// Playback was cut because the runtime said the user interrupted.
    case interrupted
    /// A debug message from the runtime.
    case runtimeDebug(String)
    /// A message of a type this version does not know.
    case unknownMessage(type: String)
    /// A message from the runtime that could not be decoded, and why.
    case malformedMessage(String)
    /// An event not allowed in the state it came in; ignored and counted.
    case ignored(event: String, state: SessionState)
    /// The input ended and the last reply has played (or its wait ran out): `session.end` goes out.
    case ending(why: String)
    /// Captured audio could not be sent (the transport's backlog is full): this many frames so far.
    case audioDropped(totalFrames: Int)
    /// Captured audio waits: the runtime is not taking it as fast as the input is read.
    case audioWaiting
    /// Audio is unavailable, and why: the session runs as a text conversation.
    case audioUnavailable(String)
    /// The capture device failed mid-session, and why: text only until it is back.
    case audioLost(String)
    /// The capture device is back, as described.
    case audioRestored(String)
    /// A fresh connection is being opened to replace the current one.
    case rotationStarted
    /// The fresh connection took over `gap` after the rotation began.
    case rotated(gap: Duration)
    /// The fresh connection could not be opened; the session stays on the current one.
    case rotationFailed(String)
    /// The connection dropped (or an attempt to replace it failed) for `reason`: attempt
    /// `attempt` of `of` opens `in` from now.
    case reconnecting(attempt: Int, of: Int, in: Duration, reason: String)
    /// Attempt `attempt` opened a new connection `gap` after the drop; `heldFrames` captured
    /// meanwhile go out on it.
    case reconnected(attempt: Int, gap: Duration, heldFrames: Int)
    /// The runtime said what it read before the drop (`session.resumed`): `frames` captured
    /// frames and `texts` typed texts it never read go out again; `lost` unread frames were
    /// older than the hold limit and are dropped.
    case unreadSentAgain(frames: Int, texts: Int, lost: Int)
    /// The runtime did not say what it read before the drop: `audioChunks` audio messages the
    /// dropped connection wrote may have been lost unseen.
    case readNotConfirmed(audioChunks: Int)
    /// The reply that was playing was cut by the drop: the rest of it never came.
    case replyCutByDrop
}
