/// The Markdown report: the same numbers as the JSON, as tables.
enum Report {
    static func cpuFeatures(_ m: MachineInfo) -> String {
        "CPU features detected (/proc/cpuinfo): avx2 \(m.avx2 ? "yes" : "no"), fma \(m.fma ? "yes" : "no"), avx512f \(m.avx512f ? "yes" : "no"); VoicePipe resampler kernels chosen at run time: \(m.voicepipeKernelCalibration)"
    }

    /// Table label of a throughput row: the contender, with a shortened signal said so.
    static func rowLabel(_ row: ThroughputRow, fullSeconds: Double? = nil) -> String {
        guard let full = fullSeconds, row.signalSeconds < full - 0.01 else { return row.contender }
        return "\(row.contender) (\(Format.seconds(row.signalSeconds)) signal)"
    }

    static func markdown(_ r: RunResults, plots: [String]) -> String {
        var out = ""
        func line(_ s: String = "") { out += s + "\n" }
        let m = r.machine
        line("# VoicePipe benchmark (\(r.settings.mode) run, \(r.startedAt))")
        line()
        line(cpuFeatures(m))
        line()
        line("## Machine and run")
        line()
        line("- CPU: \(m.cpuModel), \(m.onlineCPUs) online CPUs; SIMD flags: \(m.simdFlags.joined(separator: " "))")
        line("- Kernel: \(m.kernel); \(m.swiftVersion); build: \(m.buildConfiguration)")
        line("- Libraries: " + m.libraries.keys.sorted().map { "\($0): \(m.libraries[$0]!)" }.joined(separator: "; "))
        line("- Load average at start `\(m.loadAverageStart)`, at end `\(m.loadAverageEnd)`; CPU steal during the run \(Format.fixed(m.stealPercent, 1)) %; other processes kept on average \(Format.fixed(m.otherBusyCPUs, 2)) of the \(m.onlineCPUs) CPUs busy")
        let sections = r.sectionSeconds.keys.sorted().map { "\($0) \(Format.fixed(r.sectionSeconds[$0]!, 0)) s" }.joined(separator: ", ")
        line("- Run time \(Format.fixed(r.totalSeconds, 0)) s (\(sections))")
        line("- Method: single thread, CPU time of the thread (\(r.settings.clock)); every cell warmed up once (discarded), then \(r.settings.repetitions) timed repetitions interleaved round-robin across all cells of a section; a cell that needs less than \(Format.fixed(r.settings.minimumRepetitionSeconds * 1000, 0)) ms per pass repeats it so each repetition lasts at least that long. Figures are **median (min–max)**; the machine is shared and noisy, so compare ratios within one run.")
        if let filter = r.settings.filter { line("- Filter: only benchmarks whose name contains `\(filter)`") }
        line()

        summary(r, &out)
        if !r.throughput.isEmpty { throughput(r, &out) }
        if !r.allocations.isEmpty { allocations(r, &out) }
        if !r.kernels.isEmpty { kernels(r, &out) }
        if let e = r.endToEnd { endToEnd(e, &out) }
        if let q = r.quality, !q.rows.isEmpty { quality(q, &out) }
        if !r.jsonDecode.isEmpty { jsonDecode(r.jsonDecode, &out) }
        if !r.hostileJSON.isEmpty { hostileJSONGrowth(r.hostileJSON, &out) }
        if !r.echoStage.isEmpty { EchoStageBenchmark.table(r.echoStage, &out) }
        if !r.echoDrift.isEmpty { EchoDriftBenchmark.table(r.echoDrift, &out) }
        if !r.sessionScale.isEmpty { SessionScaleBenchmark.table(r.sessionScale, &out) }
        if !plots.isEmpty {
            line("## Plots")
            line()
            for plot in plots { line("- `\(plot)`") }
            line()
        }
        return out
    }

    /// VoicePipe's headline ratios, measured in this run.
    static func summary(_ r: RunResults, _ out: inout String) {
        func line(_ s: String = "") { out += s + "\n" }
        let ours = r.throughput.filter { $0.family == ContenderSpec.Family.voicepipe.rawValue && $0.chunkMilliseconds == 20 }
        guard !ours.isEmpty || r.endToEnd != nil else { return }
        line("## Summary: VoicePipe in this run")
        line()
        if !ours.isEmpty {
            line("| workload | VoicePipe | xRT (20 ms chunks) | vs soxr HQ (10 / 20 / 100 ms) | vs speex q5 | vs lsr SINC_FASTEST | allocations per chunk |")
            line("|---|---|---:|---:|---:|---:|---:|")
            for row in ours {
                func ratio(_ name: String, chunk: Int = 20) -> String {
                    guard let mine = r.throughput.first(where: { $0.workload == row.workload && $0.chunkMilliseconds == chunk && $0.contender == row.contender }),
                          let other = r.throughput.first(where: { $0.workload == row.workload && $0.chunkMilliseconds == chunk && $0.contender.hasPrefix(name) }) else { return "–" }
                    return Format.significant(mine.xRealTime.median / other.xRealTime.median) + "×"
                }
                // The paired ratio of the throughput tables (by round), not a ratio of medians.
                let soxr = Workload.chunkMilliseconds.map { chunk in
                    r.throughput.first { $0.workload == row.workload && $0.chunkMilliseconds == chunk && $0.contender == row.contender }?
                        .ratioToSoxrHQ.map { Format.significant($0) + "×" } ?? "–"
                }.joined(separator: " / ")
                let allocations = r.allocations.first { $0.workload == row.workload && $0.chunkMilliseconds == 20 && $0.contender == row.contender }
                let title = Workload.all.first { $0.id == row.workload }?.title ?? row.workload
                let kernels = row.contender.replacingOccurrences(of: "VoicePipe ", with: "")
                line("| \(title) | \(kernels) | \(Format.spread(row.xRealTime)) | \(soxr) | \(ratio("speex q5")) | \(ratio("lsr SINC_FASTEST")) | \(allocations.map { Format.trimmed($0.perChunk) } ?? "–") |")
            }
            line()
        }
        if let e = r.endToEnd {
            line("End to end (\(Format.seconds(e.audioSeconds)) WAV → `audio.chunk` JSON Lines): the `sox | base64` pipeline needs \(Format.significant(e.cpuRatio))× VoicePipe's CPU time and \(Format.significant(e.wallRatio))× its wall time.")
            line()
        }
    }

    static func throughput(_ r: RunResults, _ out: inout String) {
        func line(_ s: String = "") { out += s + "\n" }
        line("## 1. Streaming throughput")
        line()
        line("One instance per cell streams the signal chunk by chunk with state carried across chunks; creation is not timed. **xRT** = seconds of audio per CPU second, median (min–max). **Msa/s** = million input frames per CPU second at the median (20 ms chunks). **vs soxr HQ** and **vs memcpy** = speed over that cell's speed at the same workload and chunk size (10 / 20 / 100 ms), paired: the ratio of the two cells' repetitions in the same round, median over the rounds (each round runs a workload and chunk size's soxr HQ cell right before its VoicePipe cells, so a pair sees nearly the same machine). VoicePipe C1–C3 is the whole `CaptureConverter` fed raw bytes of the input format: downmix, resampling, frame assembly (frames as long as the chunk), Int16 conversion and a peak meter per frame. The peers get the same surrounding work as the C harness: input → mono Float32 → resample → Int16 (round, clip); P1: Int16 → Float32 → resample (VoicePipe: `PlaybackConverter(outputRate: 48000)`). The signal is \(Format.seconds(r.settings.throughputSignalSeconds)) of tones plus noise at about −18.5 dBFS RMS (peaks near −6.5 dBFS) unless the row says otherwise.")
        let wallRatios = r.throughput.map(\.wallOverCPU).sorted()
        if !wallRatios.isEmpty {
            line()
            line("Wall/CPU ratio of the median times over all \(wallRatios.count) cells: median \(Format.fixed(wallRatios[wallRatios.count / 2], 3)), max \(Format.fixed(wallRatios.last!, 3)) (1.0 = the thread was never descheduled while timed).")
        }
        line()
        for workload in Workload.all {
            let rows = r.throughput.filter { $0.workload == workload.id }
            guard !rows.isEmpty else { continue }
            line("### \(workload.title)")
            line()
            line("| contender | 10 ms: xRT | 20 ms: xRT | 100 ms: xRT | Msa/s (20 ms) | vs soxr HQ | vs memcpy |")
            line("|---|---:|---:|---:|---:|---:|---:|")
            var seen: [String] = []
            for row in rows where !seen.contains(row.contender) {
                seen.append(row.contender)
                let cells = Workload.chunkMilliseconds.map { ms in rows.first { $0.contender == row.contender && $0.chunkMilliseconds == ms } }
                let xrt = cells.map { $0.map { Format.spread($0.xRealTime) } ?? "–" }
                let msa = cells[1].map { Format.significant($0.megaFramesPerSecond) } ?? "–"
                let ratio = { (k: KeyPath<ThroughputRow, Double?>) in cells.map { $0.flatMap { $0[keyPath: k] }.map(Format.significant) ?? "–" }.joined(separator: " / ") }
                let label = rowLabel(row, fullSeconds: r.settings.throughputSignalSeconds)
                line("| \(label) | \(xrt[0]) | \(xrt[1]) | \(xrt[2]) | \(msa) | \(row.family == "memcpy" ? "–" : ratio(\.ratioToSoxrHQ)) | \(ratio(\.ratioToMemcpy)) |")
            }
            line()
        }
        arithmetic(r, &out)
    }

    /// VoicePipe's cells as multiply-adds per second against the core's measured FMA peak.
    static func arithmetic(_ r: RunResults, _ out: inout String) {
        func line(_ s: String = "") { out += s + "\n" }
        guard let peak = r.fmaPeak, !r.arithmetic.isEmpty else { return }
        func rate(_ value: Double?) -> String { value.map { Format.significant($0 / 1e9) + " G" } ?? "–" }
        func folded(_ value: Double?) -> String {
            guard let value else { return "–" }
            return rate(value) + " lane-FMA/s" + (peak.peak.map { " (" + Format.fixed(value / $0 * 100, 0) + " % of the peak)" } ?? "")
        }
        line("### Arithmetic against the core's FMA peak")
        line()
        line("**MACs** = filter taps applied per output frame by the built-in resampler's chain for the workload's rates; **executed** = lane multiply-adds its kernels run per output frame (a symmetric stage adds the two samples that share a tap, then one FMA; polyphase rows are padded to whole vectors). Each cell: executed lane-FMAs per CPU second at the cell's median speed, over the whole converter's time, and its share of the peak. **Peak** measured in this run with twelve independent FMA chains (fastest of seven): AVX2 \(rate(peak.avx2)) lane-FMA/s, AVX-512 \(rate(peak.avx512)) lane-FMA/s; the share is of the larger. **Folded-tap ceiling**: the same twelve chains with each FMA fed by one load from L1 and one add, the cheapest inner loop a folded symmetric filter can have: AVX2 \(folded(peak.foldedAVX2)), AVX-512 \(folded(peak.foldedAVX512)).")
        line()
        line("| workload | kernels | MACs / output | executed / output | 10 ms | 20 ms | 100 ms |")
        line("|---|---|---:|---:|---:|---:|---:|")
        for workload in Workload.all {
            let rows = r.throughput.filter { $0.workload == workload.id && r.arithmetic[$0.name] != nil }
            var seen: [String] = []
            for row in rows where !seen.contains(row.contender) {
                seen.append(row.contender)
                let cells = Workload.chunkMilliseconds.map { ms in rows.first { $0.contender == row.contender && $0.chunkMilliseconds == ms }.flatMap { r.arithmetic[$0.name] } }
                guard let any = cells.compactMap({ $0 }).first else { continue }
                let shown = cells.map { cell in
                    cell.map { "\(rate($0.laneFMAsPerSecond)) (\($0.fractionOfPeak.map { Format.fixed($0 * 100, 0) } ?? "–") %)" } ?? "–"
                }
                line("| \(workload.id) | \(row.contender.replacingOccurrences(of: "VoicePipe ", with: "")) | \(Format.trimmed(any.multiplyAddsPerOutput)) | \(Format.trimmed(any.executedPerOutput)) | \(shown.joined(separator: " | ")) |")
            }
        }
        line()
        resamplerAlone(r, peak: peak, &out)
    }

    /// The built-in resampler by itself beside the cells it serves.
    static func resamplerAlone(_ r: RunResults, peak: FMAPeak, _ out: inout String) {
        func line(_ s: String = "") { out += s + "\n" }
        guard !r.resamplerAlone.isEmpty else { return }
        line("### The resampler alone, cache-resident")
        line()
        line("`BuiltInResampler.process` by itself: mono Float32 in and out, a 1 s signal (the same program material, first channel) that stays in cache, streamed in the cell's chunks; \(r.settings.repetitions) repetitions of at least \(Int((r.settings.minimumRepetitionSeconds * 1000).rounded())) ms of CPU. Each cell: xRT at the median, executed lane-FMAs per CPU second and share of the peak, and **of cell** = the throughput cell's median speed over this one's: the share of the whole conversion's time the filters would take at this speed. The rest of the cell's time is the converter's other work (downmix, frames, Int16 conversion and peaks) and, for the 60 s signal, its input's trip from main memory.")
        line()
        line("| workload | kernels | 10 ms | 20 ms | 100 ms |")
        line("|---|---|---:|---:|---:|")
        for workload in Workload.all {
            let rows = r.resamplerAlone.filter { $0.workload == workload.id }
            var seen: [String] = []
            for row in rows where !seen.contains(row.contender) {
                seen.append(row.contender)
                let cells = Workload.chunkMilliseconds.map { ms -> String in
                    guard let cell = rows.first(where: { $0.contender == row.contender && $0.chunkMilliseconds == ms }) else { return "–" }
                    let share = cell.fractionOfPeak.map { Format.fixed($0 * 100, 0) + " %" } ?? "–"
                    let ofCell = cell.shareOfCell.map { ", of cell " + Format.fixed($0 * 100, 0) + " %" } ?? ""
                    return "\(Format.fixed(cell.xRealTime.median, 0)) xRT: \(Format.significant(cell.laneFMAsPerSecond / 1e9)) G (\(share))\(ofCell)"
                }
                line("| \(workload.id) | \(row.contender.replacingOccurrences(of: "VoicePipe ", with: "")) | \(cells.joined(separator: " | ")) |")
            }
        }
        line()
    }

    static func allocations(_ r: RunResults, _ out: inout String) {
        func line(_ s: String = "") { out += s + "\n" }
        line("### Heap allocations per chunk in steady state")
        line()
        line("Counted on the benchmark thread by the tests' own allocation counter (Sources/CAllocationCounter, interposed malloc/calloc/realloc/memalign) over up to \(r.allocations.map(\.chunks).max() ?? 0) chunks of each cell's stream, after its timed repetitions; shown as 10 / 20 / 100 ms chunks.")
        line()
        let workloads = Workload.all.filter { w in r.allocations.contains { $0.workload == w.id } }
        line("| contender | " + workloads.map(\.id).joined(separator: " | ") + " |")
        line("|---|" + workloads.map { _ in "---:|" }.joined())
        var seen: [String] = []
        for row in r.allocations where !seen.contains(row.contender) {
            seen.append(row.contender)
            let cells = workloads.map { w in
                Workload.chunkMilliseconds.map { ms in r.allocations.first { $0.contender == row.contender && $0.workload == w.id && $0.chunkMilliseconds == ms }.map { Format.trimmed($0.perChunk) } ?? "–" }.joined(separator: " / ")
            }
            line("| \(row.contender) | " + cells.joined(separator: " | ") + " |")
        }
        line()
    }

    static func kernels(_ r: RunResults, _ out: inout String) {
        func line(_ s: String = "") { out += s + "\n" }
        line("## 2. Kernels")
        line()
        line("Each operation through VoicePipe's public API, repeated on the same data: one chunk (cache-hot), the signal length, and a buffer ten times as long (past the last-level cache, so main memory sets the pace). **GB/s** (10⁹ B/s): for sample conversion and the peak meter, bytes read plus bytes written (Int16 ↔ Float32 moves 6 bytes a sample); for base64, the binary payload (decoded bytes both ways); for `audio.chunk`, bytes of JSON. **vs ref** = median GB/s over the reference row's: the conversions' ceiling is a memcpy moving the same traffic (3 bytes a sample read, 3 written), else Foundation. The `PlaybackConverter` rows deliver 1024-frame blocks from one reused buffer, so their output stays in cache and they can beat the ceiling on long buffers; the peak meter only reads. **allocs/op** = heap allocations per operation after warm-up.")
        line()
        line("| kernel | implementation | data | GB/s median (min–max) | M samples/s | xRT | vs ref | allocs/op |")
        line("|---|---|---|---:|---:|---:|---:|---:|")
        for k in r.kernels {
            let ref = k.ratioToReference.map { "\(Format.significant($0))× \(referenceLabel(k.reference!))" } ?? "–"
            line("| \(k.kernel) | \(k.implementation) | \(k.data) | \(Format.spread(k.gigabytesPerSecond)) | \(k.megaSamplesPerSecond.map(Format.significant) ?? "–") | \(k.xRealTime.map(Format.significant) ?? "–") | \(ref) | \(Format.trimmed(k.allocationsPerOperation)) |")
        }
        line()
    }

    static func referenceLabel(_ name: String) -> String {
        if name.contains("memcpy") { return "memcpy" }
        if name.contains("foundation") { return "Foundation" }
        return name
    }

    static func endToEnd(_ e: EndToEndResult, _ out: inout String) {
        func line(_ s: String = "") { out += s + "\n" }
        line("## 3. End to end: \(Format.seconds(e.audioSeconds)) 48 kHz stereo WAV → 16 kHz `audio.chunk` JSON Lines")
        line()
        line("Input: \(e.inputDescription), \(Format.bytes(e.inputBytes)), read from the page cache. \(e.repetitions) repetitions, the two sides alternating, after one warm-up each. VoicePipe wrote \(e.voicepipeMessages) messages (\(Format.bytes(e.voicepipeOutputBytes))). sox's `rate` effect defaults to its high quality (soxr HQ) and it dithers when reducing to 16 bits; the shell pipeline runs sox and base64 as two processes in parallel.")
        line()
        line("| pipeline | CPU s median (min–max) | wall s median (min–max) | xRT by CPU | xRT by wall |")
        line("|---|---:|---:|---:|---:|")
        for (name, side) in [("VoicePipe: " + e.voicepipe.description, e.voicepipe), ("shell: `\(e.shellCommand)`", e.shell)] {
            line("| \(name) | \(Format.spread(side.cpuSeconds)) | \(Format.spread(side.wallSeconds)) | \(Format.significant(side.xRealTimeCPU.median)) | \(Format.significant(side.xRealTimeWall.median)) |")
        }
        line()
        line("**Ratio (shell / VoicePipe, medians): CPU \(Format.significant(e.cpuRatio))×, wall \(Format.significant(e.wallRatio))×** (above 1: VoicePipe is cheaper / sooner).")
        line()
    }

    static func quality(_ q: QualityResults, _ out: inout String) {
        func line(_ s: String = "") { out += s + "\n" }
        func find(_ row: QualityRow, _ id: String) -> StreamQuality? { row.workloads.first { $0.workload == id } }
        line("## 4. Quality")
        line()
        line("Every resampler through the same streaming path as its throughput cell (VoicePipe: `CaptureConverter` / `PlaybackConverter`; its Float32 figures come from the same converter given a `BuiltInResampler` wrapped in a recording pass-through, whose Int16 output is checked identical to the plain converter's). Analysis windows: \(q.analysisWindow). **SINAD**: least-squares fit of DC + cos + sin at 997 Hz removed; SINAD = fitted tone power / residual power. Capture SINAD is on the Int16 output (the Int16 rounding floor of a perfect resampler is about 97 dB for C1); **F32** is the same fit before rounding.")
        line()
        let c1 = q.rows.filter { find($0, "C1") != nil }
        if !c1.isEmpty {
            let freqs = find(c1[0], "C1")!.outOfBand.map(\.frequency)
            line("### C1 (48 kHz stereo Float32 → 16 kHz): SINAD and out-of-band tones")
            line()
            line("Tone columns: Float32 output RMS for a −1 dBFS input tone, dB relative to the input tone's RMS, power-averaged over sine and cosine phase (an ideal resampler gives −∞; 0 dB = passed unattenuated as an alias).")
            line()
            line("| contender | SINAD 997 Hz (dB) | SINAD F32 (dB) | " + freqs.map { "\(Format.trimmed($0 / 1000)) kHz" }.joined(separator: " | ") + " |")
            line("|---|---:|---:|" + freqs.map { _ in "---:|" }.joined())
            for row in c1 {
                let s = find(row, "C1")!
                line("| \(row.contender) | \(Format.dB(s.sinadDB)) | \(Format.dB(s.sinadFloatDB ?? .nan)) | " + s.outOfBand.map { Format.dB($0.dB) }.joined(separator: " | ") + " |")
            }
            line()
            let pass = find(c1[0], "C1")!.passband.map(\.frequency)
            line("### C1 passband gain (dB), −6 dBFS tones, fitted output amplitude over input amplitude (Float32)")
            line()
            line("| contender | " + pass.map { $0 < 1000 ? "\(Int($0)) Hz" : "\(Format.trimmed($0 / 1000)) kHz" }.joined(separator: " | ") + " |")
            line("|---|" + pass.map { _ in "---:|" }.joined())
            for row in c1 {
                line("| \(row.contender) | " + find(row, "C1")!.passband.map { Format.dB($0.dB, 3) }.joined(separator: " | ") + " |")
            }
            line()
        }
        line("### C2, C3, P1: SINAD and out-of-band")
        line()
        line("C2 worst alias: highest Float32 output level (dB re input tone) over −1 dBFS tones at 8.5–20 kHz, frequency in brackets; C2's input is Int16, so its rounding noise (which lies in the passband and passes through) floors this column near −100 dB for every good filter. C3/P1 image: level of the 997 Hz tone's image (7003 Hz at 16 kHz; 23003 Hz at 48 kHz) relative to the tone, Float32 output. P1 SINAD is on its Float32 output (its Int16 input carries Int16 rounding noise).")
        line()
        line("| contender | C2 SINAD (dB) | C2 worst alias (dB) | C3 SINAD (dB) | C3 image (dBc) | P1 SINAD (dB) | P1 image (dBc) |")
        line("|---|---:|---:|---:|---:|---:|---:|")
        for row in q.rows {
            let c2 = find(row, "C2"), c3 = find(row, "C3"), p1 = find(row, "P1")
            let worst = c2?.outOfBand.max { $0.dB < $1.dB }
            let worstText = worst.map { "\(Format.dB($0.dB)) (\(Format.trimmed($0.frequency / 1000))k)" } ?? "–"
            line("| \(row.contender) | \(c2.map { Format.dB($0.sinadDB) } ?? "–") | \(worstText) | \(c3.map { Format.dB($0.sinadDB) } ?? "–") | \(c3?.outOfBand.first.map { Format.dB($0.dB) } ?? "–") | \(p1.map { Format.dB($0.sinadDB) } ?? "–") | \(p1?.outOfBand.first.map { Format.dB($0.dB) } ?? "–") |")
        }
        line()
        line("### Latency and chunking invariance")
        line()
        line("**delay** = position of a band-limited pulse (Blackman-windowed sinc, 2 kHz, ±4 ms) in the output minus its ideal position, in output samples: how late the signal appears *in* the stream. **holdback** = ideal output count minus the count the resampling stage has produced, after each 20 ms chunk past the first 0.5 s (min..max; for VoicePipe capture this is `CaptureConverter.outputSamples`, before frame assembly, which holds back up to one frame more by design). **latency** = delay + holdback max, in ms. **chunks** = largest difference in Int16 LSB between the outputs streamed in 10 or 100 ms chunks and in 20 ms chunks (P1: Float32 × 32768); 0 = output does not depend on chunking.")
        line()
        let ids = ["C1", "C2", "C3", "P1"].filter { id in q.rows.contains { find($0, id) != nil } }
        line("| contender | " + ids.map { "\($0) delay | \($0) holdback | \($0) latency (ms)" }.joined(separator: " | ") + " | chunks " + ids.joined(separator: "/") + " |")
        line("|---|" + ids.map { _ in "---:|---:|---:|" }.joined() + "---:|")
        for row in q.rows {
            let cells = ids.map { id -> String in
                guard let s = find(row, id) else { return "– | – | –" }
                return "\(Format.fixed(s.delaySamples, 2)) | \(Format.fixed(s.holdbackMin, 1))..\(Format.fixed(s.holdbackMax, 1)) | \(Format.fixed(s.latencyMilliseconds, 2))"
            }
            let chunks = ids.map { id in find(row, id).map { Format.trimmed($0.chunkInvarianceLSB) } ?? "–" }.joined(separator: "/")
            line("| \(row.contender) | " + cells.joined(separator: " | ") + " | \(chunks) |")
        }
        line()
        let taps = q.rows.flatMap { $0.workloads.compactMap(\.tapMatchesPlainPipeline) }
        if !taps.isEmpty {
            line("VoicePipe's recording pass-through left the Int16 output unchanged: \(taps.allSatisfy { $0 } ? "yes" : "**no**") (checked on C1–C3).")
            line()
        }
    }
}
