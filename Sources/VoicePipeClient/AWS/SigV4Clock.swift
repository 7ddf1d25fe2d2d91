import Glibc
import VoicePipeProtocols

/// The one clock reading signing needs, kept out of the pure ``SigV4Timestamp``.
extension SigV4Timestamp {
    /// The system clock's current second.
    /// - Throws: ``AWSConfigurationError/timeOutOfRange(unixSeconds:)`` when the clock is set
    ///   before 1970 or after 9999.
    public static func now() throws(AWSConfigurationError) -> SigV4Timestamp {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return try SigV4Timestamp(unixSeconds: Int64(time.tv_sec))
    }
}
