import Foundation
import Synchronization
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO

/// Independent jobs on a bounded number of threads: every job once, results in job order,
/// completions on the calling thread.
struct ParallelJobsTests {
    @Test(arguments: [1, 2, 5, 64])
    func everyJobRunsOnceAndResultsComeBackInJobOrder(width: Int) {
        let runs = Guarded([Int](repeating: 0, count: 40))
        let caller = Thread.current
        var completions = [Int]()
        let results = ParallelJobs.run(count: 40, width: width, { index in
            runs.withLock { $0[index] += 1 }
            return index * index
        }, completed: { index, result in
            #expect(Thread.current == caller, "completions run on the calling thread")
            #expect(result == index * index)
            completions.append(index)
        })
        #expect(results == (0..<40).map { $0 * $0 })
        #expect(runs.withLock { $0 } == [Int](repeating: 1, count: 40))
        #expect(completions.sorted() == Array(0..<40))
    }

    @Test func noMoreThanWidthJobsRunAtOnce() {
        let running = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        _ = ParallelJobs.run(count: 24, width: 3, { _ in
            let now = running.add(1, ordering: .relaxed).newValue
            var seen = most.load(ordering: .relaxed)
            while now > seen, !most.compareExchange(expected: seen, desired: now, ordering: .relaxed).exchanged {
                seen = most.load(ordering: .relaxed)
            }
            usleep(2_000)
            running.subtract(1, ordering: .relaxed)
            return 0
        }, completed: { _, _ in })
        #expect(most.load(ordering: .relaxed) <= 3)
        #expect(most.load(ordering: .relaxed) >= 2, "the jobs did overlap")
    }

    @Test func noJobsIsNoWork() {
        #expect(ParallelJobs.run(count: 0, width: 4, { _ in 1 }, completed: { _, _ in Issue.record("no completion") }).isEmpty)
    }
}
