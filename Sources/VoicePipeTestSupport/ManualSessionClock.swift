import Glibc
import Synchronization
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// A session clock that moves only when a test moves it.
///
/// Waiters (a driver's or runtime's ``SessionInbox``) register with it; ``advance(by:)`` moves the
/// time, wakes them, and returns once every one of them is idle again (blocked with nothing due),
/// so a test can check what a timer did right after moving the clock, without sleeping.
public final class ManualSessionClock: SessionClock {
    private let state = Guarded<SessionInstant>(.origin)
    private let waiters = Guarded<[WeakWaiter]>([])

    public init(startingAt instant: SessionInstant = .origin) {
        state.withLock { $0 = instant }
    }

    public var now: SessionInstant { state.withLock { $0 } }

    public func hostDeadline(for instant: SessionInstant) -> timespec? { nil }

    public func register(_ waiter: any SessionClockWaiter) {
        waiters.withLock { list in
            list.removeAll { $0.waiter == nil }
            list.append(WeakWaiter(waiter: waiter))
        }
    }

    /// Moves the clock forward by `duration` and waits until every waiter has caught up.
    public func advance(by duration: Duration) {
        advance(to: now + duration)
    }

    /// Moves the clock to `instant` (never backwards) and waits until every waiter has caught up.
    public func advance(to instant: SessionInstant) {
        state.withLock { $0 = max($0, instant) }
        for waiter in live { waiter.clockDidMove() }
        settle()
    }

    /// The waiters still alive (a waiter is held weakly: a finished driver's inbox goes away).
    private var live: [any SessionClockWaiter] {
        waiters.withLock { $0.compactMap(\.waiter) }
    }

    /// Waits until every registered waiter is blocked with nothing to do (at most `limit` of real
    /// time, so a stuck loop fails the test instead of hanging it).
    /// - Returns: false when the limit ran out first.
    @discardableResult
    public func settle(limit: Duration = .seconds(10)) -> Bool {
        let clock = ContinuousClock()
        let end = clock.now + limit
        while clock.now < end {
            if live.allSatisfy(\.isIdle) { return true }
            usleep(50)
        }
        return false
    }
}

/// Waits for something another thread does (a message to arrive), checking every 200 µs for at
/// most `limit` of real time: a bounded wait for a condition, never a sleep standing in for one.
/// - Returns: whether the condition came true in time.
@discardableResult
public func waitUntil(limit: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let clock = ContinuousClock()
    let end = clock.now + limit
    while !condition() {
        guard clock.now < end else { return false }
        usleep(200)
    }
    return true
}

/// A value shared between a test and the threads it starts, behind a lock.
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Guarded<Value>

    public init(_ value: Value) {
        mutex = Guarded(value)
    }

    public var value: Value { mutex.withLock { $0 } }

    public func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { body(&$0) }
    }
}

/// A waiter the clock does not keep alive.
private struct WeakWaiter: @unchecked Sendable {
    // Safety: read and written only under the clock's lock; the waiter itself is Sendable.
    weak var waiter: (any SessionClockWaiter)?
}
