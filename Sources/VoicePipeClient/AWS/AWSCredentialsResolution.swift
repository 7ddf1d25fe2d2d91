import Glibc
import VoicePipeCore
import VoicePipeIO
import VoicePipeProtocols

/// Finding credentials where the AWS CLI keeps them: in the environment, or in the shared
/// credentials file (reading a file is an effect, so this lives here rather than beside the type).
extension AWSCredentials {
    /// The shared credentials file's default location under the home directory.
    public static let defaultCredentialsFile = "~/.aws/credentials"

    /// Finds credentials the way the AWS CLI does for static keys: `AWS_ACCESS_KEY_ID` and
    /// `AWS_SECRET_ACCESS_KEY` (with `AWS_SESSION_TOKEN`) when both are set and not empty, or else
    /// the profile's section of the shared credentials file (`AWS_SHARED_CREDENTIALS_FILE`, by
    /// default `~/.aws/credentials`).
    /// - Parameters:
    ///   - environment: the process environment (`ProcessInfo.processInfo.environment`).
    ///   - homeDirectory: what a leading `~` stands for in the file's path.
    ///   - profile: the profile to read; nil means `AWS_PROFILE`, or else `default`.
    /// - Returns: the credentials; an empty session token counts as none.
    /// - Throws: ``AWSConfigurationError`` saying where it looked and what to do.
    public static func resolve(environment: [String: String], homeDirectory: String, profile: String? = nil) throws(AWSConfigurationError) -> AWSCredentials {
        let keyID = environment["AWS_ACCESS_KEY_ID"] ?? ""
        let secret = environment["AWS_SECRET_ACCESS_KEY"] ?? ""
        if !keyID.isEmpty, !secret.isEmpty {
            return AWSCredentials(accessKeyID: keyID, secretAccessKey: secret, sessionToken: nonEmpty(environment["AWS_SESSION_TOKEN"]))
        }
        let configured = nonEmpty(environment["AWS_SHARED_CREDENTIALS_FILE"]) ?? defaultCredentialsFile
        let path = expandingTilde(configured, homeDirectory: homeDirectory)
        let profileName = nonEmpty(profile) ?? nonEmpty(environment["AWS_PROFILE"]) ?? "default"
        guard let text = try readCredentialsFile(path) else {
            let partial = !keyID.isEmpty ? "AWS_ACCESS_KEY_ID" : !secret.isEmpty ? "AWS_SECRET_ACCESS_KEY" : nil
            throw .noCredentials(file: path, partialVariable: partial)
        }
        let profiles = try SharedCredentialsFile.parse(text, path: path)
        guard let section = profiles.sections[profileName] else {
            throw .profileNotFound(profile: profileName, file: path, available: profiles.order)
        }
        guard let fileKeyID = nonEmpty(section["aws_access_key_id"]) else {
            throw .incompleteProfile(profile: profileName, file: path, missing: "aws_access_key_id")
        }
        guard let fileSecret = nonEmpty(section["aws_secret_access_key"]) else {
            throw .incompleteProfile(profile: profileName, file: path, missing: "aws_secret_access_key")
        }
        return AWSCredentials(accessKeyID: fileKeyID, secretAccessKey: fileSecret, sessionToken: nonEmpty(section["aws_session_token"]))
    }

    /// The largest credentials file read; a bigger one is not a credentials file.
    static let maximumFileSize = 1 << 20

    /// The file's text, or nil when nothing exists at `path`.
    private static func readCredentialsFile(_ path: String) throws(AWSConfigurationError) -> String? {
        let descriptor: Int32
        do {
            descriptor = try SystemFile.openForReading(path)
        } catch {
            if error.isMissing { return nil }
            throw .unreadableFile(path: path, reason: error.reason, code: error.code)
        }
        defer { _ = close(descriptor) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                let code = SystemErrorCode.posix(errno)
                throw .unreadableFile(path: path, reason: code.messageInSentence, code: code)
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
            if bytes.count > maximumFileSize {
                throw .unreadableFile(path: path, reason: "it is larger than 1 MiB, which no credentials file is; check the path", code: nil)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func expandingTilde(_ path: String, homeDirectory: String) -> String {
        if path == "~" { return homeDirectory }
        guard path.hasPrefix("~/") else { return path }
        let home = homeDirectory.hasSuffix("/") ? String(homeDirectory.dropLast()) : homeDirectory
        return home + path.dropFirst()
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}

/// The INI text of `~/.aws/credentials`, read as the AWS CLI's parser reads it for static keys:
/// `[name]` starts a profile; `name = value` (or `name: value`) lines set a key, whose name is
/// compared without regard to case; lines starting with `#` or `;` are comments; blank lines are
/// skipped; surrounding spaces are trimmed. A later key or section of the same name wins.
///
/// Not supported (the CLI's parser accepts them, no credentials file needs them): indented
/// continuation lines, which count as ordinary lines here.
enum SharedCredentialsFile {
    struct Profiles {
        /// Each profile's keys (lower case) and values.
        var sections: [String: [String: String]] = [:]
        /// The profile names in the order they first appear.
        var order: [String] = []
    }

    static func parse(_ text: String, path: String) throws(AWSConfigurationError) -> Profiles {
        var profiles = Profiles()
        var current: String?
        var number = 0
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            number += 1
            let line = trimmed(rawLine)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard let close = line.lastIndex(of: "]"), close > line.startIndex else { throw .malformedFile(path: path, line: number) }
                let name = String(trimmed(line[line.index(after: line.startIndex)..<close]))
                guard !name.isEmpty else { throw .malformedFile(path: path, line: number) }
                if profiles.sections[name] == nil {
                    profiles.sections[name] = [:]
                    profiles.order.append(name)
                }
                current = name
                continue
            }
            guard let profile = current, let delimiter = line.firstIndex(where: { $0 == "=" || $0 == ":" }) else {
                throw .malformedFile(path: path, line: number)
            }
            let key = trimmed(line[..<delimiter]).lowercased()
            guard !key.isEmpty else { throw .malformedFile(path: path, line: number) }
            profiles.sections[profile, default: [:]][key] = String(trimmed(line[line.index(after: delimiter)...]))
        }
        return profiles
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\u{FEFF}" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else { return "" }
        return text[first...last]
    }
}

/// The region requests are signed for.
public enum AWSRegion {
    /// The region given on the command line, or else `AWS_REGION`, or else `AWS_DEFAULT_REGION`
    /// (empty values count as unset).
    /// - Throws: ``AWSConfigurationError/noRegion`` when none is set.
    public static func resolve(explicit: String?, environment: [String: String]) throws(AWSConfigurationError) -> String {
        for candidate in [explicit, environment["AWS_REGION"], environment["AWS_DEFAULT_REGION"]] {
            if let candidate, !candidate.isEmpty { return candidate }
        }
        throw .noRegion
    }
}
