import Foundation
import Testing
import VoicePipeTestSupport

/// `voicepipe session --url` against the runtime server of Samples/runtime-server on 127.0.0.1:
/// the exact frames, secrets kept out of every output, SigV4, rotation, and failures.
@Suite(.serialized) struct SessionWebSocketTests {
    static let sample = CommandRunner.sample("speech-8k-mono-s16.wav")

    /// The lines of a JSON Lines file that are `audio.chunk` messages.
    static func audioChunks(in path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
            .filter { $0.contains(#""type":"audio.chunk""#) }
    }

    @Test func theServerReceivesExactlyTheFramesEncodeWrites() throws {
        let directory = try TemporaryDirectory()
        let recorded = directory.path("recorded.jsonl"), encoded = directory.path("encoded.jsonl"), reply = directory.path("reply.wav")
        let server = try RuntimeServer(["--pace", "fast", "--record", recorded])
        defer { server.stop() }
        let result = try CommandRunner.run(["session", Self.sample, "--fast", "--url", server.url + "/voice", "--out", reply])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("with the runtime at \(server.url)/voice"))
        #expect(result.stdout.contains("ended cleanly"))
        #expect(try CommandRunner.run(["encode", Self.sample, "--out", encoded]).status == 0)
        let sent = try Self.audioChunks(in: recorded)
        let expected = try Self.audioChunks(in: encoded)
        #expect(expected.count == 88)
        #expect(sent == expected)
        let (format, played) = try AudioFiles.read(reply, as: Float.self)
        #expect(format.sampleRate == 24_000 && format.sampleType == .float32)
        #expect(!played.isEmpty)
    }

    @Test func credentialsInTheURLAndHeadersNeverAppearInAnyOutput() throws {
        let directory = try TemporaryDirectory()
        let log = directory.path("session.jsonl")
        let server = try RuntimeServer(["--pace", "fast"])
        defer { server.stop() }
        let authority = server.url.replacingOccurrences(of: "ws://", with: "ws://agent:s3cret-password@")
        let result = try CommandRunner.run(["session", "--text", "hello", "--url", authority + "/voice?token=s3cret-token",
                                            "--header", "X-Api-Key: s3cret-key", "--log", log])
        #expect(result.status == 0, "\(result)")
        let logged = try String(contentsOfFile: log, encoding: .utf8)
        for secret in ["s3cret-password", "s3cret-token", "s3cret-key"] {
            #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret) && !logged.contains(secret), "\(secret) leaked")
        }
        #expect(result.stdout.contains("/voice?…"))
        let connection = try #require(server.events(named: "connection").first)
        #expect(connection["query"] as? String == "token=s3cret-token")
        let headers = "\(connection["headers"] ?? "")"
        #expect(headers.contains("s3cret-key"))
        #expect(headers.contains("Basic " + Data("agent:s3cret-password".utf8).base64EncodedString()))
    }

    @Test func headersFromAFileAndAVariableReachTheServerAndNeverTheCommandLineOrAnyOutput() throws {
        let directory = try TemporaryDirectory()
        let log = directory.path("session.jsonl"), headerFile = directory.path("headers.txt")
        try "# runtime credentials\nAuthorization: Bearer s3cret-file-token\r\nX-Tenant: acme\n".write(toFile: headerFile, atomically: true, encoding: .utf8)
        let server = try RuntimeServer(["--pace", "fast"])
        defer { server.stop() }
        let result = try CommandRunner.run(["session", "--text", "hello", "--url", server.url + "/voice", "--header", "X-Inline: 1",
                                            "--header", "@" + headerFile, "--header-env", "RUNTIME_AUTH", "--log", log],
                                           environment: ["RUNTIME_AUTH": "X-Api-Key: s3cret-env-key\nX-Trace: 42"])
        #expect(result.status == 0, "\(result)")
        let logged = try String(contentsOfFile: log, encoding: .utf8)
        for secret in ["s3cret-file-token", "s3cret-env-key"] {
            #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret) && !logged.contains(secret), "\(secret) leaked")
        }
        let connection = try #require(server.events(named: "connection").first)
        let pairs = try #require(connection["headers"] as? [[String]])
        let received = Dictionary(pairs.compactMap { $0.count == 2 ? ($0[0].lowercased(), $0[1]) : nil }, uniquingKeysWith: { first, _ in first })
        #expect(received["x-inline"] == "1")
        #expect(received["authorization"] == "Bearer s3cret-file-token")
        #expect(received["x-tenant"] == "acme")
        #expect(received["x-api-key"] == "s3cret-env-key")
        #expect(received["x-trace"] == "42")
    }

    @Test(arguments: ["presign", "header"])
    func aSigV4SignedSessionRunsAndAWrongSecretExits75WithTheStatus(placement: String) throws {
        let key = "AKIDVOICEPIPECLI", secret = "s3cretSecretAccessKeyForTheCLITest"
        let server = try RuntimeServer(["--pace", "fast", "--require-sigv4", placement, "--aws-access-key-id", key,
                                        "--aws-secret-access-key", secret, "--aws-region", "eu-west-1"])
        defer { server.stop() }
        let url = server.url + "/runtimes/arn%3Aaws%3Abedrock-agentcore%3Aeu-west-1%3A123456789012%3Aruntime%2Fagent/ws?qualifier=DEFAULT"
        let arguments = ["session", "--text", "hello", "--url", url, "--aws-sigv4", placement]
        let environment = ["AWS_ACCESS_KEY_ID": key, "AWS_REGION": "eu-west-1", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": ""]
        let accepted = try CommandRunner.run(arguments, environment: environment.merging(["AWS_SECRET_ACCESS_KEY": secret]) { $1 })
        #expect(accepted.status == 0, "\(accepted)\n\(server.events(named: "sigv4"))")
        let refused = try CommandRunner.run(arguments, environment: environment.merging(["AWS_SECRET_ACCESS_KEY": secret + "x"]) { $1 })
        #expect(refused.status == 75, "\(refused)")
        #expect(refused.stderr.contains("HTTP status 403"), "\(refused)")
        for output in [accepted.stdout, accepted.stderr, refused.stdout, refused.stderr] {
            #expect(!output.contains(secret))
        }
    }

    /// A profile's credential_process whose credentials last 14 minutes, inside botocore's
    /// 15-minute refresh window: every connection (the first and each rotation) signs with
    /// credentials fetched for it, and the server accepts every handshake.
    @Test func aCredentialProcessSignsEveryConnectionWithCredentialsFetchedForIt() throws {
        let directory = try TemporaryDirectory()
        let tone = Signals.int16(Signals.sine(frequency: 440, amplitude: 0.5, sampleRate: 16_000, frames: 16_000))
        let samples = tone + [Int16](repeating: 0, count: 16_000 * 3 / 2) + tone
        let input = try directory.file("two-turns.wav", Array(WAVBytes.pcm16(rate: 16_000, channels: 1, samples: samples)))
        let key = "ASIAPROCESSCLI", secret = "s3cretProcessSecretAccessKey"
        let script = """
            #!/usr/bin/env python3
            import datetime, json, os
            runs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runs")
            with open(runs, "a") as log:
                log.write("run\\n")
            expiry = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=14)
            print(json.dumps({"Version": 1, "AccessKeyId": "\(key)", "SecretAccessKey": "\(secret)",
                              "Expiration": expiry.isoformat()}))
            """
        let process = try directory.file("credential-process", Array(script.utf8))
        chmod(process, 0o755)
        _ = try directory.file("config", Array("[profile voice]\ncredential_process = \(process) --profile voice\n".utf8))
        let server = try RuntimeServer(["--pace", "fast", "--require-sigv4", "presign", "--aws-access-key-id", key, "--aws-secret-access-key", secret])
        defer { server.stop() }
        let result = try CommandRunner.run(["session", input, "--url", server.url + "/voice", "--rotate-after", "1", "--aws-sigv4", "presign", "--aws-region", "us-east-1"],
                                           environment: ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "voice",
                                                         "AWS_SHARED_CREDENTIALS_FILE": directory.path("credentials"), "AWS_CONFIG_FILE": directory.path("config")])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("credentials from the credential_process '\(process)' of the profile 'voice'"), "\(result)")
        #expect(result.stdout.contains("rotated: the fresh connection took over after"), "\(result)")
        let signatures = server.events(named: "sigv4")
        #expect(signatures.count >= 2 && signatures.allSatisfy { ["1", "1.0", "true"].contains("\($0["accepted"] ?? "")") }, "\(signatures)")
        // One run when the session starts (a failing process is heard before connecting), then one per connection.
        let runs = try String(contentsOfFile: directory.path("runs"), encoding: .utf8).split(separator: "\n").count
        #expect(runs == signatures.count + 1, "\(runs) runs for \(signatures.count) connections")
    }

    @Test func aFailingCredentialProcessIsRefusedBeforeConnectingWithItsOwnWords() throws {
        let directory = try TemporaryDirectory()
        let process = try directory.file("expired-login", Array("#!/bin/sh\necho 'the SSO session has expired; log in again' >&2\nexit 2\n".utf8))
        chmod(process, 0o755)
        _ = try directory.file("config", Array("[default]\ncredential_process = \(process) --token s3cret-arg\n".utf8))
        let result = try CommandRunner.run(["session", "--text", "x", "--url", "ws://127.0.0.1:9/voice", "--aws-sigv4", "header", "--aws-region", "us-east-1"],
                                           environment: ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_PROFILE": "default",
                                                         "AWS_SHARED_CREDENTIALS_FILE": directory.path("credentials"), "AWS_CONFIG_FILE": directory.path("config")])
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("the credential_process '\(process)' of the AWS profile 'default' exited with status 2: the SSO session has expired; log in again"), "\(result)")
        #expect(!result.stderr.contains("s3cret-arg") && !result.stdout.contains("s3cret-arg"))
    }

    /// Reply audio held back by the network and sent in bursts every 200 ms, played on a speaker
    /// (an ALSA file PCM, so what it played can be read back): the first reply teaches the jitter
    /// buffer how late chunks come, and the second plays without a hole.
    @Test func repliesSentInBurstsPlayWithoutAHoleOnceTheJitterBufferHasAdapted() throws {
        let home = try TemporaryDirectory()
        let played = home.path("played.raw")
        _ = try home.file(".asoundrc", Array("""
            pcm.replyfile { type file slave.pcm null file "\(played)" format raw }
            """.utf8))
        // Two tones over a quiet room (−50 dBFS noise, under the gate): the runtime's replies are
        // the turns' audio, never digital silence, so any silence inside a reply is a hole.
        let tone = Signals.sine(frequency: 440, amplitude: 0.5, sampleRate: 16_000, frames: 16_000)
        var signal = Signals.noise(amplitude: 0.003, frames: 16_000 * 7, seed: 7)
        for (index, value) in tone.enumerated() {
            signal[index] += value
            signal[16_000 * 4 + index] += value
        }
        let input = try home.file("two-turns.wav", Array(WAVBytes.pcm16(rate: 16_000, channels: 1, samples: Signals.int16(signal))))
        let server = try RuntimeServer(["--reply-bursts", "200"])
        defer { server.stop() }
        let result = try CommandRunner.run(["session", input, "--url", server.url + "/voice", "--speaker", "replyfile"], environment: ["HOME": home.path("")])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("turns: 2 (2 spoken, 0 typed)"), "\(result.stdout)")
        #expect(result.stdout.contains("jitter buffer: "), "\(result.stdout)")

        // What the speaker played: 48 kHz stereo Float32, digital silence between the replies.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: played))
        let left: [Float] = bytes.withUnsafeBytes { raw in
            let floats = raw.bindMemory(to: Float.self)
            return stride(from: 0, to: floats.count - 1, by: 2).map { floats[$0] }
        }
        // Silences of 1 ms or more: over 0.5 s they separate the replies; shorter ones are holes.
        var silences: [Range<Int>] = []
        var run = 0
        for (index, sample) in left.enumerated() {
            if sample == 0 { run += 1; continue }
            if run >= 48 { silences.append(index - run..<index) }
            run = 0
        }
        // The replies: what lies between the long silences, trimmed to their first and last sound.
        var replies: [Range<Int>] = []
        var from = 0
        for separator in silences.filter({ $0.count >= 24_000 }) + [left.count..<left.count] {
            if let first = left[from..<separator.lowerBound].firstIndex(where: { $0 != 0 }),
               let last = left[from..<separator.lowerBound].lastIndex(where: { $0 != 0 }) {
                replies.append(first..<last + 1)
            }
            from = separator.upperBound
        }
        #expect(replies.count == 2, "\(replies)")
        guard replies.count == 2 else { return }
        // The converter's last few samples of a reply play when the reply is over, after the
        // playback gap (300 ms): a silence followed only by them is that wait, not a hole.
        func holes(_ reply: Range<Int>) -> [Int] {
            silences.filter { reply.contains($0.lowerBound) && reply.upperBound - $0.upperBound >= 240 }.map(\.count)
        }
        // Adapted, the second reply has no hole a listener hears: at most one render period in
        // all, which a busy machine's scheduling can cost (capped at 40 ms, the buffer leaves a
        // hole of 140 ms there).
        #expect(holes(replies[1]).reduce(0, +) <= 720, "holes in the second reply (frames): \(holes(replies[1])); in the first: \(holes(replies[0]))")
        #expect(replies[1].count > 48_000, "\(replies[1].count) frames of the second reply")
    }

    @Test func aRotationMidStreamAccountsForEveryFrame() throws {
        let directory = try TemporaryDirectory()
        // A tone, a pause of digital silence and a second tone: two turns, with quiet ready moments between.
        let tone = Signals.int16(Signals.sine(frequency: 440, amplitude: 0.5, sampleRate: 16_000, frames: 16_000))
        let samples = tone + [Int16](repeating: 0, count: 16_000 * 3 / 2) + tone
        let input = try directory.file("two-turns.wav", Array(WAVBytes.pcm16(rate: 16_000, channels: 1, samples: samples)))
        let recorded = directory.path("recorded.jsonl"), encoded = directory.path("encoded.jsonl")
        // Each connection must be signed (anew): the server checks every handshake with botocore.
        let key = "AKIDROTATION", secret = "s3cretRotationSecretAccessKey"
        let server = try RuntimeServer(["--pace", "fast", "--record", recorded, "--require-sigv4", "presign",
                                        "--aws-access-key-id", key, "--aws-secret-access-key", secret])
        defer { server.stop() }
        let result = try CommandRunner.run(["session", input, "--url", server.url + "/voice", "--rotate-after", "1",
                                            "--aws-sigv4", "presign", "--aws-region", "us-east-1"],
                                           environment: ["AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": ""])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("rotated: the fresh connection took over after"), "\(result)")
        #expect(try CommandRunner.run(["encode", input, "--out", encoded]).status == 0)
        // Frames cross two connections, so their arrival order may interleave: count each.
        let sent = try Self.audioChunks(in: recorded), expected = try Self.audioChunks(in: encoded)
        #expect(sent.count == expected.count)
        #expect(Dictionary(sent.map { ($0, 1) }, uniquingKeysWith: +) == Dictionary(expected.map { ($0, 1) }, uniquingKeysWith: +))
        _ = server.waitForEvents(named: "sigv4", count: 2, within: 10)
        let signatures = server.events(named: "sigv4")
        #expect(signatures.count >= 2 && signatures.allSatisfy { ["1", "1.0", "true"].contains("\($0["accepted"] ?? "")") }, "\(signatures)")
        let sessions = server.events(named: "session")
        #expect(sessions.count >= 2)
        #expect(sessions.dropFirst().allSatisfy { $0["continuesSessionId"] as? String == $0["sessionId"] as? String })
    }

    @Test func withReconnectZeroAServerThatDropsTheConnectionMidSessionExits75() throws {
        let server = try RuntimeServer(["--drop-after", "2"])
        defer { server.stop() }
        let result = try CommandRunner.run(["session", "--text", "one", "--text", "two", "--url", server.url + "/voice", "--reconnect", "0"])
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("dropped without a close frame"), "\(result)")
    }

    @Test func aServerThatStallsMidSessionIsCutAtTheReadTimeoutAndExits75() throws {
        let server = try RuntimeServer(["--stall-after", "3"])
        defer { server.stop() }
        let started = Date()
        let result = try CommandRunner.run(["session", Self.sample, "--url", server.url + "/voice", "--read-timeout", "2", "--reconnect", "0"])
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("the runtime sent nothing, and did not answer a ping, for 2 s"), "\(result)")
        #expect(Date().timeIntervalSince(started) < 15)
    }

    @Test func aRefusedHandshakeExits75WithItsStatus() throws {
        let server = try RuntimeServer(["--refuse-status", "503"])
        defer { server.stop() }
        let result = try CommandRunner.run(["session", "--text", "hello", "--url", server.url + "/voice"])
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("refused the WebSocket handshake with HTTP status 503"), "\(result)")
    }

    @Test(arguments: [
        (["--text", "x", "--header", "X-A: 1"], 64, "'--header' applies to a WebSocket runtime: give '--url' or '--agentcore-runtime' too"),
        (["--text", "x", "--url", "http://127.0.0.1/ws"], 64, "the URL starts with 'http://'"),
        (["--text", "x", "--url", "ws://127.0.0.1:99999/ws"], 64, "the URL's port '99999' is not a number from 1 to 65535"),
        (["--text", "x", "--url", "ws://127.0.0.1/ws", "--stdio"], 64, "'--url' cannot be combined with '--stdio'"),
        (["--text", "x", "--url", "ws://127.0.0.1/ws", "--header", "no colon"], 64, "a header must be given as 'Name: value'"),
        (["--text", "x", "--url", "wss://127.0.0.1/ws", "--ca-file", "/nonexistent/ca.pem"], 66, "cannot read the CA file '/nonexistent/ca.pem'"),
        (["--text", "x", "--url", "ws://127.0.0.1/ws", "--header", "@/nonexistent/headers"], 66, "cannot read the header file '/nonexistent/headers'"),
        (["--text", "x", "--url", "ws://127.0.0.1/ws", "--header", "@"], 64, "'--header @' needs a file name after the '@'"),
        (["--text", "x", "--url", "ws://127.0.0.1/ws", "--header", "@/etc/hostname"], 64, "the header file '/etc/hostname', line 1: a header must be given as 'Name: value'"),
        (["--text", "x", "--url", "ws://127.0.0.1/ws", "--header-env", "VOICEPIPE_TEST_UNSET"], 64, "'--header-env VOICEPIPE_TEST_UNSET': the environment variable VOICEPIPE_TEST_UNSET is not set or empty"),
        (["--text", "x", "--url", "ws://127.0.0.1/ws", "--header-env", "HOME"], 64, "'--header-env HOME', line 1: a header must be given as 'Name: value'"),
        (["--text", "x", "--url", "ws://127.0.0.1/ws", "--header-env", "1BAD"], 64, "'--header-env' takes the name of an environment variable"),
        (["--text", "x", "--header-env", "HOME"], 64, "'--header-env' applies to a WebSocket runtime"),
        (["--text", "x", "--url", "ws://127.0.0.1/ws", "--ca-file", "/etc/hostname"], 64, "'--ca-file' applies to a wss:// URL"),
        (["--text", "x", "--url", "ws://127.0.0.1/ws", "--aws-sigv4", "query"], 64, "'--aws-sigv4' must be presign or header, not 'query'"),
        (["--text", "x", "--url", "ws://127.0.0.1/ws", "--aws-sigv4", "presign"], 64, "no AWS region"),
        (["--text", "x", "--url", "ws://127.0.0.1/ws", "--aws-sigv4", "presign", "--aws-region", "us-east-1"], 64, "no AWS credentials"),
        (["--text", "x", "--url", "ws://127.0.0.1/ws", "--rotate-after", "0"], 64, "'--rotate-after' must be a number from 1 to 86400"),
        (["--text", "x", "--keep-alive", "0"], 64, "'--keep-alive' must be a number from 0.1 to 3600"),
        (["--text", "x", "--keep-alive", "-5"], 64, "'--keep-alive' must be a number from 0.1 to 3600"),
        (["--text", "x", "--keep-alive", "inf"], 64, "'--keep-alive' must be a number from 0.1 to 3600"),
        (["--text", "x", "--keep-alive", "nan"], 64, "'--keep-alive' must be a number from 0.1 to 3600"),
    ] as [([String], Int32, String)])
    func badWebSocketOptionsAreRefusedBeforeConnecting(arguments: [String], status: Int32, message: String) throws {
        let home = try TemporaryDirectory()
        let environment = ["HOME": home.path(""), "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "",
                           "AWS_PROFILE": "", "AWS_SHARED_CREDENTIALS_FILE": home.path("credentials")]
        let result = try CommandRunner.run(["session"] + arguments, environment: environment)
        #expect(result.status == status, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
    }
}

/// The runtime server's own self-test (Samples/runtime-server/test_server.py): its behaviour and
/// every switch, checked with a Python client and raw sockets, so the server the WebSocket tests
/// stand on is itself tested.
struct RuntimeServerSelfTests {
    @Test func theRuntimeServerPassesItsSelfTest() throws {
        let python = RuntimeServer.python
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "run scripts/bootstrap: \(python.path) is missing")
        let script = CommandRunner.packageRoot.appendingPathComponent("Samples/runtime-server/test_server.py").path
        let result = try CommandRunner.run([script], executable: python)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("OK"), "\(result)")
    }
}
