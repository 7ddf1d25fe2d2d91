import VoicePipeCore

/// A moment of a session: the time since its clock's origin.
///
/// The session core has no clock of its own: every event carries the instant the caller read from
/// its clock (the real one, or a manual one in tests), so ten minutes of session can be replayed in
/// microseconds and a timing rule is tested to the nanosecond.
public struct SessionInstant: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Time since the clock's origin.
    public var sinceOrigin: Duration

    public init(sinceOrigin: Duration) {
        self.sinceOrigin = sinceOrigin
    }

    /// The clock's origin.
    public static let origin = SessionInstant(sinceOrigin: .zero)

    /// `seconds` after the origin.
    public static func seconds(_ seconds: Double) -> SessionInstant {
        SessionInstant(sinceOrigin: .seconds(seconds))
    }

    public static func < (lhs: SessionInstant, rhs: SessionInstant) -> Bool {
        lhs.sinceOrigin < rhs.sinceOrigin
    }

    public static func + (lhs: SessionInstant, rhs: Duration) -> SessionInstant {
        SessionInstant(sinceOrigin: lhs.sinceOrigin + rhs)
    }

    public static func - (lhs: SessionInstant, rhs: Duration) -> SessionInstant {
        SessionInstant(sinceOrigin: lhs.sinceOrigin - rhs)
    }

    public static func - (lhs: SessionInstant, rhs: SessionInstant) -> Duration {
        lhs.sinceOrigin - rhs.sinceOrigin
    }

    /// Seconds since the origin.
    public var seconds: Double { sinceOrigin.seconds }

    /// "12.345 s".
    public var description: String { sinceOrigin.formattedSeconds }
}

/// Helpers for this package's own code, `package` so that they never clash with an integrator's
/// own extensions on the standard library's `Duration` (``SessionTimeline/seconds(_:)`` formats one).
extension Duration {
    /// The duration of `samples` samples at `sampleRate`, to the nanosecond.
    package static func samples(_ samples: Int, at sampleRate: SampleRate) -> Duration {
        sampleRate.duration(ofFrames: samples)
    }

    /// Milliseconds as a double.
    package var milliseconds: Double { seconds * 1000 }

    /// "1.234 s", three decimals.
    package var formattedSeconds: String {
        let millis = Int((seconds * 1000).rounded())
        let sign = millis < 0 ? "-" : ""
        let magnitude = millis.magnitude
        let fraction = String(magnitude % 1000)
        return "\(sign)\(magnitude / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) s"
    }
}
