import Foundation
import Testing
import VoicePipeClient
import VoicePipeIO
import VoicePipeTestSupport

/// Credentials from a profile's `credential_process`, found in the files and order botocore uses
/// and refreshed before they expire: checked against botocore itself on the same files, and with
/// fake processes that fail, print nonsense or count their runs.
@Suite(.serialized) struct AWSCredentialProcessTests {
    /// A credential process that prints its arguments as the session token (so the split into
    /// words is visible) and an expiry an hour from now, and counts its runs in `runs`.
    static func processScript(in directory: TemporaryDirectory, expiresIn seconds: Int = 3600) throws -> String {
        let script = """
            #!/usr/bin/env python3
            import datetime, json, os, sys
            count_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runs")
            runs = int(open(count_file).read()) + 1 if os.path.exists(count_file) else 1
            open(count_file, "w").write(str(runs))
            expiry = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=\(seconds))
            print(json.dumps({"Version": 1, "AccessKeyId": "ASIAPROCESS%d" % runs, "SecretAccessKey": "process/secret+%d" % runs,
                              "SessionToken": json.dumps(sys.argv[1:]), "Expiration": expiry.strftime("%Y-%m-%dT%H:%M:%SZ")}))
            """
        let path = try directory.file("credential-process", Array(script.utf8))
        chmod(path, 0o755)
        return path
    }

    /// The environment for files in `directory` (and nothing from this process's own AWS setup).
    static func environment(_ directory: TemporaryDirectory, profile: String = "default") -> [String: String] {
        ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": profile,
         "AWS_SHARED_CREDENTIALS_FILE": directory.path("credentials"), "AWS_CONFIG_FILE": directory.path("config")]
    }

    struct Layout: Sendable, CustomTestStringConvertible {
        let name: String
        let credentials: String?
        let config: String?
        var profile = "default"
        var testDescription: String { name }
    }

    /// `PROCESS` stands for the fake process's path.
    static let layouts: [Layout] = [
        Layout(name: "process in the config file, quoted arguments", credentials: nil,
               config: "[profile dev]\nregion = us-west-2\ncredential_process = PROCESS --role 'arn:aws:iam::1:role/a b' \"x\\\"y\" c\\ d\n", profile: "dev"),
        Layout(name: "process in the credentials file", credentials: "[default]\ncredential_process = PROCESS default\n", config: nil),
        Layout(name: "credentials-file process before config-file keys", credentials: "[default]\ncredential_process = PROCESS first\n",
               config: "[default]\naws_access_key_id = AKIDCONFIG\naws_secret_access_key = config-secret\n"),
        Layout(name: "credentials-file keys before any process", credentials: "[work]\naws_access_key_id = AKIDFILE\naws_secret_access_key = file-secret\n",
               config: "[profile work]\ncredential_process = PROCESS never\n", profile: "work"),
        Layout(name: "config-file keys", credentials: nil, config: "[default]\naws_access_key_id = AKIDCONFIG\naws_secret_access_key = config-secret\naws_session_token = config-token\n"),
        Layout(name: "the credentials file's process wins over the config file's", credentials: "[dev]\ncredential_process = PROCESS from-credentials\n",
               config: "[profile dev]\ncredential_process = PROCESS from-config\n", profile: "dev"),
        Layout(name: "a config section without 'profile' is no profile", credentials: nil, config: "[dev]\ncredential_process = PROCESS x\n", profile: "dev"),
    ]

    /// What botocore resolves.
    struct Botocore: Decodable {
        let accessKeyId: String?
        let secretAccessKey: String?
        let sessionToken: String?
        let error: String?
    }

    @Test(arguments: layouts)
    func theSameCredentialsAsBotocoreFromTheSameFiles(_ layout: Layout) throws {
        let directory = try TemporaryDirectory()
        let process = try Self.processScript(in: directory)
        if let text = layout.credentials { _ = try directory.file("credentials", Array(text.replacingOccurrences(of: "PROCESS", with: process).utf8)) }
        if let text = layout.config { _ = try directory.file("config", Array(text.replacingOccurrences(of: "PROCESS", with: process).utf8)) }
        let environment = Self.environment(directory, profile: layout.profile)

        let result = try CommandRunner.run([Self.script.path], executable: SigV4BotocoreTests.python, environment: environment)
        #expect(result.status == 0, "\(result)")
        let botocore = try JSONDecoder().decode(Botocore.self, from: result.output)
        try? FileManager.default.removeItem(atPath: directory.path("runs"))

        do {
            let ours = try AWSCredentials.resolve(environment: environment, homeDirectory: "/nonexistent")
            #expect(botocore.error == nil, "botocore refused what VoicePipe took: \(botocore.error ?? "")")
            #expect(ours.accessKeyID == botocore.accessKeyId)
            #expect(ours.secretAccessKey == botocore.secretAccessKey)
            #expect(ours.sessionToken == botocore.sessionToken)
        } catch {
            #expect(botocore.error != nil, "VoicePipe refused what botocore took: \(error)")
        }
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/botocore_credentials.py")

    @Test func theProcessRunsOnceAndAgainOnlyWhenItsCredentialsNearExpiry() throws {
        let directory = try TemporaryDirectory()
        let process = try Self.processScript(in: directory, expiresIn: 1200)
        _ = try directory.file("config", Array("[default]\ncredential_process = \(process) refresh\n".utf8))
        let provider = try AWSCredentialsProvider.resolve(environment: Self.environment(directory), homeDirectory: "/nonexistent")
        #expect(provider.source == .process(profile: "default", program: process))
        #expect(provider.fetchCount == 0)
        let now = Int(Date().timeIntervalSince1970)
        let first = try provider.credentials(at: now)
        #expect(first.accessKeyID == "ASIAPROCESS1" && first.sessionToken == "[\"refresh\"]")
        // 20 minutes of validity: held until 15 minutes before expiry, then fetched again.
        #expect(try provider.credentials(at: now + 290) == first)
        #expect(provider.fetchCount == 1)
        let second = try provider.credentials(at: now + 310)
        #expect(second.accessKeyID == "ASIAPROCESS2")
        #expect(provider.fetchCount == 2)
    }

    /// botocore's two windows: a failed fetch within 15 minutes of expiry keeps the held
    /// credentials; within 10 minutes it is an error; fresh ones already expired are an error.
    @Test func aFailedRefreshKeepsTheHeldCredentialsUntilTheMandatoryWindow() throws {
        struct Script: Sendable { let results: [Result<AWSExpiringCredentials, AWSConfigurationError>] }
        let t0 = 1_800_000_000
        let held = AWSExpiringCredentials(AWSCredentials(accessKeyID: "ASIAHELD", secretAccessKey: "s"), expiration: t0 + 3600)
        let failure = AWSConfigurationError.credentialProcessFailed(profile: "default", program: "sso-helper", reason: "exited with status 1: token expired")
        let results = Guarded([Result<AWSExpiringCredentials, AWSConfigurationError>.success(held), .failure(failure), .failure(failure),
                               .success(AWSExpiringCredentials(AWSCredentials(accessKeyID: "ASIASTALE", secretAccessKey: "s"), expiration: t0 + 3000))])
        let provider = AWSCredentialsProvider(source: .process(profile: "default", program: "sso-helper")) { () throws(AWSConfigurationError) in
            try results.withLock { $0.removeFirst() }.get()
        }
        #expect(try provider.credentials(at: t0).accessKeyID == "ASIAHELD")
        #expect(try provider.credentials(at: t0 + 3600 - 901).accessKeyID == "ASIAHELD")
        #expect(provider.fetchCount == 1)
        // Advisory window: the fetch fails, the held credentials still serve.
        #expect(try provider.credentials(at: t0 + 3600 - 800).accessKeyID == "ASIAHELD")
        #expect(provider.fetchCount == 2)
        // Mandatory window: the failure is the caller's.
        #expect(throws: failure) { try provider.credentials(at: t0 + 3600 - 500) }
        // A fetch that returns credentials already expired.
        #expect(throws: AWSConfigurationError.credentialsExpired(profile: "default", expiredAt: "2027-01-15T08:50:00Z")) {
            try provider.credentials(at: t0 + 3100)
        }
    }

    @Test(arguments: [
        ("exit 3", "#!/bin/sh\necho 'SSO session expired; run aws sso login' >&2\nexit 3\n",
         "exited with status 3: SSO session expired; run aws sso login"),
        ("not JSON", "#!/bin/sh\necho hello\n", "did not print a JSON object"),
        ("version 2", "#!/bin/sh\necho '{\"Version\": 2, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"S\"}'\n",
         "printed credentials of Version 2; version 1 is the one supported"),
        ("no version", "#!/bin/sh\necho '{\"AccessKeyId\": \"A\", \"SecretAccessKey\": \"S\"}'\n", "printed credentials of Version none"),
        ("no secret", "#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\": \"A\"}'\n", "printed no SecretAccessKey"),
        ("bad expiry", "#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"S\", \"Expiration\": \"tomorrow\"}'\n",
         "printed an Expiration 'tomorrow' that is not an ISO 8601 time"),
    ] as [(String, String, String)])
    func aFailingProcessSaysWhatWentWrongWithoutItsArguments(name: String, script: String, reason: String) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("helper", Array(script.utf8))
        chmod(path, 0o755)
        _ = try directory.file("config", Array("[default]\ncredential_process = \(path) --secret hunter2\n".utf8))
        let error = #expect(throws: AWSConfigurationError.self) {
            try AWSCredentials.resolve(environment: Self.environment(directory), homeDirectory: "/nonexistent")
        }
        #expect(error?.message.hasPrefix("the credential_process '\(path)' of the AWS profile 'default' \(reason)") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("hunter2") == false)
    }

    @Test func aProgramNotOnThePathOrAnUnclosedQuoteIsNamed() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("config", Array("[default]\ncredential_process = voicepipe-no-such-helper --x\n[profile quote]\ncredential_process = helper 'open\n".utf8))
        let missing = #expect(throws: AWSConfigurationError.self) {
            try AWSCredentials.resolve(environment: Self.environment(directory), homeDirectory: "/nonexistent")
        }
        #expect(missing?.message == "the credential_process 'voicepipe-no-such-helper' of the AWS profile 'default' was not found: no program 'voicepipe-no-such-helper' on PATH")
        #expect(throws: AWSConfigurationError.credentialProcessFailed(profile: "quote", program: "…", reason: "cannot be split into words: a single quote is not closed")) {
            try AWSCredentials.resolve(environment: Self.environment(directory, profile: "quote"), homeDirectory: "/nonexistent")
        }
    }

    /// The split agrees with Python's `shlex.split`, which botocore runs the command through.
    @Test func commandsSplitIntoTheWordsShlexGives() throws {
        let lines = ["a b  c", "'a b' c", "\"a \\\"b\\\" \\\\ \\$x\" d", "a\\ b\\'c", "''", "a''b \"\"", "x\t\ty\nz", "#not-a-comment y", "a\"b c\"d"]
        let code = "import json, shlex, sys; print(json.dumps([shlex.split(line) for line in json.load(sys.stdin)]))"
        let result = try CommandRunner.run(["-c", code], executable: URL(fileURLWithPath: "/usr/bin/python3"), stdin: try JSONEncoder().encode(lines))
        #expect(result.status == 0, "\(result)")
        let expected = try JSONDecoder().decode([[String]].self, from: result.output)
        for (line, words) in zip(lines, expected) {
            #expect(try ShellWords.split(line) == words, "\(line)")
        }
        #expect(throws: ShellWords.SplitError(reason: "a double quote is not closed")) { try ShellWords.split("a \"b") }
    }
}
