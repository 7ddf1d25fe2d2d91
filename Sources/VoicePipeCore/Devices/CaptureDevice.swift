/// What a capture tap returns after each buffer: keep the stream going, or end it.
public enum CaptureTapAction: Sendable, Hashable {
    case proceed
    case stop
}

/// The closure a capture device calls with each buffer.
///
/// It runs **on the device's audio thread**, once per buffer, with interleaved frames in the
/// device's validated format; the bytes are valid only during the call. It must return quickly and
/// must not wait on locks or actors that other code holds. The usual tap copies the bytes into an
/// ``AudioRing`` and returns; another thread reads the ring and runs the `CaptureConverter`.
public typealias CaptureTap = @Sendable (UnsafeRawBufferPointer) -> CaptureTapAction

/// The closure a timestamping capture device calls with each buffer and its stamp: the frame
/// position of the buffer's first frame and the monotonic instant it was captured (see
/// ``CapturedBlockStamp``). Same rules as ``CaptureTap``: the audio thread, bytes valid only during
/// the call, return quickly, never wait.
public typealias StampedCaptureTap = @Sendable (UnsafeRawBufferPointer, CapturedBlockStamp) -> CaptureTapAction

/// How a capture stream went, once it has ended.
public struct CaptureReport: Sendable, Hashable {
    /// Frames handed to the tap.
    public let frames: Int
    /// Overruns (the tap or the system fell behind and the device dropped audio), each recovered.
    public let overruns: Int

    public init(frames: Int, overruns: Int) {
        self.frames = frames
        self.overruns = overruns
    }
}

/// The hardware side of a capture device: what the driver negotiated and how it streams.
///
/// VoicePipeIO implements it over ALSA; tests implement it with a fake. Code outside VoicePipe
/// uses ``CaptureDevice``, which puts the format guard in front of ``installTap(format:_:)``.
public protocol CaptureHardware: AnyObject, Sendable {
    /// The device's name ("default", "hw:1,0", …).
    var name: String { get }
    /// The format the device negotiated, exactly as it reports it: unchecked, since a device that
    /// lost its route can report 0 Hz or no channels.
    var reportedFormat: AudioFormat { get }
    /// Starts streaming buffers of `format` to `tap` on the device's own thread. On real hardware
    /// a tap with an invalid format is a crash, which is why this takes only a validated format.
    /// `onEnd` runs once when the stream has ended (by a stop, the tap, or a failure), after the
    /// last call of the tap, on whichever thread ended it; like the tap, it must return quickly.
    func installTap(format: ValidatedFormat, _ tap: @escaping CaptureTap, onEnd: @escaping @Sendable () -> Void) throws(AudioDeviceError)
    /// Asks the stream to end after the current buffer; returns at once, from any thread.
    func requestStop()
    /// Whether a stream is running (a tap installed and the stream not yet ended); any thread.
    var isStreaming: Bool { get }
    /// Blocks until the stream has ended (by ``requestStop()``, by the tap, or by a failure).
    /// - Throws: ``AudioDeviceError/deviceLost(device:_:framesBefore:)`` when the
    ///   device failed mid-stream.
    func waitUntilStopped() throws(AudioDeviceError) -> CaptureReport
    /// Ends any stream and releases the device.
    func close()
}

/// Capture hardware that knows when each buffer was captured: ALSA from `snd_pcm_delay`, the fake
/// device from the instants a test gives it.
public protocol TimestampingCaptureHardware: CaptureHardware {
    /// Starts streaming as ``CaptureHardware/installTap(format:_:onEnd:)`` does, handing each
    /// buffer to `tap` with its stamp: frame positions count from the stream's start, instants are
    /// monotonic nanoseconds (`CLOCK_MONOTONIC`).
    func installTap(format: ValidatedFormat, stamped tap: @escaping StampedCaptureTap, onEnd: @escaping @Sendable () -> Void) throws(AudioDeviceError)
}

/// A capture device whose format passed the guard: the only way to install a capture tap.
///
/// ``init(_:)`` validates the negotiated format before anything else happens; a device reporting
/// 0 Hz, a non-finite rate or no channels gives ``AudioUnavailable`` and never reaches a tap.
public final class CaptureDevice: Sendable {
    /// The negotiated format, validated.
    public let format: ValidatedFormat
    /// The hardware behind the device.
    public let hardware: any CaptureHardware

    /// The device's name.
    public var name: String { hardware.name }

    /// Checks the hardware's negotiated format and wraps the hardware.
    /// - Throws: ``AudioUnavailable`` with reason ``AudioUnavailable/Reason/format(_:)`` when the
    ///   guard refuses the format; the hardware is closed and no tap is installed.
    public init(_ hardware: any CaptureHardware) throws(AudioUnavailable) {
        switch FormatGuard.verdict(for: hardware.reportedFormat) {
        case .success(let format):
            self.format = format
            self.hardware = hardware
        case .failure(let rejection):
            hardware.close()
            throw AudioUnavailable(device: hardware.name, direction: .capture, reason: .format(rejection))
        }
    }

    /// Starts the stream: `tap` receives every buffer on the audio thread (see ``CaptureTap``);
    /// `onEnd` runs once when the stream has ended, after the last buffer.
    public func installTap(_ tap: @escaping CaptureTap, onEnd: @escaping @Sendable () -> Void = {}) throws(AudioDeviceError) {
        try hardware.installTap(format: format, tap, onEnd: onEnd)
    }

    /// Whether the hardware stamps its buffers, so ``installTap(stamped:onEnd:)`` can start.
    public var stampsBuffers: Bool { hardware is any TimestampingCaptureHardware }

    /// Starts the stream with stamps: `tap` receives every buffer with its frame position and
    /// capture instant on the audio thread (see ``StampedCaptureTap``).
    /// - Throws: ``AudioDeviceError/noTimestamps(device:)`` when the hardware cannot stamp its
    ///   buffers (nothing starts), or what the hardware throws when it cannot start.
    public func installTap(stamped tap: @escaping StampedCaptureTap, onEnd: @escaping @Sendable () -> Void = {}) throws(AudioDeviceError) {
        guard let stamping = hardware as? any TimestampingCaptureHardware else { throw .noTimestamps(device: name) }
        try stamping.installTap(format: format, stamped: tap, onEnd: onEnd)
    }

    /// Asks the stream to end; returns at once, from any thread (a signal handler's queue included).
    public func stop() {
        hardware.requestStop()
    }

    /// Whether the stream is still running; poll it to learn, without blocking, that it ended.
    public var isStreaming: Bool { hardware.isStreaming }

    /// Blocks until the stream has ended.
    /// - Returns: frames delivered and overruns recovered.
    /// - Throws: ``AudioDeviceError/deviceLost(device:_:framesBefore:)`` when the
    ///   device failed mid-stream; everything delivered before stays delivered.
    public func waitUntilStopped() throws(AudioDeviceError) -> CaptureReport {
        try hardware.waitUntilStopped()
    }

    deinit {
        hardware.close()
    }
}
