import Foundation

/// Plots as SVG text, with no dependency: line charts (frequency responses) and horizontal bar
/// charts on a log axis (throughput).
enum SVG {
    struct Series {
        var name: String
        var color: String
        var points: [(x: Double, y: Double)]
        var width: Double = 1.5
        var dash: String? = nil
    }

    struct Bar {
        var label: String
        var median: Double
        var min: Double
        var max: Double
        var color: String
    }

    /// Colours per contender family, and distinct shades within a family.
    static func color(family: String, index: Int) -> String {
        let palettes: [String: [String]] = [
            "VoicePipe": ["#000000"],
            "libsamplerate": ["#0b2f6b", "#1f5fb0", "#3d8fd6", "#79b4ea"],
            "soxr": ["#6b0a0a", "#a51c1c", "#d94a2b", "#ee8048", "#f2a77c"],
            "speex": ["#0a4a22", "#17803a", "#32a85a", "#66c285", "#9bd8ac"],
            "memcpy": ["#888888"],
        ]
        let palette = palettes[family] ?? ["#555555"]
        return palette[index % palette.count]
    }

    /// Distinct colours for the curves of a line chart (VoicePipe is drawn black).
    static let categorical = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
                              "#393b79", "#ad494a", "#637939", "#8c6d31", "#5254a3"]

    /// Dash pattern per contender family, so curves stay apart in grey print too.
    static func dash(family: String) -> String? {
        switch family {
        case "soxr": return "7 3"
        case "speex": return "2 2"
        default: return nil
        }
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    static func number(_ value: Double) -> String { Format.fixed(value, 1) }

    /// A line chart with axes, grid, labels and a legend.
    static func lineChart(title: String, xLabel: String, yLabel: String, xRange: ClosedRange<Double>, yRange: ClosedRange<Double>,
                          xTicks: [Double], yTicks: [Double], tickLabel: (Double) -> String = { Format.trimmed($0) },
                          series: [Series], note: String? = nil) -> String {
        let width = 980.0, height = 600.0
        let left = 70.0, right = 270.0, top = 50.0, bottom = 100.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        func x(_ v: Double) -> Double { left + (v - xRange.lowerBound) / (xRange.upperBound - xRange.lowerBound) * plotWidth }
        func y(_ v: Double) -> Double {
            let clamped = v.isNaN ? yRange.lowerBound : Swift.min(Swift.max(v, yRange.lowerBound), yRange.upperBound)
            return top + (yRange.upperBound - clamped) / (yRange.upperBound - yRange.lowerBound) * plotHeight
        }
        var svg = header(width: width, height: height)
        svg += text(title, x: left, y: 28, size: 17, weight: "bold")
        for (i, noteLine) in (note ?? "").split(separator: "\n").enumerated() {
            svg += text(String(noteLine), x: left, y: height - 34 + Double(i) * 15, size: 11, color: "#555")
        }
        svg += "<defs><clipPath id=\"plot\"><rect x=\"\(left)\" y=\"\(top)\" width=\"\(plotWidth)\" height=\"\(plotHeight)\"/></clipPath></defs>\n"
        for t in yTicks {
            svg += line(left, y(t), left + plotWidth, y(t), color: "#e3e3e3")
            svg += text(tickLabel(t), x: left - 8, y: y(t) + 4, size: 11, anchor: "end")
        }
        for t in xTicks {
            svg += line(x(t), top, x(t), top + plotHeight, color: "#e3e3e3")
            svg += text(tickLabel(t), x: x(t), y: top + plotHeight + 18, size: 11, anchor: "middle")
        }
        svg += "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(plotWidth)\" height=\"\(plotHeight)\" fill=\"none\" stroke=\"#333\"/>\n"
        svg += text(xLabel, x: left + plotWidth / 2, y: top + plotHeight + 40, size: 13, anchor: "middle")
        svg += "<text x=\"18\" y=\"\(top + plotHeight / 2)\" font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(-90 18 \(top + plotHeight / 2))\">\(escape(yLabel))</text>\n"
        for s in series {
            let points = s.points.map { "\(Format.fixed(x($0.x), 2)),\(Format.fixed(y($0.y), 2))" }.joined(separator: " ")
            svg += "<polyline clip-path=\"url(#plot)\" fill=\"none\" stroke=\"\(s.color)\" stroke-width=\"\(s.width)\"\(s.dash.map { " stroke-dasharray=\"\($0)\"" } ?? "") points=\"\(points)\"/>\n"
        }
        // Legend.
        let legendX = left + plotWidth + 16
        for (i, s) in series.enumerated() {
            let ly = top + 10 + Double(i) * 20
            svg += "<line x1=\"\(legendX)\" y1=\"\(ly)\" x2=\"\(legendX + 26)\" y2=\"\(ly)\" stroke=\"\(s.color)\" stroke-width=\"\(Swift.max(s.width, 2))\"\(s.dash.map { " stroke-dasharray=\"\($0)\"" } ?? "")/>\n"
            svg += text(s.name, x: legendX + 32, y: ly + 4, size: 12)
        }
        return svg + "</svg>\n"
    }

    /// Horizontal bars on a log axis: the median as the bar, min–max as a whisker, the median as text.
    static func barChart(title: String, subtitle: String, axisLabel: String, bars: [Bar]) -> String {
        let rowHeight = 22.0
        let left = 250.0, right = 110.0, top = 70.0
        let width = 960.0
        let plotWidth = width - left - right
        let plotHeight = Double(bars.count) * rowHeight
        let height = top + plotHeight + 60
        let positive = bars.flatMap { [$0.min, $0.max, $0.median] }.filter { $0 > 0 }
        let lowDecade = floor(log10(positive.min() ?? 1)), highDecade = ceil(log10(positive.max() ?? 10))
        let span = Swift.max(highDecade - lowDecade, 1)
        func x(_ v: Double) -> Double { left + (log10(Swift.max(v, pow(10, lowDecade))) - lowDecade) / span * plotWidth }
        var svg = header(width: width, height: height)
        svg += text(title, x: 16, y: 26, size: 17, weight: "bold")
        svg += text(subtitle, x: 16, y: 46, size: 12, color: "#555")
        var decade = lowDecade
        while decade <= highDecade {
            let v = pow(10, decade)
            svg += line(x(v), top - 4, x(v), top + plotHeight, color: "#dddddd")
            svg += text(Format.compact(v), x: x(v), y: top + plotHeight + 18, size: 11, anchor: "middle")
            decade += 1
        }
        svg += text(axisLabel, x: left + plotWidth / 2, y: top + plotHeight + 40, size: 13, anchor: "middle")
        for (i, bar) in bars.enumerated() {
            let yTop = top + Double(i) * rowHeight
            let mid = yTop + rowHeight / 2
            svg += text(bar.label, x: left - 8, y: mid + 4, size: 12, anchor: "end")
            svg += "<rect x=\"\(left)\" y=\"\(yTop + 3)\" width=\"\(Format.fixed(Swift.max(x(bar.median) - left, 0.5), 2))\" height=\"\(rowHeight - 6)\" fill=\"\(bar.color)\" opacity=\"0.85\"/>\n"
            svg += line(x(bar.min), mid, x(bar.max), mid, color: "#222", width: 1.2)
            svg += line(x(bar.min), mid - 4, x(bar.min), mid + 4, color: "#222", width: 1.2)
            svg += line(x(bar.max), mid - 4, x(bar.max), mid + 4, color: "#222", width: 1.2)
            svg += text(Format.significant(bar.median), x: x(bar.max) + 6, y: mid + 4, size: 11)
        }
        svg += line(left, top - 4, left, top + plotHeight, color: "#333")
        return svg + "</svg>\n"
    }

    private static func header(width: Double, height: Double) -> String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"Helvetica, Arial, sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    }

    private static func text(_ s: String, x: Double, y: Double, size: Int, anchor: String = "start", weight: String = "normal", color: String = "#111") -> String {
        "<text x=\"\(Format.fixed(x, 1))\" y=\"\(Format.fixed(y, 1))\" font-size=\"\(size)\" text-anchor=\"\(anchor)\" font-weight=\"\(weight)\" fill=\"\(color)\">\(escape(s))</text>\n"
    }

    private static func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, color: String, width: Double = 1) -> String {
        "<line x1=\"\(Format.fixed(x1, 1))\" y1=\"\(Format.fixed(y1, 1))\" x2=\"\(Format.fixed(x2, 1))\" y2=\"\(Format.fixed(y2, 1))\" stroke=\"\(color)\" stroke-width=\"\(width)\"/>\n"
    }
}

/// The plots of one run, written next to the JSON.
enum Plots {
    /// Writes the SVGs and returns their file names (relative to the JSON's folder).
    static func write(_ results: RunResults, directory: String, prefix: String) -> [String] {
        var written: [String] = []
        func save(_ name: String, _ svg: String) {
            let file = "\(prefix)-\(name).svg"
            if (try? svg.write(toFile: "\(directory)/\(file)", atomically: true, encoding: .utf8)) != nil { written.append(file) }
        }
        // Throughput bars per workload at 20 ms chunks.
        for workload in Workload.all {
            let rows = results.throughput.filter { $0.workload == workload.id && $0.chunkMilliseconds == 20 }
            guard !rows.isEmpty else { continue }
            var familyIndex: [String: Int] = [:]
            let bars = rows.map { row -> SVG.Bar in
                let index = familyIndex[row.family, default: 0]
                familyIndex[row.family] = index + 1
                return SVG.Bar(label: Report.rowLabel(row), median: row.xRealTime.median, min: row.xRealTime.min, max: row.xRealTime.max,
                               color: SVG.color(family: row.family, index: index))
            }
            save("throughput-\(workload.id)", SVG.barChart(
                title: "Throughput, \(workload.title)",
                subtitle: "20 ms chunks, single thread, CPU time; bar = median of \(rows[0].repetitions), whisker = min–max; log axis",
                axisLabel: "× real time (seconds of audio per CPU second)", bars: bars))
        }
        // C1 magnitude response: one chart per peer family, each with VoicePipe, plus a passband zoom.
        if let quality = results.quality, !quality.response.isEmpty {
            let voicepipe = quality.response.filter { $0.family == ContenderSpec.Family.voicepipe.rawValue }
            func series(_ curves: [ResponseCurve]) -> [SVG.Series] {
                var peerIndex = 0
                return curves.map { curve in
                    let isOurs = curve.family == ContenderSpec.Family.voicepipe.rawValue
                    let color = isOurs ? "#000000" : SVG.categorical[peerIndex % SVG.categorical.count]
                    if !isOurs { peerIndex += 1 }
                    return SVG.Series(name: curve.contender, color: color,
                                      points: zip(curve.frequencies, curve.gainDB).map { (x: $0 / 1000, y: $1) }, width: isOurs ? 2.4 : 1.4,
                                      dash: SVG.dash(family: curve.family))
                }
            }
            let kHzTicks = stride(from: 0.0, through: 24, by: 2).map { $0 }
            for family in [ContenderSpec.Family.libsamplerate, .soxr, .speex] {
                let curves = voicepipe + quality.response.filter { $0.family == family.rawValue }
                guard curves.count > voicepipe.count else { continue }
                save("response-C1-\(family.rawValue)", SVG.lineChart(
                    title: "C1 magnitude response (48 kHz → 16 kHz), VoicePipe and \(family.rawValue)",
                    xLabel: "input tone frequency (kHz)", yLabel: "output RMS re input tone RMS (dB)",
                    xRange: 0...24, yRange: -200...10, xTicks: kHzTicks, yTicks: stride(from: -200.0, through: 0, by: 20).map { $0 },
                    series: series(curves),
                    note: "−1 dBFS tones every \(Format.trimmed(results.settings.responseSweepStepHz)) Hz, streamed in 20 ms chunks through the same path as the throughput runs;\nFloat32 output before Int16 rounding (VoicePipe: its CaptureConverter's resampler output); values below −200 dB drawn at −200."))
            }
            let all = quality.response
            save("response-C1-passband", SVG.lineChart(
                title: "C1 passband and transition (48 kHz → 16 kHz), all resamplers",
                xLabel: "input tone frequency (kHz)", yLabel: "gain (dB)",
                xRange: 0...9, yRange: -6...1, xTicks: stride(from: 0.0, through: 9, by: 1).map { $0 }, yTicks: stride(from: -6.0, through: 1, by: 1).map { $0 },
                series: series(all),
                note: "Same sweep as the full-range charts, zoomed to 0–9 kHz and +1…−6 dB. Solid: VoicePipe (black) and libsamplerate; dashed: soxr; dotted: speex.\nThe lines join the swept frequencies; the table's passband gains are exact fits at single frequencies."))
        }
        return written
    }
}
