import Foundation
import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// `voicepipe session <input>... --out-dir DIR`: every input a session of its own, their replies
/// and logs in the folder, a line per session, the report, the worst exit status; bad input
/// refused with the reason.
struct SessionCorpusCommandTests {
    /// Inputs of generated speech in a fresh folder, with their audio tallied.
    static func corpus(_ count: Int, seconds: Double = 3, in directory: TemporaryDirectory) throws -> [(path: String, tally: AudioTally)] {
        try (0..<count).map { index in
            let path = directory.path("utterance-\(index).wav")
            return (path, try LoadAudio.write(path: path, seconds: seconds, seed: UInt64(7 + index)).tally)
        }
    }

    static func stem(_ path: String) -> String { URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent }

    static func makeFolder(_ directory: TemporaryDirectory, _ name: String) throws -> String {
        let folder = directory.path(name)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        return folder
    }

    @Test func aCorpusWithAnUnreadableFileRunsTheRestAndReportsEachByName() throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.corpus(2, in: directory)
        let broken = try directory.file("broken.wav", Array("not audio at all".utf8))
        let out = try Self.makeFolder(directory, "out")
        let result = try CommandRunner.run(["session", inputs[0].path, broken, inputs[1].path, "--out-dir", out, "--jobs", "2", "--fast"])
        // The worst session's status: the unreadable file's (65), the others ended cleanly.
        #expect(result.status == 65, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(result.stdout)")
        #expect(lines.contains { $0.contains("] \(broken): unreadable: ") }, "\(result.stdout)")
        for input in inputs {
            #expect(lines.contains { $0.contains("] \(input.path): ok, ") && $0.hasSuffix("-> \(out)/\(Self.stem(input.path)).reply.wav") }, "\(result.stdout)")
            #expect(FileManager.default.fileExists(atPath: "\(out)/\(Self.stem(input.path)).reply.wav"))
            #expect(FileManager.default.fileExists(atPath: "\(out)/\(Self.stem(input.path)).log.jsonl"))
        }
        #expect(result.stderr.contains("3 sessions: 2 ok, 1 failed (unreadable 1)"), "\(result.stderr)")

        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/report.json"))) as? [String: Any])
        #expect(report["version"] as? Int == 1 && report["sessionCount"] as? Int == 3 && report["ok"] as? Int == 2)
        #expect(report["failures"] as? [String: Int] == ["unreadable": 1])
        let sessions = try #require(report["sessions"] as? [[String: Any]])
        #expect(sessions.map { $0["input"] as? String } == [inputs[0].path, broken, inputs[1].path])
        #expect(sessions.map { $0["status"] as? String } == ["ok", "unreadable", "ok"])
        #expect((sessions[1]["failure"] as? String)?.contains("broken.wav") == true)
        // Each session has its own id, long enough for AgentCore.
        let ids = sessions.compactMap { $0["sessionId"] as? String }
        #expect(ids.count == 2 && Set(ids).count == 2 && ids.allSatisfy { $0.count >= 33 })
        // Every answered turn's latency is in the report, raw: as many as the sessions' turns answered.
        let answered = sessions.reduce(0) { $0 + (($1["turnLatencies"] as? [Double])?.count ?? 0) }
        #expect(answered > 0 && (report["turnLatency"] as? [String: Double])?["count"] == Double(answered))
        #expect(FileManager.default.fileExists(atPath: out + "/report.md"))
        #expect(try String(contentsOfFile: out + "/report-latency.svg", encoding: .utf8).contains("answered turns in 3 sessions"))

        // The report merges into itself unchanged: `voicepipe report` recomputes the same figures.
        let merged = try CommandRunner.run(["report", out + "/report.json", "--json"])
        #expect(merged.status == 0, "\(merged)")
        #expect(merged.stdout == (try String(contentsOfFile: out + "/report.json", encoding: .utf8)))
    }

    @Test func withJSONEachSessionIsOneObjectAndRepeatsAreNamedByRun() throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.corpus(1, seconds: 2, in: directory)
        let out = try Self.makeFolder(directory, "out")
        let result = try CommandRunner.run(["session", inputs[0].path, "--out-dir", out, "--repeat", "2", "--fast", "--json", "--text", "hello"])
        #expect(result.status == 0, "\(result)")
        let objects = try result.stdout.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(objects.count == 2)
        #expect(objects.allSatisfy { $0["input"] as? String == inputs[0].path && $0["status"] as? String == "ok" && $0["exitStatus"] as? Int == 0 })
        #expect(Set(objects.compactMap { $0["log"] as? String }) == ["\(out)/utterance-0.r1.log.jsonl", "\(out)/utterance-0.r2.log.jsonl"])
        #expect(Set(objects.compactMap { $0["sessionId"] as? String }).count == 2)
        // The typed turn went in each session, as well as the voice turns.
        #expect(objects.allSatisfy { (($0["turns"] as? [[String: Any]]) ?? []).contains { $0["kind"] as? String == "text" } })
        #expect(FileManager.default.fileExists(atPath: "\(out)/utterance-0.r2.reply.wav"))
    }

    /// Four sessions at once through the bundled WebSocket runtime server: each connection's
    /// audio, as the server counted it (samples and CRC-32), is its own input's, whole.
    @Test func theRuntimeServerServesManySessionsAtOnceWithoutMixingThem() throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.corpus(4, in: directory)
        let out = try Self.makeFolder(directory, "out")
        let server = try RuntimeServer(["--pace", "fast", "--summary", "--quiet"])
        defer { server.stop() }
        let result = try CommandRunner.run(["session"] + inputs.map(\.path) + ["--out-dir", out, "--jobs", "4", "--fast", "--json", "--url", server.url + "/voice"])
        #expect(result.status == 0, "\(result)")
        let objects = try result.stdout.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        var idOfInput: [String: String] = [:]
        for object in objects { idOfInput[object["input"] as? String ?? ""] = object["sessionId"] as? String }
        #expect(server.waitForEvents(named: "summary", count: 4))
        var connectionOfSession: [String: String] = [:]
        for event in server.events(named: "session") { connectionOfSession[event["sessionId"] as? String ?? ""] = "\(event["id"] ?? "")" }
        for input in inputs {
            let id = try #require(idOfInput[input.path])
            let connection = try #require(connectionOfSession[id])
            let summary = try #require(server.events(named: "summary").first { "\($0["id"] ?? "")" == connection })
            let received = try #require(summary["audioReceived"] as? [String: any Sendable])
            #expect(Self.whole(received["samples"]) == input.tally.samples, "\(input.path)")
            #expect(Self.whole(received["crc32"]) == Int(input.tally.crc32), "\(input.path)")
        }
    }

    private static func whole(_ value: (any Sendable)?) -> Int? {
        if let number = value as? Int { return number }
        if let number = value as? Double { return Int(exactly: number) }
        return nil
    }

    @Test(arguments: [
        (["a.wav", "b.wav"], 64, "give at most one input file, not 2; to run each as a session of its own, add '--out-dir <dir>'"),
        (["a.wav", "--out-dir", "/nonexistent/folder"], 73, "cannot write into '/nonexistent/folder': it is not a directory that exists; create it first"),
        (["a.wav", "--out-dir", "/tmp", "--jobs", "0"], 64, "'--jobs' must be a whole number from 1 to 1024, not '0'"),
        (["a.wav", "--out-dir", "/tmp", "--repeat", "0"], 64, "'--repeat' must be a whole number from 1 to 100000, not '0'"),
        (["a.wav", "--jobs", "4"], 64, "'--jobs' works with '--out-dir' (a corpus of sessions)"),
        (["a.wav", "--out-dir", "/tmp", "--out", "r.wav"], 64, "'--out' cannot be combined with '--out-dir': each reply is written into the folder as NAME.reply.wav"),
        (["a.wav", "--out-dir", "/tmp", "--session-id", String(repeating: "s", count: 40)], 64, "'--session-id' cannot be combined with '--out-dir': every session of a corpus has its own id"),
        (["one/a.wav", "two/a.wav", "--out-dir", "/tmp"], 64, "'one/a.wav' and 'two/a.wav' would both write files named 'a'"),
        (["--out-dir", "/tmp", "--text", "hi"], 64, "'--out-dir' runs a corpus: give the input files"),
    ])
    func badCorpusCommandsAreRefusedUpFront(arguments: [String], status: Int32, message: String) throws {
        let result = try CommandRunner.run(["session"] + arguments)
        #expect(result.status == status, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
    }
}
