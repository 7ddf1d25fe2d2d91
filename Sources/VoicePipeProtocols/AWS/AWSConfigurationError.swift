import VoicePipeCore

/// Why AWS signing cannot start: no credentials, a profile or a region missing, a credentials
/// file that cannot be read. No case holds a secret key or session token, so the sentences are
/// safe to print and log.
public enum AWSConfigurationError: SystemCodedError, Sendable, Hashable {
    /// Neither the environment nor the shared credentials and config files hold credentials.
    /// - Parameters:
    ///   - file: the credentials file that was looked for and does not exist.
    ///   - configFile: the config file that was looked for and does not exist.
    ///   - partialVariable: the one of `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` that is set
    ///     without the other, if any.
    case noCredentials(file: String, configFile: String, partialVariable: String?)
    /// Neither file has a section for the profile.
    case profileNotFound(profile: String, file: String, available: [String])
    /// The profile has neither both static keys nor a `credential_process`.
    case incompleteProfile(profile: String, file: String, missing: String)
    /// A credentials or config file exists but cannot be read.
    case unreadableFile(path: String, reason: String, code: SystemErrorCode?)
    /// A line of a credentials or config file is neither a `[profile]` header, a `key = value`
    /// pair inside a section, nor a comment. Only the line number is kept, as the line may hold a secret.
    case malformedFile(path: String, line: Int)
    /// The profile's `credential_process` could not run, failed, or printed no usable credentials.
    /// - Parameters:
    ///   - program: the command's first word only (its arguments may hold a secret).
    ///   - reason: what went wrong, with the program's own error output when it failed.
    case credentialProcessFailed(profile: String, program: String, reason: String)
    /// Temporary credentials that have expired and could not be replaced by fresh ones.
    case credentialsExpired(profile: String, expiredAt: String)
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
        case .noCredentials(let file, let configFile, let partialVariable):
            let variables = switch partialVariable {
            case "AWS_ACCESS_KEY_ID": "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"
            case "AWS_SECRET_ACCESS_KEY": "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"
            default: "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set"
            }
            return "no AWS credentials found: \(variables), and there is no credentials file at '\(file)' nor config file at '\(configFile)'; "
                + "set both variables, or run 'aws configure', or point AWS_SHARED_CREDENTIALS_FILE (or AWS_CONFIG_FILE) at your file"
        case .profileNotFound(let profile, let file, let available):
            let known = available.isEmpty ? "it has no profiles" : "it has " + available.map { "'\($0)'" }.joined(separator: ", ")
            return "the AWS profile '\(profile)' is not in '\(file)' (\(known)); set AWS_PROFILE to one of them or add the profile"
        case .incompleteProfile(let profile, let file, let missing):
            return "the AWS profile '\(profile)' in '\(file)' has no \(missing); VoicePipe signs with static keys or a credential_process, "
                + "so add aws_access_key_id and aws_secret_access_key, or credential_process, to it, or export temporary credentials "
                + "(for example with 'aws configure export-credentials --format env')"
        case .unreadableFile(let path, let reason, _):
            return "cannot read the AWS file '\(path)': \(reason)"
        case .malformedFile(let path, let line):
            return "line \(line) of the AWS file '\(path)' is not a [profile] header, a 'name = value' line "
                + "inside a profile, or a comment; correct it"
        case .credentialProcessFailed(let profile, let program, let reason):
            return "the credential_process '\(program)' of the AWS profile '\(profile)' \(reason)"
        case .credentialsExpired(let profile, let expiredAt):
            return "the temporary AWS credentials of the profile '\(profile)' expired at \(expiredAt) and its credential_process gave no fresh ones; "
                + "renew them (for example by logging in again) and start the session again"
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
