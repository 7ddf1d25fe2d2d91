import Foundation
import VoicePipeCore
import VoicePipeIO
import Testing
import VoicePipeTestSupport

/// `voicepipe session --url` against the runtime server when connections drop (`--misbehave-on N`
/// keeps its switches to the first N connections): the session reconnects, continues the same
/// session, and finishes every turn; when the runtime keeps dropping it gives up with the reason.
@Suite(.serialized) struct SessionReconnectTests {
    static let sample = CommandRunner.sample("speech-8k-mono-s16.wav")

    /// The number in "<label>: N" on a line of the summary.
    static func figure(_ label: String, in output: String) -> Int? {
        output.split(separator: "\n").lazy.compactMap { line -> Int? in
            guard let range = line.range(of: label + ": ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }.first
    }

    /// Each fault aborts a connection with messages the client wrote still unread in the
    /// server's socket (`--cut-mid-message drop` right after the greeting, with texts behind
    /// `session.start`): the runtime's `session.resumed` says what it read, and the client sends
    /// the rest again. Every frame reaches the runtime exactly once and in order (the samples the
    /// server read, over its three connections, are the file through the capture path), and every
    /// typed text exactly once.
    @Test(arguments: [["--drop-after", "3"], ["--reset-after", "3"], ["--cut-mid-message", "drop"]])
    func aSessionWhoseConnectionDropsTwiceReconnectsAndLosesNothing(fault: [String]) throws {
        let directory = try TemporaryDirectory()
        let record = directory.path("received.jsonl")
        let server = try RuntimeServer(["--misbehave-on", "2", "--record", record] + fault)
        defer { server.stop() }
        let result = try CommandRunner.run(["session", Self.sample, "--text", "one", "--text", "two", "--url", server.url + "/voice"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("ended cleanly"), "\(result)")
        #expect(Self.figure("reconnections", in: result.stdout) == 2, "\(result)")
        #expect(result.stdout.contains("reconnecting: attempt 1 of 5 in "), "\(result)")
        #expect(result.stdout.contains("reconnecting: attempt 2 of 5 in "), "\(result)")
        #expect(!result.stdout.contains("unconfirmed"), "\(result)")
        // Three connections, each starting the same session; the later two continue it.
        _ = server.waitForEvents(named: "session", count: 3, within: 10)
        let sessions = server.events(named: "session")
        #expect(sessions.count == 3, "\(sessions)")
        let id = sessions.first?["sessionId"] as? String
        #expect(id?.isEmpty == false)
        #expect(sessions.allSatisfy { $0["sessionId"] as? String == id })
        #expect(sessions.dropFirst().allSatisfy { $0["continuesSessionId"] as? String == id }, "\(sessions)")
        // Every typed text reached the server exactly once.
        let received = server.events(named: "received")
        #expect(received.filter { $0["type"] as? String == "text.input" }.count == 2, "\(received)")
        // The file's 88 frames: each read once, in order, none dropped.
        #expect(result.stdout.contains("audio sent: 2.787 s in 88 frames;"), "\(result)")
        #expect(received.filter { $0["type"] as? String == "audio.chunk" }.count == 88)
        let converted = directory.path("converted.wav")
        #expect(try CommandRunner.run(["convert", Self.sample, converted]).status == 0)
        let (_, expected) = try AudioFiles.read(converted, as: Int16.self)
        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n")
        let heard = lines.flatMap { line -> [Int16] in
            guard case .chunk(let chunk) = AudioChunkJSON.decode(String(line)) else { return [] }
            return chunk.samples
        }
        #expect(heard.count == expected.count && heard == expected, "\(heard.count) samples read, \(expected.count) sent")
    }

    @Test func aRuntimeThatDropsEveryConnectionIsGivenUpOnAfterTheAttemptsWithTheReason() throws {
        // Every connection drops on its first message, session.start.
        let server = try RuntimeServer(["--drop-after", "1"])
        defer { server.stop() }
        let result = try CommandRunner.run(["session", "--text", "one", "--url", server.url + "/voice", "--reconnect", "2"])
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("dropped without a close frame") || result.stderr.contains("broken pipe"), "\(result)")
        #expect(result.stderr.contains("; gave up after 2 attempts to reconnect"), "\(result)")
        #expect(server.events(named: "connection").count == 3)
    }

    @Test func anOrderlyCloseIsNotRetried() throws {
        let server = try RuntimeServer(["--close-after", "2", "--close-code", "1000", "--close-reason", "done"])
        defer { server.stop() }
        let result = try CommandRunner.run(["session", "--text", "one", "--text", "two", "--url", server.url + "/voice"])
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("the runtime closed the connection (1000: done)"), "\(result)")
        #expect(!result.stdout.contains("reconnecting"), "\(result)")
    }

    @Test(arguments: [(["--reconnect", "-1"], "'--reconnect' must be a whole number from 0 to 100, not '-1'"),
                      (["--reconnect", "many"], "'--reconnect' must be a whole number from 0 to 100, not 'many'"),
                      (["--reconnect-hold", "-2"], "'--reconnect-hold' must be a number from 0 to 60, not '-2'")])
    func badReconnectOptionsAreUsageErrors(arguments: [String], message: String) throws {
        let result = try CommandRunner.run(["session", "--text", "x"] + arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
    }
}
