import VoicePipeTestSupport
import Foundation
import VoicePipeSession

/// One row of the JSON decode table: one message decoded by `WireCodec.decode`.
struct JSONDecodeRow: Codable {
    var name: String
    var message: String
    var bytes: Int
    var passesPerRepetition: Int
    var repetitions: Int
    /// CPU seconds per decode: median (min–max).
    var cpuSecondsPerDecode: Spread
    /// Bytes of JSON per CPU second (10⁶), median (min–max).
    var megabytesPerSecond: Spread
    /// The row this one is compared with (the string line of the same size).
    var reference: String?
    /// Median time over the reference's median time: how many times as long this message takes.
    var timeRatioToReference: Double?
    var allocationsPerDecode: Double
    var wallOverCPU: Double
}

/// Hostile input for the general JSON path: a 649 KB `transcript` line carrying 60 000 unknown
/// fields, against a line of the same size whose bulk is one string, decoded side by side.
/// Decoding work that grows faster than the line (a linear key lookup per field, say) shows up as
/// a ratio far above a few.
final class JSONDecodeBenchmark {
    struct Case {
        let name: String
        let message: String
        let text: String
        let reference: String?
        let timed: TimedCell
    }

    static let stringName = "json-decode/string-line"
    static let fieldsName = "json-decode/60000-unknown-fields"

    private(set) var cases: [Case] = []

    init(filter: (String) -> Bool) {
        guard filter(Self.stringName) || filter(Self.fieldsName) else { return }
        var fields = #"{"type":"transcript","role":"user","text":"hi","final":true"#
        for k in 0..<60_000 { fields += #","f\#(k)":0"# }
        fields += "}"
        let frame = #"{"type":"transcript","role":"user","text":"","final":true}"#
        let string = #"{"type":"transcript","role":"user","text":""# + String(repeating: "x", count: fields.utf8.count - frame.utf8.count) + #"","final":true}"#
        // Checked once, outside timing: both decode, the fields all land in the extras.
        guard (try? WireCodec.decode(fields))?.extras.count == 60_000, (try? WireCodec.decode(string)) != nil else {
            fputs("voicepipe-bench: the JSON decode messages do not decode as expected\n", stderr)
            exit(70)
        }
        let all: [(String, String, String, String?)] = [
            (Self.stringName, "transcript whose text is one long string", string, nil),
            (Self.fieldsName, "transcript with 60 000 unknown fields (\"f0\":0 …)", fields, Self.stringName),
        ]
        cases = all.filter { filter($0.0) }.map { name, message, text, reference in
            Case(name: name, message: message, text: text, reference: reference,
                 timed: TimedCell(name: name) { Self.decode(text) })
        }
    }

    private static func decode(_ text: String) {
        BlackHole.consume((try? WireCodec.decode(text))?.extras.count ?? -1)
    }

    func run(_ schedule: RoundRobin, progress: Progress) {
        schedule.run(cases.map(\.timed), label: "json decode", progress: progress)
    }

    func rows() -> [JSONDecodeRow] {
        var rows: [JSONDecodeRow] = cases.map { kase in
            let cell = kase.timed
            let bytes = kase.text.utf8.count
            let allocations = countAllocations { Self.decode(kase.text) }
            return JSONDecodeRow(
                name: kase.name, message: kase.message, bytes: bytes,
                passesPerRepetition: cell.passes, repetitions: cell.cpuTimes.count,
                cpuSecondsPerDecode: cell.cpuPerPass, megabytesPerSecond: cell.cpuPerPass.rate(work: Double(bytes) / 1e6),
                reference: kase.reference, timeRatioToReference: nil,
                allocationsPerDecode: Double(allocations), wallOverCPU: cell.wallOverCPU)
        }
        for i in rows.indices {
            if let reference = rows[i].reference, let other = rows.first(where: { $0.name == reference }) {
                rows[i].timeRatioToReference = rows[i].cpuSecondsPerDecode.median / other.cpuSecondsPerDecode.median
            }
        }
        return rows
    }
}

extension Report {
    static func jsonDecode(_ rows: [JSONDecodeRow], _ out: inout String) {
        func line(_ s: String = "") { out += s + "\n" }
        line("## 5. JSON decode: hostile input")
        line()
        line("`WireCodec.decode` (the strict JSON parser and the message reader, as `voicepipe decode` runs them) on two 649 KB lines, timed side by side: one whose bulk is a single string, one carrying 60 000 unknown fields, every one kept as an extra in order. A key is found or added in constant time on average, so the second line costs time in proportion to its length, as the first does, and their ratio is a fixed factor; work that grows faster than the field count (a linear key lookup made the second line take some 6 s) shows as a ratio in the hundreds or more. **ms** = CPU milliseconds per decode, median (min–max); **MB/s** = 10⁶ bytes of JSON per CPU second; **vs ref** = median time over the string line's median time.")
        line()
        line("| message | bytes | ms median (min–max) | MB/s median | vs ref (time) | allocs/op |")
        line("|---|---:|---:|---:|---:|---:|")
        for row in rows {
            let ratio = row.timeRatioToReference.map { "\(Format.significant($0))× string line" } ?? "–"
            line("| \(row.message) | \(row.bytes) | \(Format.spread(row.cpuSecondsPerDecode) { Format.significant($0 * 1000) }) | \(Format.significant(row.megabytesPerSecond.median)) | \(ratio) | \(Format.trimmed(row.allocationsPerDecode)) |")
        }
        line()
        if let hostile = rows.first(where: { $0.name == JSONDecodeBenchmark.fieldsName }), let string = rows.first(where: { $0.name == JSONDecodeBenchmark.stringName }),
           let ratio = hostile.timeRatioToReference {
            line("**Medians: string line \(Format.significant(string.cpuSecondsPerDecode.median * 1000)) ms, 60 000 fields \(Format.significant(hostile.cpuSecondsPerDecode.median * 1000)) ms; ratio \(Format.significant(ratio))×.**")
            line()
        }
    }
}
