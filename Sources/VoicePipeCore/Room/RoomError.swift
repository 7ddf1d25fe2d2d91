/// Why a room could not be built: a figure outside what the simulator models, or samples it cannot use.
///
/// Each case names the option, the value given and the range accepted, so the message tells a
/// user what to change.
public enum RoomError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A numeric room option outside its range: the option's name, the value, and the range.
    case outOfRange(option: String, value: Double, range: ClosedRange<Double>)
    /// A sample rate the room cannot run at (not finite, or outside 8 kHz ... 192 kHz).
    case unsupportedRate(SampleRate)
    /// An impulse response with no samples, a non-finite sample, or nothing but silence.
    case unusableImpulseResponse(String)
    /// An impulse response at another rate than the microphone's.
    case impulseResponseRate(impulse: SampleRate, capture: SampleRate)
    /// Noise or talker samples that are empty, silent (for a level to be set) or not finite.
    case unusableSamples(String)

    public var description: String {
        switch self {
        case .outOfRange(let option, let value, let range):
            "the room's \(option) is \(value), outside the range it models (\(range.lowerBound) ... \(range.upperBound))"
        case .unsupportedRate(let rate):
            "a simulated room runs at 8000 Hz to 192000 Hz, not \(rate)"
        case .unusableImpulseResponse(let reason):
            "the impulse response cannot be used: \(reason)"
        case .impulseResponseRate(let impulse, let capture):
            "the impulse response is at \(impulse) but the microphone runs at \(capture); resample it to the microphone's rate first"
        case .unusableSamples(let reason):
            "the room's samples cannot be used: \(reason)"
        }
    }

    /// Throws ``outOfRange(option:value:range:)`` unless `value` is finite and inside `range`.
    static func check(_ option: String, _ value: Double, in range: ClosedRange<Double>) throws(RoomError) {
        guard value.isFinite, range.contains(value) else { throw .outOfRange(option: option, value: value, range: range) }
    }

    /// Throws ``unsupportedRate(_:)`` unless `rate` is one the room runs at.
    static func check(rate: SampleRate) throws(RoomError) {
        guard rate.hertz.isFinite, (8_000.0...192_000.0).contains(rate.hertz) else { throw .unsupportedRate(rate) }
    }
}
