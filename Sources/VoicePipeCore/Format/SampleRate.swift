/// Frames per second: the one type every format, chunk, converter and configuration states a rate in.
///
/// Holds any `Double`, because hardware can report nonsense (0, a negative value, NaN, infinity)
/// that ``FormatGuard`` must be able to see and refuse; a rate that passed the guard is positive and
/// finite. Literals work where a rate is expected: `sampleRate: 16_000`, `sampleRate: 44_100.0`.
public struct SampleRate: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    /// The rate in hertz, as reported (whole numbers for every real device and file).
    public var hertz: Double

    public init(hertz: Double) {
        self.hertz = hertz
    }

    public init(integerLiteral hertz: Int) {
        self.hertz = Double(hertz)
    }

    public init(floatLiteral hertz: Double) {
        self.hertz = hertz
    }

    /// The capture target's rate: 16 000 Hz.
    public static let capture: SampleRate = 16_000

    /// The reply audio's rate on the wire and the player's: 24 000 Hz.
    public static let reply: SampleRate = 24_000

    /// The rate as a whole number of hertz when it is one (and fits in `Int`); nil for a fraction,
    /// NaN or infinity.
    public var wholeHertz: Int? {
        guard hertz.isFinite, hertz == hertz.rounded(), abs(hertz) < 0x1p63 else { return nil }
        return Int(hertz)
    }

    /// `hertz` rounded to the nearest whole number and held within `Int`'s range (NaN is 0): the
    /// integer the wire's `sampleRate` field carries (a rate read from the wire comes back as written).
    public var roundedHertz: Int {
        guard !hertz.isNaN else { return 0 }
        let rounded = hertz.rounded()
        if rounded >= 0x1p63 { return .max }
        if rounded < -0x1p63 { return .min }
        return Int(rounded)
    }

    /// How long `frames` frames last at this rate, to the nanosecond (exact integer arithmetic for a
    /// whole-number rate); zero when the rate is not positive and finite.
    public func duration(ofFrames frames: Int) -> Duration {
        guard hertz.isFinite, hertz > 0 else { return .zero }
        guard hertz == hertz.rounded() else { return .seconds(Double(frames) / hertz) }
        let whole = roundedHertz
        let rest = (frames % whole).multipliedFullWidth(by: 1_000_000_000)
        return .seconds(frames / whole) + .nanoseconds(whole.dividingFullWidth(rest).quotient)
    }

    /// The whole number of frames nearest to `duration` at this rate (0 for a rate that is not
    /// positive and finite).
    public func frames(in duration: Duration) -> Int {
        guard hertz.isFinite, hertz > 0 else { return 0 }
        let frames = (duration.seconds * hertz).rounded()
        guard frames.magnitude < 0x1p63 else { return frames < 0 ? .min : .max }
        return Int(frames)
    }

    public static func < (lhs: SampleRate, rhs: SampleRate) -> Bool {
        lhs.hertz < rhs.hertz
    }

    /// A rate as people write it: "48000 Hz", "44100.5 Hz", "nan Hz" (the one rate formatter every
    /// message and summary uses).
    public var description: String {
        if hertz.isFinite && hertz == hertz.rounded() && abs(hertz) < 1e15 {
            return "\(Int(hertz)) Hz"
        }
        return "\(hertz) Hz"
    }
}

/// A helper for this package's own code, `package` so that it never clashes with an integrator's
/// own extensions on the standard library's `Duration`.
extension Duration {
    /// The duration in seconds, as a double.
    package var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}
