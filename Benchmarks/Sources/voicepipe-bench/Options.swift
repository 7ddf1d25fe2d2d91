import Glibc

/// Command-line options: parse → validate → run; usage errors exit 64.
struct Options {
    var quick = false
    var jsonPath: String
    var filter: String?
    /// Timed repetitions per cell when given (--repetitions); else 5, or 3 with --quick.
    var repetitionCount: Int?

    static let usage = """
    USAGE: voicepipe-bench [--quick] [--json FILE] [--filter NAME] [--repetitions N]

    Measures VoicePipe's public API (capture and playback converters, kernels, base64, audio.chunk
    JSON, a file-to-JSON-Lines pipeline) against libsamplerate, soxr, speexdsp, Foundation, memcpy
    and sox, single-threaded in CPU time, and its resampling quality. Prints Markdown tables to
    stdout (progress goes to stderr) and writes the JSON, a Markdown copy and SVG plots.

    OPTIONS:
      --quick          Fast smoke run: 3 s signals, 3 repetitions, 10 ms minimum repetitions,
                       a 20 s end-to-end file, a coarse response sweep (well under a minute).
      --json FILE      Where the JSON goes (default: Benchmarks/results/latest.json); the SVGs and
                       the Markdown copy are written next to it, named after it.
      --filter NAME    Only benchmarks whose name contains NAME (case-insensitive), e.g. C1,
                       throughput/C3, soxr HQ, kernel/base64, e2e, quality, response, json-decode,
                       json-hostile.
      --repetitions N  Timed repetitions of every cell, 3 … 101 (default 5; 3 with --quick). On a
                       shared machine whose speed swings, more repetitions steady the medians and
                       the ratios; the run takes proportionally longer.
      -h, --help       Show this help.

    Benchmark names: throughput/<C1|C2|C3|P1>/<10|20|100>ms/<contender>, kernel/<kernel>/<variant>,
    e2e/voicepipe-vs-sox, quality/<workload>/<contender>, response/C1/<contender>,
    json-decode/<string-line|60000-unknown-fields>,
    json-hostile/<keys|array|escapes|fraction-digits|integer-digits|nesting> (each at n and 10n),
    echo/<webrtc|webrtc+ns|speex|speex+res|speex+res+ns|pass-through>, echo/drift (ten minutes of
    clock drift through the echo stage, measured, not timed), sessions/<N>-<idle|speech>[-loop]
    (N real-time sessions in one process against the embedded runtime, a thread per session or
    all on one session loop: frame lateness, CPU per session-second, memory per session; each
    row takes its audio's length, 20 s, or 6 s with --quick).
    Install the peers first: Benchmarks/scripts/install-peers.
    """

    /// The default JSON path: Benchmarks/results/latest.json, found from this source file's location.
    static var defaultJSONPath: String {
        let source = #filePath  // …/Benchmarks/Sources/voicepipe-bench/Options.swift
        var parts = source.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count > 3 { parts.removeLast(3) }
        return parts.joined(separator: "/") + "/results/latest.json"
    }

    enum ParseResult {
        case run(Options)
        case help
        case usageError(String)
    }

    static func parse(_ arguments: [String]) -> ParseResult {
        var options = Options(jsonPath: defaultJSONPath)
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            switch argument {
            case "-h", "--help":
                return .help
            case "--quick":
                options.quick = true
            case "--json", "--filter":
                guard i + 1 < arguments.count, !arguments[i + 1].isEmpty else { return .usageError("\(argument) needs a value") }
                if argument == "--json" { options.jsonPath = arguments[i + 1] } else { options.filter = arguments[i + 1] }
                i += 1
            case "--repetitions":
                guard i + 1 < arguments.count, let count = Int(arguments[i + 1]), (3...101).contains(count) else {
                    return .usageError("--repetitions needs a whole number from 3 to 101")
                }
                options.repetitionCount = count
                i += 1
            default:
                return .usageError("unknown argument '\(argument)'")
            }
            i += 1
        }
        return .run(options)
    }

    /// Whether a benchmark named `name` runs.
    func selects(_ name: String) -> Bool {
        guard let filter else { return true }
        return name.lowercased().contains(filter.lowercased())
    }

    // Settings per mode.
    var throughputSeconds: Double { quick ? 3 : 60 }
    var repetitions: Int { repetitionCount ?? (quick ? 3 : 5) }
    var minimumRepetitionSeconds: Double { quick ? 0.01 : 0.05 }
    var endToEndSeconds: Int { quick ? 20 : 600 }
    var sweepStep: Double { quick ? 1_000 : 125 }
    var allocationChunks: Int { quick ? 100 : 500 }
    var sessionSeconds: Double { quick ? 6 : 20 }
}
