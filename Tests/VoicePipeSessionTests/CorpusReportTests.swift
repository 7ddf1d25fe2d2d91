import Testing
import VoicePipeCore
import VoicePipeSession

/// A corpus report is built from the sessions' own summaries, keeps every turn's latency raw,
/// and merges reports into exactly the report of all their sessions.
struct CorpusReportTests {
    static let reply = AudioChunk(sampleRate: 24_000, samples: [Int16](repeating: 1_000, count: 480))

    /// A session that connected at the origin, was ready `readyAfter` later, and had typed turns
    /// answered after each of `latencies` (milliseconds); its summary as the session writes it.
    static func summary(latencies: [Int], readyAfter: Duration = .milliseconds(40), endedCleanly: Bool = true) -> JSONObject {
        var script = SessionScript()
        script.run { $0.connect(at: .origin) }
        let ready = SessionInstant.origin + readyAfter
        let opened = script.run { $0.transportOpened(at: ready) }
        script.confirmTexts(in: opened, at: ready)
        var instant = ready
        for (index, latency) in latencies.enumerated() {
            instant = instant + .seconds(1)
            let typedAt = instant
            _ = try? script.type("turn \(index + 1)", at: typedAt)
            script.receive(.audioChunk(Self.reply), at: typedAt + .milliseconds(latency))
            script.run { $0.playbackDrained(at: typedAt + .milliseconds(latency)) }
            instant = typedAt + .milliseconds(latency) + .milliseconds(300)
            script.run { $0.tick(at: instant) }
        }
        if endedCleanly {
            script.run { $0.end(at: instant) }
            script.receive(.sessionEnded(reason: "done"), at: instant)
            script.run { $0.transportClosed("the runtime closed the connection", orderly: true, at: instant) }
        }
        return SessionSummary.json(of: script.machine, duration: .seconds(30))
    }

    @Test func aSessionIsReportedWithItsOwnFigures() throws {
        let session = try CorpusReport.Session(input: "calls/a.wav", summary: Self.summary(latencies: [120, 80, 200], readyAfter: .milliseconds(55)))
        #expect(session.status == "ok" && session.failure == nil)
        #expect(session.turns == 3)
        #expect(session.turnLatencies == [0.12, 0.08, 0.2])
        #expect(session.connectToReadySeconds == 0.055)
        let report = CorpusReport(sessions: [session])
        let text = JSONWriter.string(report.json["turnLatency"] ?? .null)
        #expect(text == #"{"count":3,"median":0.12,"p90":0.2,"p95":0.2,"p99":0.2,"max":0.2}"#)
    }

    /// Twenty turns split over two machines' reports: the merge gives the distribution of all
    /// twenty (nearest rank), which the average of the two reports' percentiles does not.
    @Test func mergedReportsRecomputeThePercentilesFromTheRawTurns() throws {
        let first = CorpusReport(sessions: [try CorpusReport.Session(input: "a.wav", summary: Self.summary(latencies: Array(stride(from: 10, through: 100, by: 10))))])
        let second = CorpusReport(sessions: [try CorpusReport.Session(input: "b.wav", summary: Self.summary(latencies: Array(stride(from: 110, through: 200, by: 10))))])
        // Each report as a file would hold it, read back.
        let readBack = try [first, second].map { report in
            try CorpusReport(json: try JSONParser.parse(JSONWriter.string(.object(report.json))), source: "report.json")
        }
        #expect(readBack == [first, second])
        let merged = CorpusReport.merged(readBack)
        #expect(merged.sessions.map(\.input) == ["a.wav", "b.wav"])
        let spread = try #require(merged.turnLatency)
        #expect([spread.median, spread.p90, spread.p95, spread.p99, spread.max] == [100, 180, 190, 200, 200].map { .milliseconds($0) })
        // The average of the two reports' p90s (90 and 190 ms) is 140 ms; the twenty turns' p90 is 180 ms.
        let averagedP90 = (try #require(first.turnLatency).p90 + (try #require(second.turnLatency).p90)) / 2
        #expect(averagedP90 == .milliseconds(140) && spread.p90 == .milliseconds(180))
        #expect(merged.json["turns"] == .integer(20))
        #expect(JSONWriter.string(merged.json["connectToReady"] ?? .null) == #"{"count":2,"median":0.04,"p90":0.04,"p95":0.04,"p99":0.04,"max":0.04}"#)
    }

    @Test func failedSessionsAreCountedByReasonAndNamed() throws {
        let sessions = [
            try CorpusReport.Session(input: "ok.wav", summary: Self.summary(latencies: [100])),
            try CorpusReport.Session(input: "still.wav", summary: Self.summary(latencies: [100], endedCleanly: false)),
            CorpusReport.Session(input: "broken.wav", status: "unreadable", failure: "cannot read 'broken.wav': not an audio file"),
            CorpusReport.Session(input: "gone.wav", status: "unreadable", failure: "cannot read 'gone.wav': no such file"),
        ]
        let report = CorpusReport(sessions: sessions)
        #expect(report.okCount == 1)
        #expect(report.failures.map { "\($0.status) \($0.count)" } == ["unreadable 2", "stopped 1"])
        #expect(JSONWriter.string(report.json["failures"] ?? .null) == #"{"unreadable":2,"stopped":1}"#)
        let page = CorpusReportPage.markdown(report, latencyImage: "report-latency.svg")
        #expect(page.contains("- sessions: 4, 1 ok, 3 failed (unreadable 2, stopped 1)"), "\(page)")
        #expect(page.contains("| broken.wav | unreadable | cannot read 'broken.wav': not an audio file |"), "\(page)")
        #expect(page.contains("![Turn latency across every answered turn](report-latency.svg)"))
        let svg = try #require(CorpusReportPage.latencySVG(report))
        #expect(svg.hasPrefix("<svg ") && svg.hasSuffix("</svg>\n"))
        #expect(svg.contains("Turn latency, 2 answered turns in 4 sessions"))
    }

    @Test func aFileThatIsNotAReportIsRefusedWithTheReason() throws {
        let summary = Self.summary(latencies: [100])
        #expect(throws: CorpusReportError.notAReport(source: "'s.json'", reason: "it has no 'version' and 'sessions' (a session summary is not a report)")) {
            try CorpusReport(json: .object(summary), source: "'s.json'")
        }
        #expect(throws: CorpusReportError.unsupportedVersion(2, of: "report", source: "'r.json'")) {
            try CorpusReport(json: .object(["version": .integer(2), "sessions": .array([])]), source: "'r.json'")
        }
        #expect(throws: CorpusReportError.badField("turnLatencies", context: "a session of 'r.json'", expected: "an array")) {
            try CorpusReport(json: .object(["version": .integer(1), "sessions": .array([.object(["input": .string("a"), "status": .string("ok"), "turns": .integer(1)])])]), source: "'r.json'")
        }
        #expect(CorpusReportError.unsupportedVersion(2, of: "report", source: "'r.json'").description == "'r.json' is a version 2 report; this voicepipe reads version 1")
    }
}
