import Foundation
import Testing
import VoicePipeClient
import VoicePipeTestSupport

/// Agreement with botocore, the signer AWS's own Python tools and Amazon Bedrock AgentCore's
/// samples use: the same request signed by both must give the same bytes on the wire.
///
/// botocore runs in the runtime server's Python environment (`Samples/runtime-server/setup`,
/// run by `scripts/bootstrap`), through `Scripts/botocore_sigv4.py`.
struct SigV4BotocoreTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let mode: String
        let host: String
        let path: String
        let rawQuery: String
        var sessionToken: String? = nil
        var headers: [(name: String, value: String)] = []

        var testDescription: String { name }
    }

    static let agentCorePath = "/runtimes/arn%3Aaws%3Abedrock-agentcore%3Aus-west-2%3A123456789012%3Aruntime%2Fmy_agent-abc123/ws"
    /// An STS-like token: long, with '/', '+' and '='.
    static let token = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLXdlc3QtMiJHMEUCIQD+example/token+with=padding=="
    static let sessionHeader = (name: "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id", value: "  session   0123456789abcdef0123456789abcdef ")

    static let cases: [Case] = [
        Case(name: "presign, local port", mode: "presign", host: "127.0.0.1:8443", path: agentCorePath, rawQuery: "qualifier=DEFAULT"),
        Case(name: "presign, local port, session token", mode: "presign", host: "127.0.0.1:8443", path: agentCorePath, rawQuery: "qualifier=DEFAULT", sessionToken: token),
        Case(name: "header, local port", mode: "header", host: "127.0.0.1:8443", path: agentCorePath, rawQuery: "qualifier=DEFAULT"),
        Case(name: "header, local port, session token, extra header", mode: "header", host: "127.0.0.1:8443", path: agentCorePath,
             rawQuery: "qualifier=DEFAULT", sessionToken: token, headers: [sessionHeader]),
        Case(name: "presign, default port", mode: "presign", host: "bedrock-agentcore.us-west-2.amazonaws.com", path: agentCorePath,
             rawQuery: "qualifier=DEFAULT", sessionToken: token),
        Case(name: "header, default port", mode: "header", host: "bedrock-agentcore.us-west-2.amazonaws.com", path: agentCorePath,
             rawQuery: "qualifier=DEFAULT", sessionToken: token),
        Case(name: "presign, path to normalize, query to re-encode", mode: "presign", host: "example.com", path: "/a%20b/./c//ws",
             rawQuery: "z=1&name=a%20b%2Fc+d&ሴ=~"),
        Case(name: "presign, no query", mode: "presign", host: "example.com", path: "/ws", rawQuery: ""),
    ]

    static let credentials = (accessKeyID: "AKIDEXAMPLE", secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    static let region = "us-west-2"
    /// 2025-02-19T21:25:45Z.
    static let unixSeconds: Int64 = 1_740_000_345

    /// What the script prints.
    struct Signed: Decodable, Sendable {
        let requestTarget: String
        let headers: [[String]]
        let canonicalRequest: String
        let stringToSign: String
    }

    /// One case at a time: each starts a Python, and the rest of the suite has timing tests.
    @Test(.serialized, arguments: cases)
    func swiftAndBotocoreSignTheSameBytes(_ test: Case) async throws {
        let signer = try SigV4Signer(region: Self.region, service: "bedrock-agentcore")
        let credentials = AWSCredentials(accessKeyID: Self.credentials.accessKeyID, secretAccessKey: Self.credentials.secret, sessionToken: test.sessionToken)
        let time = try SigV4Timestamp(unixSeconds: Self.unixSeconds)
        let request = SigV4Request(host: test.host, path: test.path, query: SigV4Request.decodeQuery(test.rawQuery), headers: test.headers)
        let signing = test.mode == "presign"
            ? try signer.presigning(request, credentials: credentials, at: time, expires: 300)
            : signer.headerSigning(request, credentials: credentials, at: time)

        var arguments = ["--mode", test.mode, "--access-key-id", Self.credentials.accessKeyID, "--secret-access-key", Self.credentials.secret,
                         "--region", Self.region, "--service", "bedrock-agentcore", "--unix-seconds", String(Self.unixSeconds),
                         "--expires", "300", "--host", test.host, "--path", test.path, "--query", test.rawQuery]
        if let token = test.sessionToken { arguments += ["--session-token", token] }
        for header in test.headers { arguments += ["--header", header.name + ":" + header.value] }
        let botocore = try await Self.botocore(arguments)

        #expect(signing.canonicalRequest == botocore.canonicalRequest)
        #expect(signing.stringToSign == botocore.stringToSign)
        #expect(signing.request.requestTarget == botocore.requestTarget)
        let added = signing.request.headers.dropFirst(request.headers.count).map { [$0.name, $0.value] }
        #expect(added == botocore.headers)
    }

    /// The package's Python environment, where `Samples/runtime-server/setup` installs botocore.
    static let python = CommandRunner.packageRoot.appendingPathComponent("Samples/runtime-server/.venv/bin/python")
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/botocore_sigv4.py")

    /// Runs the script on a thread of its own (Python's start-up would otherwise hold one of the
    /// few threads Swift concurrency runs tests on) and decodes what it prints.
    static func botocore(_ arguments: [String]) async throws -> Signed {
        try #require(FileManager.default.isExecutableFile(atPath: python.path),
                     "no Python environment with botocore at \(python.path); run scripts/bootstrap (it runs Samples/runtime-server/setup), then the tests again")
        let outcome: Result<Signed, BotocoreFailure> = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                do {
                    let result = try CommandRunner.run([script.path] + arguments, executable: python)
                    guard result.status == 0 else {
                        continuation.resume(returning: .failure(BotocoreFailure(description: "botocore_sigv4.py failed (if botocore is missing, run scripts/bootstrap): \(result)")))
                        return
                    }
                    continuation.resume(returning: .success(try JSONDecoder().decode(Signed.self, from: result.output)))
                } catch {
                    continuation.resume(returning: .failure(BotocoreFailure(description: "botocore_sigv4.py could not run: \(error)")))
                }
            }
        }
        return try outcome.get()
    }

    struct BotocoreFailure: Error, CustomStringConvertible {
        let description: String
    }
}
