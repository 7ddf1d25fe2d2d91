import Synchronization
import VoicePipeCore
import VoicePipeIO

/// A stand-in audio device that reports whatever format a test gives it.
///
/// Like real hardware, it does not survive a tap or a player connection in any format but the one
/// it reported: it traps (a precondition failure), the stand-in for the uncatchable exception a
/// device throws. Tests that make it report 0 Hz, NaN or no channels therefore prove the guard
/// runs first: a tap for that format would have crashed the test process.
///
/// It has no thread of its own: ``deliver(_:)`` calls the tap on the caller's thread, as the
/// device's audio thread would. It stamps its buffers: a stamped tap gets each buffer's frame
/// position and either the instant a test gives (``deliver(_:capturedAt:)``) or that of a perfect
/// clock started at ``captureStartInstant``. As a speaker it reports the delay a test sets.
public final class FakeAudioDevice: TimestampingCaptureHardware, PlaybackHardware {
    public let name: String
    public let reportedFormat: AudioFormat

    private struct State: Sendable {
        var tap: StampedCaptureTap?
        var onEnd: (@Sendable () -> Void)?
        var tapInstallations = 0
        var playerStarts = 0
        var frames = 0
        /// Frames delivered in the current stream: the next stamp's frame position.
        var streamFrames = 0
        var overruns = 0
        var stopped = false
        var failure: AudioDeviceError?
        var played: [[Float]] = []
        var drained = false
        var closed = false
        var playbackDelay: Int?
        var playbackFailure: PlayerSinkError?
    }

    private let state = Guarded(State())

    /// The monotonic instant (nanoseconds) of the first captured frame when ``deliver(_:)`` stamps.
    public let captureStartInstant: Int64

    /// A device named `name` that reports `format` (any values, valid or not).
    public init(name: String = "fake", format: AudioFormat, captureStartInstant: Int64 = 0) {
        self.name = name
        self.reportedFormat = format
        self.captureStartInstant = captureStartInstant
    }

    /// Frames written and not yet heard, as the speaker reports them (nil: it cannot tell).
    public var playbackDelayFrames: Int? {
        get { state.withLock { $0.playbackDelay } }
        set { state.withLock { $0.playbackDelay = newValue } }
    }

    /// Taps installed so far.
    public var tapInstallations: Int { state.withLock { $0.tapInstallations } }
    /// Player connections started so far.
    public var playerStarts: Int { state.withLock { $0.playerStarts } }
    /// Whether the device was closed.
    public var isClosed: Bool { state.withLock { $0.closed } }
    /// Every sample played, per channel.
    public var played: [[Float]] { state.withLock { $0.played } }
    /// Whether a drain ended the playback stream.
    public var drained: Bool { state.withLock { $0.drained } }

    // MARK: Capture

    public func installTap(format: ValidatedFormat, _ tap: @escaping CaptureTap, onEnd: @escaping @Sendable () -> Void = {}) throws(AudioDeviceError) {
        try installTap(format: format, stamped: { bytes, _ in tap(bytes) }, onEnd: onEnd)
    }

    public func installTap(format: ValidatedFormat, stamped tap: @escaping StampedCaptureTap, onEnd: @escaping @Sendable () -> Void = {}) throws(AudioDeviceError) {
        // The hardware's own check, which a real device answers with a crash: the tap's format
        // must be exactly what the device reported (an invalid report can therefore never get here).
        precondition(format.audioFormat == reportedFormat,
                     "FakeAudioDevice: a tap was installed with \(format), but the device reported \(reportedFormat)")
        try state.withLock { state throws(AudioDeviceError) in
            guard state.tap == nil else { throw .alreadyStarted(device: name) }
            state.tap = tap
            state.streamFrames = 0
            state.onEnd = onEnd
            state.tapInstallations += 1
            state.stopped = false
        }
    }

    /// Hands `bytes` (interleaved frames of the reported format) to the tap, as the audio thread
    /// would; returns what the tap answered, or `.stop` when no stream is running.
    @discardableResult
    public func deliver(_ bytes: UnsafeRawBufferPointer) -> CaptureTapAction {
        deliver(bytes, capturedAt: nil)
    }

    /// Hands `bytes` to the tap as ``deliver(_:)`` does, stamped as captured at `instant`
    /// (monotonic nanoseconds; nil: the perfect clock's instant for the buffer's first frame).
    @discardableResult
    public func deliver(_ bytes: UnsafeRawBufferPointer, capturedAt instant: Int64?) -> CaptureTapAction {
        let current = state.withLock { state -> (tap: StampedCaptureTap, position: Int)? in
            guard !state.stopped, let tap = state.tap else { return nil }
            return (tap, state.streamFrames)
        }
        guard let current else { return .stop }
        let (tap, position) = (current.tap, current.position)
        let rate = reportedFormat.sampleRate.hertz
        let clock = rate > 0 && rate.isFinite ? captureStartInstant + Int64((Double(position) * 1e9 / rate).rounded()) : captureStartInstant
        let action = tap(bytes, CapturedBlockStamp(framePosition: position, instant: instant ?? clock))
        let frames = bytes.count / max(reportedFormat.bytesPerFrame, 1)
        state.withLock { state in
            state.frames += frames
            state.streamFrames += frames
        }
        if action == .stop { end() }
        return action
    }

    /// An overrun, as ALSA's capture recovers one: counted, the audio of the gap never reaches the
    /// tap, and the stream goes on (the next ``deliver(_:)`` is the tap's next buffer). Nothing
    /// happens when no stream is running.
    public func overrun() {
        state.withLock { state in
            if state.tap != nil && !state.stopped { state.overruns += 1 }
        }
    }

    /// Ends the stream as an unplugged device would: ``waitUntilStopped()`` throws.
    public func fail(_ code: SystemErrorCode) {
        state.withLock { $0.failure = .deviceLost(device: name, code, framesBefore: $0.frames) }
        end()
    }

    public func requestStop() {
        end()
    }

    /// Marks the stream stopped and, the first time, runs its end handler (outside the lock, as
    /// the audio thread of a real device would).
    private func end() {
        let onEnd = state.withLock { state -> (@Sendable () -> Void)? in
            state.stopped = true
            defer { state.onEnd = nil }
            return state.onEnd
        }
        onEnd?()
    }

    public var isStreaming: Bool { state.withLock { $0.tap != nil && !$0.stopped } }

    /// Returns at once (the fake has no thread): the report so far, or the failure set by ``fail(_:)``.
    public func waitUntilStopped() throws(AudioDeviceError) -> CaptureReport {
        end()
        let (frames, overruns, failure) = state.withLock { state in
            state.tap = nil
            return (state.frames, state.overruns, state.failure)
        }
        if let failure { throw failure }
        return CaptureReport(frames: frames, overruns: overruns)
    }

    // MARK: Playback

    public var underruns: Int { 0 }

    public func start(_ format: PlayerFormat) throws(PlayerSinkError) {
        // A 16-bit or invalid player connection crashes real devices.
        precondition(format.audioFormat.sampleType == .float32 && !format.audioFormat.isInterleaved,
                     "FakeAudioDevice: a player was connected with \(format); only deinterleaved Float32 is safe")
        precondition(format.audioFormat == reportedFormat,
                     "FakeAudioDevice: a player was connected with \(format), but the device reported \(reportedFormat)")
        state.withLock { state in
            state.playerStarts += 1
            state.drained = false
            if state.played.count != format.channelCount { state.played = Array(repeating: [], count: format.channelCount) }
        }
    }

    /// Makes every later write fail as an unplugged speaker's does.
    public func failPlayback(_ code: SystemErrorCode) {
        state.withLock { $0.playbackFailure = .failed("'\(name)' failed: \(code.messageInSentence)", code: code) }
    }

    public func write(_ buffer: borrowing PlaybackBuffer) throws(PlayerSinkError) {
        if let failure = state.withLock({ $0.playbackFailure }) { throw failure }
        let channels = (0..<buffer.channelCount).map { buffer.copyChannel($0) }
        state.withLock { state in
            for (index, samples) in channels.enumerated() where index < state.played.count {
                state.played[index] += samples
            }
        }
    }

    public func drain() throws(PlayerSinkError) {
        state.withLock { $0.drained = true }
    }

    public func close() {
        state.withLock { state in
            state.closed = true
            state.stopped = true
            state.tap = nil
        }
    }
}
