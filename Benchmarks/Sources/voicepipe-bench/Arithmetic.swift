import CBenchFMAPeak
import VoicePipeCore
import VoicePipeTestSupport

/// The core's multiply-add peak, measured with independent FMA chains that keep every FMA pipe
/// busy: lane-FMAs per CPU second, fastest of seven runs of about 3 ms each.
struct FMAPeak: Codable {
    /// Eight-lane AVX2 FMAs; nil on a CPU without AVX2 and FMA.
    var avx2: Double?
    /// Sixteen-lane AVX-512 FMAs; nil without AVX-512 F. A core that splits 512-bit operations
    /// in two reaches about the AVX2 figure.
    var avx512: Double?

    /// Eight-lane FMAs each fed by one load from L1 and one add (``bench_folded_fma_avx2``): the
    /// ceiling for a folded FIR's inner loop on this core, below the peak when loads and adds
    /// compete with the FMAs; nil without AVX2 and FMA.
    var foldedAVX2: Double?
    /// The same with sixteen lanes (``bench_folded_fma_avx512``); nil without AVX-512 F.
    var foldedAVX512: Double?

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
        let samples = [Float](repeating: 0.001, count: 128)
        return FMAPeak(
            avx2: machine.avx2 && machine.fma ? fastest(lanes: 8) { bench_fma_peak_avx2($0) } : nil,
            avx512: machine.avx512f ? fastest(lanes: 16) { bench_fma_peak_avx512($0) } : nil,
            foldedAVX2: machine.avx2 && machine.fma ? fastest(lanes: 8) { n in samples.withUnsafeBufferPointer { bench_folded_fma_avx2($0.baseAddress!, n) } } : nil,
            foldedAVX512: machine.avx512f ? fastest(lanes: 16) { n in samples.withUnsafeBufferPointer { bench_folded_fma_avx512($0.baseAddress!, n) } } : nil)
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
            guard let resampler = try? BuiltInResampler(inputRate: SampleRate(hertz: Double(workload.inputRate)), outputRate: SampleRate(hertz: Double(workload.outputRate))) else { continue }
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

/// The built-in resampler by itself, for each workload, kernel set and chunk size: mono Float32
/// in and out, a one-second signal that stays in cache. Set beside the throughput cell it tells
/// the filters' speed apart from the converter's other work (downmix, frames, Int16 conversion)
/// and from the input's trip from main memory. It includes the split of its mono input into a
/// decimator's streams, which a stereo cell does in its downmix pass instead.
struct ResamplerAloneRow: Codable {
    var workload: String
    /// The contender name of the cell it belongs to ("VoicePipe AVX2" …).
    var contender: String
    var chunkMilliseconds: Int
    /// Seconds of audio per CPU second: median (min–max) of the repetitions.
    var xRealTime: Spread
    /// Executed lane multiply-adds per CPU second at the median.
    var laneFMAsPerSecond: Double
    /// `laneFMAsPerSecond` over the measured peak.
    var fractionOfPeak: Double?
    /// The throughput cell's median speed over this one's: the share of the cell's time the
    /// resampler would take if it ran as fast inside the converter as it does here.
    var shareOfCell: Double?

    /// Times every VoicePipe kernel set's resampler, `repetitions` runs of at least
    /// `minimumSeconds` of CPU each, and sets each against the matching row of `cells`.
    static func measure(cells: [ThroughputRow], peak: FMAPeak, repetitions: Int, minimumSeconds: Double,
                        filter: (String) -> Bool) -> [ResamplerAloneRow] {
        var rows: [ResamplerAloneRow] = []
        for workload in Workload.all {
            let frames = workload.inputRate
            let signal = Signals.program(sampleRate: Double(workload.inputRate), frames: frames, channel: 0).map { Float($0) }
            for (contender, kernels) in ContenderSpec.voicepipeKernelSets {
                for ms in Workload.chunkMilliseconds {
                    let cellName = "throughput/\(workload.id)/\(ms)ms/\(contender)"
                    guard filter(cellName),
                          let resampler = try? BuiltInResampler(inputRate: SampleRate(hertz: Double(workload.inputRate)), outputRate: SampleRate(hertz: Double(workload.outputRate)), kernels: kernels)
                    else { continue }
                    let chunk = workload.chunkFrames(milliseconds: ms)
                    var output = [Float](repeating: 0, count: resampler.maxOutputFrames(forInputFrames: chunk))
                    var speeds: [Double] = []
                    signal.withUnsafeBufferPointer { input in
                        output.withUnsafeMutableBufferPointer { out in
                            func pass() -> Int {
                                var produced = 0
                                var offset = 0
                                while offset + chunk <= frames {
                                    produced += (try? resampler.process(UnsafeBufferPointer(rebasing: input[offset..<offset + chunk]), into: out)) ?? 0
                                    offset += chunk
                                }
                                return produced
                            }
                            BlackHole.consume(pass())
                            for _ in 0..<repetitions {
                                var passes = 0
                                let start = Clock.threadCPU()
                                var seconds = 0.0
                                repeat {
                                    BlackHole.consume(pass())
                                    passes += 1
                                    seconds = Clock.threadCPU() - start
                                } while seconds < minimumSeconds
                                speeds.append(Double(passes * (frames / chunk) * chunk) / Double(workload.inputRate) / seconds)
                            }
                            BlackHole.consume(out[0])
                        }
                    }
                    let spread = Spread(speeds)
                    let achieved = resampler.arithmetic.executedMultiplyAdds * spread.median * Double(workload.outputRate)
                    let cell = cells.first { $0.name == cellName }
                    rows.append(ResamplerAloneRow(
                        workload: workload.id, contender: contender, chunkMilliseconds: ms, xRealTime: spread,
                        laneFMAsPerSecond: achieved, fractionOfPeak: peak.peak.map { achieved / $0 },
                        shareOfCell: cell.map { $0.xRealTime.median / spread.median }))
                }
            }
        }
        return rows
    }
}
