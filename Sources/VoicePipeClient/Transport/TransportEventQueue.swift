import Synchronization
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// The receiving half every transport shares: events pushed from any thread, read in order either
/// through one `AsyncStream` or by a handler the queue calls (one or the other), finished after
/// the first ``TransportEvent/closed(_:)``.
///
/// Unlike a plain `AsyncStream` continuation it knows how many events are waiting and how many
/// bytes of messages they hold, so a sender on the other end can see its reader falling behind;
/// and its handler delivery needs no Swift concurrency thread, so a reader that runs on a thread
/// of its own (the session driver) makes progress however busy the cooperative pool is.
final class TransportEventQueue: Sendable {
    typealias Handler = @Sendable (TransportEvent) -> Void

    private struct State {
        var waiting = FIFOQueue<TransportEvent>()
        var waitingBytes = 0
        var reader: CheckedContinuation<TransportEvent?, Never>?
        var handler: Handler?
        var delivering = false
        var paused = false
        var closed = false
        var finished = false

        mutating func pop() -> TransportEvent? {
            guard let event = waiting.popFirst() else { return nil }
            waitingBytes -= TransportEventQueue.bytes(of: event)
            if case .closed = event { finished = true }
            return event
        }
    }

    private let state = Guarded(State())

    /// The events, in order; one reader.
    var stream: AsyncStream<TransportEvent> {
        AsyncStream(unfolding: { [self] in await next() })
    }

    /// Message bytes pushed and not yet read.
    var waitingBytes: Int { state.withLock { $0.waitingBytes } }

    /// Events pushed and not yet read.
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// True once a `closed` event was pushed: nothing more is accepted.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Queues `event` for the reader; after a `closed` event, further events are ignored.
    /// - Parameter deliveringNow: false to leave a handler's call to ``deliverWaiting()``, for a
    ///   caller that pushes under a lock of its own.
    /// - Returns: false when the queue had already closed.
    @discardableResult
    func push(_ event: TransportEvent, deliveringNow: Bool = true) -> Bool {
        let (accepted, reader) = state.withLock { state -> (Bool, CheckedContinuation<TransportEvent?, Never>?) in
            guard !state.closed else { return (false, nil) }
            if case .closed = event { state.closed = true }
            if let reader = state.reader {
                // A waiting reader means nothing is queued: hand the event over directly.
                state.reader = nil
                if case .closed = event { state.finished = true }
                return (true, reader)
            }
            state.waiting.append(event)
            state.waitingBytes += Self.bytes(of: event)
            return (true, nil)
        }
        reader?.resume(returning: event)
        if deliveringNow { deliver() }
        return accepted
    }

    /// Hands what waits to the handler, if one is set (after a push that did not).
    func deliverWaiting() {
        deliver()
    }

    /// From now on, calls `handler` with every event, in order, on the thread that pushed it (or
    /// that resumed delivery), one call at a time; events already waiting go first. The queue lets
    /// go of the handler once it has delivered the closed event.
    func setHandler(_ handler: @escaping Handler) {
        state.withLock { $0.handler = handler }
        deliver()
    }

    /// Holds events back from the handler (they wait, and count as unread) until ``resumeDelivery()``.
    func pauseDelivery() {
        state.withLock { $0.paused = true }
    }

    func resumeDelivery() {
        state.withLock { $0.paused = false }
        deliver()
    }

    /// The events waiting now, without suspending (for a reader that polls, such as a test).
    func takeAvailable() -> [TransportEvent] {
        state.withLock { state in
            var taken = [TransportEvent]()
            while let event = state.pop() { taken.append(event) }
            return taken
        }
    }

    /// Hands waiting events to the handler until none is left; one thread at a time does this, so
    /// the handler sees them in order and never twice at once.
    private func deliver() {
        while true {
            let next = state.withLock { state -> (Handler, TransportEvent)? in
                guard let handler = state.handler, !state.paused, !state.delivering, let event = state.pop() else { return nil }
                state.delivering = true
                return (handler, event)
            }
            guard let (handler, event) = next else { return }
            handler(event)
            state.withLock { state in
                state.delivering = false
                // Nothing follows the closed event: the handler goes, and with it what it holds.
                // A handler that captures its transport's owner (the embedded runtime's
                // connection does) would otherwise keep a cycle alive after the session.
                if state.finished { state.handler = nil }
            }
        }
    }

    /// The next event, waiting for one; nil after the `closed` event was read, or when the reading
    /// task is cancelled (the event it would have read stays queued for the next reader).
    private func next() async -> TransportEvent? {
        await withTaskCancellationHandler {
            await waitForNext()
        } onCancel: {
            let reader = state.withLock { state in
                defer { state.reader = nil }
                return state.reader
            }
            reader?.resume(returning: nil)
        }
    }

    private func waitForNext() async -> TransportEvent? {
        await withCheckedContinuation { (continuation: CheckedContinuation<TransportEvent?, Never>) in
            let ready: TransportEvent?? = state.withLock { state in
                if let event = state.pop() { return .some(event) }
                // A cancellation that came before the reader was stored found nothing to resume.
                if state.finished || Task.isCancelled { return .some(nil) }
                state.reader = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private static func bytes(of event: TransportEvent) -> Int {
        if case .message(let text) = event { return text.utf8.count }
        return 0
    }
}
