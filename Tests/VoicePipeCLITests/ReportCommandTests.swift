import Foundation
import Testing
import VoicePipeTestSupport

/// `voicepipe report` merges corpus reports as a script relies on them: the documented JSON
/// shape in, one report of every session out, percentiles recomputed from the raw turns.
struct ReportCommandTests {
    /// A report as the documented shape writes it: one session per entry of `latencies`.
    static func report(_ sessions: [(input: String, status: String, latencies: [Double])]) -> String {
        let entries = sessions.map { session in
            let failure = session.status == "ok" ? "" : #""failure":"the runtime did not answer","#
            let latencies = session.latencies.map { String($0) }.joined(separator: ",")
            return #"{"input":"\#(session.input)","status":"\#(session.status)",\#(failure)"sessionId":null,"turns":\#(session.latencies.count),"turnLatencies":[\#(latencies)],"turnLatency":null,"connectToReadySeconds":0.05,"interruptions":1,"toolCalls":\#(session.latencies.count),"toolCallsOverBudget":0,"reconnections":0,"audioSentSeconds":2.5,"audioReceivedSeconds":3,"framesDropped":0}"#
        }
        return #"{"version":1,"sessions":[\#(entries.joined(separator: ","))]}"#
    }

    @Test func twoMachinesReportsMergeIntoTheReportOfEverySession() throws {
        let directory = try TemporaryDirectory()
        let first = try directory.file("a.json", Array(Self.report([("a1.wav", "ok", [0.1, 0.2, 0.3]), ("a2.wav", "timeout", [])]).utf8))
        let second = try directory.file("b.json", Array(Self.report([("b1.wav", "ok", [0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])]).utf8))
        let result = try CommandRunner.run(["report", first, second, "--json"])
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["version"] as? Int == 1)
        #expect(object["sessionCount"] as? Int == 3 && object["ok"] as? Int == 2 && object["failed"] as? Int == 1)
        #expect(object["failures"] as? [String: Int] == ["timeout": 1])
        #expect(object["turns"] as? Int == 10 && object["interruptions"] as? Int == 3 && object["toolCalls"] as? Int == 10)
        let sessions = try #require(object["sessions"] as? [[String: Any]])
        #expect(sessions.map { $0["input"] as? String } == ["a1.wav", "a2.wav", "b1.wav"])
        // Nearest rank over the ten turns, not the mean of the two reports' medians (0.2 and 0.7).
        let spread = try #require(object["turnLatency"] as? [String: Double])
        #expect(spread == ["count": 10, "median": 0.5, "p90": 0.9, "p95": 1.0, "p99": 1.0, "max": 1.0])
        // Each session's own distribution, recomputed too.
        #expect((sessions[0]["turnLatency"] as? [String: Double])?["median"] == 0.2)

        let page = try CommandRunner.run(["report", first, second])
        #expect(page.status == 0)
        #expect(page.stdout.contains("- sessions: 3, 2 ok, 1 failed (timeout 1)"), "\(page.stdout)")
        #expect(page.stdout.contains("- turn latency over 10 answered turns: median 0.5 s, p90 0.9 s, p95 1 s, p99 1 s, max 1 s"), "\(page.stdout)")
        #expect(page.stdout.contains("| a2.wav | timeout | the runtime did not answer |"))
    }

    @Test func withAnOutputFolderTheReportPageAndPictureAreWritten() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file("a.json", Array(Self.report([("a1.wav", "ok", [0.1, 0.25])]).utf8))
        let folder = directory.path("merged")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let result = try CommandRunner.run(["report", input, "--out-dir", folder])
        #expect(result.status == 0, "\(result)")
        let json = try String(contentsOfFile: folder + "/report.json", encoding: .utf8)
        #expect(json.hasPrefix(#"{"version":1,"sessionCount":1,"ok":1,"failed":0,"failures":{},"turns":2,"turnLatency":{"count":2,"median":0.1,"p90":0.25,"p95":0.25,"p99":0.25,"max":0.25}"#), "\(json)")
        #expect(try String(contentsOfFile: folder + "/report.md", encoding: .utf8).contains("](report-latency.svg)"))
        #expect(try String(contentsOfFile: folder + "/report-latency.svg", encoding: .utf8).contains("Turn latency, 2 answered turns in 1 sessions"))
    }

    @Test(arguments: [
        ("summary", #"{"version":1,"sessionId":"s","status":"ok"}"#, "is not a VoicePipe report: it has no 'version' and 'sessions' (a session summary is not a report)"),
        ("text", "not json", "is not a VoicePipe report: it is not JSON"),
        ("future", #"{"version":2,"sessions":[]}"#, "is a version 2 report; this voicepipe reads version 1"),
    ])
    func aFileThatIsNotAReportIsRefusedByName(name: String, text: String, message: String) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("\(name).json", Array(text.utf8))
        let result = try CommandRunner.run(["report", path])
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.contains("'\(path)' \(message)"), "\(result.stderr)")
    }

    @Test func missingInputsAndFoldersAreRefused() throws {
        let none = try CommandRunner.run(["report"])
        #expect(none.status == 64, "\(none)")
        let missing = try CommandRunner.run(["report", "/nonexistent/report.json"])
        #expect(missing.status == 66 && missing.stderr.contains("cannot read '/nonexistent/report.json'"), "\(missing)")
        let directory = try TemporaryDirectory()
        let input = try directory.file("a.json", Array(Self.report([("a1.wav", "ok", [0.1])]).utf8))
        let noFolder = try CommandRunner.run(["report", input, "--out-dir", directory.path("absent")])
        #expect(noFolder.status == 73 && noFolder.stderr.contains("it is not a directory that exists; create it first"), "\(noFolder)")
    }
}
