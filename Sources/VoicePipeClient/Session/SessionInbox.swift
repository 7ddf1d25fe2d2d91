import Glibc
import VoicePipeSession

/// A queue of inputs for one consumer thread that also waits for the consumer's next deadline on
/// a ``SessionClock``: the loop at the heart of the session driver and the embedded runtime.
///
/// Any thread may ``post(_:)``; one thread calls ``next(until:)``, which returns the oldest input,
/// or nil once the deadline has come (on the real clock a timed wait; on a manual clock when the
/// clock is moved past it).
public final class SessionInbox<Element: Sendable>: SessionClockWaiter, @unchecked Sendable {
    private let clock: any SessionClock
    // On the heap: a pthread object must not move, and a class's stored properties have no
    // guaranteed stable address.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Signalled when the consumer takes an input: room for a poster waiting on a bound.
    private let room = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// The thread that takes inputs (known once it has called ``next(until:)``).
    private var consumer: pthread_t?
    private var items = FIFOQueue<Element>()
    private var waitingUntil: SessionInstant?
    private var waiting = false
    private var moved = false
    private var retired = false
    /// Told after each post: a loop serving many inboxes (``SessionLoop``) learns this one has input.
    private var postHook: (@Sendable () -> Void)?

    public init(clock: any SessionClock) {
        self.clock = clock
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_cond_init(room, nil)
        pthread_condattr_destroy(&attributes)
        clock.register(self)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_cond_destroy(room)
        pthread_mutex_destroy(mutex)
        room.deallocate()
        condition.deallocate()
        mutex.deallocate()
    }

    /// Queues `element` and wakes the consumer.
    public func post(_ element: Element) {
        pthread_mutex_lock(mutex)
        appendAndUnlock(element, wakingConsumer: true)
    }

    /// Queues `element`, waking the consumer only when it waits for nothing sooner than
    /// `latest`: one about to wake by then finds it at that wake (a loop serving many sessions
    /// takes the inputs of all of them at its next wake, instead of waking for each).
    public func post(_ element: Element, wakingOnlyAfter latest: SessionInstant) {
        pthread_mutex_lock(mutex)
        let wakesInTime = waiting && !moved && (waitingUntil.map { $0 <= latest } ?? false)
        appendAndUnlock(element, wakingConsumer: !wakesInTime)
    }

    /// Queues `element` unless the consumer has retired (false: it never will take it).
    public func offer(_ element: Element) -> Bool {
        pthread_mutex_lock(mutex)
        guard !retired else {
            pthread_mutex_unlock(mutex)
            return false
        }
        appendAndUnlock(element, wakingConsumer: true)
        return true
    }

    /// Calls `hook` after every post from now on (nil: no longer), on the posting thread and
    /// outside the inbox's lock.
    public func tellPosts(_ hook: (@Sendable () -> Void)?) {
        pthread_mutex_lock(mutex)
        postHook = hook
        pthread_mutex_unlock(mutex)
    }

    /// Queues `element`, first waiting while more than `limit` inputs are queued: a producer
    /// that outruns the consumer (a runtime flooding the session) is held back, and the pipe or
    /// socket behind it fills, instead of memory. The consumer's own thread, and any thread once
    /// the consumer has retired, never waits.
    public func post(_ element: Element, waitingWhileAbove limit: Int) {
        pthread_mutex_lock(mutex)
        let onConsumer = consumer.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        while !onConsumer, !retired, items.count > limit {
            pthread_cond_wait(room, mutex)
        }
        appendAndUnlock(element, wakingConsumer: true)
    }

    /// With the lock held: queues `element`, wakes the consumer if asked, lets go of the lock,
    /// then tells the post hook (outside the lock, so the hook may post elsewhere).
    private func appendAndUnlock(_ element: Element, wakingConsumer: Bool) {
        items.append(element)
        if wakingConsumer { pthread_cond_signal(condition) }
        let hook = postHook
        pthread_mutex_unlock(mutex)
        hook?()
    }

    /// Inputs waiting.
    public var count: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return items.count
    }

    /// The oldest input, waiting for one until `deadline` (forever when nil); nil when the
    /// deadline came first. An input already waiting is returned even when the deadline has passed.
    public func next(until deadline: SessionInstant?) -> Element? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard awaitInputLocked(until: deadline) else { return nil }
        return popLocked()
    }

    /// The oldest input, or nil at once when none waits.
    public func poll() -> Element? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if consumer == nil { consumer = pthread_self() }
        return popLocked()
    }

    /// Waits until an input is queued (true) or `deadline` comes first (false; never, when nil),
    /// taking nothing.
    @discardableResult
    public func waitForInput(until deadline: SessionInstant?) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return awaitInputLocked(until: deadline)
    }

    private func awaitInputLocked(until deadline: SessionInstant?) -> Bool {
        if consumer == nil { consumer = pthread_self() }
        while items.isEmpty {
            if let deadline, clock.now >= deadline { return false }
            waiting = true
            waitingUntil = deadline
            moved = false
            if let deadline, let host = clock.hostDeadline(for: deadline) {
                var absolute = host
                pthread_cond_timedwait(condition, mutex, &absolute)
            } else {
                pthread_cond_wait(condition, mutex)
            }
            waiting = false
        }
        return true
    }

    private func popLocked() -> Element? {
        guard let element = items.popFirst() else { return nil }
        pthread_cond_broadcast(room)
        return element
    }

    public func clockDidMove() {
        pthread_mutex_lock(mutex)
        moved = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// The consumer has stopped for good: the inbox counts as idle from now on.
    public func retire() {
        pthread_mutex_lock(mutex)
        retired = true
        pthread_cond_broadcast(room)
        pthread_mutex_unlock(mutex)
    }

    /// True while the consumer is blocked with nothing queued and its deadline not yet come, or
    /// after it retired.
    public var isIdle: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if retired { return true }
        guard waiting, items.isEmpty, !moved else { return false }
        if let waitingUntil { return clock.now < waitingUntil }
        return true
    }
}
