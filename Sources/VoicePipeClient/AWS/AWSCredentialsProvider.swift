import Glibc
import VoicePipeIO
import VoicePipeProtocols

/// Credentials as fetched, with the moment temporary ones expire.
public struct AWSExpiringCredentials: Sendable, Hashable {
    public var credentials: AWSCredentials
    /// Seconds since 1970 at which they stop working; nil for credentials that do not expire.
    public var expiration: Int?

    public init(_ credentials: AWSCredentials, expiration: Int? = nil) {
        self.credentials = credentials
        self.expiration = expiration
    }
}

/// The credentials each handshake is signed with: fixed keys, or temporary ones fetched again
/// (by a profile's `credential_process`) before they expire, so every reconnection and rotation
/// of a long session signs with valid ones.
///
/// The refresh follows botocore's: within 15 minutes of expiry a fetch is tried and, if it fails,
/// the current credentials serve on; within 10 minutes a failed fetch is an error.
public final class AWSCredentialsProvider: Sendable {
    /// Where the credentials come from, for the timeline and errors (never a secret).
    public enum Source: Sendable, Hashable, CustomStringConvertible {
        case environment
        case given
        case credentialsFile(path: String, profile: String)
        case configFile(path: String, profile: String)
        /// A `credential_process`; `program` is the command's first word.
        case process(profile: String, program: String)

        public var description: String {
            switch self {
            case .environment: "AWS_ACCESS_KEY_ID in the environment"
            case .given: "the credentials given"
            case .credentialsFile(let path, let profile): "the profile '\(profile)' of '\(path)'"
            case .configFile(let path, let profile): "the profile '\(profile)' of '\(path)'"
            case .process(let profile, let program): "the credential_process '\(program)' of the profile '\(profile)'"
            }
        }
    }

    /// Seconds before expiry from which a fresh fetch is tried (botocore's advisory window).
    public static let advisoryRefresh = 15 * 60
    /// Seconds before expiry within which a failed fetch is an error (botocore's mandatory window).
    public static let mandatoryRefresh = 10 * 60

    public let source: Source
    private let kind: Kind
    private let state = Guarded(State())

    private enum Kind {
        case fixed(AWSCredentials)
        case fetched(@Sendable () throws(AWSConfigurationError) -> AWSExpiringCredentials)
    }

    private struct State {
        var current: AWSExpiringCredentials?
        var fetches = 0
    }

    /// Credentials that never change.
    public init(_ credentials: AWSCredentials, source: Source = .given) {
        self.source = source
        kind = .fixed(credentials)
    }

    /// Credentials fetched by `fetch` when first asked for and again before they expire.
    public init(source: Source, fetch: @escaping @Sendable () throws(AWSConfigurationError) -> AWSExpiringCredentials) {
        self.source = source
        kind = .fetched(fetch)
    }

    /// How many times the credentials have been fetched.
    public var fetchCount: Int { state.withLock { $0.fetches } }

    /// The credentials to sign with at `unixTime`, fetched afresh when they are close to expiry.
    /// - Throws: the fetch's error when none are held yet or the held ones expire within 10
    ///   minutes; ``AWSConfigurationError/credentialsExpired(profile:expiredAt:)`` when fresh
    ///   ones are already expired.
    public func credentials(at unixTime: Int) throws(AWSConfigurationError) -> AWSCredentials {
        switch kind {
        case .fixed(let credentials):
            return credentials
        case .fetched(let fetch):
            return try state.withLock { (state: inout State) throws(AWSConfigurationError) -> AWSCredentials in
                if let current = state.current, !Self.needsRefresh(current, at: unixTime, within: Self.advisoryRefresh) {
                    return current.credentials
                }
                let fresh: AWSExpiringCredentials
                do throws(AWSConfigurationError) {
                    state.fetches += 1
                    fresh = try fetch()
                } catch {
                    if let current = state.current, !Self.needsRefresh(current, at: unixTime, within: Self.mandatoryRefresh) {
                        return current.credentials
                    }
                    throw error
                }
                if let expiration = fresh.expiration, expiration <= unixTime {
                    throw .credentialsExpired(profile: profileName, expiredAt: AWSTime.iso8601(expiration))
                }
                state.current = fresh
                return fresh.credentials
            }
        }
    }

    private var profileName: String {
        switch source {
        case .credentialsFile(_, let profile), .configFile(_, let profile), .process(let profile, _): profile
        case .environment, .given: "default"
        }
    }

    private static func needsRefresh(_ held: AWSExpiringCredentials, at unixTime: Int, within seconds: Int) -> Bool {
        guard let expiration = held.expiration else { return false }
        return expiration - unixTime <= seconds
    }
}

/// Times as AWS writes them in credentials: ISO 8601 in UTC.
enum AWSTime {
    /// "2026-12-02T15:04:05Z" for the seconds since 1970.
    static func iso8601(_ unixTime: Int) -> String {
        var seconds = time_t(unixTime)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// The seconds since 1970 of an ISO 8601 date and time: `YYYY-MM-DDTHH:MM:SS`, optional
    /// fractional seconds (dropped), then `Z` or an offset `±HH:MM` (or `±HHMM`); nil otherwise.
    static func parseISO8601(_ text: String) -> Int? {
        let scalars = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= scalars.count else { return nil }
            var value = 0
            for index in range {
                let byte = scalars[index]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        func byte(_ index: Int) -> UInt8? { index < scalars.count ? scalars[index] : nil }
        guard let year = number(0..<4), byte(4) == UInt8(ascii: "-"), let month = number(5..<7), byte(7) == UInt8(ascii: "-"),
              let day = number(8..<10), let separator = byte(10), separator == UInt8(ascii: "T") || separator == UInt8(ascii: " "),
              let hour = number(11..<13), byte(13) == UInt8(ascii: ":"), let minute = number(14..<16), byte(16) == UInt8(ascii: ":"),
              let second = number(17..<19), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var index = 19
        if byte(index) == UInt8(ascii: ".") {
            index += 1
            let start = index
            while let digit = byte(index), digit >= 48, digit <= 57 { index += 1 }
            guard index > start else { return nil }
        }
        var offset = 0
        switch byte(index) {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case let sign? where sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"):
            guard let hours = number(index + 1..<index + 3) else { return nil }
            var next = index + 3
            if byte(next) == UInt8(ascii: ":") { next += 1 }
            guard let minutes = number(next..<next + 2), hours < 24, minutes < 60 else { return nil }
            offset = (hours * 3600 + minutes * 60) * (sign == UInt8(ascii: "+") ? 1 : -1)
            index = next + 2
        default:
            return nil
        }
        guard index == scalars.count else { return nil }
        // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3600 + minute * 60 + second - offset
    }
}
