/// The session as a person reads it: one line per thing that happened, with the elapsed time,
/// and a summary at the end. Pure formatting over ``SessionNote`` and ``SessionMachine``.
///
/// ```
///    0.000  connecting
///    0.001  ready
///    0.129  talking
///    2.977  turn 1 ended: 2.720 s of speech
///    2.977  thinking
///    3.446  user: 2.8 s of speech, peak −8.1 dBFS
///    3.446  tool audio_stats [audio_stats-1] ← {"durationSeconds":2.931,"sampleRate":16000}
/// ```
public enum SessionTimeline {
    /// The lines for one note at `instant`; empty for notes a timeline leaves out.
    public static func lines(for note: SessionNote, at instant: SessionInstant) -> [String] {
        let stamp = pad(instant)
        let body: [String]
        switch note {
        case .stateChanged(_, let to):
            if case .error(let failure) = to { body = ["error: \(failure)"] } else { body = [to.name] }
        case .textQueued(let text):
            body = ["typed (pending until connected): \(quote(text.text))"]
        case .textSent(let text):
            body = ["typed: \(quote(text.text))"]
        case .textRequeued(let text, let reason):
            body = ["typed text #\(text.number) waits again: \(reason)"]
        case .turnEnded(let turn):
            if turn.kind == .voice {
                body = ["turn \(turn.number) ended: \(seconds(turn.speechDuration ?? turn.speechEndedAt - turn.startedAt)) of speech"]
            } else {
                body = []
            }
        case .turnIgnored(let turn):
            body = ["turn \(turn.number) got no reply: the runtime did not take it as a turn (dropped)"]
        case .turnAnswered(let turn):
            body = turn.latency.map { ["turn \(turn.number) answered: latency \(seconds($0))"] } ?? []
        case .transcript(let line):
            body = ["\(line.role.rawValue): \(line.text)"]
        case .tool(let record):
            body = [toolLine(record)]
        case .classification(let label, let confidence):
            body = ["classified: \(label) (\(decimal(confidence, places: 2)))"]
        case .infoCard(let card):
            body = ["info:"] + MarkdownTable.render(card.markdown).map { "  " + $0 }
        case .escalation(let status):
            body = [status.banner]
        case .keepAlive:
            body = ["keep-alive: sent silence"]
        case .interrupted:
            body = ["interrupted: playback cut"]
        case .runtimeDebug(let message):
            body = ["debug: \(message)"]
        case .unknownMessage:
            // The driver reports unknown types and unknown fields together, once each
            // (UnknownContentNotes), with the timestamp of the message that carried them.
            body = []
        case .malformedMessage(let reason):
            body = ["refused a message: \(reason)"]
        case .ignored:
            body = []
        case .ending(let why):
            body = ["ending: \(why)"]
        case .audioDropped(let total):
            body = ["the runtime is not taking audio as fast as it is captured: \(total) frame\(total == 1 ? "" : "s") dropped so far"]
        case .audioWaiting:
            body = ["the runtime is not taking audio as fast as the input is read: waiting"]
        case .audioUnavailable(let reason):
            body = ["audio unavailable: \(reason); text only"]
        case .audioLost(let reason):
            body = ["audio lost: \(reason); text only until it is back"]
        case .audioRestored(let description):
            body = ["audio back: \(description)"]
        case .rotationStarted:
            body = ["rotating: opening a fresh connection (what is captured meanwhile waits for it)"]
        case .rotated(let gap):
            body = ["rotated: the fresh connection took over after \(seconds(gap)); the old one is closing"]
        case .rotationFailed(let reason):
            body = ["rotation failed: \(reason); staying on the current connection"]
        case .reconnecting(let attempt, let attempts, let delay, let reason):
            body = ["reconnecting: attempt \(attempt) of \(attempts) in \(seconds(delay)) — \(reason)"]
        case .reconnected(let attempt, let gap, let held):
            body = ["reconnected on attempt \(attempt), \(seconds(gap)) after the drop; \(held) captured frame\(held == 1 ? "" : "s") held meanwhile go out now"]
        case .unreadSentAgain(let frames, let texts, let lost):
            var line = "the runtime had not read \(frames) captured frame\(frames == 1 ? "" : "s") and \(texts) text\(texts == 1 ? "" : "s") the dropped connection wrote: sent again"
            if lost > 0 { line += "; \(lost) older frame\(lost == 1 ? "" : "s") it never read \(lost == 1 ? "was" : "were") past the hold and dropped" }
            body = [line]
        case .readNotConfirmed(let chunks):
            body = ["the runtime did not say what it read before the drop (no session.resumed): \(chunks) audio message\(chunks == 1 ? "" : "s") the dropped connection wrote may have been lost unseen"]
        case .replyCutByDrop:
            body = ["the reply was cut by the drop: the rest of it did not arrive"]
        }
        guard let first = body.first else { return [] }
        let indent = String(repeating: " ", count: stamp.count)
        return ["\(stamp)  \(first)"] + body.dropFirst().map { "\(indent)  \($0)" }
    }

    /// A tool call or result as one line: name, id, input ← or output →, durations, flags.
    public static func toolLine(_ record: ToolCallRecord) -> String {
        if record.resultReceivedAt == nil {
            return "tool \(record.name) [\(record.id)] ← \(record.input.map { "\($0)" } ?? "")"
        }
        var line = "tool \(record.name) [\(record.id)] → \(record.output.map { "\($0)" } ?? "")"
        var timing = [String]()
        if let client = record.clientDuration { timing.append("\(milliseconds(client)) seen") }
        if let runtime = record.runtimeDuration { timing.append("\(milliseconds(runtime)) reported") }
        if !timing.isEmpty { line += " (\(timing.joined(separator: ", ")))" }
        if record.isOverBudget { line += " OVER BUDGET (\(seconds(record.budget)))" }
        if record.isResultWithoutCall { line += " (no call with this id)" }
        return line
    }

    /// Past this many answered turns the summary gives the latency distribution, not each turn's.
    public static let maximumTurnsListed = 8

    /// The summary printed when the session is over.
    public static func summary(of machine: SessionMachine, duration: Duration) -> [String] {
        var lines = [String]()
        let state = machine.state
        switch state {
        case .disconnected: lines.append("session \(machine.configuration.sessionId) ended cleanly after \(seconds(duration))")
        case .error(let failure): lines.append("session \(machine.configuration.sessionId) failed after \(seconds(duration)): \(failure)")
        default: lines.append("session \(machine.configuration.sessionId) stopped \(state.name) after \(seconds(duration))")
        }
        let turns = machine.turns.filter { !$0.wasWithdrawn }
        let voice = turns.filter { $0.kind == .voice }.count
        let withdrawn = machine.turns.count - turns.count
        lines.append("turns: \(turns.count) (\(voice) spoken, \(turns.count - voice) typed)"
            + (withdrawn == 0 ? "" : "; \(withdrawn) typed turn\(withdrawn == 1 ? "" : "s") withdrawn: the connection ended before the text was written"))
        let counters = machine.counters
        let sent = Duration.samples(counters.samplesSent, at: machine.configuration.captureSampleRate)
        var audio = "audio sent: \(seconds(sent)) in \(counters.framesSent) frame\(counters.framesSent == 1 ? "" : "s")"
        if counters.keepAlivesSent > 0 { audio += ", \(counters.keepAlivesSent) keep-alive\(counters.keepAlivesSent == 1 ? "" : "s")" }
        let notKeptUp = counters.framesDropped - counters.framesDroppedWhileAway
        if notKeptUp > 0 { audio += ", \(notKeptUp) frames dropped (the runtime did not keep up)" }
        if counters.framesDroppedWhileAway > 0 { audio += ", \(counters.framesDroppedWhileAway) frames dropped while reconnecting (past the hold)" }
        lines.append(audio + "; received: \(seconds(counters.replyAudio)) in \(counters.replyChunks) chunk\(counters.replyChunks == 1 ? "" : "s")")
        let answered = turns.filter { $0.latency != nil }
        if answered.isEmpty {
            lines.append("turn latency: no turn was answered with audio")
        } else if answered.count <= maximumTurnsListed {
            let each = answered.compactMap { turn in turn.latency.map { "turn \(turn.number) \(seconds($0))" } }
            lines.append("turn latency: " + each.joined(separator: ", "))
            if let median = machine.medianLatency, let p95 = machine.p95Latency {
                lines.append("turn latency median \(seconds(median)), p95 \(seconds(p95)) (end of speech to first reply audio)")
            }
        } else if let spread = LatencyDistribution(answered.compactMap(\.latency)) {
            lines.append("turn latency over \(spread.count) answered turns: median \(seconds(spread.median)), p90 \(seconds(spread.p90)), "
                + "p95 \(seconds(spread.p95)), max \(seconds(spread.max)) (end of speech to first reply audio; --json gives each turn's)")
        }
        if let ear = LatencyDistribution(machine.latenciesToEar) {
            lines.append("turn latency to the ear: median \(seconds(ear.median)), p95 \(seconds(ear.p95)), max \(seconds(ear.max)) over \(ear.count) turn\(ear.count == 1 ? "" : "s") "
                + "(to the first reply sample heard: the figure above plus the audio queued ahead and the speaker's delay)")
        }
        let tools = machine.toolCalls
        if !tools.isEmpty {
            let over = tools.filter(\.isOverBudget).count
            let unpaired = tools.filter(\.isUnpaired).count
            lines.append("tools: \(tools.count) call\(tools.count == 1 ? "" : "s"), \(over) over budget, \(unpaired) unpaired")
        }
        if counters.interruptions > 0 { lines.append("interruptions: \(counters.interruptions)") }
        if counters.reconnections > 0 || counters.repliesCutByDrop > 0 {
            var line = "reconnections: \(counters.reconnections) (\(counters.framesHeldForReconnection) captured frame\(counters.framesHeldForReconnection == 1 ? "" : "s") held and sent on the new connection)"
            if counters.framesResent > 0 || counters.textsResent > 0 {
                line += "; sent again, the runtime having never read them: \(counters.framesResent) frame\(counters.framesResent == 1 ? "" : "s"), \(counters.textsResent) text\(counters.textsResent == 1 ? "" : "s")"
            }
            if counters.audioUnconfirmed > 0 {
                line += "; \(counters.audioUnconfirmed) audio message\(counters.audioUnconfirmed == 1 ? "" : "s") written before a drop unconfirmed (the runtime sends no session.resumed)"
            }
            if counters.repliesCutByDrop > 0 { line += "; \(counters.repliesCutByDrop) repl\(counters.repliesCutByDrop == 1 ? "y" : "ies") cut by a drop" }
            lines.append(line)
        }
        if counters.audioLosses > 0 {
            lines.append("audio lost \(counters.audioLosses) time\(counters.audioLosses == 1 ? "" : "s") (the capture device failed)"
                + (machine.audioUnavailability == nil ? "; it was back at the end" : "; still unavailable at the end"))
        }
        if counters.malformedMessages > 0 { lines.append("messages refused: \(counters.malformedMessages)") }
        if counters.ignoredEvents > 0 { lines.append("events ignored: \(counters.ignoredEvents)") }
        if !machine.pendingTexts.isEmpty { lines.append("typed texts never sent: \(machine.pendingTexts.count)") }
        return lines
    }

    /// "  12.345" — seconds with three decimals, right-aligned in at least 8 columns.
    public static func pad(_ instant: SessionInstant) -> String {
        let text = decimal(instant.seconds, places: 3)
        return String(repeating: " ", count: max(0, 8 - text.count)) + text
    }

    /// "1.234 s".
    public static func seconds(_ duration: Duration) -> String { duration.formattedSeconds }

    /// "12.3 ms".
    static func milliseconds(_ duration: Duration) -> String { "\(decimal(duration.milliseconds, places: 1)) ms" }

    /// `value` with exactly `places` decimals, without Foundation.
    public static func decimal(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = Int((abs(value) * scale).rounded())
        let whole = scaled / Int(scale)
        var fraction = String(scaled % Int(scale))
        fraction = String(repeating: "0", count: max(0, places - fraction.count)) + fraction
        let sign = value < 0 && scaled != 0 ? "-" : ""
        return places == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
    }

    private static func quote(_ text: String) -> String { "“\(text)”" }
}

/// Markdown as a terminal shows it: pipe tables aligned in columns, other lines as they are.
public enum MarkdownTable {
    /// The lines of `markdown` with each pipe table's columns padded to one width.
    public static func render(_ markdown: String) -> [String] {
        var output = [String]()
        var table = [[String]]()
        func flush() {
            guard !table.isEmpty else { return }
            let columns = table.map(\.count).max() ?? 0
            var widths = [Int](repeating: 0, count: columns)
            for row in table { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
            for (index, row) in table.enumerated() {
                let cells = (0..<columns).map { column -> String in
                    let cell = column < row.count ? row[column] : ""
                    return cell + String(repeating: " ", count: widths[column] - cell.count)
                }
                output.append("| " + cells.joined(separator: " | ") + " |")
                if index == 0 { output.append("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|") }
            }
            table.removeAll()
        }
        for raw in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingWhitespace
            if line.hasPrefix("|") {
                let cells = line.dropFirst().split(separator: "|", omittingEmptySubsequences: false).map { String($0).trimmingWhitespace }
                let trimmed = cells.last == "" ? Array(cells.dropLast()) : cells
                // The row of dashes under the header is redrawn to the new widths.
                if trimmed.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 == "-" || $0 == ":" } }) { continue }
                table.append(trimmed)
            } else {
                flush()
                if !line.isEmpty { output.append(plain(line)) }
            }
        }
        flush()
        return output
    }

    /// A line of Markdown without its strong-emphasis and code marks, escapes undone:
    /// "**Dana** said `hi` \\*" → "Dana said hi *".
    static func plain(_ line: String) -> String {
        let characters = Array(line)
        var result = ""
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            if character == "\\", let next {
                result.append(next)
                index += 2
            } else if character == "*", next == "*" {
                index += 2
            } else if character == "`" {
                index += 1
            } else {
                result.append(character)
                index += 1
            }
        }
        return result
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    var trimmingWhitespace: String {
        let characters = Array(self)
        var start = 0
        var end = characters.count
        while start < end, characters[start] == " " || characters[start] == "\t" || characters[start] == "\r" { start += 1 }
        while end > start, characters[end - 1] == " " || characters[end - 1] == "\t" || characters[end - 1] == "\r" { end -= 1 }
        return String(characters[start..<end])
    }
}
