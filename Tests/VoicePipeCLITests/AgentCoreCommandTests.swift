import Foundation
import Testing
import VoicePipeTestSupport

/// `voicepipe presign` and `voicepipe session --agentcore-runtime`: the URL AWS's own SDK builds,
/// the session id on every handshake, and the usage errors bad input gets.
@Suite(.serialized) struct AgentCoreCommandTests {
    static let arn = "arn:aws:bedrock-agentcore:eu-west-1:123456789012:runtime/voice_agent-Ab12"
    static let key = "AKIDVOICEPIPEAGENTCORE", secret = "s3cretSecretAccessKeyForAgentCore"
    static let sessionId = "voicepipe-cli-0123456789abcdef0123456789abcdef"
    /// Credentials in the environment only, nothing from the user's files.
    static func environment(_ home: TemporaryDirectory, _ extra: [String: String] = [:]) -> [String: String] {
        ["HOME": home.path(""), "AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": "", "AWS_REGION": "",
         "AWS_DEFAULT_REGION": "", "AWS_PROFILE": "", "AWS_SHARED_CREDENTIALS_FILE": home.path("credentials"),
         "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_BEDROCK_AGENTCORE": ""].merging(extra) { $1 }
    }

    /// The SDK's `generate_presigned_url` for the same input at `unixSeconds`.
    static func sdkURL(qualifier: String, expires: Int, at unixSeconds: Int) throws -> String {
        let script = CommandRunner.packageRoot.appendingPathComponent("Tests/VoicePipeClientTests/Scripts/agentcore_sdk.py")
        let result = try CommandRunner.run([script.path, "--arn", arn, "--session-id", sessionId, "--qualifier", qualifier, "--region", "eu-west-1",
                                            "--access-key-id", key, "--secret-access-key", secret, "--unix-seconds", String(unixSeconds),
                                            "--expires", String(expires)], executable: RuntimeServer.python)
        try #require(result.status == 0, "agentcore_sdk.py failed (run scripts/bootstrap): \(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
        return try #require(object["presignedURL"] as? String)
    }

    /// The CLI has no frozen clock, so the URL must be the SDK's for one of the seconds the run spanned.
    @Test func presignPrintsTheSDKsURLAndNothingElse() throws {
        let home = try TemporaryDirectory()
        let before = Int(Date().timeIntervalSince1970)
        let result = try CommandRunner.run(["presign", "--agentcore-runtime", Self.arn, "--qualifier", "DEFAULT", "--session-id", Self.sessionId,
                                            "--aws-expires", "120"], environment: Self.environment(home))
        let after = Int(Date().timeIntervalSince1970)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty)
        let expected = try (before...after).map { try Self.sdkURL(qualifier: "DEFAULT", expires: 120, at: $0) + "\n" }
        #expect(expected.contains(result.stdout), "\(result.stdout) is none of \(expected)")
    }

    @Test func presignGoesToTheEndpointTheEnvironmentNames() throws {
        let home = try TemporaryDirectory()
        let arguments = ["presign", "--agentcore-runtime", Self.arn, "--session-id", Self.sessionId]
        let general = try CommandRunner.run(arguments, environment: Self.environment(home, ["AWS_ENDPOINT_URL": "http://127.0.0.1:9000"]))
        #expect(general.stdout.hasPrefix("ws://127.0.0.1:9000/runtimes/arn%3Aaws%3Abedrock-agentcore%3Aeu-west-1%3A123456789012%3Aruntime%2Fvoice_agent-Ab12/ws?X-Amzn-Bedrock-AgentCore-Runtime-Session-Id=\(Self.sessionId)&X-Amz-Algorithm="), "\(general)")
        let specific = try CommandRunner.run(arguments, environment: Self.environment(home, ["AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
                                                                                             "AWS_ENDPOINT_URL_BEDROCK_AGENTCORE": "https://agentcore.example.com"]))
        #expect(specific.stdout.hasPrefix("wss://agentcore.example.com/runtimes/"), "\(specific)")
        let given = try CommandRunner.run(arguments + ["--endpoint-url", "http://localhost:8080"], environment: Self.environment(home, ["AWS_ENDPOINT_URL": "http://127.0.0.1:9000"]))
        #expect(given.stdout.hasPrefix("ws://localhost:8080/runtimes/"), "\(given)")
    }

    @Test(arguments: [
        (["presign", "--agentcore-runtime", "arn:aws:bedrock:eu-west-1:123456789012:agent/x"], "voicepipe presign: 'arn:aws:bedrock:eu-west-1:123456789012:agent/x' is not an AgentCore runtime ARN: expected arn:aws:bedrock-agentcore:<region>:<12-digit account>:runtime/<id> (partition aws, aws-cn or aws-us-gov), as 'aws bedrock-agentcore-control list-agent-runtimes' prints it (see 'voicepipe presign --help')"),
        (["presign", "--agentcore-runtime", arn, "--region", "us-east-1"], "voicepipe presign: the region 'us-east-1' does not match the runtime ARN's region 'eu-west-1': the runtime is reached and signed in its own region; drop the region or give 'eu-west-1' (see 'voicepipe presign --help')"),
        (["presign", "--agentcore-runtime", arn, "--session-id", "voicepipe-2ad96114"], "voicepipe presign: the session id 'voicepipe-2ad96114' is not one AgentCore takes: it has 18 characters, fewer than 33; use 33 to 256 visible ASCII characters, such as a UUID with a prefix (see 'voicepipe presign --help')"),
        (["presign", "--agentcore-runtime", arn, "--aws-expires", "301"], "voicepipe presign: '--aws-expires': an AgentCore presigned URL cannot stay valid for 301 s: AWS's SDK allows 1 to 300 s; give at most 300 (see 'voicepipe presign --help')"),
        (["presign", "--qualifier", "DEFAULT"], "voicepipe presign: say which runtime: '--agentcore-runtime <ARN>' (see 'voicepipe presign --help')"),
        (["session", "--text", "x", "--agentcore-runtime", arn, "--aws-expires", "600"], "voicepipe session: '--aws-expires': an AgentCore presigned URL cannot stay valid for 600 s: AWS's SDK allows 1 to 300 s; give at most 300 (see 'voicepipe session --help')"),
        (["session", "--text", "x", "--agentcore-runtime", arn, "--session-id", "has a space but is long enough to pass"], "voicepipe session: the session id 'has a space but is long enough to pass' is not one AgentCore takes: it may hold only visible ASCII characters, without spaces; use 33 to 256 visible ASCII characters, such as a UUID with a prefix (see 'voicepipe session --help')"),
        (["session", "--text", "x", "--agentcore-runtime", "runtime/x"], "voicepipe session: 'runtime/x' is not an AgentCore runtime ARN: expected arn:aws:bedrock-agentcore:<region>:<12-digit account>:runtime/<id> (partition aws, aws-cn or aws-us-gov), as 'aws bedrock-agentcore-control list-agent-runtimes' prints it (see 'voicepipe session --help')"),
        (["session", "--text", "x", "--qualifier", "DEFAULT"], "voicepipe session: '--qualifier' applies to an AgentCore runtime: give '--agentcore-runtime <ARN>' too (see 'voicepipe session --help')"),
        (["session", "--text", "x", "--agentcore-runtime", arn, "--url", "ws://127.0.0.1/ws"], "voicepipe session: give '--url' or '--agentcore-runtime', not both: the ARN names the URL (see 'voicepipe session --help')"),
        (["session", "--text", "x", "--agentcore-runtime", arn, "--aws-region", "eu-west-1"], "voicepipe session: '--aws-region' does not apply to an AgentCore runtime: it is signed for its ARN's region and bedrock-agentcore (use '--region' to check the region) (see 'voicepipe session --help')"),
    ] as [([String], String)])
    func badInputIsAUsageError(arguments: [String], message: String) throws {
        let home = try TemporaryDirectory()
        let result = try CommandRunner.run(arguments, environment: Self.environment(home))
        #expect(result.status == 64, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == message + "\n", "\(result)")
    }

    /// The runtime server on loopback, reached through `--endpoint-url` and checking SigV4 as
    /// the service does: the handshake verifies, and the session id it carries (query parameter
    /// when presigned, header otherwise) is the one session.start names, on every connection.
    @Test(arguments: ["presign", "header"])
    func aSessionCarriesItsIdOnEveryHandshake(placement: String) throws {
        let home = try TemporaryDirectory()
        // Two tones with digital silence between: ready moments where the rotation can happen.
        let tone = Signals.int16(Signals.sine(frequency: 440, amplitude: 0.5, sampleRate: 16_000, frames: 16_000))
        let input = try home.file("two-turns.wav", Array(WAVBytes.pcm16(rate: 16_000, channels: 1, samples: tone + [Int16](repeating: 0, count: 24_000) + tone)))
        let server = try RuntimeServer(["--pace", "fast", "--require-sigv4", placement, "--aws-access-key-id", Self.key,
                                        "--aws-secret-access-key", Self.secret, "--aws-region", "eu-west-1"])
        defer { server.stop() }
        let endpoint = server.url.replacingOccurrences(of: "ws://", with: "http://")
        let result = try CommandRunner.run(["session", input, "--agentcore-runtime", Self.arn, "--qualifier", "DEFAULT",
                                            "--endpoint-url", endpoint, "--aws-sigv4", placement, "--rotate-after", "1"],
                                           environment: Self.environment(home))
        #expect(result.status == 0, "\(result)\n\(server.events(named: "sigv4"))")
        _ = server.waitForEvents(named: "session", count: 2, within: 10)
        let signatures = server.events(named: "sigv4"), connections = server.events(named: "connection"), sessions = server.events(named: "session")
        #expect(signatures.count >= 2 && signatures.allSatisfy { ["1", "1.0", "true"].contains("\($0["accepted"] ?? "")") }, "\(signatures)")
        let sessionId = try #require(sessions.first?["sessionId"] as? String)
        #expect(sessionId.count == 42 && sessionId.hasPrefix("voicepipe-"))
        #expect(sessions.allSatisfy { $0["sessionId"] as? String == sessionId })
        #expect(connections.count >= 2)
        for connection in connections {
            #expect(connection["path"] as? String == "/runtimes/arn%3Aaws%3Abedrock-agentcore%3Aeu-west-1%3A123456789012%3Aruntime%2Fvoice_agent-Ab12/ws")
            let query = connection["query"] as? String ?? ""
            let headers = "\(connection["headers"] ?? "")"
            #expect(query.hasPrefix("qualifier=DEFAULT"), "\(query)")
            if placement == "presign" {
                #expect(query.contains("X-Amzn-Bedrock-AgentCore-Runtime-Session-Id=\(sessionId)&"), "\(query)")
            } else {
                #expect(headers.contains("X-Amzn-Bedrock-AgentCore-Runtime-Session-Id") && headers.contains(sessionId), "\(headers)")
            }
        }
    }

    /// End to end against a container built on AWS's own SDK (`Samples/runtime-server/agentcore_app.py`:
    /// BedrockAgentCoreApp serving `/ws`, behind a stand-in for the data plane): the session runs
    /// and ends cleanly, and the id the app's request context read from the service's header is
    /// session.start's, presigned (moved from the query) or sent as a header.
    @Test(arguments: ["presign", "header"])
    func aSessionRunsAgainstAnAppBuiltOnTheSDK(placement: String) throws {
        let home = try TemporaryDirectory()
        let script = CommandRunner.packageRoot.appendingPathComponent("Samples/runtime-server/agentcore_app.py")
        let server = try RuntimeServer(script: script, ["--port", "0"])
        defer { server.stop() }
        let result = try CommandRunner.run(["session", "--text", "hello", "--agentcore-runtime", Self.arn, "--qualifier", "DEFAULT",
                                            "--endpoint-url", server.url.replacingOccurrences(of: "ws://", with: "http://"), "--aws-sigv4", placement],
                                           environment: Self.environment(home))
        #expect(result.status == 0, "\(result)\n\(server.standardError)")
        #expect(result.stdout.contains("ended cleanly"), "\(result)")
        _ = server.waitForEvents(named: "closed", count: 1, within: 10)
        let plane = try #require(server.events(named: "dataPlane").first)
        #expect(plane["path"] as? String == "/runtimes/\(Self.arn)/ws")
        #expect(plane["query"] as? String == "qualifier=DEFAULT")
        let session = try #require(server.events(named: "session").first)
        let sessionId = try #require(session["sessionId"] as? String)
        #expect(sessionId.count == 42)
        #expect(session["contextSessionId"] as? String == sessionId)
        #expect(server.events(named: "connection").first?["path"] as? String == "/ws")
    }
}
