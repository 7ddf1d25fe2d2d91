import VoicePipeCore

/// Why AWS signing cannot start: no credentials, a profile or a region missing, a credentials
/// file that cannot be read. No case holds a secret key or session token, so the sentences are
/// safe to print and log.
public enum AWSConfigurationError: SystemCodedError, Sendable, Hashable {
    /// Neither the environment nor the shared credentials file holds credentials.
    /// - Parameters:
    ///   - file: the credentials file that was looked for and does not exist.
    ///   - partialVariable: the one of `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` that is set
    ///     without the other, if any.
    case noCredentials(file: String, partialVariable: String?)
    /// The credentials file has no section for the profile.
    case profileNotFound(profile: String, file: String, available: [String])
    /// The profile's section lacks a key VoicePipe needs (it signs with static keys only).
    case incompleteProfile(profile: String, file: String, missing: String)
    /// The credentials file exists but cannot be read.
    case unreadableFile(path: String, reason: String, code: SystemErrorCode?)
    /// A line of the credentials file is neither a `[profile]` header, a `key = value` pair
    /// inside a section, nor a comment. Only the line number is kept, as the line may hold a secret.
    case malformedFile(path: String, line: Int)
    /// No region was given and none is in `AWS_REGION` or `AWS_DEFAULT_REGION`.
    case noRegion
    /// The region or service cannot go into a credential scope.
    case invalidScope(name: String, value: String)
    /// The presigned request's lifetime is outside SigV4's 1 second to 7 days.
    case invalidExpiry(seconds: Int)
    /// The clock reads a time SigV4 cannot write (before 1970 or after 9999).
    case timeOutOfRange(unixSeconds: Int64)

    public var code: SystemErrorCode? {
        if case .unreadableFile(_, _, let code) = self { return code }
        return nil
    }

    public var message: String {
        switch self {
        case .noCredentials(let file, let partialVariable):
            let variables = switch partialVariable {
            case "AWS_ACCESS_KEY_ID": "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"
            case "AWS_SECRET_ACCESS_KEY": "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"
            default: "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set"
            }
            return "no AWS credentials found: \(variables), and there is no credentials file at '\(file)'; "
                + "set both variables, or run 'aws configure', or point AWS_SHARED_CREDENTIALS_FILE at your credentials file"
        case .profileNotFound(let profile, let file, let available):
            let known = available.isEmpty ? "it has no profiles" : "it has " + available.map { "'\($0)'" }.joined(separator: ", ")
            return "the AWS profile '\(profile)' is not in '\(file)' (\(known)); set AWS_PROFILE to one of them or add the profile"
        case .incompleteProfile(let profile, let file, let missing):
            return "the AWS profile '\(profile)' in '\(file)' has no \(missing); VoicePipe signs with static keys only, "
                + "so add aws_access_key_id and aws_secret_access_key to it, or export temporary credentials "
                + "(for example with 'aws configure export-credentials --format env')"
        case .unreadableFile(let path, let reason, _):
            return "cannot read the AWS credentials file '\(path)': \(reason)"
        case .malformedFile(let path, let line):
            return "line \(line) of the AWS credentials file '\(path)' is not a [profile] header, a 'name = value' line "
                + "inside a profile, or a comment; correct it"
        case .noRegion:
            return "no AWS region: pass --aws-region or set AWS_REGION (or AWS_DEFAULT_REGION)"
        case .invalidScope(let name, let value):
            return "the AWS \(name) '\(value)' is not valid: use letters, digits, '-', '_' and '.' only"
        case .invalidExpiry(let seconds):
            return "a presigned request cannot expire after \(seconds) s: choose 1 to 604800 s (7 days)"
        case .timeOutOfRange(let unixSeconds):
            return "the time \(unixSeconds) s after 1970 cannot be signed: SigV4 dates run from 1970 to 9999; check the system clock"
        }
    }
}
