import Foundation
import Synchronization
import VoicePipeSession

/// Many sessions served by one thread: each ``SessionDriver`` is stepped when an input is posted
/// to it or its next deadline comes, instead of blocking a thread of its own. Waking one thread
/// per session for every 32 ms frame made thread switches the largest cost of a session; here a
/// wake serves every session whose deadline came within ``coalescing`` of the first, and an
/// input (a runtime's message) wakes the loop only when it would not wake within that time anyway.
///
/// ```
///  driver inputs (transport, typed text, …) ──▶ "ready: 7" ─┐
///                                                           ├─▶ loop thread ─▶ step(driver 7), step(drivers due)
///  deadlines (file frames, ticks) ──▶ earliest + coalescing ┘
/// ```
///
/// A session's frames go out at most ``coalescing`` (plus the work before them) after their
/// audio time, never before it. A step never blocks, but the outputs and transports it calls
/// must not either: a file or discarded reply output and the bundled transports are fine; a
/// speaker's draining at the end of the session would hold every session on the loop.
public final class SessionLoop: @unchecked Sendable {
    // Safety: `entries`, `timers` and `closing` are used only on the loop's thread; the rest is
    // immutable or synchronised (`signals`, `nextNumber`, each entry's `signalled`).
    private enum Signal: Sendable {
        case add(Entry)
        case ready(Int)
        case close
    }

    /// One session served: how to step it and how it says an input came.
    private final class Entry: @unchecked Sendable {
        // Safety: `due` is used only on the loop's thread; the rest is immutable or atomic.
        let number: Int
        let step: (Int) -> LoopStep
        let tellInputs: ((@Sendable () -> Void)?) -> Void
        /// A `ready` signal is on its way: further inputs need not send another.
        let signalled = Atomic<Bool>(false)
        var due: SessionInstant?

        init(number: Int, step: @escaping (Int) -> LoopStep, tellInputs: @escaping ((@Sendable () -> Void)?) -> Void) {
            self.number = number
            self.step = step
            self.tellInputs = tellInputs
        }
    }

    /// The clock every session on this loop must run by (their deadlines are instants on it).
    public let clock: any SessionClock
    /// How long after the earliest deadline the loop wakes, so that one wake serves the sessions due meanwhile.
    public let coalescing: Duration
    /// Inputs one session handles per step before the others get theirs.
    public let inputsPerStep: Int
    private let signals: SessionInbox<Signal>
    private let nextNumber = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)
    private var entries: [Int: Entry] = [:]
    private var timers = DeadlineHeap()
    private var closing = false

    /// Starts the loop's thread, named `threadName` for profilers.
    public init(clock: any SessionClock = MonotonicSessionClock(), coalescing: Duration = .milliseconds(1), inputsPerStep: Int = 16,
                threadName: String = "vp-session-loop") {
        self.clock = clock
        self.coalescing = max(coalescing, .zero)
        self.inputsPerStep = max(inputsPerStep, 1)
        signals = SessionInbox(clock: clock)
        Thread.detachNewThread { [self] in
            nameCurrentThread(threadName)
            serve()
        }
    }

    /// Runs `driver`'s session on the loop; `finished` is called on the loop's thread with its
    /// report when it ends.
    /// - Throws: ``SessionLoopError/otherClock`` when the driver was not made with ``clock``;
    ///   ``SessionLoopError/closed`` after ``close()``.
    public func add(_ driver: SessionDriver, finished: @escaping @Sendable (SessionReport) -> Void) throws(SessionLoopError) {
        guard driver.clock === clock else { throw .otherClock }
        try add(step: { limit in
            switch driver.step(inputLimit: limit) {
            case .waitUntil(let deadline):
                return .waitUntil(deadline)
            case .finished(let report):
                finished(report)
                return .finished
            }
        }, tellInputs: driver.tellInputs)
    }

    /// Serves anything stepped as a session is (the embedded runtime's connections): `step`
    /// never blocks and says what it waits for; `tellInputs` installs the hook its inbox calls
    /// after each post (and removes it with nil). Both run on the loop's thread.
    func add(step: @escaping (Int) -> LoopStep, tellInputs: @escaping ((@Sendable () -> Void)?) -> Void) throws(SessionLoopError) {
        guard !closed.load(ordering: .acquiring) else { throw .closed }
        let entry = Entry(number: nextNumber.add(1, ordering: .relaxed).newValue, step: step, tellInputs: tellInputs)
        guard signals.offer(.add(entry)) else { throw .closed }
    }

    /// Takes no more sessions; the loop's thread ends when the running ones have.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        signals.post(.close)
    }

    private func serve() {
        while true {
            if closing, entries.isEmpty {
                // Retired first, so that no session can be added unseen after the last look.
                signals.retire()
                while let late = signals.poll() { handle(late) }
                if entries.isEmpty { return }
            }
            if let signal = signals.next(until: timers.earliest.map { $0 + coalescing }) {
                handle(signal)
                while let more = signals.poll() { handle(more) }
            }
            let now = clock.now
            while let (instant, number) = timers.popFirst(notAfter: now) {
                guard let entry = entries[number], entry.due == instant else { continue }
                step(entry)
            }
        }
    }

    private func handle(_ signal: Signal) {
        switch signal {
        case .add(let entry):
            entries[entry.number] = entry
            let (signals, number, clock, coalescing) = (self.signals, entry.number, self.clock, self.coalescing)
            entry.tellInputs { [entry] in
                // A loop that wakes within the coalescing time anyway is not woken for this.
                guard !entry.signalled.exchange(true, ordering: .acquiringAndReleasing) else { return }
                signals.post(.ready(number), wakingOnlyAfter: clock.now + coalescing)
            }
            step(entry)
        case .ready(let number):
            guard let entry = entries[number] else { return }
            step(entry)
        case .close:
            closing = true
        }
    }

    private func step(_ entry: Entry) {
        // Cleared first: an input posted while the driver steps signals again.
        entry.signalled.store(false, ordering: .releasing)
        switch entry.step(inputsPerStep) {
        case .finished:
            entries[entry.number] = nil
            entry.tellInputs(nil)
        case .waitUntil(let deadline):
            entry.due = deadline
            if let deadline { timers.insert(deadline, number: entry.number) }
        }
    }
}

/// What a session stepped on a loop waits for next.
enum LoopStep {
    /// An input, or the instant (nil: only an input).
    case waitUntil(SessionInstant?)
    case finished
}

/// Why a session could not join a ``SessionLoop``.
public enum SessionLoopError: Error, CustomStringConvertible {
    /// The driver's deadlines are on another clock than the loop's.
    case otherClock
    /// The loop was closed.
    case closed

    public var description: String {
        switch self {
        case .otherClock: "a session on a loop must be made with the loop's clock (SessionDriver(clock: loop.clock, …))"
        case .closed: "the session loop was closed and takes no more sessions"
        }
    }
}

/// Instants, each with the number of the session due then, earliest first (a binary min-heap).
struct DeadlineHeap {
    private var items: [(instant: SessionInstant, number: Int)] = []

    var earliest: SessionInstant? { items.first?.instant }
    var count: Int { items.count }

    mutating func insert(_ instant: SessionInstant, number: Int) {
        items.append((instant, number))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].instant < items[parent].instant else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    /// The earliest entry, removed, when it is not after `limit`.
    mutating func popFirst(notAfter limit: SessionInstant) -> (SessionInstant, Int)? {
        guard let first = items.first, first.instant <= limit else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < items.count, items[left].instant < items[smallest].instant { smallest = left }
                if right < items.count, items[right].instant < items[smallest].instant { smallest = right }
                guard smallest != parent else { break }
                items.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return (first.instant, first.number)
    }
}
