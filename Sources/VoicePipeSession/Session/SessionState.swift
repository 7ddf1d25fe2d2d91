/// The seven states of a voice session, as a user sees them.
public enum SessionState: Sendable, Hashable, CustomStringConvertible {
    /// No connection (before connecting, or after the session ended).
    case disconnected
    /// Opening the transport; `session.start` not sent yet.
    case connecting
    /// Connected, `session.start` sent, nobody speaking.
    case ready
    /// The user is speaking (the voice gate is open, or the runtime said so by interrupting).
    case talking
    /// The user's turn ended; waiting for the reply.
    case thinking
    /// Reply audio is playing.
    case speaking
    /// The session failed, and why; it can connect again.
    case error(SessionFailure)

    /// The state's name: "ready", "error".
    public var name: String {
        switch self {
        case .disconnected: "disconnected"
        case .connecting: "connecting"
        case .ready: "ready"
        case .talking: "talking"
        case .thinking: "thinking"
        case .speaking: "speaking"
        case .error: "error"
        }
    }

    /// How a status line names it: "Ready", "Error: the runtime did not reply within 15 s".
    public var title: String {
        switch self {
        case .error(let failure): "Error: \(failure)"
        default: name.prefix(1).uppercased() + name.dropFirst()
        }
    }

    public var description: String {
        if case .error(let failure) = self { return "error(\(failure))" }
        return name
    }
}

/// Why a session is in `error`.
public enum SessionFailure: Sendable, Hashable, CustomStringConvertible {
    /// A timer ran out.
    case timeout(SessionTimeout, limit: Duration)
    /// The runtime sent an `error` message.
    case runtimeError(message: String, code: String?)
    /// The transport closed or failed unexpectedly, in its words.
    case transport(String)
    /// Captured audio could not be sent for this long: the runtime stopped reading.
    case runtimeStalled(Duration)

    public var description: String {
        switch self {
        case .timeout(let which, let limit):
            "\(which.sentence) within \(limit.formattedSeconds)"
        case .runtimeError(let message, let code):
            "the runtime reported an error: \(message)" + (code.map { " (code \($0))" } ?? "")
        case .transport(let detail):
            "the connection to the runtime was lost: \(detail)"
        case .runtimeStalled(let duration):
            "the runtime stopped taking audio: nothing could be sent for \(duration.formattedSeconds)"
        }
    }
}

/// Which of the session's timers ran out.
public enum SessionTimeout: String, Sendable, Hashable {
    /// Connecting took longer than the connect timeout.
    case connect
    /// No reply event within the reply timeout of the end of a turn.
    case reply
    /// No reply event within the long-turn allowance of a long-running turn.
    case longTurn
    /// No `session.ended` within the end timeout of `session.end`.
    case sessionEnd

    /// What did not happen, as the start of a sentence.
    public var sentence: String {
        switch self {
        case .connect: "the connection to the runtime did not open"
        case .reply: "the runtime did not reply"
        case .longTurn: "the runtime did not reply to the long-running turn"
        case .sessionEnd: "the runtime did not confirm the end of the session"
        }
    }
}

/// Why the session refused something the user did.
public enum SessionInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The queue of texts waiting for a connection is full.
    case pendingTextQueueFull(limit: Int)
    /// The text is empty or only white space.
    case emptyText
    /// The session is ending (`session.end` sent): nothing more can be said.
    case sessionEnding
    /// The request needs a live session.
    case notConnected(SessionState)

    public var description: String {
        switch self {
        case .pendingTextQueueFull(let limit):
            "\(limit) texts are already waiting for the connection; wait until they are sent"
        case .emptyText:
            "the text is empty"
        case .sessionEnding:
            "the session is ending; nothing more can be sent"
        case .notConnected(let state):
            "the session is \(state.name), not connected"
        }
    }
}
