import Foundation

/// Everything one run measured: every number of the printed tables plus the machine.
struct RunResults: Codable {
    struct Settings: Codable {
        var mode: String
        var filter: String?
        var repetitions: Int
        var minimumRepetitionSeconds: Double
        var throughputSignalSeconds: Double
        var chunkMilliseconds: [Int]
        var endToEndSeconds: Int
        var responseSweepStepHz: Double
        var clock: String
    }

    var tool = "voicepipe-bench"
    var startedAt: String
    var settings: Settings
    var machine: MachineInfo
    var throughput: [ThroughputRow] = []
    /// The core's measured multiply-add peak, and VoicePipe's throughput cells set against it.
    var fmaPeak: FMAPeak?
    var arithmetic: [String: CellArithmetic] = [:]
    /// The built-in resampler alone on a cache-resident signal, beside each VoicePipe cell.
    var resamplerAlone: [ResamplerAloneRow] = []
    var allocations: [AllocationRow] = []
    var kernels: [KernelRow] = []
    var endToEnd: EndToEndResult?
    var quality: QualityResults?
    var jsonDecode: [JSONDecodeRow] = []
    var hostileJSON: [HostileJSONGrowthRow] = []
    /// The capture path's echo stage with each backend.
    var echoStage: [EchoStageRow] = []
    /// The echo stage over ten minutes of clock drift.
    var echoDrift: [EchoDriftRow] = []
    var sessionScale: [SessionScaleRow] = []
    /// Wall seconds of each section and of the whole run.
    var sectionSeconds: [String: Double] = [:]
    var totalSeconds: Double = 0
    /// The black hole's final value (printed so the measured work cannot be optimised away).
    var checksum: String = ""
}

enum JSONOutput {
    static func write(_ results: RunResults, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let data = try encoder.encode(results)
        try data.write(to: URL(fileURLWithPath: path))
    }

    static func timestamp() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date())
    }
}
