import CBenchSampleRate
import CSoxr
import Foundation
import VoicePipeCore
import VoicePipeIO

/// What the run ran on, and how busy the machine was.
struct MachineInfo: Codable {
    var cpuModel: String
    var onlineCPUs: Int
    /// The SIMD-relevant flags of /proc/cpuinfo that are present.
    var simdFlags: [String]
    var avx2: Bool
    var fma: Bool
    var avx512f: Bool
    var kernel: String
    var swiftVersion: String
    var buildConfiguration: String
    /// VoicePipe's resampler kernels chosen at run time for this CPU.
    var voicepipeKernels: String = DSPKernels.best.name
    /// How that set was chosen: the calibration's probe times and cost.
    var voicepipeKernelCalibration: String = DSPKernels.calibration.summary
    var libraries: [String: String]
    var loadAverageStart: String
    var loadAverageEnd: String = ""
    /// CPU steal over the run, percent of all CPU time (/proc/stat).
    var stealPercent: Double = 0
    /// CPUs other processes kept busy on average during the run (/proc/stat busy time minus this
    /// process's own CPU time, over wall time).
    var otherBusyCPUs: Double = 0
}

/// Reads /proc and the libraries' version calls.
enum Machine {
    static let simdFlagNames = ["sse4_2", "avx", "avx2", "fma", "f16c", "bmi2", "avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16"]

    static func describe() -> MachineInfo {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let lines = cpuinfo.split(separator: "\n")
        let model = lines.first { $0.hasPrefix("model name") }.map { String($0.split(separator: ":", maxSplits: 1)[1]).trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let flags = Set(lines.first { $0.hasPrefix("flags") }.map { $0.split(separator: ":", maxSplits: 1)[1].split(separator: " ").map(String.init) } ?? [])
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return MachineInfo(
            cpuModel: model, onlineCPUs: sysconf(Int32(_SC_NPROCESSORS_ONLN)),
            simdFlags: simdFlagNames.filter(flags.contains), avx2: flags.contains("avx2"), fma: flags.contains("fma"), avx512f: flags.contains("avx512f"),
            kernel: "Linux \(release)", swiftVersion: swiftVersion(), buildConfiguration: buildConfiguration,
            libraries: [
                "libsamplerate": String(cString: src_get_version()),
                "libsoxr": String(cString: soxr_version()),
                "speexdsp": command("pkg-config", ["--modversion", "speexdsp"]).map { "speexdsp \($0)" } ?? "unknown",
                "libsndfile": LibraryVersions.sndfile,
                "sox": command("sox", ["--version"]).map { $0.replacingOccurrences(of: "sox:", with: "").trimmingCharacters(in: .whitespaces) } ?? "not installed",
            ],
            loadAverageStart: loadAverage())
    }

    static var buildConfiguration: String {
        #if DEBUG
        "debug (figures are meaningless; use -c release)"
        #else
        "release (swift run -c release), default target CPU"
        #endif
    }

    static func loadAverage() -> String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "unknown").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The aggregate `cpu` line of /proc/stat, in clock ticks: (busy, steal, total).
    static func cpuTicks() -> (busy: Double, steal: Double, total: Double) {
        let stat = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)) ?? ""
        guard let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return (0, 0, 0) }
        let v = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard v.count >= 8 else { return (0, 0, 0) }
        // user nice system idle iowait irq softirq steal
        let busy = v[0] + v[1] + v[2] + v[5] + v[6]
        return (busy, v[7], v[0..<8].reduce(0, +))
    }

    /// CPU seconds this process and its reaped children used so far.
    static func ownCPUSeconds() -> Double {
        var me = rusage(), children = rusage()
        getrusage(RUSAGE_SELF.rawValue, &me)
        getrusage(RUSAGE_CHILDREN.rawValue, &children)
        func s(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) * 1e-6 }
        return s(me.ru_utime) + s(me.ru_stime) + s(children.ru_utime) + s(children.ru_stime)
    }

    static func swiftVersion() -> String {
        guard let out = command("swift", ["--version"]) else { return "unknown" }
        return out.split(separator: "\n").first.map(String.init) ?? out
    }

    /// Runs a command found on PATH and returns its first output line(s), trimmed; nil if it fails.
    static func command(_ name: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [name] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Tracks steal and other processes' load between two points of the run.
struct LoadMonitor {
    let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
    let startTicks = Machine.cpuTicks()
    let startWall = Clock.wall()
    let startOwn = Machine.ownCPUSeconds()

    func finish(into info: inout MachineInfo) {
        let end = Machine.cpuTicks()
        let wall = Clock.wall() - startWall
        let total = end.total - startTicks.total
        info.stealPercent = total > 0 ? 100 * (end.steal - startTicks.steal) / total : 0
        let busy = (end.busy - startTicks.busy) / ticksPerSecond
        let own = Machine.ownCPUSeconds() - startOwn
        info.otherBusyCPUs = wall > 0 ? max(0, busy - own) / wall : 0
        info.loadAverageEnd = Machine.loadAverage()
    }
}
