import Foundation
import Glibc
import Testing
import VoicePipeClient
import VoicePipeTestSupport

/// Finding AWS credentials and the region as the AWS CLI does, with errors that say where it
/// looked and never show a secret.
struct AWSCredentialsTests {
    static let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

    /// A credentials file with two profiles, comments, odd spacing and CRLF line ends in places.
    static let file = """
        # written by hand
        ; and by aws configure

        [default]
        aws_access_key_id = AKIDDEFAULT
        aws_secret_access_key=\(secret)
          # an indented comment
        [ work ]\r
        AWS_Access_Key_ID\t=   AKIDWORK   \r
        aws_secret_access_key = work/secret+key\r
        aws_session_token = FwoGZXIvYXdzEJr//////////wEaDOKEN==
        region = eu-west-1

        [empty-token]
        aws_access_key_id = AKIDEMPTY
        aws_secret_access_key = empty-secret
        aws_session_token =
        """

    /// A home directory holding `.aws/credentials` with `text`.
    static func home(with text: String?) throws -> TemporaryDirectory {
        let home = try TemporaryDirectory()
        if let text {
            try FileManager.default.createDirectory(atPath: home.path(".aws"), withIntermediateDirectories: true)
            _ = try home.file(".aws/credentials", Array(text.utf8))
        }
        return home
    }

    @Test func theEnvironmentComesFirstWhenItHasBothKeys() throws {
        let home = try Self.home(with: Self.file)
        let environment = ["AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_SESSION_TOKEN": "env-token", "AWS_PROFILE": "work"]
        let credentials = try AWSCredentials.resolve(environment: environment, homeDirectory: home.url.path)
        #expect(credentials == AWSCredentials(accessKeyID: "AKIDENV", secretAccessKey: "env-secret", sessionToken: "env-token"))
        let withoutToken = try AWSCredentials.resolve(environment: ["AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_SESSION_TOKEN": ""],
                                                      homeDirectory: home.url.path)
        #expect(withoutToken.sessionToken == nil)
    }

    @Test(arguments: [["AWS_ACCESS_KEY_ID": "AKIDENV"], ["AWS_SECRET_ACCESS_KEY": "env-secret"], ["AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": ""]])
    func halfTheKeysInTheEnvironmentFallsBackToTheFile(environment: [String: String]) throws {
        let home = try Self.home(with: Self.file)
        let credentials = try AWSCredentials.resolve(environment: environment, homeDirectory: home.url.path)
        #expect(credentials == AWSCredentials(accessKeyID: "AKIDDEFAULT", secretAccessKey: Self.secret))
    }

    @Test func profilesComeFromTheArgumentThenAWSProfileThenDefault() throws {
        let home = try Self.home(with: Self.file)
        let work = AWSCredentials(accessKeyID: "AKIDWORK", secretAccessKey: "work/secret+key", sessionToken: "FwoGZXIvYXdzEJr//////////wEaDOKEN==")
        #expect(try AWSCredentials.resolve(environment: ["AWS_PROFILE": "work"], homeDirectory: home.url.path) == work)
        #expect(try AWSCredentials.resolve(environment: ["AWS_PROFILE": "nope"], homeDirectory: home.url.path, profile: "work") == work)
        #expect(try AWSCredentials.resolve(environment: ["AWS_PROFILE": ""], homeDirectory: home.url.path).accessKeyID == "AKIDDEFAULT")
        let empty = try AWSCredentials.resolve(environment: [:], homeDirectory: home.url.path, profile: "empty-token")
        #expect(empty == AWSCredentials(accessKeyID: "AKIDEMPTY", secretAccessKey: "empty-secret"))
    }

    @Test func theFileCanBeNamedInTheEnvironmentWithATilde() throws {
        let home = try TemporaryDirectory()
        _ = try home.file("elsewhere.ini", Array("[default]\naws_access_key_id: AKIDCOLON\naws_secret_access_key: s:e=c\n".utf8))
        let credentials = try AWSCredentials.resolve(environment: ["AWS_SHARED_CREDENTIALS_FILE": "~/elsewhere.ini"], homeDirectory: home.url.path + "/")
        #expect(credentials == AWSCredentials(accessKeyID: "AKIDCOLON", secretAccessKey: "s:e=c"))
    }

    @Test func aMissingProfileNamesTheFileAndTheProfilesInIt() throws {
        let home = try Self.home(with: Self.file)
        let path = home.path(".aws/credentials")
        let error = #expect(throws: AWSConfigurationError.self) {
            try AWSCredentials.resolve(environment: ["AWS_PROFILE": "staging"], homeDirectory: home.url.path)
        }
        #expect(error == .profileNotFound(profile: "staging", file: path, available: ["default", "work", "empty-token"]))
        #expect(error?.description == "the AWS profile 'staging' is not in '\(path)' (it has 'default', 'work', 'empty-token'); set AWS_PROFILE to one of them or add the profile")
    }

    @Test func noCredentialsSaysWhereItLooked() throws {
        let home = try Self.home(with: nil)
        let path = home.path(".aws/credentials"), config = home.path(".aws/config")
        let error = #expect(throws: AWSConfigurationError.self) { try AWSCredentials.resolve(environment: [:], homeDirectory: home.url.path) }
        #expect(error == .noCredentials(file: path, configFile: config, partialVariable: nil))
        #expect(error?.description == "no AWS credentials found: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set, and there is no credentials file at '\(path)' nor config file at '\(config)'; set both variables, or run 'aws configure', or point AWS_SHARED_CREDENTIALS_FILE (or AWS_CONFIG_FILE) at your file")
        let partial = #expect(throws: AWSConfigurationError.self) {
            try AWSCredentials.resolve(environment: ["AWS_ACCESS_KEY_ID": "AKIDENV"], homeDirectory: home.url.path)
        }
        #expect(partial?.description.hasPrefix("no AWS credentials found: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not, and there is no credentials file at") == true)
    }

    @Test func aProfileWithoutStaticKeysSaysWhatIsMissing() throws {
        let home = try Self.home(with: "[sso]\nsso_session = corp\n[half]\naws_access_key_id = AKIDHALF\n")
        let path = home.path(".aws/credentials")
        #expect(throws: AWSConfigurationError.incompleteProfile(profile: "sso", file: path, missing: "aws_access_key_id")) {
            try AWSCredentials.resolve(environment: ["AWS_PROFILE": "sso"], homeDirectory: home.url.path)
        }
        #expect(throws: AWSConfigurationError.incompleteProfile(profile: "half", file: path, missing: "aws_secret_access_key")) {
            try AWSCredentials.resolve(environment: [:], homeDirectory: home.url.path, profile: "half")
        }
    }

    @Test func unreadableAndMalformedFilesAreTypedErrorsWithoutTheirContents() throws {
        let home = try TemporaryDirectory()
        // A directory where the file should be.
        let directoryError = #expect(throws: AWSConfigurationError.self) {
            try AWSCredentials.resolve(environment: ["AWS_SHARED_CREDENTIALS_FILE": home.url.path], homeDirectory: "/nonexistent")
        }
        #expect(directoryError == .unreadableFile(path: home.url.path, reason: "it is a directory, not a file", code: .posix(EISDIR)))
        // A secret on a line without '=': the error names the line, not what is on it.
        let broken = try home.file("broken", Array("[default]\naws_access_key_id = AKID\n\(Self.secret)\n".utf8))
        let malformed = #expect(throws: AWSConfigurationError.self) {
            try AWSCredentials.resolve(environment: ["AWS_SHARED_CREDENTIALS_FILE": broken], homeDirectory: "/nonexistent")
        }
        #expect(malformed == .malformedFile(path: broken, line: 3))
        #expect(malformed.map { !$0.description.contains(Self.secret) } == true)
        let orphan = try home.file("orphan", Array("aws_access_key_id = AKID\n[default]\n".utf8))
        #expect(throws: AWSConfigurationError.malformedFile(path: orphan, line: 1)) {
            try AWSCredentials.resolve(environment: ["AWS_SHARED_CREDENTIALS_FILE": orphan], homeDirectory: "/nonexistent")
        }
        if getuid() != 0 {
            let locked = try home.file("locked", Array("[default]\n".utf8))
            chmod(locked, 0)
            let denied = #expect(throws: AWSConfigurationError.self) {
                try AWSCredentials.resolve(environment: ["AWS_SHARED_CREDENTIALS_FILE": locked], homeDirectory: "/nonexistent")
            }
            #expect(denied?.code == .posix(EACCES))
            #expect(denied?.message == "cannot read the AWS file '\(locked)': permission denied")
        }
    }

    @Test func secretsNeverPrint() throws {
        let credentials = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: Self.secret, sessionToken: "TOKEN-VALUE")
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in ["\(credentials)", String(reflecting: credentials), String(describing: [credentials]), dumped] {
            #expect(!text.contains(Self.secret) && !text.contains("TOKEN-VALUE") && !text.contains("AKIDEXAMPLE"), "\(text)")
            #expect(text.contains("*******MPLE"))
        }
        #expect(credentials.description == "AWSCredentials(accessKeyID: *******MPLE, secretAccessKey: <redacted>, sessionToken: <redacted>)")
    }

    @Test func theRegionComesFromTheFlagThenAWSRegionThenAWSDefaultRegion() throws {
        let both = ["AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "ap-south-1"]
        #expect(try AWSRegion.resolve(explicit: "us-west-2", environment: both) == "us-west-2")
        #expect(try AWSRegion.resolve(explicit: nil, environment: both) == "eu-west-1")
        #expect(try AWSRegion.resolve(explicit: "", environment: ["AWS_REGION": "", "AWS_DEFAULT_REGION": "ap-south-1"]) == "ap-south-1")
        let error = #expect(throws: AWSConfigurationError.self) { try AWSRegion.resolve(explicit: nil, environment: [:]) }
        #expect(error?.description == "no AWS region: pass --aws-region or set AWS_REGION (or AWS_DEFAULT_REGION)")
    }
}
