/// Why a format cannot be used for audio: the guard's verdict, with a sentence a user can act on.
public enum FormatRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The sample rate is zero or negative (a device that lost its route reports 0 Hz).
    case sampleRateNotPositive(SampleRate)
    /// The sample rate is NaN or infinite.
    case sampleRateNotFinite(SampleRate)
    /// The channel count is zero or negative.
    case noChannels(Int)

    public var description: String {
        switch self {
        case .sampleRateNotPositive(let rate):
            "the sample rate is \(rate); audio needs a positive rate, so the device or file is unusable as reported"
        case .sampleRateNotFinite(let rate):
            "the sample rate is \(rate.hertz) (not a finite number); the device or file is reporting garbage"
        case .noChannels(let count):
            "the format has \(count) channels; audio needs at least one"
        }
    }
}

/// A format that passed ``FormatGuard``: positive finite rate and at least one channel.
///
/// The only way to get one is ``FormatGuard/validate(_:)``, so any API that takes a `ValidatedFormat`
/// (a converter, a tap) cannot be handed a zero-rate format: the unguarded call does not compile.
public struct ValidatedFormat: Sendable, Hashable, CustomStringConvertible {
    /// The format that was checked.
    public let audioFormat: AudioFormat

    fileprivate init(checked format: AudioFormat) {
        audioFormat = format
    }

    public var sampleRate: SampleRate { audioFormat.sampleRate }
    public var channelCount: Int { audioFormat.channelCount }
    public var sampleType: SampleType { audioFormat.sampleType }
    public var isInterleaved: Bool { audioFormat.isInterleaved }
    public var bytesPerFrame: Int { audioFormat.bytesPerFrame }
    public var description: String { audioFormat.description }

    /// The capture target, known to be valid.
    public static let captureTarget = ValidatedFormat(checked: .captureTarget)

    /// The player format, known to be valid.
    public static let playback = ValidatedFormat(checked: .playback)
}

/// The check every format passes before it reaches a converter, a tap or a device.
public enum FormatGuard {
    /// Validates a raw format.
    /// - Returns: the format as a ``ValidatedFormat``.
    /// - Throws: ``FormatRejection`` naming the first problem: a rate that is not finite,
    ///   a rate that is not positive, or no channels.
    public static func validate(_ format: AudioFormat) throws(FormatRejection) -> ValidatedFormat {
        guard format.sampleRate.hertz.isFinite else { throw .sampleRateNotFinite(format.sampleRate) }
        guard format.sampleRate.hertz > 0 else { throw .sampleRateNotPositive(format.sampleRate) }
        guard format.channelCount > 0 else { throw .noChannels(format.channelCount) }
        return ValidatedFormat(checked: format)
    }

    /// The guard's verdict without throwing: the validated format or the reason it was refused.
    public static func verdict(for format: AudioFormat) -> Result<ValidatedFormat, FormatRejection> {
        Result { () throws(FormatRejection) in try validate(format) }
    }
}
