/// An AWS access key pair and, for temporary credentials, a session token.
///
/// Printing shows only the last four characters of the key ID: the secret key and the session
/// token never appear in a description, a debug description, a mirror (`dump`) or an error.
public struct AWSCredentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The access key ID (`AKIA…` for long-term keys, `ASIA…` for temporary ones): not secret.
    public var accessKeyID: String
    /// The secret access key: it signs, and is never sent or printed.
    public var secretAccessKey: String
    /// The token of temporary credentials (from STS); nil for long-term keys.
    public var sessionToken: String?

    /// Credentials as given; `AWSCredentials.resolve(environment:homeDirectory:profile:)` in
    /// `VoicePipeClient` finds them as the AWS CLI does.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// "AWSCredentials(accessKeyID: ****************MPLE, secretAccessKey: <redacted>, sessionToken: none)".
    public var description: String {
        "AWSCredentials(accessKeyID: \(maskedAccessKeyID), secretAccessKey: <redacted>, sessionToken: \(sessionToken == nil ? "none" : "<redacted>"))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["accessKeyID": maskedAccessKeyID, "secretAccessKey": "<redacted>",
                                "sessionToken": sessionToken == nil ? "none" : "<redacted>"], displayStyle: .struct)
    }

    /// The key ID with all but its last four characters masked, as `aws configure list` shows it.
    public var maskedAccessKeyID: String {
        String(repeating: "*", count: max(0, accessKeyID.count - 4)) + accessKeyID.suffix(4)
    }
}
