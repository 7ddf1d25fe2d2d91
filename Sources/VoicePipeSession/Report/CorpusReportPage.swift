/// A corpus report for a person: a Markdown page (the figures, the failed sessions by name, a
/// table of every session) and an SVG histogram of the turn latencies it links to.
public enum CorpusReportPage {
    /// The page; `latencyImage` is the SVG's file name beside it, nil to leave the picture out.
    public static func markdown(_ report: CorpusReport, latencyImage: String?) -> String {
        var lines = ["# VoicePipe corpus report", ""]
        let failed = report.sessions.count - report.okCount, failures = report.failures
        var outcome = "- sessions: \(report.sessions.count), \(report.okCount) ok, \(failed) failed"
        if !failures.isEmpty { outcome += " (" + failures.map { "\($0.status) \($0.count)" }.joined(separator: ", ") + ")" }
        lines.append(outcome)
        lines.append("- turns: \(report.total(\.turns)), \(report.turnLatencies.count) answered")
        if let spread = report.turnLatency {
            lines.append("- turn latency over \(spread.count) answered turns: median \(seconds(spread.median)), p90 \(seconds(spread.p90)), p95 \(seconds(spread.p95)), p99 \(seconds(spread.p99)), max \(seconds(spread.max))")
        } else {
            lines.append("- turn latency: no answered turn")
        }
        if let ready = report.connectToReady {
            lines.append("- connect to ready over \(ready.count) sessions: median \(seconds(ready.median)), p95 \(seconds(ready.p95)), max \(seconds(ready.max))")
        }
        lines.append("- interruptions: \(report.total(\.interruptions)); tool calls: \(report.total(\.toolCalls)), \(report.total(\.toolCallsOverBudget)) over budget; reconnections: \(report.total(\.reconnections)); frames dropped: \(report.total(\.framesDropped))")
        lines.append("- audio sent: \(seconds(.seconds(report.total(\.audioSentSeconds)))); audio received: \(seconds(.seconds(report.total(\.audioReceivedSeconds))))")
        if let latencyImage, report.turnLatency != nil {
            lines += ["", "![Turn latency across every answered turn](\(latencyImage))"]
        }
        let failedSessions = report.sessions.filter { !$0.isOK }
        if !failedSessions.isEmpty {
            lines += ["", "## Failed sessions", "", "| input | status | why |", "|---|---|---|"]
            for session in failedSessions {
                lines.append("| \(cell(session.input)) | \(session.status) | \(cell(session.failure ?? "")) |")
            }
        }
        lines += ["", "## Sessions", "", "| input | status | turns | latency median | p95 | max | ready | interruptions | tool calls (over budget) | reconnections |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for session in report.sessions {
            let spread = LatencyDistribution(session.turnLatencies.map { Duration.seconds($0) })
            let figures = [spread.map { seconds($0.median) } ?? "—", spread.map { seconds($0.p95) } ?? "—", spread.map { seconds($0.max) } ?? "—",
                           session.connectToReadySeconds.map { seconds(.seconds($0)) } ?? "—"]
            lines.append("| \(cell(session.input)) | \(session.status) | \(session.turns) | " + figures.joined(separator: " | ")
                         + " | \(session.interruptions) | \(session.toolCalls) (\(session.toolCallsOverBudget)) | \(session.reconnections) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A histogram of every answered turn's latency, with the median, p95 and p99 marked; nil
    /// when no turn was answered.
    public static func latencySVG(_ report: CorpusReport) -> String? {
        let values = report.turnLatencies
        guard let spread = report.turnLatency, let largest = values.max() else { return nil }
        let binWidth = niceStep(max(largest, 0.001) / 30)
        let binCount = Int((largest / binWidth).rounded(.down)) + 1
        var bins = [Int](repeating: 0, count: binCount)
        for value in values { bins[min(Int(value / binWidth), binCount - 1)] += 1 }
        let tallest = bins.max() ?? 1
        let (width, height, left, right, top, bottom) = (720.0, 360.0, 56.0, 16.0, 40.0, 48.0)
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let span = binWidth * Double(binCount)
        func x(_ seconds: Double) -> Double { left + seconds / span * plotWidth }
        func y(_ count: Int) -> Double { top + plotHeight * (1 - Double(count) / Double(tallest)) }
        var svg = [##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(format(width))" height="\##(format(height))" viewBox="0 0 \##(format(width)) \##(format(height))" font-family="sans-serif" font-size="12">"##,
                   ##"<rect width="100%" height="100%" fill="white"/>"##,
                   ##"<text x="\##(format(left))" y="20" font-size="14">Turn latency, \##(spread.count) answered turns in \##(report.sessions.count) sessions</text>"##]
        for (index, count) in bins.enumerated() where count > 0 {
            svg.append(##"<rect x="\##(format(x(Double(index) * binWidth)))" y="\##(format(y(count)))" width="\##(format(max(plotWidth / Double(binCount) - 1, 0.5)))" height="\##(format(top + plotHeight - y(count)))" fill="#1f5fb0"><title>\##(seconds(.seconds(Double(index) * binWidth)))–\##(seconds(.seconds(Double(index + 1) * binWidth))): \##(count)</title></rect>"##)
        }
        svg.append(##"<line x1="\##(format(left))" y1="\##(format(top + plotHeight))" x2="\##(format(left + plotWidth))" y2="\##(format(top + plotHeight))" stroke="black"/>"##)
        let tickStep = niceStep(span / 6)
        var tick = 0.0
        while tick <= span + tickStep / 1000 {
            svg.append(##"<text x="\##(format(x(tick)))" y="\##(format(top + plotHeight + 16))" text-anchor="middle">\##(JSONWriter.numberText((tick * 1000).rounded() / 1000))</text>"##)
            tick += tickStep
        }
        svg.append(##"<text x="\##(format(left + plotWidth / 2))" y="\##(format(height - 8))" text-anchor="middle">seconds from the end of the user's turn to the first reply</text>"##)
        svg.append(##"<text x="16" y="\##(format(top + plotHeight / 2))" text-anchor="middle" transform="rotate(-90 16 \##(format(top + plotHeight / 2)))">turns</text>"##)
        svg.append(##"<text x="\##(format(left - 6))" y="\##(format(top + 4))" text-anchor="end">\##(tallest)</text>"##)
        for (name, value, color) in [("median", spread.median, "#2ca02c"), ("p95", spread.p95, "#ff7f0e"), ("p99", spread.p99, "#d62728")] {
            let position = format(x(value.seconds))
            svg.append(##"<line x1="\##(position)" y1="\##(format(top))" x2="\##(position)" y2="\##(format(top + plotHeight))" stroke="\##(color)" stroke-dasharray="4 3"/>"##)
            svg.append(##"<text x="\##(position)" y="\##(format(top - 4))" fill="\##(color)" text-anchor="middle">\##(name) \##(seconds(value))</text>"##)
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n") + "\n"
    }

    /// 1, 2 or 5 times a power of ten, the smallest at least `raw`.
    static func niceStep(_ raw: Double) -> Double {
        var step = 0.001
        while true {
            for factor in [1.0, 2, 5] where step * factor >= raw { return step * factor }
            step *= 10
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        JSONWriter.numberText((duration.seconds * 1000).rounded() / 1000) + " s"
    }

    private static func format(_ value: Double) -> String { JSONWriter.numberText((value * 10).rounded() / 10) }

    /// Text for a table cell: pipes escaped, lines joined.
    private static func cell(_ text: String) -> String {
        var cell = ""
        for character in text {
            switch character {
            case "|": cell += "\\|"
            case "\n", "\r", "\r\n": cell += " "
            default: cell.append(character)
            }
        }
        return cell
    }
}
