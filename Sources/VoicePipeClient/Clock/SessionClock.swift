import Glibc
import VoicePipeSession

/// Where a session's driver and the embedded runtime read the time and wait for it.
///
/// The real clock is ``MonotonicSessionClock``; tests use a manual clock (VoicePipeTestSupport's
/// `ManualSessionClock`) that moves only when told, so a rule about 40 seconds is checked in
/// microseconds without sleeping.
public protocol SessionClock: AnyObject, Sendable {
    /// The current instant.
    var now: SessionInstant { get }
    /// The host's `CLOCK_MONOTONIC` time at which `instant` falls, for a timed wait; nil when the
    /// clock is not the host's (a manual clock wakes its waiters itself when it moves).
    func hostDeadline(for instant: SessionInstant) -> timespec?
    /// Registers something that waits for this clock's deadlines, so a manual clock can wake it
    /// when it moves. A real clock ignores it.
    func register(_ waiter: any SessionClockWaiter)
}

/// Something blocked until a deadline of a ``SessionClock`` (an ``SessionInbox``).
public protocol SessionClockWaiter: AnyObject, Sendable {
    /// The clock moved: re-check deadlines.
    func clockDidMove()
    /// True while the waiter is blocked with nothing to do before its deadline (a manual clock's
    /// test barrier waits for this).
    var isIdle: Bool { get }
}

/// The host's monotonic clock, counted from when this value was made.
public final class MonotonicSessionClock: SessionClock {
    private let origin: timespec

    public init() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        origin = now
    }

    public var now: SessionInstant {
        var current = timespec()
        clock_gettime(CLOCK_MONOTONIC, &current)
        let elapsed = Duration.seconds(current.tv_sec - origin.tv_sec) + .nanoseconds(current.tv_nsec - origin.tv_nsec)
        return SessionInstant(sinceOrigin: elapsed)
    }

    public func hostDeadline(for instant: SessionInstant) -> timespec? {
        let parts = instant.sinceOrigin.components
        var seconds = origin.tv_sec + Int(parts.seconds)
        var nanoseconds = origin.tv_nsec + Int(parts.attoseconds / 1_000_000_000)
        if nanoseconds >= 1_000_000_000 {
            seconds += 1
            nanoseconds -= 1_000_000_000
        } else if nanoseconds < 0 {
            seconds -= 1
            nanoseconds += 1_000_000_000
        }
        return timespec(tv_sec: seconds, tv_nsec: nanoseconds)
    }

    public func register(_ waiter: any SessionClockWaiter) {}
}
