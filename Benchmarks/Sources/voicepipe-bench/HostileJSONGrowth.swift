import CBenchMalloc
import Foundation
import VoicePipeSession

/// One row of the hostile JSON growth table: one shape of hostile message decoded at sizes n,
/// 10n and 100n under the WebSocket transport's 16 MiB limit, with the ratios of the times.
struct HostileJSONGrowthRow: Codable {
    var name: String
    var shape: String
    /// What `WireCodec.decode` does with the largest: "decoded" or the refusal.
    var outcome: String
    /// The message's bytes at n, 10n, 100n.
    var bytes: [Int]
    /// CPU seconds per decode at n, 10n, 100n: median (min–max).
    var cpuSeconds: [Spread]
    /// Median time at 10n over median at n, and at 100n over 10n: about 10 when the work is
    /// linear in the size (about 1 for a shape refused after a fixed prefix); 100 is quadratic.
    var timeRatios: [Double]
    /// Heap allocations per decode at n, 10n, 100n: they grow with the logarithm of the size when
    /// buffers grow geometrically and nothing is allocated per element.
    var allocations: [UInt64]
    /// Heap bytes the decoded value holds at 100n over the message's bytes (0 when refused).
    var heldBytesPerMessageByte: Double
}

/// Hostile shapes for the general JSON path, each at n and 10n: work that grows faster than the
/// text (a quadratic number parse, a linear key lookup per key) shows as a ratio far above 10.
final class HostileJSONGrowthBenchmark {
    struct Shape {
        let name: String
        let shape: String
        /// The message at n, 10n, 100n, and its timing.
        let texts: [String]
        let timed: [TimedCell]
    }

    static let limits = WireLimits(maxMessageBytes: 16 << 20)
    static let prefix = "json-hostile/"

    private(set) var shapes: [Shape] = []

    init(filter: (String) -> Bool) {
        func debug(_ value: String) -> String { #"{"type":"debug","message":"m","x":"# + value + "}" }
        let makers: [(String, String, (Int) -> String, Int)] = [
            ("keys", "an object of n keys (\"k0\":0 …)", { n in
                #"{"type":"debug","message":"m""# + (0..<n).map { #","k\#($0)":0"# }.joined() + "}"
            }, 10_000),
            ("array", "an array of n one-digit numbers", { n in
                debug("[" + Array(repeating: "0", count: n).joined(separator: ",") + "]")
            }, 10_000),
            ("escapes", "a string of n escapes (\\n \\u00e9 \\ud83d\\ude00 …)", { n in
                let escapes = [#"\n"#, #"\u00e9"#, #"\ud83d\ude00"#, #"\""#]
                return #"{"type":"debug","message":""# + (0..<n).map { escapes[$0 % 4] }.joined() + #""}"#
            }, 10_000),
            ("fraction-digits", "a number 0.333… of n digits", { n in
                debug("0." + String(repeating: "3", count: n))
            }, 1_000),
            ("integer-digits", "an integer of n digits (refused: out of range)", { n in
                debug(String(repeating: "7", count: n))
            }, 1_000),
            ("nesting", "n opening brackets (refused at level 129)", { n in
                String(repeating: "[", count: n)
            }, 10_000),
        ]
        for (name, shape, make, n) in makers where filter(Self.prefix + name) {
            let texts = [n, 10 * n, 100 * n].map(make)
            let timed = zip(texts, ["n", "10n", "100n"]).map { text, size in
                TimedCell(name: Self.prefix + name + "/" + size, maxPasses: 2_000) { Self.decode(text) }
            }
            shapes.append(Shape(name: Self.prefix + name, shape: shape, texts: texts, timed: timed))
        }
    }

    private static func decode(_ text: String) {
        BlackHole.consume((try? WireCodec.decode(text, limits: limits))?.extras.count ?? -1)
    }

    func run(_ schedule: RoundRobin, progress: Progress) {
        schedule.run(shapes.flatMap(\.timed), label: "hostile json", progress: progress)
    }

    func rows() -> [HostileJSONGrowthRow] {
        shapes.map { shape in
            let outcome: String
            var held = 0.0
            let largest = shape.texts[2]
            do {
                let before = Self.heapBytesInUse()
                let envelope = try WireCodec.decode(largest, limits: Self.limits)
                held = Double(Self.heapBytesInUse() - before) / Double(largest.utf8.count)
                BlackHole.consume(envelope.extras.count)
                outcome = "decoded"
            } catch {
                outcome = "refused: \(error)".prefix(80) + (String(describing: error).count > 71 ? "…" : "")
            }
            let times = shape.timed.map(\.cpuPerPass)
            return HostileJSONGrowthRow(
                name: shape.name, shape: shape.shape, outcome: outcome, bytes: shape.texts.map(\.utf8.count),
                cpuSeconds: times, timeRatios: [times[1].median / times[0].median, times[2].median / times[1].median],
                allocations: shape.texts.map { text in countAllocations { Self.decode(text) } },
                heldBytesPerMessageByte: held)
        }
    }

    /// Bytes malloc has handed out and not had back (its arenas and its mmapped blocks).
    static func heapBytesInUse() -> Int {
        Int(vp_bench_heap_bytes_in_use())
    }
}

extension Report {
    static func hostileJSONGrowth(_ rows: [HostileJSONGrowthRow], _ out: inout String) {
        func line(_ s: String = "") { out += s + "\n" }
        line("## 5b. Hostile JSON: time against size")
        line()
        line("`WireCodec.decode` under the WebSocket transport's 16 MiB message limit, each hostile shape at n, 10n and 100n. **ratios** = median CPU time at 10n over n, and at 100n over 10n: about 10 for work linear in the size, about 1 for a shape refused after a fixed prefix, 100 for quadratic work. A ratio nearer 20 at the largest size, where the decoded value runs to tens of MB, is the memory system (caches, first touches of fresh pages, counted in the thread's CPU time), not the algorithm: quadratic work would show 100 at every step. **allocs** = heap allocations per decode at n / 10n / 100n: a few more per step means buffers that double and nothing allocated per element (×10 a step would be one per element). **held** = heap bytes the decoded value at 100n holds per byte of the message (what a message of the limit costs in memory, in multiples of its size).")
        line()
        line("| shape | outcome at 100n | bytes n / 10n / 100n | ms at n | ms at 10n | ms at 100n | ratios | allocs | held B/B |")
        line("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for row in rows {
            let times = row.cpuSeconds.map { spread in Format.spread(spread) { Format.significant($0 * 1000) } }
            let ratios = row.timeRatios.map { Format.significant($0) + "×" }.joined(separator: ", ")
            line("| \(row.shape) | \(row.outcome) | \(row.bytes.map(String.init).joined(separator: " / ")) | \(times.joined(separator: " | ")) | \(ratios) | \(row.allocations.map(String.init).joined(separator: " / ")) | \(row.heldBytesPerMessageByte > 0 ? Format.significant(row.heldBytesPerMessageByte) : "–") |")
        }
        line()
    }
}
