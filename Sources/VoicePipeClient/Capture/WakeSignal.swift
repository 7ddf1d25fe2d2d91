import Glibc

/// A counting semaphore that a real-time thread may signal: `sem_post` never blocks, takes no
/// lock another thread could hold and allocates nothing (POSIX lists it as async-signal-safe).
///
/// The capture pump's tap signals it after each write into the ring; the converter thread waits
/// on it instead of polling. A device reply output's render thread signals it after a period
/// while the driver's thread waits for room in the queue, for the queue to drain, or for the stop.
final class WakeSignal: @unchecked Sendable {
    // Safety: sem_post and sem_timedwait are thread-safe on one semaphore; init and deinit run alone.
    private let semaphore: UnsafeMutablePointer<sem_t>

    init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Wakes one waiter (or the next wait). Any thread, including an audio thread.
    func signal() {
        sem_post(semaphore)
    }

    /// Waits until signalled or until about `seconds` have passed (on the real-time clock, which
    /// is what `sem_timedwait` takes: a clock step makes one wait shorter or longer, no more).
    /// - Returns: `true` when signalled, `false` on the timeout.
    @discardableResult
    func wait(seconds: Double) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int(seconds * 1e9)
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        while true {
            if sem_timedwait(semaphore, &deadline) == 0 { return true }
            if errno != EINTR { return false }
        }
    }
}
