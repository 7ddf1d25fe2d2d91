import VoicePipeSession

/// How a session reaches its runtime: text messages out, events in.
///
/// A transport is opened once and closed once. Everything it observes arrives on ``events`` in
/// order: ``TransportEvent/opened`` (or a ``TransportEvent/closed(_:)`` saying why it could not
/// open), each received message as text, and finally exactly one ``TransportEvent/closed(_:)``,
/// after which the stream finishes. ``send(_:)`` never blocks: messages wait in a bounded backlog
/// that the transport writes out on its own thread, so capture never waits on the network, and a
/// runtime that stops reading fills the backlog and is reported instead of growing memory.
///
/// Implementations: ``JSONLinesTransport`` (a pair of descriptors, a runtime subprocess) and
/// ``InMemoryTransport`` (the embedded runtime, tests); the WebSocket transport implements the
/// same contract.
public protocol SessionTransport: AnyObject, Sendable {
    /// What the transport observes, in order; finishes after ``TransportEvent/closed(_:)``.
    /// There is one stream per transport: read it from one place.
    var events: AsyncStream<TransportEvent> { get }
    /// The alternative to ``events`` for a reader that runs on a thread of its own rather than in
    /// a task: `handler` gets every event, in order, one call at a time, on the transport's
    /// thread. Events that arrived before go first. Use this or ``events``, not both.
    func receive(_ handler: @escaping @Sendable (TransportEvent) -> Void)
    /// Starts connecting (or starting the runtime); ``TransportEvent/opened`` or
    /// ``TransportEvent/closed(_:)`` follows on ``events``. Calling it again does nothing.
    func open()
    /// Queues one message (a JSON text without a line ending) to be sent; never blocks. `tag` is
    /// the sender's identity for it (a typed text's number), returned with it by
    /// ``takeUnwrittenMessages()`` if it is never written.
    /// - Throws: ``TransportError/notOpen`` before ``TransportEvent/opened``,
    ///   ``TransportError/closed(_:)`` after the transport closed, ``TransportError/backlogFull(bytes:limit:)``
    ///   when the backlog cannot take the message (nothing of it was queued).
    func send(_ message: String, tag: Int?) throws(TransportError)
    /// Bytes queued by ``send(_:)`` and not yet written: what a sender checks before pacing more.
    var backlogBytes: Int { get }
    /// The most bytes the backlog holds before ``send(_:)`` refuses.
    var backlogLimit: Int { get }
    /// Writes what is queued (briefly, bounded) and closes; ``TransportEvent/closed(_:)`` with
    /// ``TransportCloseReason/closedByClient`` follows unless the transport had already closed.
    func close()
    /// After ``TransportEvent/closed(_:)``: the messages ``send(_:)`` took that were never written
    /// whole to the connection, oldest first, each returned once (before the close: none). The
    /// runtime cannot have read them, so a session may send them again on another connection.
    func takeUnwrittenMessages() -> [OutboundMessage]
}

extension SessionTransport {
    /// Queues one message that needs no identity (see ``send(_:tag:)``).
    public func send(_ message: String) throws(TransportError) {
        try send(message, tag: nil)
    }
}

/// A message handed to a transport, with the identity its sender gave it.
public struct OutboundMessage: Sendable, Hashable {
    /// The JSON text.
    public let text: String
    /// The sender's identity for it (a typed text's ``PendingText/number``), if it gave one.
    public let tag: Int?

    public init(text: String, tag: Int? = nil) {
        self.text = text
        self.tag = tag
    }
}
