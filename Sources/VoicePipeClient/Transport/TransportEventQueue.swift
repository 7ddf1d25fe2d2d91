import Synchronization

/// The receiving half every transport shares: events pushed from any thread, read in order through
/// one `AsyncStream`, finished after the first ``TransportEvent/closed(_:)``.
///
/// Unlike a plain `AsyncStream` continuation it knows how many events are waiting and how many
/// bytes of messages they hold, so a sender on the other end can see its peer falling behind.
final class TransportEventQueue: Sendable {
    private struct State {
        var waiting: [TransportEvent] = []
        var head = 0
        var waitingBytes = 0
        var reader: CheckedContinuation<TransportEvent?, Never>?
        var closed = false
        var finished = false
    }

    private let state = Mutex(State())

    /// The events, in order; one reader.
    var stream: AsyncStream<TransportEvent> {
        AsyncStream(unfolding: { [self] in await next() })
    }

    /// Message bytes pushed and not yet read.
    var waitingBytes: Int { state.withLock { $0.waitingBytes } }

    /// Events pushed and not yet read.
    var waitingCount: Int { state.withLock { $0.waiting.count - $0.head } }

    /// True once a `closed` event was pushed: nothing more is accepted.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Queues `event` for the reader; after a `closed` event, further events are ignored.
    /// - Returns: false when the queue had already closed.
    @discardableResult
    func push(_ event: TransportEvent) -> Bool {
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
        return accepted
    }

    /// The events waiting now, without suspending (for a reader that polls, such as a test).
    func takeAvailable() -> [TransportEvent] {
        state.withLock { state in
            let taken = Array(state.waiting[state.head...])
            state.waiting.removeAll(keepingCapacity: true)
            state.head = 0
            state.waitingBytes = 0
            if taken.contains(where: { if case .closed = $0 { true } else { false } }) { state.finished = true }
            return taken
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
                if state.head < state.waiting.count {
                    let event = state.waiting[state.head]
                    state.head += 1
                    state.waitingBytes -= Self.bytes(of: event)
                    if state.head == state.waiting.count {
                        state.waiting.removeAll(keepingCapacity: true)
                        state.head = 0
                    }
                    if case .closed = event { state.finished = true }
                    return .some(event)
                }
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
