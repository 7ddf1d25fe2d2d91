import VoicePipeTestSupport

/// One throughput cell's figures (a row cell of the throughput tables).
struct ThroughputRow: Codable {
    var name: String
    var workload: String
    var contender: String
    var family: String
    var chunkMilliseconds: Int
    /// Seconds of audio one pass streams (shorter than the workload's signal for the slowest peers).
    var signalSeconds: Double
    var passesPerRepetition: Int
    var repetitions: Int
    var cpuSecondsPerPass: Spread
    /// Seconds of audio per CPU second: median (min–max); max comes from the fastest repetition.
    var xRealTime: Spread
    /// Million input frames per CPU second, at the median.
    var megaFramesPerSecond: Double
    /// This cell's speed over the memcpy cell's (same workload and chunk): the median over the
    /// repetitions of the two cells' ratio within the same round.
    var ratioToMemcpy: Double?
    /// This cell's speed over soxr HQ's (same workload and chunk), paired by round as
    /// ``ratioToMemcpy``; above 1 is faster.
    var ratioToSoxrHQ: Double?
    var wallOverCPU: Double
}

/// Heap allocations per chunk in steady state.
struct AllocationRow: Codable {
    var workload: String
    var contender: String
    var chunkMilliseconds: Int
    var chunks: Int
    var allocations: UInt64
    var perChunk: Double
}

/// The streaming throughput benchmark: every contender × workload × chunk size, one cell each.
final class ThroughputBenchmark {
    struct Cell {
        let workload: Workload
        let spec: ContenderSpec
        let chunkMilliseconds: Int
        let contender: StreamContender
        let input: UnsafeRawBufferPointer
        let chunkBytes: Int
        let timed: TimedCell
    }

    let cells: [Cell]
    private let signals: [InputSignal]
    let signalSeconds: Double

    /// Builds the cells whose names pass `filter`; contenders are created here, outside timing.
    init(signalSeconds: Double, filter: (String) -> Bool) {
        self.signalSeconds = signalSeconds
        var cells: [Cell] = []
        var signals: [InputSignal] = []
        for workload in Workload.all {
            let wanted = Workload.chunkMilliseconds.flatMap { ms in ContenderSpec.all.map { (ms, $0) } }
                .filter { filter(Self.cellName(workload, $0.0, $0.1)) }
            guard !wanted.isEmpty else { continue }
            let frames = Int(signalSeconds * Double(workload.inputRate))
            let channels = (0..<workload.channels).map { Signals.program(sampleRate: Double(workload.inputRate), frames: frames, channel: $0) }
            let signal = InputSignal(workload: workload, channels: channels)
            signals.append(signal)
            let maxChunk = workload.chunkFrames(milliseconds: Workload.chunkMilliseconds.max()!)
            for (ms, spec) in wanted {
                let chunkFrames = workload.chunkFrames(milliseconds: ms)
                // Whole chunks of the (possibly shortened) signal.
                let passFrames = max(chunkFrames, Int(Double(frames) * spec.signalFraction) / chunkFrames * chunkFrames)
                let input = signal.prefix(frames: passFrames)
                let contender = spec.make(workload, ms, maxChunk, false)
                let chunkBytes = chunkFrames * workload.bytesPerFrame
                let name = Self.cellName(workload, ms, spec)
                let timed = TimedCell(name: name, maxPasses: 5_000) {
                    Self.stream(input, chunkBytes: chunkBytes, through: contender)
                }
                cells.append(Cell(workload: workload, spec: spec, chunkMilliseconds: ms, contender: contender, input: input, chunkBytes: chunkBytes, timed: timed))
            }
        }
        self.cells = cells
        self.signals = signals
    }

    deinit { signals.forEach { $0.release() } }

    static func cellName(_ workload: Workload, _ ms: Int, _ spec: ContenderSpec) -> String {
        "throughput/\(workload.id)/\(ms)ms/\(spec.name)"
    }

    /// Streams `input` chunk by chunk through `contender`.
    @inline(never)
    static func stream(_ input: UnsafeRawBufferPointer, chunkBytes: Int, through contender: StreamContender) {
        var offset = 0
        while offset < input.count {
            let end = min(offset + chunkBytes, input.count)
            contender.process(UnsafeRawBufferPointer(rebasing: input[offset..<end]))
            offset = end
        }
    }

    /// Runs the cells round-robin, each workload and chunk size's soxr HQ cell right before its
    /// VoicePipe cells: a ratio is taken between two repetitions of the same round, and on a
    /// host whose speed swings from second to second, neighbours see nearly the same machine.
    func run(_ schedule: RoundRobin, progress: Progress) {
        func rank(_ cell: Cell) -> Int {
            cell.spec.name == ContenderSpec.referenceName ? 0 : cell.spec.family == .voicepipe ? 1 : 2
        }
        var order: [TimedCell] = []
        var start = 0
        while start < cells.count {
            var end = start
            while end < cells.count, cells[end].workload.id == cells[start].workload.id, cells[end].chunkMilliseconds == cells[start].chunkMilliseconds { end += 1 }
            order += cells[start..<end].enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(\.element.timed)
            start = end
        }
        schedule.run(order, label: "throughput", progress: progress)
    }

    /// The median over the repetitions of `cell`'s speed over `reference`'s in the same round.
    static func pairedRatio(_ cell: Cell, to reference: Cell) -> Double? {
        let mine = cell.timed.cpuTimes, theirs = reference.timed.cpuTimes
        guard !mine.isEmpty, mine.count == theirs.count else { return nil }
        // Speed is work over time: (my audio / my time per pass) over (their audio / their time per pass).
        let myWork = Double(cell.input.count / cell.workload.bytesPerFrame) * Double(cell.timed.passes)
        let theirWork = Double(reference.input.count / reference.workload.bytesPerFrame) * Double(reference.timed.passes)
        return Spread(zip(mine, theirs).map { (myWork / $0) / (theirWork / $1) }).median
    }

    /// The rows, with ratios to the memcpy and soxr HQ cells of the same workload and chunk size.
    func rows() -> [ThroughputRow] {
        var rows: [ThroughputRow] = cells.map { cell in
            let audioSeconds = Double(cell.input.count / cell.workload.bytesPerFrame) / Double(cell.workload.inputRate)
            let cpu = cell.timed.cpuPerPass
            return ThroughputRow(
                name: cell.timed.name, workload: cell.workload.id, contender: cell.spec.name, family: cell.spec.family.rawValue,
                chunkMilliseconds: cell.chunkMilliseconds, signalSeconds: audioSeconds,
                passesPerRepetition: cell.timed.passes, repetitions: cell.timed.cpuTimes.count,
                cpuSecondsPerPass: cpu, xRealTime: cpu.rate(work: audioSeconds),
                megaFramesPerSecond: audioSeconds * Double(cell.workload.inputRate) / cpu.median / 1e6,
                ratioToMemcpy: nil, ratioToSoxrHQ: nil, wallOverCPU: cell.timed.wallOverCPU)
        }
        for (i, cell) in cells.enumerated() {
            let peers = cells.filter { $0.workload.id == cell.workload.id && $0.chunkMilliseconds == cell.chunkMilliseconds }
            if let memcpy = peers.first(where: { $0.spec.family == .memcpy }) {
                rows[i].ratioToMemcpy = Self.pairedRatio(cell, to: memcpy)
            }
            if let reference = peers.first(where: { $0.spec.name == ContenderSpec.referenceName }) {
                rows[i].ratioToSoxrHQ = Self.pairedRatio(cell, to: reference)
            }
        }
        return rows
    }

    /// Heap allocations per chunk, counted on this thread over up to `maxChunks` chunks of each
    /// (already warmed-up) cell's stream.
    func allocations(maxChunks: Int) -> [AllocationRow] {
        cells.map { cell in
            let chunks = min(maxChunks, cell.input.count / cell.chunkBytes)
            let input = UnsafeRawBufferPointer(rebasing: cell.input[0..<(chunks * cell.chunkBytes)])
            let count = countAllocations { Self.stream(input, chunkBytes: cell.chunkBytes, through: cell.contender) }
            return AllocationRow(workload: cell.workload.id, contender: cell.spec.name, chunkMilliseconds: cell.chunkMilliseconds,
                                 chunks: chunks, allocations: count, perChunk: Double(count) / Double(max(chunks, 1)))
        }
    }
}
