import Foundation
import Synchronization
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// A corpus of recordings run as sessions: one session per input and repetition, at most
/// `width` at once, their starts spaced by `stagger` (a ramp for load tests), and a stop that
/// ends every running session cleanly and starts no more (Ctrl-C), so the report is still written.
///
/// Sessions mostly wait on real time and the runtime, so the width is not tied to the cores:
/// each running session holds a thread that sleeps between its frames.
public final class SessionCorpus: Sendable {
    /// One session of the corpus.
    public struct Job: Sendable, Hashable {
        /// Position in the run: input order, repetition by repetition.
        public let index: Int
        /// The input as the user named it.
        public let input: String
        /// 1 to the corpus's repeat count.
        public let repetition: Int
        /// What this session's files are named after: the input's name without its extension,
        /// with `.r<repetition>` when the corpus runs more than once.
        public let name: String
    }

    /// Every session of the run, in order: the inputs of the first repetition, then the second's.
    public let jobs: [Job]
    /// The recordings, each run once per repetition.
    public let inputCount: Int
    /// How many times the corpus runs.
    public let repeats: Int
    /// Sessions at once.
    public let width: Int
    /// Between one session's start and the next.
    public let stagger: Duration
    private let state = Guarded(RunState())

    /// - Parameters:
    ///   - inputs: the recordings, one session each per repetition.
    ///   - repeats: how many times the corpus runs, 1 or more.
    ///   - width: sessions at once, 1 or more.
    ///   - stagger: the spacing of the starts; zero starts `width` at once.
    /// - Throws: ``SessionCorpusError`` for no inputs, a count below 1, a negative stagger, or
    ///   two inputs whose files would have the same name.
    public init(inputs: [String], repeats: Int = 1, width: Int, stagger: Duration = .zero) throws(SessionCorpusError) {
        guard !inputs.isEmpty else { throw .noInputs }
        guard repeats >= 1 else { throw .badCount(repeats, of: "repeat") }
        guard width >= 1 else { throw .badCount(width, of: "jobs") }
        guard stagger >= .zero else { throw .negativeStagger }
        var owners: [String: String] = [:]
        let stems = inputs.map(Self.stem)
        for (input, stem) in zip(inputs, stems) {
            if let other = owners.updateValue(input, forKey: stem) { throw .sameName(other, input, name: stem) }
        }
        var jobs: [Job] = []
        for repetition in 1...repeats {
            for (input, stem) in zip(inputs, stems) {
                jobs.append(Job(index: jobs.count, input: input, repetition: repetition, name: repeats == 1 ? stem : "\(stem).r\(repetition)"))
            }
        }
        self.jobs = jobs
        inputCount = inputs.count
        self.repeats = repeats
        self.width = width
        self.stagger = stagger
    }

    /// The input's file name without its extension: `calls/take 1.wav` is `take 1`.
    public static func stem(_ input: String) -> String {
        URL(fileURLWithPath: input).deletingPathExtension().lastPathComponent
    }

    /// Whether ``stop()`` has been called.
    public var isStopped: Bool { state.withLock { $0.stopped } }

    /// From any thread: no session starts after this, and every running one is asked to end
    /// (each its own `session.end` and wait for the runtime, through its ``Stop``).
    public func stop() {
        let running = state.withLock { state -> [Stop] in
            state.stopped = true
            return Array(state.running.values)
        }
        for stop in running { stop.fire() }
        wake.signal()
    }

    /// A running session's end, which ``SessionCorpus/stop()`` fires.
    public final class Stop: Sendable {
        private let actions = Guarded<(fired: Bool, actions: [@Sendable () -> Void])>((false, []))

        /// Runs `action` when the corpus is stopped (at once if it already was): the session's
        /// `requestEnd`, typically.
        public func onStop(_ action: @escaping @Sendable () -> Void) {
            let fired = actions.withLock { state -> Bool in
                if !state.fired { state.actions.append(action) }
                return state.fired
            }
            if fired { action() }
        }

        /// Whether the corpus was stopped while this session ran.
        public var wasFired: Bool { actions.withLock { $0.fired } }

        fileprivate func fire() {
            let pending = actions.withLock { state -> [@Sendable () -> Void] in
                state.fired = true
                defer { state.actions.removeAll() }
                return state.actions
            }
            for action in pending { action() }
        }
    }

    /// Runs the corpus on this thread's watch: each job on a worker thread, `width` at a time.
    /// - Parameters:
    ///   - session: one whole session for a job (runs on a worker thread; registers its end
    ///     with the ``Stop`` it is given).
    ///   - skipped: the outcome of a job the stop came before (on the calling thread).
    ///   - completed: each outcome as its session ends, on the calling thread, one at a time.
    /// - Returns: every outcome, in job order.
    public func run<Outcome: Sendable>(_ session: @escaping @Sendable (Job, Stop) -> Outcome,
                                       skipped: @escaping @Sendable (Job) -> Outcome,
                                       completed: (Job, Outcome) -> Void) -> [Outcome] {
        let jobs = self.jobs, stagger = self.stagger, start = ContinuousClock.now
        return ParallelJobs.run(count: jobs.count, width: width, { [self] index in
            let job = jobs[index]
            guard waitForStart(at: start + stagger * index) else { return skipped(job) }
            let stop = Stop()
            let proceed = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.running[index] = stop
                return true
            }
            guard proceed else { return skipped(job) }
            defer { _ = state.withLock { $0.running.removeValue(forKey: index) } }
            return session(job, stop)
        }, completed: { index, outcome in completed(jobs[index], outcome) })
    }

    /// Sleeps until `instant`, or less if the corpus is stopped; false when it was.
    private func waitForStart(at instant: ContinuousClock.Instant) -> Bool {
        while !isStopped {
            let left = ContinuousClock.now.duration(to: instant)
            guard left > .zero else { return true }
            // Every waiting worker wakes on a stop; the signal is passed on to the next waiter.
            if wake.wait(timeout: .now() + min(left, .seconds(1)).seconds) == .success {
                wake.signal()
            }
        }
        return false
    }

    private let wake = DispatchSemaphore(value: 0)

    private struct RunState: Sendable {
        var stopped = false
        var running: [Int: Stop] = [:]
    }
}

/// Why a corpus cannot run as given.
public enum SessionCorpusError: Error, Sendable, Hashable, CustomStringConvertible {
    case noInputs
    /// `--repeat` or `--jobs` below 1.
    case badCount(Int, of: String)
    case negativeStagger
    /// Two inputs whose reply and log would be written to the same names.
    case sameName(String, String, name: String)

    public var description: String {
        switch self {
        case .noInputs: "a corpus needs at least one input"
        case .badCount(let count, let name): "'--\(name)' must be 1 or more, not \(count)"
        case .negativeStagger: "the stagger between session starts cannot be negative"
        case .sameName(let first, let second, let name):
            "'\(first)' and '\(second)' would both write files named '\(name)'; run them in separate corpora or rename one"
        }
    }
}
