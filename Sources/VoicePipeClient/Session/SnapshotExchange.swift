import Glibc

/// Hands a copy of a value owned by one thread (the driver's machine) to readers on other
/// threads, made only when a reader asks: a copy after every event would cost its retains and
/// make the owner's next change to each array copy the whole array (a session's delivery log
/// of 156 frames, every frame).
///
/// ```
///  reader: ask() ──▶ ticket ─▶ (owner wakes: publish(value)) ─▶ reader gets the copy of ticket's time or later
///  owner:  begin() … publish(value) on request … finish(value): readers get the last copy at once
/// ```
final class SnapshotExchange<Value>: @unchecked Sendable {
    // Safety: every stored property but the pthread objects is read and written under `mutex`.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let published = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var value: Value
    private var owner: pthread_t?
    private var asked = 0
    private var served = 0

    init(_ initial: Value) {
        value = initial
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(published, nil)
    }

    deinit {
        pthread_cond_destroy(published)
        pthread_mutex_destroy(mutex)
        published.deallocate()
        mutex.deallocate()
    }

    /// The calling thread owns the value from now until ``finish(_:)``.
    func begin() {
        pthread_mutex_lock(mutex)
        owner = pthread_self()
        pthread_mutex_unlock(mutex)
    }

    /// The owner's current value, for a request it was woken for.
    func publish(_ current: Value) {
        pthread_mutex_lock(mutex)
        value = current
        served = asked
        pthread_cond_broadcast(published)
        pthread_mutex_unlock(mutex)
    }

    /// The owner's last value: readers get it without asking from now on.
    func finish(_ last: Value) {
        pthread_mutex_lock(mutex)
        value = last
        owner = nil
        served = asked
        pthread_cond_broadcast(published)
        pthread_mutex_unlock(mutex)
    }

    /// Whether the calling thread is the owner (which reads its own value, never asks).
    var isOwnerThread: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return owner.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    /// A copy at least as new as the moment of the call: with no owner at work the last one at
    /// once; otherwise `wake` asks the owner (it posts to the owner's inbox) and the reader waits
    /// for the owner's next ``publish(_:)`` or ``finish(_:)``.
    func read(wake: () -> Void) -> Value {
        pthread_mutex_lock(mutex)
        guard owner != nil else {
            defer { pthread_mutex_unlock(mutex) }
            return value
        }
        asked += 1
        let ticket = asked
        pthread_mutex_unlock(mutex)
        wake()
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while served < ticket, owner != nil {
            pthread_cond_wait(published, mutex)
        }
        return value
    }
}
