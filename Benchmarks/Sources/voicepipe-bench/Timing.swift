import Glibc

// MARK: Clocks

/// The two clocks every measurement reads: CPU time of the calling thread and monotonic wall time.
enum Clock {
    /// CPU seconds used by the calling thread (user + system), CLOCK_THREAD_CPUTIME_ID.
    @inline(__always)
    static func threadCPU() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
    }

    /// Monotonic wall-clock seconds.
    @inline(__always)
    static func wall() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
    }
}

// MARK: Black hole

/// Where results go so the optimiser cannot drop the work that made them.
///
/// Values are folded into a global with a non-inlinable call; the total is printed at the end of
/// a run (as a checksum nobody reads), so it is observable.
enum BlackHole {
    static var sink: UInt64 = 0

    @inline(never)
    static func consume(_ value: Int) {
        sink = sink &* 31 &+ UInt64(truncatingIfNeeded: value)
    }

    @inline(never)
    static func consume(_ value: Float) {
        sink = sink &* 31 &+ UInt64(value.bitPattern)
    }
}

// MARK: Statistics

/// Median, minimum and maximum of a set of measurements.
struct Spread: Codable, Equatable {
    var median: Double
    var min: Double
    var max: Double

    init(median: Double, min: Double, max: Double) {
        self.median = median
        self.min = min
        self.max = max
    }

    /// The spread of `values` (the median of an even count is the mean of the middle two).
    init(_ values: [Double]) {
        let sorted = values.sorted()
        precondition(!sorted.isEmpty, "no measurements")
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted[0]
        max = sorted[sorted.count - 1]
    }

    /// A rate `work / time` for a spread of times: the fastest repetition gives the maximum rate.
    func rate(work: Double) -> Spread {
        Spread(median: work / median, min: work / max, max: work / min)
    }
}

// MARK: Timed cells and the round-robin schedule

/// One named measurement: a pass of work that the schedule repeats until a repetition lasts long
/// enough, then times repetition by repetition.
final class TimedCell {
    /// Unique name, e.g. `throughput/C1/20ms/soxr HQ`; `--filter` matches against it.
    let name: String
    /// One pass of the work (for a stream: the whole signal, chunk by chunk, through one instance).
    let pass: () -> Void
    /// Most passes a repetition may repeat.
    let maxPasses: Int
    /// Passes per timed repetition (calibrated during warm-up).
    private(set) var passes = 1
    /// CPU seconds of each timed repetition.
    private(set) var cpuTimes: [Double] = []
    /// Wall seconds of each timed repetition.
    private(set) var wallTimes: [Double] = []

    init(name: String, maxPasses: Int = 2_000, pass: @escaping () -> Void) {
        self.name = name
        self.maxPasses = maxPasses
        self.pass = pass
    }

    /// Runs `count` passes and returns (cpu, wall) seconds.
    private func run(passes count: Int) -> (cpu: Double, wall: Double) {
        let wall0 = Clock.wall()
        let cpu0 = Clock.threadCPU()
        for _ in 0..<count { pass() }
        let cpu1 = Clock.threadCPU()
        let wall1 = Clock.wall()
        return (cpu1 - cpu0, wall1 - wall0)
    }

    /// The discarded warm-up: one pass (which also sizes the repetition), then, when the cell needs
    /// several passes per repetition, one whole repetition that refines the size.
    func warmUp(minimumRepetitionSeconds: Double) {
        let first = run(passes: 1).cpu
        passes = passesNeeded(perPass: first, minimum: minimumRepetitionSeconds)
        if passes > 1 {
            let again = run(passes: passes).cpu / Double(passes)
            passes = passesNeeded(perPass: again, minimum: minimumRepetitionSeconds)
        }
    }

    /// Passes for a repetition of at least `minimum` seconds, sized 30 % over so that a
    /// repetition still lasts long enough when the machine runs faster than during the warm-up.
    private func passesNeeded(perPass seconds: Double, minimum: Double) -> Int {
        guard seconds > 0 else { return maxPasses }
        return Swift.max(1, Swift.min(maxPasses, Int((1.3 * minimum / seconds).rounded(.up))))
    }

    /// One timed repetition.
    func timeRepetition() {
        let (cpu, wall) = run(passes: passes)
        cpuTimes.append(cpu)
        wallTimes.append(wall)
    }

    /// CPU seconds per pass: median (min–max) over the repetitions.
    var cpuPerPass: Spread { Spread(cpuTimes.map { $0 / Double(passes) }) }
    /// Median wall time over median CPU time (1.0 = never descheduled while timed).
    var wallOverCPU: Double { Spread(wallTimes).median / Spread(cpuTimes).median }
}

/// Runs cells the way the C harness did: every cell warmed up once (discarded), then the timed
/// repetitions interleaved round-robin across all cells, so slow drifts of the machine spread over
/// every contender alike.
struct RoundRobin {
    var repetitions: Int
    var minimumRepetitionSeconds: Double

    func run(_ cells: [TimedCell], label: String, progress: Progress) {
        guard !cells.isEmpty else { return }
        progress.say("\(label): warming up \(cells.count) cells")
        for cell in cells { cell.warmUp(minimumRepetitionSeconds: minimumRepetitionSeconds) }
        for repetition in 1...repetitions {
            progress.say("\(label): repetition \(repetition) of \(repetitions)")
            for cell in cells { cell.timeRepetition() }
        }
    }
}

// MARK: Progress

/// Progress lines on stderr (stdout carries only the report).
final class Progress {
    let start = Clock.wall()
    func say(_ line: String) {
        let elapsed = Clock.wall() - start
        fputs("[\(Format.fixed(elapsed, 1)) s] \(line)\n", stderr)
    }
}
