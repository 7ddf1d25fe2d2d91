import CVoicePipeKernels

/// How ``DSPKernels/best`` was chosen: every candidate set ran the same short probes of the
/// resampler's inner loops, interleaved, once per process (FFTW-style); the fastest decimators,
/// the fastest polyphase loop and the fastest interpolator won, each on its own, so the chosen set
/// may take them from different sets.
///
/// Feature bits cannot make this choice: a core that splits 512-bit operations in two (AMD Zen 4)
/// has no more multiply-add throughput with AVX-512 than with AVX2, a full-width core twice as
/// much; which set wins there depends on the kernels' instruction counts (on Zen 4 the AVX2
/// decimators won by a fifth on 2026-12-01, the AVX-512 ones by a fifth after their rewrite,
/// 2026-12-03). The candidate sets compute the same bits, so the choice changes speed only.
public struct KernelCalibration: Sendable {
    /// One candidate's fastest probes, in nanoseconds of thread CPU time.
    public struct Timing: Sendable, Hashable {
        public let name: String
        /// The 2:1 and 2/3 decimators at their 10 ms sizes.
        public let decimateNanoseconds: Int64
        /// The polyphase loop of 44.1 → 32 kHz at its 10 ms size.
        public let polyphaseNanoseconds: Int64
        /// The 1:2 interpolator at its 10 ms size.
        public let interpolateNanoseconds: Int64
        /// All three probes.
        public var nanoseconds: Int64 { decimateNanoseconds + polyphaseNanoseconds + interpolateNanoseconds }
    }

    /// The set chosen: one candidate, or its parts from different candidates.
    public let chosen: DSPKernels
    /// Each candidate's fastest probe (empty when there was nothing to choose between).
    public let timings: [Timing]
    /// Thread CPU time the calibration took, nanoseconds.
    public let costNanoseconds: Int64

    /// One line for reports: what was chosen, the probe times and the cost.
    public var summary: String {
        if timings.isEmpty { return "\(chosen.name) (the only candidate; no calibration)" }
        let decimators = timings.map { "\($0.name) \($0.decimateNanoseconds) ns" }.joined(separator: ", ")
        let polyphase = timings.map { "\($0.name) \($0.polyphaseNanoseconds) ns" }.joined(separator: ", ")
        let interpolators = timings.map { "\($0.name) \($0.interpolateNanoseconds) ns" }.joined(separator: ", ")
        return "\(chosen.name), by calibration (fastest probes: decimators \(decimators); polyphase \(polyphase); interpolator \(interpolators); calibration took \(Double(costNanoseconds) / 1e6) ms of CPU)"
    }

    /// A wider set must beat the next candidate by this fraction to be chosen: ties go to the later
    /// (narrower) candidate, which keeps clock speeds steady on cores that slow down for 512-bit work.
    public static let margin = 0.03

    /// The index of the fastest of `times` (candidates widest first), a wider one winning only by
    /// more than ``margin``.
    public static func fastest(_ times: [Int64]) -> Int {
        var choice = times.count - 1
        var index = times.count - 2
        while index >= 0 {
            if Double(times[index]) < Double(times[choice]) * (1 - margin) { choice = index }
            index -= 1
        }
        return choice
    }

    /// Times `candidates` (widest first) on the probe and returns the fastest; `fallback` when
    /// there are none.
    static func run(candidates: [DSPKernels], fallback: DSPKernels) -> KernelCalibration {
        guard candidates.count > 1 else {
            return KernelCalibration(chosen: candidates.first ?? fallback, timings: [], costNanoseconds: 0)
        }
        let start = vp_thread_cpu_nanoseconds()
        let probe = Probe()
        defer { probe.deallocate() }
        // Warm up every set (a wide unit may start slowly), then rounds in alternating order.
        for kernels in candidates {
            for _ in 0..<16 {
                probe.runDecimators(kernels)
                probe.runPolyphase(kernels)
                probe.runInterpolator(kernels)
            }
        }
        var decimate = [Int64](repeating: .max, count: candidates.count)
        var polyphase = decimate
        var interpolate = decimate
        for round in 0..<12 {
            var k = 0
            while k < candidates.count {
                let index = round % 2 == 0 ? k : candidates.count - 1 - k
                var before = vp_thread_cpu_nanoseconds()
                for _ in 0..<4 { probe.runDecimators(candidates[index]) }
                var after = vp_thread_cpu_nanoseconds()
                decimate[index] = min(decimate[index], (after - before) / 4)
                before = after
                for _ in 0..<4 { probe.runPolyphase(candidates[index]) }
                after = vp_thread_cpu_nanoseconds()
                polyphase[index] = min(polyphase[index], (after - before) / 4)
                before = after
                for _ in 0..<4 { probe.runInterpolator(candidates[index]) }
                after = vp_thread_cpu_nanoseconds()
                interpolate[index] = min(interpolate[index], (after - before) / 4)
                k += 1
            }
        }
        let decimators = candidates[fastest(decimate)], polyphaseLoop = candidates[fastest(polyphase)]
        let interpolator = candidates[fastest(interpolate)]
        let chosen = DSPKernels.combining(decimators: decimators, polyphase: polyphaseLoop, interpolator: interpolator)
        let timings = candidates.indices.map {
            Timing(name: candidates[$0].name, decimateNanoseconds: decimate[$0], polyphaseNanoseconds: polyphase[$0], interpolateNanoseconds: interpolate[$0])
        }
        return KernelCalibration(chosen: chosen, timings: timings, costNanoseconds: vp_thread_cpu_nanoseconds() - start)
    }

    /// A few microseconds of the converters' inner loops at their 10 ms sizes: the 2:1 and 2/3
    /// decimators, the 44.1 → 32 kHz polyphase loop and the 1:2 interpolator, on fixed
    /// pseudo-random data.
    private final class Probe {
        static let samples = 4096
        let x: UnsafeMutablePointer<Float>
        let taps: UnsafeMutablePointer<Float>
        /// The taps splatted across four lanes, as the portable decimator takes them.
        let splats: UnsafeMutablePointer<SIMD4<Float>>
        let output: UnsafeMutablePointer<Float>
        let streams: UnsafeMutablePointer<UnsafePointer<Float>>
        let classes: UnsafeMutablePointer<DecimatorTapClass>
        /// 44.1 → 32 kHz: 320 rows of 20 taps, and their column layout for sets that take it.
        static let polyphaseRatio = RationalRatio(up: 320, down: 441)
        static let polyphaseRowLength = 20
        let polyphaseRows: UnsafeMutablePointer<Float>
        let polyphaseColumns: PolyphaseColumnTable?
        let polyphasePosition: UnsafeMutablePointer<PolyphasePosition>
        let polyphaseWalks: UnsafeMutablePointer<PolyphaseWalk>

        init() {
            x = .allocate(capacity: Self.samples)
            var state: UInt32 = 12345
            for i in 0..<Self.samples {
                state = state &* 1_664_525 &+ 1_013_904_223
                x[i] = Float(state >> 8) / Float(1 << 24) - 0.5
            }
            taps = .allocate(capacity: 96)
            for i in 0..<96 { taps[i] = Float((i * 37) % 97) / 970 }
            splats = .allocate(capacity: 96)
            for i in 0..<96 { (splats + i).initialize(to: SIMD4(repeating: taps[i])) }
            output = .allocate(capacity: 1024)
            streams = .allocate(capacity: 4)
            for r in 0..<4 { (streams + r).initialize(to: UnsafePointer(x + 600 + 700 * r)) }
            classes = .allocate(capacity: 5)
            // Factor 2 (classes 0-1, 32 taps each) and factor 3 (classes 2-4, 16 taps each).
            classes.initialize(to: DecimatorTapClass(tapStart: 0, tapCount: 32, forwardStream: 1, forwardOffset: -40, backwardStream: 2, backwardOffset: 40))
            (classes + 1).initialize(to: DecimatorTapClass(tapStart: 32, tapCount: 32, forwardStream: 2, forwardOffset: -40, backwardStream: 1, backwardOffset: 39))
            for s in 0..<3 {
                (classes + 2 + s).initialize(to: DecimatorTapClass(tapStart: 16 * s, tapCount: 16, forwardStream: 1 + s, forwardOffset: -30, backwardStream: 3 - s, backwardOffset: 30))
            }
            let ratio = Self.polyphaseRatio, rowLength = Self.polyphaseRowLength
            polyphaseRows = .allocate(capacity: ratio.up * rowLength)
            for i in 0..<(ratio.up * rowLength) { polyphaseRows[i] = Float((i * 53) % 101) / 1010 - 0.05 }
            polyphaseColumns = PolyphaseColumnTable(rows: polyphaseRows, rowLength: rowLength, ratio: ratio)
            polyphasePosition = .allocate(capacity: 1)
            polyphasePosition.initialize(to: PolyphasePosition(base: 0, phase: 0))
            // 441 inputs: 320 outputs. Slot 0 walks the rows, slot 1 the columns.
            polyphaseWalks = .allocate(capacity: 2)
            let rows = PolyphaseWalk(phaseCount: ratio.up, stepWhole: ratio.down / ratio.up, stepPhase: ratio.down % ratio.up, end: 441, columns: nil)
            var columns = rows
            columns.columns = polyphaseColumns.map { UnsafePointer($0.columns) }
            polyphaseWalks.initialize(to: rows)
            (polyphaseWalks + 1).initialize(to: columns)
        }

        func deallocate() {
            x.deallocate()
            taps.deallocate()
            splats.deallocate()
            output.deallocate()
            streams.deallocate()
            classes.deallocate()
            polyphaseRows.deallocate()
            polyphasePosition.deallocate()
            polyphaseWalks.deallocate()
        }

        func runDecimators(_ kernels: DSPKernels) {
            kernels.decimate(streams, classes, 2, taps, UnsafeRawPointer(splats), 0.25, output, 160)
            kernels.decimate(streams, classes + 2, 3, taps, UnsafeRawPointer(splats), 0.25, output, 80)
            kernels.decimate(streams, classes + 2, 3, taps, UnsafeRawPointer(splats), 0.25, output, 80)
        }

        func runPolyphase(_ kernels: DSPKernels) {
            polyphasePosition.pointee = PolyphasePosition(base: 0, phase: 0)
            let walk = polyphaseWalks + (kernels.polyphaseTakesColumns ? 1 : 0)
            _ = kernels.polyphase(x + 100, polyphaseRows, Self.polyphaseRowLength, walk, polyphasePosition, output)
        }

        func runInterpolator(_ kernels: DSPKernels) {
            kernels.interpolate(UnsafePointer(x + 2000), taps, taps + 32, UnsafeRawPointer(splats), UnsafeRawPointer(splats), 0.5, output, 240)
        }
    }
}
