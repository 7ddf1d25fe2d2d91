import VoicePipeCore

/// What a transport observes: plain data, so the pure layers (the session's state machine, the
/// embedded runtime's core) take it without knowing which transport, if any, produced it.
public enum TransportEvent: Sendable, Hashable {
    /// The connection is up (the runtime process started, the handshake completed): messages may be sent.
    case opened
    /// One received message, as text.
    case message(String)
    /// A received message longer than the transport accepts; its bytes were skipped, not buffered.
    case oversizedMessage(bytes: Int, limit: Int)
    /// The transport closed, and why; nothing follows.
    case closed(TransportCloseReason)
}

/// Why a transport closed.
public enum TransportCloseReason: Sendable, Hashable, CustomStringConvertible {
    /// This side closed the transport (`SessionTransport.close()` in `VoicePipeClient`).
    case closedByClient
    /// The runtime ended the connection (end of its output, a close frame, the process exiting),
    /// with what it said or how it ended, when known, as a whole sentence ("the runtime exited
    /// with status 3"), which is then the description.
    case closedByRuntime(String?)
    /// The connection could not be made or failed: a sentence saying what happened, and the
    /// failing call's code where one failed.
    case failed(String, code: SystemErrorCode?)
    /// The runtime would not take the connection, and asking again will not change that: a
    /// handshake refused with a client error (401, 403, 404), an untrusted certificate, a runtime
    /// command that cannot start. A sentence saying which; a session does not reconnect after it.
    case refused(String)

    /// True when the runtime or this side ended the connection on purpose.
    public var isOrderly: Bool {
        switch self {
        case .closedByClient, .closedByRuntime: true
        case .failed, .refused: false
        }
    }

    /// True when a new connection might succeed: the connection failed or dropped, rather than
    /// being ended on purpose or refused.
    public var isRetryable: Bool {
        if case .failed = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .closedByClient:
            "closed by the client"
        case .closedByRuntime(let detail):
            detail ?? "the runtime closed the connection"
        case .failed(let sentence, let code):
            sentence + (code.map { ": \($0.messageInSentence)" } ?? "")
        case .refused(let sentence):
            sentence
        }
    }
}

/// Why a message could not be sent.
public enum TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The transport has not opened yet.
    case notOpen
    /// The transport closed; nothing more can be sent.
    case closed(TransportCloseReason)
    /// The backlog holds `bytes` (the message would take it past `limit`): the runtime is not
    /// reading as fast as the session sends.
    case backlogFull(bytes: Int, limit: Int)

    public var description: String {
        switch self {
        case .notOpen:
            "the transport is not open yet"
        case .closed(let reason):
            "the transport is closed (\(reason))"
        case .backlogFull(let bytes, let limit):
            "the runtime is not reading as fast as the session sends: \(bytes) bytes are waiting (limit \(limit))"
        }
    }
}
