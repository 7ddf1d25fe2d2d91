import Synchronization
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// Two ends of one connection inside a process: what one end sends, the other receives.
///
/// The embedded runtime talks to a session through a pair, and tests use one end as a scripted
/// runtime. The backlog is real: a message counts against the sender's backlog until the other
/// end has read it from ``events``, so a runtime that stops reading fills it and the session sees
/// ``TransportError/backlogFull(bytes:limit:)``, as it would with a stalled network peer.
public final class InMemoryTransport: SessionTransport {
    /// Which end of the pair this is.
    public enum End: Sendable, Hashable {
        case client
        case runtime
    }

    /// State both ends share.
    private final class Link: Sendable {
        struct State {
            var opened = false
            var closed = false
        }
        let state = Guarded(State())
        let toClient = TransportEventQueue()
        let toRuntime = TransportEventQueue()
    }

    /// This end's role.
    public let end: End
    public let backlogLimit: Int
    private let link: Link

    private init(end: End, link: Link, backlogLimit: Int) {
        self.end = end
        self.link = link
        self.backlogLimit = backlogLimit
    }

    /// A connected pair; each end's backlog holds up to `backlogLimit` bytes of unread messages.
    public static func pair(backlogLimit: Int = 4 << 20) -> (client: InMemoryTransport, runtime: InMemoryTransport) {
        let link = Link()
        return (InMemoryTransport(end: .client, link: link, backlogLimit: backlogLimit),
                InMemoryTransport(end: .runtime, link: link, backlogLimit: backlogLimit))
    }

    private var incoming: TransportEventQueue { end == .client ? link.toClient : link.toRuntime }
    private var outgoing: TransportEventQueue { end == .client ? link.toRuntime : link.toClient }

    public var events: AsyncStream<TransportEvent> { incoming.stream }

    public func receive(_ handler: @escaping @Sendable (TransportEvent) -> Void) {
        incoming.setHandler(handler)
    }

    /// Stops handing received events to the ``receive(_:)`` handler: they wait, unread, and count
    /// against the other end's backlog, as when a peer stops reading its socket.
    public func pauseReceiving() {
        incoming.pauseDelivery()
    }

    /// Hands the events that waited to the handler, and the ones after them.
    public func resumeReceiving() {
        incoming.resumeDelivery()
    }

    /// Opens the connection for both ends (either end may call it); both receive ``TransportEvent/opened``.
    public func open() {
        let opening = link.state.withLock { state -> Bool in
            guard !state.opened, !state.closed else { return false }
            state.opened = true
            return true
        }
        guard opening else { return }
        link.toClient.push(.opened)
        link.toRuntime.push(.opened)
    }

    public func send(_ message: String, tag: Int?) throws(TransportError) {
        // Checked and queued under the link's lock, so a close cannot slip in between and two
        // senders cannot pass the limit together; the handler is called after, outside it.
        let refusal = link.state.withLock { state -> TransportError? in
            guard state.opened else { return .notOpen }
            guard !state.closed else { return .closed(end == .client ? .closedByClient : .closedByRuntime(nil)) }
            let waiting = outgoing.waitingBytes
            guard waiting + message.utf8.count <= backlogLimit else { return .backlogFull(bytes: waiting, limit: backlogLimit) }
            outgoing.push(.message(message), deliveringNow: false)
            return nil
        }
        if let refusal { throw refusal }
        outgoing.deliverWaiting()
    }

    /// Bytes this end sent that the other end has not read yet.
    public var backlogBytes: Int { outgoing.waitingBytes }

    /// Closes both ends: each receives ``TransportCloseReason/closedByClient`` when the client end
    /// closed, ``TransportCloseReason/closedByRuntime(_:)`` when the runtime end did (the reasons
    /// name who closed, from the client's side, whichever end reads them).
    public func close() {
        close(reporting: end == .client ? .closedByClient : .closedByRuntime(nil))
    }

    /// Closes both ends with `reason` (a test's way to make the connection fail).
    public func close(reporting reason: TransportCloseReason) {
        let closing = link.state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.closed = true
            link.toClient.push(.closed(reason), deliveringNow: false)
            link.toRuntime.push(.closed(reason), deliveringNow: false)
            return true
        }
        guard closing else { return }
        link.toClient.deliverWaiting()
        link.toRuntime.deliverWaiting()
    }

    /// None: a message is in the other end's queue as soon as ``send(_:)`` returns, as a message
    /// written to a socket is in the peer's buffer.
    public func takeUnwrittenMessages() -> [OutboundMessage] { [] }

    /// The events this end has received and not yet read, without waiting (for tests that poll
    /// instead of reading ``events``; do not use both).
    public func takeReceived() -> [TransportEvent] {
        incoming.takeAvailable()
    }

    /// Events received and not yet read.
    public var unreadEventCount: Int { incoming.waitingCount }
}
