import Foundation
import Testing
import VoicePipeClient
import VoicePipeTestSupport

/// Agreement with AWS's own `bedrock-agentcore` Python SDK (installed by
/// `Samples/runtime-server/setup`), through `Scripts/agentcore_sdk.py`: for the same ARN, session
/// id, qualifier, credentials and frozen time, the presigned URL must be the SDK's
/// `generate_presigned_url` parameter for parameter, and the header-signed handshake must carry
/// `generate_ws_connection`'s URL and headers.
struct AgentCoreSDKTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let arn: String
        let region: String
        let qualifier: String?
        let sessionId: String
        var sessionToken: String? = nil
        var expires = 300

        var testDescription: String { "\(arn) \(qualifier ?? "-") \(sessionId.prefix(12))…" }
    }

    static let token = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLXdlc3QtMiJHMEUCIQD+example/token+with=padding=="

    static let cases: [Case] = [
        Case(arn: "arn:aws:bedrock-agentcore:us-west-2:123456789012:runtime/my_agent-abc123", region: "us-west-2", qualifier: "DEFAULT",
             sessionId: "voicepipe-0123456789abcdef0123456789abcdef"),
        Case(arn: "arn:aws:bedrock-agentcore:us-west-2:123456789012:runtime/my_agent-abc123", region: "us-west-2", qualifier: nil,
             sessionId: "voicepipe-0123456789abcdef0123456789abcdef", sessionToken: token, expires: 60),
        Case(arn: "arn:aws:bedrock-agentcore:eu-central-1:210987654321:runtime/voice_bot-XyZ09", region: "eu-central-1", qualifier: "prod-2",
             sessionId: "user:42/conversation.7~" + String(repeating: "x", count: 20), sessionToken: token),
        Case(arn: "arn:aws:bedrock-agentcore:ap-southeast-2:000000000001:runtime/a", region: "ap-southeast-2", qualifier: "v1_blue",
             sessionId: String(repeating: "0123456789abcdef", count: 16)),
        Case(arn: "arn:aws-cn:bedrock-agentcore:cn-north-1:123456789012:runtime/agent-cn", region: "cn-north-1", qualifier: nil,
             sessionId: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b-session"),
    ]

    static let credentials = (accessKeyID: "AKIDEXAMPLE", secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    /// 2025-02-19T21:25:45Z.
    static let unixSeconds: Int64 = 1_740_000_345

    struct SDKOutput: Decodable, Sendable {
        let presignedURL: String
        let url: String
        let headers: [[String]]
    }

    /// One case at a time: each starts a Python.
    @Test(.serialized, arguments: cases)
    func oursAreTheSDKs(_ test: Case) async throws {
        let runtime = try AgentCoreRuntime(arn: test.arn, qualifier: test.qualifier)
        let signer = try SigV4Signer(region: runtime.region, service: AgentCoreRuntime.service)
        let credentials = AWSCredentials(accessKeyID: Self.credentials.accessKeyID, secretAccessKey: Self.credentials.secret, sessionToken: test.sessionToken)
        let time = try SigV4Timestamp(unixSeconds: Self.unixSeconds)

        var arguments = ["--arn", test.arn, "--session-id", test.sessionId, "--region", test.region, "--access-key-id", Self.credentials.accessKeyID,
                         "--secret-access-key", Self.credentials.secret, "--unix-seconds", String(Self.unixSeconds), "--expires", String(test.expires)]
        if let qualifier = test.qualifier { arguments += ["--qualifier", qualifier] }
        if let token = test.sessionToken { arguments += ["--session-token", token] }
        let sdk = try await Self.sdk(arguments)

        // Presigned: the same URL, compared parameter for parameter first so a failure names one.
        let ours = try runtime.presignedURL(sessionId: test.sessionId, signer: signer, credentials: credentials, at: time, expires: test.expires)
        #expect(Self.pairs(of: ours) == Self.pairs(of: sdk.presignedURL))
        #expect(ours == sdk.presignedURL)

        // In headers: the same URL, and the SDK's headers among ours (Host is the connector's).
        let handshake = try runtime.handshake(sessionId: test.sessionId, presigned: false)
        #expect(handshake.url == sdk.url)
        let configuration = WebSocketConfiguration(url: try WebSocketURL(parsing: handshake.url))
        var unsigned = configuration
        unsigned.headers = try handshake.headers.map { try HTTPHeaderField(name: $0.name, value: $0.value) }
        let signed = try HandshakeSigning(placement: .header, signer: signer, credentials: credentials).sign(unsigned, at: Int(Self.unixSeconds))
        var ourHeaders = Dictionary(uniqueKeysWithValues: signed.headers.map { ($0.name, $0.value) })
        ourHeaders["Host"] = configuration.url.hostHeader
        let sdkHeaders = Dictionary(uniqueKeysWithValues: sdk.headers.map { ($0[0], $0[1]) })
        #expect(ourHeaders == sdkHeaders)
    }

    /// The presigned handshake a session opens is the SDK's presigned URL too.
    @Test func theSessionsPresignedHandshakeIsTheSDKsURL() async throws {
        let test = Self.cases[2]
        let runtime = try AgentCoreRuntime(arn: test.arn, qualifier: test.qualifier)
        let signer = try SigV4Signer(region: runtime.region, service: AgentCoreRuntime.service)
        let credentials = AWSCredentials(accessKeyID: Self.credentials.accessKeyID, secretAccessKey: Self.credentials.secret, sessionToken: test.sessionToken)
        let handshake = try runtime.handshake(sessionId: test.sessionId, presigned: true)
        #expect(handshake.headers.isEmpty)
        let signed = try HandshakeSigning(placement: .presign, signer: signer, credentials: credentials)
            .sign(WebSocketConfiguration(url: try WebSocketURL(parsing: handshake.url)), at: Int(Self.unixSeconds))
        let presigned = try runtime.presignedURL(sessionId: test.sessionId, signer: signer, credentials: credentials, at: try SigV4Timestamp(unixSeconds: Self.unixSeconds))
        #expect("\(signed.url.isSecure ? "wss" : "ws")://\(signed.url.hostHeader)\(signed.url.requestTarget)" == presigned)
    }

    @Test func anExpiryOver300SecondsIsRefusedWithTheReason() throws {
        let runtime = try AgentCoreRuntime(arn: Self.cases[0].arn)
        let signer = try SigV4Signer(region: runtime.region, service: AgentCoreRuntime.service)
        let credentials = AWSCredentials(accessKeyID: Self.credentials.accessKeyID, secretAccessKey: Self.credentials.secret)
        #expect(throws: AgentCoreError.invalidExpiry(seconds: 301)) {
            try runtime.presignedURL(sessionId: Self.cases[0].sessionId, signer: signer, credentials: credentials, at: try SigV4Timestamp(unixSeconds: Self.unixSeconds), expires: 301)
        }
        #expect(AgentCoreError.invalidExpiry(seconds: 301).message
            == "an AgentCore presigned URL cannot stay valid for 301 s: AWS's SDK allows 1 to 300 s; give at most 300")
    }

    /// The query's pairs as they stand on the wire, in order.
    static func pairs(of url: String) -> [String] {
        url.split(separator: "?", maxSplits: 1).dropFirst().first.map { $0.split(separator: "&").map(String.init) } ?? []
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/agentcore_sdk.py")

    /// Runs the script on a thread of its own and decodes what it prints.
    static func sdk(_ arguments: [String]) async throws -> SDKOutput {
        let python = SigV4BotocoreTests.python
        try #require(FileManager.default.isExecutableFile(atPath: python.path),
                     "no Python environment with bedrock-agentcore at \(python.path); run scripts/bootstrap (it runs Samples/runtime-server/setup), then the tests again")
        let outcome: Result<SDKOutput, SigV4BotocoreTests.BotocoreFailure> = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                do {
                    let result = try CommandRunner.run([script.path] + arguments, executable: python)
                    guard result.status == 0 else {
                        continuation.resume(returning: .failure(.init(description: "agentcore_sdk.py failed (if bedrock-agentcore is missing, run scripts/bootstrap): \(result)")))
                        return
                    }
                    continuation.resume(returning: .success(try JSONDecoder().decode(SDKOutput.self, from: result.output)))
                } catch {
                    continuation.resume(returning: .failure(.init(description: "agentcore_sdk.py could not run: \(error)")))
                }
            }
        }
        return try outcome.get()
    }
}
