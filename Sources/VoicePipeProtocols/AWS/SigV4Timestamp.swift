/// The moment a request is signed, as SigV4 writes it: `20150830T123600Z` for the request and
/// `20150830` for the credential scope, both in UTC.
///
/// Built from Unix seconds, so signing never reads a clock itself; `SigV4Timestamp.now()` in
/// `VoicePipeClient` reads the system's.
/// Implementation notes: the calendar date comes from the day count by the Gregorian rules, with
/// integers alone: whole 400-year cycles of 146 097 days, then at most 400 years and 12 months.
public struct SigV4Timestamp: Sendable, Hashable, CustomStringConvertible {
    /// Seconds since 1970-01-01T00:00:00Z.
    public let unixSeconds: Int64
    /// `YYYYMMDDTHHMMSSZ`, the `X-Amz-Date` value.
    public let dateTime: String
    /// `YYYYMMDD`, the first part of the credential scope.
    public var date: String { String(dateTime.prefix(8)) }

    /// The latest second SigV4's four-digit year can hold: 9999-12-31T23:59:59Z.
    public static let latestUnixSeconds: Int64 = 253_402_300_799

    /// The timestamp of `unixSeconds`.
    /// - Throws: ``AWSConfigurationError/timeOutOfRange(unixSeconds:)`` before 1970 or after 9999.
    public init(unixSeconds: Int64) throws(AWSConfigurationError) {
        guard unixSeconds >= 0, unixSeconds <= Self.latestUnixSeconds else { throw .timeOutOfRange(unixSeconds: unixSeconds) }
        self.unixSeconds = unixSeconds
        let days = unixSeconds / 86_400
        let second = unixSeconds % 86_400
        let (year, month, day) = Self.civilDate(daysSince1970: days)
        dateTime = Self.digits(year, 4) + Self.digits(month, 2) + Self.digits(day, 2) + "T"
            + Self.digits(second / 3_600, 2) + Self.digits(second / 60 % 60, 2) + Self.digits(second % 60, 2) + "Z"
    }

    public var description: String { dateTime }

    /// Year, month (1-12) and day (1-31) of a day count from 1970-01-01 (not negative).
    static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        // Whole 400-year cycles from 1601-01-01, the start of one, then year by year and month by month.
        let daysFrom1601 = days + daysFrom1601To1970
        var year = 1_601 + daysFrom1601 / daysPer400Years * 400
        var left = daysFrom1601 % daysPer400Years
        while left >= daysIn(year: year) {
            left -= daysIn(year: year)
            year += 1
        }
        var month: Int64 = 1
        while left >= daysIn(month: month, year: year) {
            left -= daysIn(month: month, year: year)
            month += 1
        }
        return (year, month, left + 1)
    }

    private static let daysPer400Years: Int64 = 146_097
    /// 369 years from 1601 to 1970, 89 of them leap years (1700, 1800 and 1900 are not).
    private static let daysFrom1601To1970: Int64 = 369 * 365 + 89

    private static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysIn(year: Int64) -> Int64 { isLeap(year) ? 366 : 365 }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func digits(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
