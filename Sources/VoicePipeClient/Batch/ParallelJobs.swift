import Foundation
import Synchronization
import VoicePipeCore
import VoicePipeIO

/// Independent jobs (one per file of a batch, say) on up to `width` threads at once.
///
/// Each job runs on a worker thread and must not share mutable state with the others; its result
/// is handed to `completed` on the calling thread as soon as it finishes, one at a time (so
/// printing there needs no lock), and all results come back in job order. A job that fails
/// returns its failure as its result; it never stops the others.
public enum ParallelJobs {
    /// Runs jobs `0 ..< count`, at most `width` at a time.
    /// - Parameters:
    ///   - width: worker threads, 1 or more (more than `count` is not useful).
    ///   - job: the work for one index; runs on a worker thread.
    ///   - completed: called on the calling thread with each index and result, in the order the jobs finish.
    /// - Returns: every result, in index order.
    public static func run<Result: Sendable>(count: Int, width: Int, _ job: @escaping @Sendable (Int) -> Result, completed: (Int, Result) -> Void) -> [Result] {
        guard count > 0 else { return [] }
        let shared = Shared<Result>()
        let next = Atomic<Int>(0)
        for _ in 0..<min(max(width, 1), count) {
            Thread.detachNewThread {
                while case let index = next.add(1, ordering: .relaxed).oldValue, index < count {
                    let result = job(index)
                    shared.finished.withLock { $0.append((index, result)) }
                    shared.signal.signal()
                }
            }
        }
        var results = [Result?](repeating: nil, count: count)
        var received = 0
        while received < count {
            shared.signal.wait()
            let batch = shared.finished.withLock { finished in
                defer { finished.removeAll() }
                return finished
            }
            for (index, result) in batch {
                results[index] = result
                received += 1
                completed(index, result)
            }
        }
        return results.compactMap { $0 }
    }

    /// What the workers hand back: finished results and a semaphore counting them.
    private final class Shared<Result: Sendable>: Sendable {
        let finished = Guarded<[(Int, Result)]>([])
        let signal = DispatchSemaphore(value: 0)
    }
}
