/// The hardware side of a playback device: what the driver negotiated and how it plays.
///
/// VoicePipeIO implements it over ALSA (Float32, non-interleaved access); tests implement it with
/// a fake. Code outside VoicePipe uses ``PlaybackDevice``, which puts the format guard and the
/// Float32 rule in front of ``start(_:)``.
public protocol PlaybackHardware: AnyObject {
    /// The device's name ("default", "hw:1,0", …).
    var name: String { get }
    /// The format the device negotiated, exactly as it reports it: unchecked.
    var reportedFormat: AudioFormat { get }
    /// Underruns so far (the player fell behind and the device played silence), each recovered.
    var underruns: Int { get }
    /// Prepares the stream. On real hardware a 16-bit or invalid connection is a crash, which is
    /// why this takes only a ``PlayerFormat`` (validated, Float32, deinterleaved).
    func start(_ format: PlayerFormat) throws(PlayerSinkError)
    /// Plays one buffer; blocks while the device's buffer is full.
    func write(_ buffer: borrowing PlaybackBuffer) throws(PlayerSinkError)
    /// Plays out what is buffered, then stops the stream.
    func drain() throws(PlayerSinkError)
    /// Ends any stream and releases the device.
    func close()
    /// Frames written and not yet heard (the device's delay), asked right after a write on the
    /// writing thread; nil when the device cannot tell, and then a period counts as heard at once.
    var playbackDelayFrames: Int? { get }
}

extension PlaybackHardware {
    public var playbackDelayFrames: Int? { nil }
}

/// A playback device whose format passed the guard and the Float32 rule: the real ``PlayerSink``.
///
/// ``init(_:)`` validates the negotiated format first; a device reporting 0 Hz, a non-finite rate,
/// no channels, or a sample format other than deinterleaved Float32 gives ``AudioUnavailable``.
/// ``connect()`` starts it in its own ``format`` (a `PlaybackConverter(outputRate:channelCount:)`
/// makes reply audio fit it).
public final class PlaybackDevice: PlayerSink {
    /// The format the device plays.
    public let format: PlayerFormat
    /// The hardware behind the device.
    public let hardware: any PlaybackHardware
    private var started = false

    /// The device's name.
    public var name: String { hardware.name }
    /// Underruns so far, each recovered.
    public var underruns: Int { hardware.underruns }

    /// Checks the hardware's negotiated format and wraps the hardware.
    /// - Throws: ``AudioUnavailable``: reason ``AudioUnavailable/Reason/format(_:)`` when the guard
    ///   refuses the format, ``AudioUnavailable/Reason/formatRefused(_:)`` when it is not
    ///   deinterleaved Float32. The hardware is closed and nothing is started.
    public init(_ hardware: any PlaybackHardware) throws(AudioUnavailable) {
        let validated: ValidatedFormat
        switch FormatGuard.verdict(for: hardware.reportedFormat) {
        case .success(let format):
            validated = format
        case .failure(let rejection):
            hardware.close()
            throw AudioUnavailable(device: hardware.name, direction: .playback, reason: .format(rejection))
        }
        do {
            format = try PlayerFormat(validated)
        } catch {
            hardware.close()
            throw AudioUnavailable(device: hardware.name, direction: .playback, reason: .formatRefused(error.description))
        }
        self.hardware = hardware
    }

    /// Starts the stream in the device's own ``format``.
    public func connect() throws(PlayerSinkError) {
        try connect(format)
    }

    /// Starts the stream; `format` must be the device's own ``format``.
    public func connect(_ format: PlayerFormat) throws(PlayerSinkError) {
        guard format == self.format else {
            throw .formatMismatch(expected: self.format.description, received: format.description)
        }
        if started { try disconnect() }
        try hardware.start(format)
        started = true
    }

    public func play(_ buffer: borrowing PlaybackBuffer) throws(PlayerSinkError) {
        guard started else { throw .notConnected }
        guard buffer.channelCount == format.channelCount else {
            throw .channelCountMismatch(expected: format.channelCount, received: buffer.channelCount)
        }
        try hardware.write(buffer)
    }

    /// Plays out what is buffered and stops; the device can be connected again.
    public func disconnect() throws(PlayerSinkError) {
        guard started else { return }
        started = false
        try hardware.drain()
    }

    deinit {
        hardware.close()
    }
}
