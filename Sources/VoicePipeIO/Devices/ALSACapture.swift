@preconcurrency import CALSA
import Glibc
import Synchronization
import VoicePipeCore

/// An ALSA capture PCM with interleaved access, read on its own thread.
///
/// The audio thread reads one period at a time into a buffer allocated before the stream starts,
/// and hands it to the tap: no allocation per buffer, no lock shared with other code (stop
/// requests and counters are atomics). The buffer is zeroed before each read, because some ALSA
/// plugins (`null`, and `file` past the end of its `infile`) report a full read without writing.
/// Overruns (and suspends) are recovered with `snd_pcm_recover` and counted; any other read error ends the stream
/// with ``AudioDeviceError/deviceLost(device:_:framesBefore:)``.
///
/// Each buffer is stamped after its read: its first frame was captured at
/// "now − (`snd_pcm_delay` + frames read) / rate" on ``MonotonicClock``, and its frame position is
/// the count of frames delivered before it (an overrun's lost frames are not counted, so a stamped
/// tap sees the gap as an instant further on than the position says).
public final class ALSACapture: TimestampingCaptureHardware {
    public let name: String
    public let reportedFormat: AudioFormat
    /// Frames per read.
    public let periodFrames: Int

    private let pcm: ALSAPCM
    // Shared with the audio thread: atomics only, so it never waits on the controlling thread.
    private let stopRequested = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)
    private let framesDelivered = Atomic<Int>(0)
    private let overrunCount = Atomic<Int>(0)
    /// The negative ALSA error that ended the stream, 0 if none; published by `running`'s release.
    private let failureCode = Atomic<Int>(0)
    /// The stream's thread until it has been joined. Only controlling threads take this lock, and
    /// they hold it across the join, so a new stream cannot start while the old one is winding down.
    private let control = Guarded(Control())

    private struct Control: Sendable {
        var thread: pthread_t?
    }

    /// Opens `name` for capture and negotiates its format (native rate, channels and the best
    /// sample type unless `preferences` insist), without starting a stream.
    /// - Throws: ``AudioUnavailable`` naming why: no device, permission denied, busy, or a
    ///   format the device refuses.
    public init(name: String, preferences: DevicePreferences = DevicePreferences(), configuration: ALSAConfiguration? = nil) throws(AudioUnavailable) {
        let pcm = try ALSAPCM(name: name, direction: .capture, configuration: configuration, blocking: false)
        let parameters = try ALSAHardwareParameters(pcm)
        reportedFormat = try parameters.negotiate(access: SND_PCM_ACCESS_RW_INTERLEAVED, types: ALSAHardwareParameters.captureTypes, preferences: preferences)
        periodFrames = try parameters.apply()
        self.pcm = pcm
        self.name = name
    }

    deinit {
        close()
    }

    /// Starts the audio thread. `format` must be the negotiated format: the device writes frames
    /// of that size whatever the caller believes.
    public func installTap(format: ValidatedFormat, _ tap: @escaping CaptureTap, onEnd: @escaping @Sendable () -> Void = {}) throws(AudioDeviceError) {
        try installTap(format: format, stamped: { bytes, _ in tap(bytes) }, onEnd: onEnd)
    }

    /// Starts the audio thread as ``installTap(format:_:onEnd:)`` does, stamping each buffer.
    public func installTap(format: ValidatedFormat, stamped tap: @escaping StampedCaptureTap, onEnd: @escaping @Sendable () -> Void = {}) throws(AudioDeviceError) {
        try control.withLock { control throws(AudioDeviceError) in
            guard format.audioFormat == reportedFormat else {
                throw .formatMismatch(device: name, expected: reportedFormat.description, received: format.description)
            }
            guard !pcm.isClosed else { throw .closed(device: name) }
            guard control.thread == nil else { throw .alreadyStarted(device: name) }
            failureCode.store(0, ordering: .relaxed)
            framesDelivered.store(0, ordering: .relaxed)
            overrunCount.store(0, ordering: .relaxed)
            let prepared = snd_pcm_prepare(pcm.handle)
            guard prepared == 0 else {
                throw .startFailed(device: name, ALSA.code(prepared))
            }
            let context = CaptureThreadContext(capture: self, tap: tap, onEnd: onEnd, bytesPerFrame: reportedFormat.bytesPerFrame)
            let unmanaged = Unmanaged.passRetained(context)
            var thread = pthread_t()
            running.store(true, ordering: .releasing)
            let created = pthread_create(&thread, nil, { raw in
                guard let raw else { return nil }
                Unmanaged<CaptureThreadContext>.fromOpaque(raw).takeRetainedValue().run()
                return nil
            }, unmanaged.toOpaque())
            guard created == 0 else {
                running.store(false, ordering: .releasing)
                unmanaged.release()
                throw .startFailed(device: name, .posix(created))
            }
            control.thread = thread
        }
    }

    /// Asks the stream to end. A request made before a stream starts ends that stream at once.
    public func requestStop() {
        stopRequested.store(true, ordering: .relaxed)
    }

    public var isStreaming: Bool { running.load(ordering: .acquiring) }

    public func waitUntilStopped() throws(AudioDeviceError) -> CaptureReport {
        let joined = control.withLock { control -> Bool in
            guard let thread = control.thread else { return false }
            // The last release of a device can happen on its own audio thread, which cannot join itself.
            if pthread_equal(thread, pthread_self()) != 0 { pthread_detach(thread) } else { pthread_join(thread, nil) }
            control.thread = nil
            stopRequested.store(false, ordering: .relaxed)
            return true
        }
        let report = CaptureReport(frames: framesDelivered.load(ordering: .acquiring), overruns: overrunCount.load(ordering: .acquiring))
        let code = failureCode.load(ordering: .acquiring)
        if joined, code != 0 {
            throw .deviceLost(device: name, ALSA.code(Int32(truncatingIfNeeded: code)), framesBefore: report.frames)
        }
        return report
    }

    /// Ends any stream and releases the device; later taps are refused.
    public func close() {
        requestStop()
        _ = try? waitUntilStopped()
        control.withLock { _ in pcm.close() }
    }

    /// How long one wait for data may last before the stop flag is checked again, in milliseconds.
    private static let waitMilliseconds: Int32 = 50

    /// The audio thread's loop. The PCM is non-blocking: with no data yet it waits in
    /// `snd_pcm_wait` for at most ``waitMilliseconds``, so a stop request is seen even when the
    /// device has stalled.
    fileprivate func run(tap: StampedCaptureTap, onEnd: () -> Void, bytesPerFrame: Int) {
        let handle = pcm.handle
        let nanosecondsPerFrame = 1e9 / reportedFormat.sampleRate.hertz
        var position = 0
        let byteCount = periodFrames * bytesPerFrame
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 16)
        defer { buffer.deallocate() }
        var failure: Int32 = 0
        while !stopRequested.load(ordering: .relaxed) {
            memset(buffer, 0, byteCount)
            let read = snd_pcm_readi(handle, buffer, snd_pcm_uframes_t(periodFrames))
            if read > 0 {
                let frames = Int(read)
                var delay = snd_pcm_sframes_t(0)
                if snd_pcm_delay(handle, &delay) != 0 { delay = 0 }
                let waiting = Double(max(Int(delay), 0) + frames) * nanosecondsPerFrame
                let stamp = CapturedBlockStamp(framePosition: position, instant: MonotonicClock.nanoseconds() - Int64(waiting.rounded()))
                position += frames
                framesDelivered.add(frames, ordering: .releasing)
                if tap(UnsafeRawBufferPointer(start: buffer, count: frames * bytesPerFrame), stamp) == .stop { break }
                continue
            }
            let code = Int32(truncatingIfNeeded: read)
            switch -code {
            case 0, EAGAIN:
                let waited = snd_pcm_wait(handle, Self.waitMilliseconds)
                if waited < 0 && waited != -EPIPE && waited != -ESTRPIPE && waited != -EINTR { failure = waited }
            case EINTR:
                continue
            case EPIPE, ESTRPIPE:
                // Overrun (the device dropped audio while nobody read: counted) or suspend (system
                // sleep): alsa-lib's recovery prepares or resumes the stream, and capture carries on.
                if -code == EPIPE { overrunCount.add(1, ordering: .releasing) }
                let recovered = snd_pcm_recover(handle, code, 1)
                if recovered < 0 { failure = recovered }
            default:
                failure = code
            }
            if failure != 0 { break }
        }
        snd_pcm_drop(handle)
        failureCode.store(Int(failure), ordering: .relaxed)
        running.store(false, ordering: .releasing)
        onEnd()
    }
}

/// What the audio thread needs, handed over through pthread_create's argument.
private final class CaptureThreadContext: @unchecked Sendable {
    let capture: ALSACapture
    let tap: StampedCaptureTap
    let onEnd: @Sendable () -> Void
    let bytesPerFrame: Int

    init(capture: ALSACapture, tap: @escaping StampedCaptureTap, onEnd: @escaping @Sendable () -> Void, bytesPerFrame: Int) {
        self.capture = capture
        self.tap = tap
        self.onEnd = onEnd
        self.bytesPerFrame = bytesPerFrame
    }

    func run() {
        capture.run(tap: tap, onEnd: onEnd, bytesPerFrame: bytesPerFrame)
    }
}

extension CaptureDevice {
    /// Opens the ALSA capture device `name` ("default", "hw:1,0", a PCM from `configuration`),
    /// negotiates its native format and checks it with the guard.
    /// - Throws: ``AudioUnavailable`` with the reason: no device, permission denied, busy, a
    ///   refused format, or a format the guard refuses. Audio is then unavailable; carry on without it.
    public static func open(name: String, preferences: DevicePreferences = DevicePreferences(), configuration: ALSAConfiguration? = nil) throws(AudioUnavailable) -> CaptureDevice {
        try CaptureDevice(ALSACapture(name: name, preferences: preferences, configuration: configuration))
    }
}
