import Synchronization
import VoicePipeCore
import VoicePipeIO

/// What a capture pump moved, once its stream has ended.
public struct CapturePumpReport: Sendable, Hashable {
    /// What the device reported: frames handed to the tap, overruns recovered.
    public let device: CaptureReport
    /// Device frames that reached the converter.
    public let framesKept: Int
    /// Device frames dropped because the ring was full (conversion or delivery fell behind).
    public let framesDropped: Int

    public init(device: CaptureReport, framesKept: Int, framesDropped: Int) {
        self.device = device
        self.framesKept = framesKept
        self.framesDropped = framesDropped
    }
}

/// Why a capture pump stopped without finishing its stream cleanly.
public enum CapturePumpError: SystemCodedError, Sendable {
    /// The converter was built for another format than the device streams.
    case formatMismatch(device: ValidatedFormat, converter: ValidatedFormat)
    /// The device would not start (the tap was never installed).
    case startFailed(AudioDeviceError)
    /// The device failed mid-stream; every frame captured before it was converted and delivered:
    /// `framesKept` device frames (overruns before the loss are not known).
    case deviceLost(AudioDeviceError, framesKept: Int)

    /// The device's code, for a start or a stream that failed.
    public var code: SystemErrorCode? {
        switch self {
        case .formatMismatch: nil
        case .startFailed(let error), .deviceLost(let error, _): error.code
        }
    }

    public var message: String {
        switch self {
        case .formatMismatch(let device, let converter):
            "the device streams \(device) but the converter was built for \(converter); build it for the device's format"
        case .startFailed(let error), .deviceLost(let error, _):
            error.message
        }
    }
}

/// What the tap does with a buffer that does not fit in the ring.
public enum RingFullPolicy: Sendable, Hashable {
    /// Wait for the converter to make room: a device with a clock then overruns (and counts it,
    /// the truth), and a device without one (ALSA's `null`) is paced to the converter. Nothing is
    /// dropped by the pump.
    case wait
    /// Drop the buffer whole and count it: the audio thread never waits.
    case drop
}

/// Captured audio from a device to 16 kHz frames, the audio thread kept free of slow work:
///
/// ```
///  device audio thread:  tap ─▶ AudioRing (copy, lock-free) ─▶ WakeSignal.signal()
///  caller's thread:      wait on the signal ─▶ drain the ring ─▶ CaptureConverter ─▶ deliver(frame)
/// ```
///
/// The tap only copies into the ring, counts, and signals a semaphore (`sem_post`, which never
/// blocks); so does the end of the stream. The caller's thread waits on that semaphore, so it
/// wakes when audio arrives or the stream ends, rather than on a timer. A buffer that does not
/// fit in the ring waits for room (``RingFullPolicy/wait``, the default) or is dropped whole and
/// counted (``RingFullPolicy/drop``).
///
/// With an echo-control stage, the tap is the stamped one: each buffer's stamp (its device frame
/// position and capture instant) goes through a second lock-free ring, and each 16 kHz frame from
/// the converter is stamped from the latest one and cleaned by the stage before `deliver`:
///
/// ```
///  device audio thread:  stamped tap ─▶ stamp ring + AudioRing ─▶ WakeSignal.signal()
///  caller's thread:      drain ─▶ CaptureConverter ─▶ frame + its stamp ─▶ EchoControlStage ─▶ deliver(cleaned frame)
/// ```
public final class CapturePump: @unchecked Sendable {
    // Safety: `ring`, `signal` and the atomics are shared with the audio thread, each built for
    // that; the converter is used only on the thread inside `run`.
    public let device: CaptureDevice
    public let converter: CaptureConverter
    /// The echo-control stage every frame goes through before delivery, if any.
    public let echo: EchoControlStage?
    private let ring: AudioRing
    /// The stamps of the buffers in `ring`, 16 bytes each (frame position, instant), when `echo` is set.
    private let stamps = AudioRing(capacity: 256 * StampRecord.size)
    private let signal = WakeSignal()
    /// Posted after each read from the ring: room for a tap waiting under ``RingFullPolicy/wait``.
    private let room = WakeSignal()
    private let whenFull: RingFullPolicy
    private let frameLimit: Int?
    private let counters = TapCounters()
    private var started = false
    /// How long the converter thread waits at most before looking at the stream again; the tap
    /// and the end of the stream both wake it sooner, so this only bounds a lost wake-up.
    private static let idleWaitSeconds = 0.5

    /// - Parameters:
    ///   - device: a capture device whose format passed the guard.
    ///   - converter: built for `device.format`.
    ///   - ringSeconds: how much device audio the ring holds while conversion lags (default 2 s).
    ///   - frameLimit: stop after this many device frames (`nil`: until ``stop()``).
    ///   - whenFull: wait for room (the default) or drop a buffer that does not fit.
    ///   - echo: an echo-control stage for the converter's frames; the device must then stamp
    ///     its buffers (``TimestampingCaptureHardware``), or ``start()`` fails.
    /// - Throws: ``CapturePumpError/formatMismatch(device:converter:)``.
    public init(device: CaptureDevice, converter: CaptureConverter, ringSeconds: Double = 2, frameLimit: Int? = nil, whenFull: RingFullPolicy = .wait,
                echo: EchoControlStage? = nil) throws(CapturePumpError) {
        guard converter.inputFormat == device.format else {
            throw .formatMismatch(device: device.format, converter: converter.inputFormat)
        }
        self.device = device
        self.converter = converter
        self.echo = echo
        self.frameLimit = frameLimit.map { max($0, 1) }
        self.whenFull = whenFull
        let seconds = ringSeconds.isFinite ? min(max(ringSeconds, 0.05), 60) : 2
        let frames = max(Int((device.format.sampleRate.hertz * seconds).rounded()), 4_096)
        ring = AudioRing(capacity: frames * device.format.bytesPerFrame)
    }

    /// Asks the stream to end; returns at once, from any thread (a signal handler's queue included).
    /// What was captured before is still converted and delivered.
    public func stop() {
        counters.stopping.store(true, ordering: .relaxed)
        device.stop()
        signal.signal()
        room.signal()
    }

    /// Starts the device (installs the tap) if ``start()`` has not, and converts what it captures
    /// on this thread until the stream ends (by ``stop()``, the frame limit, or a failure), then
    /// flushes the converter.
    /// - Parameters:
    ///   - progress: called after each drained batch with the device frames converted so far.
    ///   - deliver: called with every 16 kHz frame, on this thread.
    /// - Returns: the counts once the stream has ended.
    /// - Throws: ``CapturePumpError/startFailed(_:)``; ``CapturePumpError/deviceLost(_:_:)``
    ///   after delivering everything captured before the failure; or what `deliver` throws (the
    ///   device is stopped first, and nothing more is delivered).
    public func run(progress: (Int) -> Void = { _ in }, _ deliver: (borrowing CaptureFrame) throws -> Void) throws -> CapturePumpReport {
        if !started { try start() }
        defer { started = false }
        guard let echo else { return try pump(progress: progress, deliver) }
        let stamping = FrameStamping(ring: stamps, deviceRate: device.format.sampleRate, outputRate: converter.resampler.outputRate)
        return try pump(progress: progress) { frame throws in
            try echo.process(frame, stamp: stamping.stamp(ofFrame: frame.startSample), deliver)
        } flushing: {
            try echo.flush(frames: deliver)
        }
    }

    /// The drain loop of ``run(progress:_:)``: converts until the stream ends, then flushes the
    /// converter and, after it, whatever `flushing` still holds.
    private func pump(progress: (Int) -> Void, _ deliver: (borrowing CaptureFrame) throws -> Void,
                      flushing: () throws -> Void = {}) throws -> CapturePumpReport {
        let bytesPerFrame = device.format.bytesPerFrame
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 16_384 * bytesPerFrame, alignment: 16)
        defer { scratch.deallocate() }
        var converted = 0
        do {
            var streaming = true
            while streaming {
                // Read the state first: what the tap wrote before the stream ended is drained below.
                streaming = device.isStreaming
                while case let count = ring.read(into: scratch, granularity: bytesPerFrame), count > 0 {
                    room.signal()
                    try converter.process(UnsafeRawBufferPointer(rebasing: scratch[0..<count]), deliver)
                    converted += count / bytesPerFrame
                    progress(converted)
                }
                if streaming { signal.wait(seconds: Self.idleWaitSeconds) }
            }
        } catch {
            device.stop()
            _ = try? device.waitUntilStopped()
            converter.reset()
            // What the tap wrote after the failure belongs to this stream, not the next one.
            while ring.read(into: scratch, granularity: bytesPerFrame) > 0 {}
            throw error
        }
        let ended = Result { () throws(AudioDeviceError) in try device.waitUntilStopped() }
        try converter.flush(deliver)
        try flushing()
        let kept = counters.kept.load(ordering: .relaxed)
        switch ended {
        case .success(let report):
            return CapturePumpReport(device: report, framesKept: kept, framesDropped: counters.dropped.load(ordering: .relaxed))
        case .failure(let error):
            throw CapturePumpError.deviceLost(error, framesKept: kept)
        }
    }

    /// Starts the device: from now on its audio thread copies into the ring, counts and signals;
    /// nothing else runs there. Audio waits in the ring (up to its capacity) until ``run(progress:_:)``.
    /// - Throws: ``CapturePumpError/startFailed(_:)`` when the device will not start.
    public func start() throws(CapturePumpError) {
        started = true
        counters.offered.store(0, ordering: .relaxed)
        counters.kept.store(0, ordering: .relaxed)
        counters.dropped.store(0, ordering: .relaxed)
        counters.stopping.store(false, ordering: .relaxed)
        let bytesPerFrame = device.format.bytesPerFrame
        let (ring, signal, room, counters, limit, wait) = (self.ring, self.signal, self.room, self.counters, frameLimit, whenFull == .wait)
        let tap: CaptureTap = { bytes in
            var frames = bytes.count / bytesPerFrame
            let before = counters.offered.load(ordering: .relaxed)
            if let limit { frames = min(frames, limit - before) }
            let kept = UnsafeRawBufferPointer(rebasing: bytes[0..<(frames * bytesPerFrame)])
            var written = frames == 0 || ring.write(kept)
            // Wait for the converter to make room; a stop ends the wait (the buffer is then left
            // out: the stream ends before it, which is no loss to report).
            while !written, wait, !counters.stopping.load(ordering: .relaxed) {
                room.wait(seconds: 0.05)
                written = ring.write(kept)
            }
            if written {
                counters.kept.add(frames, ordering: .relaxed)
            } else if !wait {
                counters.dropped.add(frames, ordering: .relaxed)
            }
            counters.offered.store(before + frames, ordering: .relaxed)
            signal.signal()
            return limit.map { before + frames >= $0 } == true ? .stop : .proceed
        }
        do {
            if echo == nil {
                try device.installTap(tap) { signal.signal() }
            } else {
                // The stamp goes in first, so the converter finds it once it has the audio. Frame
                // positions count the frames kept, as the converter sees them; a full stamp ring
                // only loses a stamp (the next one serves).
                let stamps = self.stamps
                try device.installTap(stamped: { bytes, stamp in
                    let record = StampRecord(framePosition: stamp.framePosition - counters.dropped.load(ordering: .relaxed), instant: stamp.instant)
                    _ = withUnsafeBytes(of: record) { stamps.write($0) }
                    return tap(bytes)
                }, onEnd: { signal.signal() })
            }
        } catch {
            started = false
            throw .startFailed(error)
        }
    }
}

/// A capture stamp as it crosses the stamp ring.
private struct StampRecord {
    static let size = MemoryLayout<StampRecord>.stride
    var framePosition: Int
    var instant: Int64
}

/// Stamps the converter's 16 kHz frames from the device's latest stamp, on the converter's thread.
private final class FrameStamping {
    private let ring: AudioRing
    private let deviceRate: SampleRate
    private let outputRate: SampleRate
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * StampRecord.size, alignment: 16)
    private var latest: CapturedBlockStamp?

    init(ring: AudioRing, deviceRate: SampleRate, outputRate: SampleRate) {
        self.ring = ring
        self.deviceRate = deviceRate
        self.outputRate = outputRate
    }

    deinit { scratch.deallocate() }

    /// The stamp of output frame `frame` (counted from the stream's start), from the latest
    /// device stamp: the converter keeps time, so output frame n is the input's time n / rate.
    func stamp(ofFrame frame: Int) -> CapturedBlockStamp {
        while case let count = ring.read(into: scratch, granularity: StampRecord.size), count > 0 {
            let record = scratch.load(fromByteOffset: count - StampRecord.size, as: StampRecord.self)
            latest = CapturedBlockStamp(framePosition: record.framePosition, instant: record.instant)
        }
        guard let latest else {
            // No stamp yet (the device stamps every buffer, so only a stamp ring that was full):
            // now is the best estimate of when the frame was captured.
            return CapturedBlockStamp(framePosition: frame, instant: MonotonicClock.nanoseconds())
        }
        return latest.stamp(ofFrame: frame, atRate: outputRate, fromRate: deviceRate)
    }
}

/// The tap's counters, shared between the audio thread (which writes them) and the pump.
private final class TapCounters: Sendable {
    /// Device frames the tap was given (up to the frame limit).
    let offered = Atomic<Int>(0)
    /// Of those, frames that went into the ring.
    let kept = Atomic<Int>(0)
    /// Of those, frames dropped because the ring was full (``RingFullPolicy/drop`` only).
    let dropped = Atomic<Int>(0)
    /// Set by a stop request, so a tap waiting for room gives up.
    let stopping = Atomic<Bool>(false)
}
