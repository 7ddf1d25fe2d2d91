/// Why a player refused a format or a buffer.
public enum PlayerSinkError: SystemCodedError, Sendable, Hashable {
    /// The format's samples are not Float32 (a 16-bit player connection crashes real devices).
    case notFloat32(SampleType)
    /// The format is interleaved; players take one contiguous buffer per channel.
    case interleaved(channelCount: Int)
    /// A buffer whose channel count differs from the connected format's.
    case channelCountMismatch(expected: Int, received: Int)
    /// Connecting with a format other than the one the device plays.
    case formatMismatch(expected: String, received: String)
    /// Playing before connecting, or after disconnecting.
    case notConnected
    /// The device or file behind the sink failed: a sentence naming the device or file and what
    /// happened, and the failing call's code (ALSA's, libsndfile's, errno) where one failed.
    case failed(String, code: SystemErrorCode?)

    /// The failing call's code, for a device or file that failed.
    public var code: SystemErrorCode? {
        if case .failed(_, let code) = self { return code }
        return nil
    }

    public var message: String {
        switch self {
        case .notFloat32(let type):
            "players accept only Float32 samples, not \(type): a 16-bit player connection crashes real audio devices, so it is refused"
        case .interleaved(let channels):
            "players accept only deinterleaved audio (one contiguous buffer per channel), not interleaved \(channels)-channel frames"
        case .channelCountMismatch(let expected, let received):
            "the player was connected for \(expected) channel\(expected == 1 ? "" : "s") but received \(received)"
        case .formatMismatch(let expected, let received):
            "the player plays \(expected), not \(received); convert to its format first (PlaybackConverter(outputRate:channelCount:))"
        case .notConnected:
            "the player is not connected; connect it to a format first"
        case .failed(let message, _):
            message
        }
    }
}

/// A format a player can take: validated, Float32 and deinterleaved.
///
/// The only way to make one is ``init(_:)``, which refuses Int16 and interleaved formats, so a
/// sink's ``PlayerSink/connect(_:)-(PlayerFormat)`` never sees a format that would crash a device.
public struct PlayerFormat: Sendable, Hashable, CustomStringConvertible {
    /// The accepted format, as validated by the guard.
    public let validatedFormat: ValidatedFormat

    /// Checks that `format` is Float32 and deinterleaved.
    /// - Throws: ``PlayerSinkError/notFloat32(_:)`` or ``PlayerSinkError/interleaved(channelCount:)``.
    public init(_ format: ValidatedFormat) throws(PlayerSinkError) {
        guard format.sampleType == .float32 else { throw .notFloat32(format.sampleType) }
        guard !format.isInterleaved else { throw .interleaved(channelCount: format.channelCount) }
        validatedFormat = format
    }

    /// The default player format, ``AudioFormat/playback``.
    public static let playback = PlayerFormat(checked: .playback)

    private init(checked format: ValidatedFormat) {
        validatedFormat = format
    }

    /// The format as a plain description (rate, channels, Float32, deinterleaved).
    public var audioFormat: AudioFormat { validatedFormat.audioFormat }
    public var sampleRate: SampleRate { validatedFormat.sampleRate }
    public var channelCount: Int { validatedFormat.channelCount }
    public var description: String { validatedFormat.description }
}

/// What a device or file player implements: it takes deinterleaved Float32 buffers, nothing else.
/// The end of the playback path: ``ReplyPlayer`` renders reply audio into one.
///
/// A sink is connected to one ``PlayerFormat`` (which cannot be Int16 or interleaved), plays
/// buffers of it, and is disconnected when the audio ends; it may then be connected again.
public protocol PlayerSink: AnyObject {
    /// Prepares the sink for `format` (checked: Float32, deinterleaved).
    func connect(_ format: PlayerFormat) throws(PlayerSinkError)
    /// Plays one buffer of the connected format.
    func play(_ buffer: borrowing PlaybackBuffer) throws(PlayerSinkError)
    /// Plays out what is buffered and ends the stream (a file is finished); the sink can be
    /// connected again.
    func disconnect() throws(PlayerSinkError)
}

extension PlayerSink {
    /// Connects the sink to `format`, refusing Int16 and interleaved formats before the sink sees them.
    /// - Throws: ``PlayerSinkError/notFloat32(_:)``, ``PlayerSinkError/interleaved(channelCount:)``,
    ///   or the sink's own error.
    public func connect(format: ValidatedFormat) throws(PlayerSinkError) {
        try connect(PlayerFormat(format))
    }
}
