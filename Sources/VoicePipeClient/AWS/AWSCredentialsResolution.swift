import Glibc
import VoicePipeCore
import VoicePipeIO
import VoicePipeProtocols

/// Finding credentials where the AWS CLI keeps them: in the environment, or in the shared
/// credentials and config files (reading a file is an effect, so this lives here rather than
/// beside the type).
extension AWSCredentials {
    /// The shared credentials file's default location under the home directory.
    public static let defaultCredentialsFile = "~/.aws/credentials"
    /// The shared config file's default location under the home directory.
    public static let defaultConfigFile = "~/.aws/config"

    /// The credentials ``AWSCredentialsProvider/resolve(environment:homeDirectory:profile:)``
    /// finds, fetched now when they come from a `credential_process`.
    public static func resolve(environment: [String: String], homeDirectory: String, profile: String? = nil) throws(AWSConfigurationError) -> AWSCredentials {
        try AWSCredentialsProvider.resolve(environment: environment, homeDirectory: homeDirectory, profile: profile).credentials(at: time(nil))
    }

    /// The largest credentials file read; a bigger one is not a credentials file.
    static let maximumFileSize = 1 << 20

    /// The file's text, or nil when nothing exists at `path`.
    static func readCredentialsFile(_ path: String) throws(AWSConfigurationError) -> String? {
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

    static func expandingTilde(_ path: String, homeDirectory: String) -> String {
        if path == "~" { return homeDirectory }
        guard path.hasPrefix("~/") else { return path }
        let home = homeDirectory.hasSuffix("/") ? String(homeDirectory.dropLast()) : homeDirectory
        return home + path.dropFirst()
    }

    static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}

extension AWSCredentialsProvider {
    /// Finds credentials the way the AWS CLI does for keys and processes:
    /// 1. `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (with `AWS_SESSION_TOKEN`) when both
    ///    are set and not empty;
    /// 2. the profile's static keys in the shared credentials file (`AWS_SHARED_CREDENTIALS_FILE`,
    ///    by default `~/.aws/credentials`);
    /// 3. the profile's `credential_process`, from the credentials file or else the config file
    ///    (`AWS_CONFIG_FILE`, by default `~/.aws/config`, where profiles are `[profile name]` and
    ///    `[default]`), run when first asked for and again before its credentials expire;
    /// 4. the profile's static keys in the config file.
    /// - Parameters:
    ///   - environment: the process environment (`ProcessInfo.processInfo.environment`).
    ///   - homeDirectory: what a leading `~` stands for in the files' paths.
    ///   - profile: the profile to read; nil means `AWS_PROFILE`, or else `default`.
    /// - Throws: ``AWSConfigurationError`` saying where it looked and what to do; nothing is run yet.
    public static func resolve(environment: [String: String], homeDirectory: String, profile: String? = nil) throws(AWSConfigurationError) -> AWSCredentialsProvider {
        typealias Files = AWSCredentials
        let keyID = environment["AWS_ACCESS_KEY_ID"] ?? ""
        let secret = environment["AWS_SECRET_ACCESS_KEY"] ?? ""
        if !keyID.isEmpty, !secret.isEmpty {
            let credentials = AWSCredentials(accessKeyID: keyID, secretAccessKey: secret, sessionToken: Files.nonEmpty(environment["AWS_SESSION_TOKEN"]))
            return AWSCredentialsProvider(credentials, source: .environment)
        }
        let credentialsPath = Files.expandingTilde(Files.nonEmpty(environment["AWS_SHARED_CREDENTIALS_FILE"]) ?? Files.defaultCredentialsFile, homeDirectory: homeDirectory)
        let configPath = Files.expandingTilde(Files.nonEmpty(environment["AWS_CONFIG_FILE"]) ?? Files.defaultConfigFile, homeDirectory: homeDirectory)
        let profileName = Files.nonEmpty(profile) ?? Files.nonEmpty(environment["AWS_PROFILE"]) ?? "default"
        let credentialsText = try Files.readCredentialsFile(credentialsPath)
        let configText = try Files.readCredentialsFile(configPath)
        if credentialsText == nil && configText == nil {
            let partial = !keyID.isEmpty ? "AWS_ACCESS_KEY_ID" : !secret.isEmpty ? "AWS_SECRET_ACCESS_KEY" : nil
            throw .noCredentials(file: credentialsPath, configFile: configPath, partialVariable: partial)
        }
        let credentialsProfiles = try credentialsText.map { (text) throws(AWSConfigurationError) in try SharedCredentialsFile.parse(text, path: credentialsPath) }
        let configProfiles = try configText.map { (text) throws(AWSConfigurationError) in try SharedCredentialsFile.parse(text, path: configPath).configProfiles }
        let fromCredentials = credentialsProfiles?.sections[profileName]
        let fromConfig = configProfiles?.sections[profileName]
        guard fromCredentials != nil || fromConfig != nil else {
            var available = credentialsProfiles?.order ?? []
            for name in configProfiles?.order ?? [] where !available.contains(name) { available.append(name) }
            throw .profileNotFound(profile: profileName, file: credentialsText != nil ? credentialsPath : configPath, available: available)
        }
        func staticKeys(_ section: [String: String]?) -> AWSCredentials? {
            guard let keyID = Files.nonEmpty(section?["aws_access_key_id"]), let secret = Files.nonEmpty(section?["aws_secret_access_key"]) else { return nil }
            return AWSCredentials(accessKeyID: keyID, secretAccessKey: secret, sessionToken: Files.nonEmpty(section?["aws_session_token"]))
        }
        if let credentials = staticKeys(fromCredentials) {
            return AWSCredentialsProvider(credentials, source: .credentialsFile(path: credentialsPath, profile: profileName))
        }
        if let command = Files.nonEmpty(fromCredentials?["credential_process"]) ?? Files.nonEmpty(fromConfig?["credential_process"]) {
            let process = try AWSCredentialProcess(command: command, profile: profileName)
            return AWSCredentialsProvider(source: .process(profile: profileName, program: process.program)) { () throws(AWSConfigurationError) in try process.fetch() }
        }
        if let credentials = staticKeys(fromConfig) {
            return AWSCredentialsProvider(credentials, source: .configFile(path: configPath, profile: profileName))
        }
        let (section, path) = fromCredentials.map { ($0, credentialsPath) } ?? (fromConfig ?? [:], configPath)
        let missing = Files.nonEmpty(section["aws_access_key_id"]) == nil ? "aws_access_key_id" : "aws_secret_access_key"
        throw .incompleteProfile(profile: profileName, file: path, missing: missing)
    }
}

/// The INI text of `~/.aws/credentials` (and `~/.aws/config`), read as the AWS CLI's parser reads it for static keys:
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

        /// The profiles of a config file, where a profile's section is `[profile name]`, or
        /// `[default]`; other sections (`[sso-session …]`, `[services …]`) are not profiles.
        var configProfiles: Profiles {
            var profiles = Profiles()
            for section in order {
                let name: String
                if section == "default" {
                    name = "default"
                } else if section.hasPrefix("profile "), case let stripped = String(section.dropFirst("profile ".count).drop(while: { $0 == " " || $0 == "\t" })), !stripped.isEmpty {
                    name = stripped
                } else {
                    continue
                }
                if profiles.sections[name] == nil { profiles.order.append(name) }
                // `[profile default]` wins over `[default]`, as in botocore.
                if section == "default", profiles.sections[name] != nil { continue }
                profiles.sections[name] = sections[section]
            }
            return profiles
        }
    }

    static func parse(_ text: String, path: String) throws(AWSConfigurationError) -> Profiles {
        try parseSections(text, path: path)
    }

    private static func parseSections(_ text: String, path: String) throws(AWSConfigurationError) -> Profiles {
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
