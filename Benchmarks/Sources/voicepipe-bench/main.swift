import Foundation
import VoicePipeCore
import VoicePipeIO

// voicepipe-bench: see Options.usage and BENCHMARKS.md at the repository root.

let options: Options
switch Options.parse(Array(CommandLine.arguments.dropFirst())) {
case .help:
    print(Options.usage)
    exit(0)
case .usageError(let message):
    fputs("voicepipe-bench: \(message)\n\n\(Options.usage)\n", stderr)
    exit(64)
case .run(let parsed):
    options = parsed
}

#if DEBUG
fputs("voicepipe-bench: this is a debug build; its figures mean nothing. Use: swift run -c release voicepipe-bench\n", stderr)
#endif

// Converters default to the fastest kernel set this CPU runs (DSPKernels.best; the end-to-end run
// uses it); the throughput tables show both kernel sets side by side.
let progress = Progress()
var machine = Machine.describe()
print(Report.cpuFeatures(machine))
print()
fflush(stdout)

let monitor = LoadMonitor()
let runStart = Clock.wall()
let cacheDirectory = (ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") + "/voicepipe-bench"
try? FileManager.default.createDirectory(atPath: cacheDirectory, withIntermediateDirectories: true)

var results = RunResults(
    startedAt: JSONOutput.timestamp(),
    settings: .init(mode: options.quick ? "quick" : "full", filter: options.filter, repetitions: options.repetitions,
                    minimumRepetitionSeconds: options.minimumRepetitionSeconds, throughputSignalSeconds: options.throughputSeconds,
                    chunkMilliseconds: Workload.chunkMilliseconds, endToEndSeconds: options.endToEndSeconds,
                    responseSweepStepHz: options.sweepStep, clock: "CLOCK_THREAD_CPUTIME_ID; wall: CLOCK_MONOTONIC"),
    machine: machine)
let schedule = RoundRobin(repetitions: options.repetitions, minimumRepetitionSeconds: options.minimumRepetitionSeconds)

func section(_ name: String, _ body: () -> Void) {
    let start = Clock.wall()
    body()
    results.sectionSeconds[name] = Clock.wall() - start
}

section("throughput") {
    let benchmark = ThroughputBenchmark(signalSeconds: options.throughputSeconds, filter: options.selects)
    guard !benchmark.cells.isEmpty else { return }
    benchmark.run(schedule, progress: progress)
    results.throughput = benchmark.rows()
    progress.say("arithmetic: measuring the FMA peak")
    let peak = FMAPeak.measure(machine)
    results.fmaPeak = peak
    results.arithmetic = CellArithmetic.of(results.throughput, peak: peak)
    progress.say("arithmetic: the resampler alone, cache-resident")
    results.resamplerAlone = ResamplerAloneRow.measure(cells: results.throughput, peak: peak, repetitions: options.repetitions,
                                                       minimumSeconds: options.minimumRepetitionSeconds, filter: options.selects)
    progress.say("allocations: counting per chunk")
    results.allocations = benchmark.allocations(maxChunks: options.allocationChunks)
}

section("kernels") {
    let benchmark = KernelBenchmark(signalSeconds: options.throughputSeconds, filter: options.selects)
    guard !benchmark.cases.isEmpty else { return }
    benchmark.run(schedule, progress: progress)
    results.kernels = benchmark.rows()
}

section("end to end") {
    guard options.selects("e2e/voicepipe-vs-sox") else { return }
    results.endToEnd = EndToEndBenchmark.run(audioSeconds: options.endToEndSeconds, repetitions: options.repetitions,
                                             cacheDirectory: cacheDirectory, progress: progress)
}

section("quality") {
    let quality = QualityBenchmark(sweepStep: options.sweepStep, filter: options.selects).run(progress: progress)
    if !quality.rows.isEmpty || !quality.response.isEmpty { results.quality = quality }
}

section("json decode") {
    let benchmark = JSONDecodeBenchmark(filter: options.selects)
    guard !benchmark.cases.isEmpty else { return }
    benchmark.run(schedule, progress: progress)
    results.jsonDecode = benchmark.rows()
}

section("hostile json") {
    let benchmark = HostileJSONGrowthBenchmark(filter: options.selects)
    guard !benchmark.shapes.isEmpty else { return }
    benchmark.run(schedule, progress: progress)
    results.hostileJSON = benchmark.rows()
}

section("echo stage") {
    let benchmark = EchoStageBenchmark(filter: options.selects)
    guard !benchmark.cases.isEmpty else { return }
    benchmark.run(schedule, progress: progress)
    results.echoStage = benchmark.rows()
}

section("echo drift") {
    guard options.selects(EchoDriftBenchmark.name) else { return }
    results.echoDrift = EchoDriftBenchmark.rows(progress: progress)
}

section("sessions") {
    results.sessionScale = SessionScaleBenchmark.rows(seconds: options.sessionSeconds, filter: options.selects, progress: progress)
}

if results.throughput.isEmpty && results.kernels.isEmpty && results.endToEnd == nil && results.quality == nil && results.jsonDecode.isEmpty
    && results.hostileJSON.isEmpty && results.echoStage.isEmpty && results.echoDrift.isEmpty && results.sessionScale.isEmpty {
    fputs("voicepipe-bench: no benchmark name contains '\(options.filter ?? "")' (see --help for the names)\n", stderr)
    exit(64)
}

monitor.finish(into: &machine)
results.machine = machine
results.totalSeconds = Clock.wall() - runStart
results.checksum = String(BlackHole.sink, radix: 16)

// Outputs: JSON, SVGs and a Markdown copy next to it; the Markdown on stdout.
let jsonURL = URL(fileURLWithPath: options.jsonPath)
let directory = jsonURL.deletingLastPathComponent().path
let prefix = jsonURL.deletingPathExtension().lastPathComponent
try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
let plots = Plots.write(results, directory: directory, prefix: prefix)
let markdown = Report.markdown(results, plots: plots)
do {
    try JSONOutput.write(results, to: options.jsonPath)
    try markdown.write(toFile: "\(directory)/\(prefix).md", atomically: true, encoding: .utf8)
} catch {
    fputs("voicepipe-bench: cannot write results to \(options.jsonPath): \(error)\n", stderr)
    exit(73)
}
print(markdown)
progress.say("done in \(Format.fixed(results.totalSeconds, 0)) s; wrote \(options.jsonPath), \(prefix).md and \(plots.count) plots in \(directory)")
