import CThreadAnnotations
import Synchronization

/// A value behind a lock: `Synchronization.Mutex`, with the lock's ordering also told to
/// ThreadSanitizer.
///
/// On Linux a contended `Mutex` is handed from one holder to the next inside the kernel, where
/// ThreadSanitizer cannot see it, so a `--sanitize=thread` run would report the guarded state as
/// raced though every access is under the lock. ``withLock(_:)`` marks the acquisition and the
/// release for ThreadSanitizer (calls that do nothing in any other build), so the sanitizer checks
/// the value like any other and still reports an access that bypasses the lock.
public final class Guarded<Value>: Sendable {
    @usableFromInline let mutex: Mutex<Value>

    public init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with the value, holding the lock.
    @inlinable
    public func withLock<Result, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E) -> sending Result {
        let lock = Unmanaged.passUnretained(self).toOpaque()
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            vp_lock_acquired(lock)
            defer { vp_lock_releasing(lock) }
            return try body(&value)
        }
    }
}
