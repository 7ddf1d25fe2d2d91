import CBenchFMAPeak
import VoicePipeCore

/// The core's multiply-add peak, measured with independent FMA chains that keep every FMA pipe
/// busy: lane-FMAs per CPU second, fastest of seven runs of about 3 ms each.
struct FMAPeak: Codable {
    /// Eight-lane AVX2 FMAs; nil on a CPU without AVX2 and FMA.
    var avx2: Double?
    /// Sixteen-lane AVX-512 FMAs; nil without AVX-512 F. A core that splits 512-bit operations
    /// in two reaches about the AVX2 figure.
    var avx512: Double?

    /// The larger of the two: the peak the achieved rates are a fraction of.
    var peak: Double? { [avx2, avx512].compactMap { $0 }.max() }

    static func measure(_ machine: MachineInfo) -> FMAPeak {
        func fastest(lanes: Double, _ run: (Int) -> Float) -> Double {
            let iterations = 2_000_000
            var best = 0.0
            var keep: Float = 0
            for _ in 0..<7 {
                let start = Clock.threadCPU()
                keep += run(iterations)
                let seconds = Clock.threadCPU() - start
                if seconds > 0 { best = max(best, 12 * lanes * Double(iterations) / seconds) }
            }
            // The sum is used, so no run can be optimised away.
            return keep.isNaN ? 0 : best
        }
        return FMAPeak(
            avx2: machine.avx2 && machine.fma ? fastest(lanes: 8) { bench_fma_peak_avx2($0) } : nil,
            avx512: machine.avx512f ? fastest(lanes: 16) { bench_fma_peak_avx512($0) } : nil)
    }
}

/// A VoicePipe throughput cell's arithmetic: the built-in resampler's multiply-adds per output
/// frame (the chain the converters build for the workload's rates) and the rate the cell achieved.
struct CellArithmetic: Codable {
    /// Filter taps applied per output frame.
    var multiplyAddsPerOutput: Double
    /// Lane multiply-adds the kernels execute per output frame (tap pairs folded).
    var executedPerOutput: Double
    /// Executed lane multiply-adds per CPU second at the cell's median speed, over the whole
    /// converter's time (downmix, frames and Int16 conversion included).
    var laneFMAsPerSecond: Double
    /// `laneFMAsPerSecond` over the measured peak.
    var fractionOfPeak: Double?

    /// The arithmetic of VoicePipe's cells in `rows`, keyed by row name; other contenders get none.
    static func of(_ rows: [ThroughputRow], peak: FMAPeak) -> [String: CellArithmetic] {
        // One resampler per workload: its chain, and so its arithmetic, is the same for every kernel set.
        var perWorkload: [String: (workload: Workload, arithmetic: ResamplerArithmetic)] = [:]
        for workload in Workload.all {
            guard let resampler = try? BuiltInResampler(inputRate: Double(workload.inputRate), outputRate: Double(workload.outputRate)) else { continue }
            perWorkload[workload.id] = (workload, resampler.arithmetic)
        }
        var cells: [String: CellArithmetic] = [:]
        for row in rows where row.family == ContenderSpec.Family.voicepipe.rawValue {
            guard let (workload, arithmetic) = perWorkload[row.workload] else { continue }
            let outputsPerSecond = row.xRealTime.median * Double(workload.outputRate)
            let achieved = arithmetic.executedMultiplyAdds * outputsPerSecond
            cells[row.name] = CellArithmetic(
                multiplyAddsPerOutput: arithmetic.multiplyAdds, executedPerOutput: arithmetic.executedMultiplyAdds,
                laneFMAsPerSecond: achieved, fractionOfPeak: peak.peak.map { achieved / $0 })
        }
        return cells
    }
}
