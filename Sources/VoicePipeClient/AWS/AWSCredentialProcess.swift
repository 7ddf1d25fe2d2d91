import Foundation
import VoicePipeIO
import VoicePipeProtocols

/// A profile's `credential_process`: a command that prints credentials as JSON, run as AWS tools
/// run it (split into words as a POSIX shell would, without a shell; the program found on PATH;
/// its standard output read, its error output kept for the message when it fails).
public struct AWSCredentialProcess: Sendable, Hashable {
    /// The command line as written in the profile.
    public let command: String
    /// The profile it belongs to.
    public let profile: String
    /// The words the command splits into; the first is the program.
    public let arguments: [String]

    /// The largest output read from the process; more is not credentials.
    static let maximumOutput = 1 << 20

    /// - Throws: ``AWSConfigurationError/credentialProcessFailed(profile:program:reason:)`` for a
    ///   command that does not split into words (an unclosed quote) or is empty.
    public init(command: String, profile: String) throws(AWSConfigurationError) {
        self.command = command
        self.profile = profile
        do {
            arguments = try ShellWords.split(command)
        } catch {
            throw .credentialProcessFailed(profile: profile, program: "…", reason: "cannot be split into words: \(error.reason)")
        }
        guard !arguments.isEmpty else {
            throw .credentialProcessFailed(profile: profile, program: "", reason: "is empty: give the command that prints the credentials")
        }
    }

    /// The command's first word, safe to print (the arguments may carry a secret).
    public var program: String { arguments.first ?? "" }

    /// Runs the command and reads the credentials it prints.
    /// - Throws: ``AWSConfigurationError/credentialProcessFailed(profile:program:reason:)``
    ///   saying what went wrong: not found, a failing status (with its error output), output
    ///   that is not version 1 credentials.
    public func fetch() throws(AWSConfigurationError) -> AWSExpiringCredentials {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["--"] + arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        // The session may be reading audio from standard input; the process must not take it.
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw failure("could not start: \(error.localizedDescription)")
        }
        let errorText = Guarded([UInt8]())
        let drained = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let bytes = errors.fileHandleForReading.readDataToEndOfFile()
            errorText.withLock { $0 = Array(bytes.prefix(4096)) }
            drained.signal()
        }
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        drained.wait()
        let stderr = String(decoding: errorText.withLock { $0 }, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationReason == .exit else {
            throw failure("was killed by signal \(process.terminationStatus)" + (stderr.isEmpty ? "" : ": \(stderr)"))
        }
        if process.terminationStatus == 127 && (stderr.hasPrefix("/usr/bin/env:") || stderr.hasPrefix("env:")) {
            throw failure("was not found: no program '\(program)' on PATH")
        }
        guard process.terminationStatus == 0 else {
            throw failure("exited with status \(process.terminationStatus)" + (stderr.isEmpty ? "" : ": \(stderr)"))
        }
        guard printed.count <= Self.maximumOutput else { throw failure("printed more than 1 MiB, which no credentials are") }
        return try parse(Array(printed))
    }

    /// The credentials in the process's output: a JSON object with `Version` 1, `AccessKeyId`,
    /// `SecretAccessKey` and optionally `SessionToken` and `Expiration` (ISO 8601).
    public func parse(_ output: [UInt8]) throws(AWSConfigurationError) -> AWSExpiringCredentials {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(output))) as? [String: Any] else {
            throw failure("did not print a JSON object (it must print {\"Version\": 1, \"AccessKeyId\": …, \"SecretAccessKey\": …})")
        }
        let version = object["Version"]
        guard let number = version as? NSNumber, number.doubleValue == 1 else {
            let shown = version.map { "\($0)" } ?? "none"
            throw failure("printed credentials of Version \(shown); version 1 is the one supported")
        }
        func text(_ key: String) throws(AWSConfigurationError) -> String? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            guard let string = value as? String else { throw failure("printed a \(key) that is not a string") }
            return string
        }
        guard let keyID = try text("AccessKeyId"), !keyID.isEmpty else { throw failure("printed no AccessKeyId") }
        guard let secret = try text("SecretAccessKey"), !secret.isEmpty else { throw failure("printed no SecretAccessKey") }
        let token = try text("SessionToken").flatMap { $0.isEmpty ? nil : $0 }
        var expiration: Int?
        if let written = try text("Expiration") {
            guard let seconds = AWSTime.parseISO8601(written) else {
                throw failure("printed an Expiration '\(written)' that is not an ISO 8601 time such as 2026-12-02T15:04:05Z")
            }
            expiration = seconds
        }
        return AWSExpiringCredentials(AWSCredentials(accessKeyID: keyID, secretAccessKey: secret, sessionToken: token), expiration: expiration)
    }

    private func failure(_ reason: String) -> AWSConfigurationError {
        .credentialProcessFailed(profile: profile, program: program, reason: reason)
    }
}

/// Splitting a command line into words as Python's `shlex.split` does, which botocore uses for
/// `credential_process`: spaces, tabs and line breaks separate words; single quotes keep
/// everything literally; inside double quotes a backslash escapes only `"` and `\`; outside
/// quotes a backslash keeps the next character, whatever it is. Nothing is expanded.
public enum ShellWords {
    public struct SplitError: Error, Sendable, Hashable {
        public let reason: String

        public init(reason: String) { self.reason = reason }
    }

    public static func split(_ line: String) throws(SplitError) -> [String] {
        var words = [String]()
        var word = "", inWord = false
        var iterator = line.makeIterator()
        while let character = iterator.next() {
            switch character {
            case " ", "\t", "\n", "\r", "\r\n":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            case "'":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "'" { closed = true; break }
                    word.append(next)
                }
                guard closed else { throw SplitError(reason: "a single quote is not closed") }
            case "\"":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "\"" { closed = true; break }
                    if next == "\\" {
                        guard let escaped = iterator.next() else { break }
                        if escaped != "\"" && escaped != "\\" { word.append("\\") }
                        word.append(escaped)
                    } else {
                        word.append(next)
                    }
                }
                guard closed else { throw SplitError(reason: "a double quote is not closed") }
            case "\\":
                inWord = true
                guard let escaped = iterator.next() else { throw SplitError(reason: "it ends in a backslash") }
                word.append(escaped)
            default:
                inWord = true
                word.append(character)
            }
        }
        if inWord { words.append(word) }
        return words
    }
}
