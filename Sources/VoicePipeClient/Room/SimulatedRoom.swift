import Foundation
import Glibc
import Synchronization
import VoicePipeCore
import VoicePipeIO

/// A simulated room as a pair of audio devices on one clock: what the loudspeaker side is given
/// becomes, after the room, what the microphone side delivers, so the live path (capture pump,
/// reply output, echo control, aligner) runs as it does on ALSA, with no sound card.
///
/// ```
///  reply output ──write(period)──▶ loudspeaker ─┐   (blocks while its buffer holds more than
///  (any thread)                                 │    `playbackBufferFrames` not yet played)
///                                               ▼
///                                  RoomSimulator (behind one lock, one timeline: the
///                                               │  loudspeaker's clock)
///                                               ▼
///  capture tap ◀──bytes(period)── microphone ───┘  the microphone's thread (real time: paced by
///  (microphone's thread, or the                     CLOCK_MONOTONIC; fast: unpaced), or the
///   caller of step() on a manual clock)             caller's thread on a manual clock
/// ```
///
/// The microphone delivers Float32 mono at the capture rate in periods of `periodFrames`; the
/// loudspeaker takes deinterleaved Float32 mono at the playback rate. Each block's timestamp (its
/// first frame's instant on the shared timeline, and the device's latency) goes to the observers
/// and stays readable as ``lastCaptureTimestamp`` and ``lastPlaybackTimestamp``. A period's
/// observer also sees the echo, the near-end talker and the noise alone, for scoring.
public final class SimulatedRoom: Sendable {
    /// How the room's one timeline moves.
    public enum Clock: Sendable, Hashable {
        /// A period every period's duration of the host's monotonic clock, on the microphone's own thread.
        case realTime
        /// Periods as fast as the capture tap takes them, on the microphone's own thread; the
        /// loudspeaker still blocks while its buffer is full, so both stay on one timeline.
        case asFastAsPossible
        /// Nothing moves until ``step()`` is called: one period, delivered on the caller's thread.
        case manual
    }

    /// What one microphone period held, each buffer valid only during the observer's call.
    public struct Period {
        /// Where the period sits on the timeline and what it held.
        public let report: RoomCaptureReport
        /// What the microphone delivered (echo + near end + noise).
        public let microphone: UnsafeBufferPointer<Float>
        /// The echo alone.
        public let echo: UnsafeBufferPointer<Float>
        /// The near-end talker alone.
        public let nearEnd: UnsafeBufferPointer<Float>
        /// The noise alone.
        public let noise: UnsafeBufferPointer<Float>
    }

    /// Sees every microphone period, on the thread that delivers it, just before the capture tap.
    public typealias PeriodObserver = @Sendable (Period) -> Void
    /// Sees every loudspeaker block: its timestamp and frame count, on the writer's thread.
    public typealias PlaybackObserver = @Sendable (RoomTimestamp, Int) -> Void

    /// The microphone: a capture device for ``VoicePipeCore/CaptureDevice``.
    public let microphone: SimulatedMicrophone
    /// The loudspeaker: a playback device for ``VoicePipeCore/PlaybackDevice``.
    public let loudspeaker: SimulatedLoudspeaker
    let core: RoomCore

    /// A room between two virtual devices.
    /// - Parameters:
    ///   - configuration: the room (rates, latency, loudspeaker, response, noise, drift).
    ///   - talker: the person speaking into the microphone, if any.
    ///   - clock: how the timeline moves.
    ///   - periodFrames: microphone frames per period (10 ms at the capture rate when nil).
    ///   - playbackBufferFrames: loudspeaker frames its buffer holds before a write blocks (four
    ///     10 ms periods at the playback rate when nil); a manual clock never blocks.
    ///   - onPeriod: sees each microphone period with its parts.
    ///   - onPlayback: sees each loudspeaker block's timestamp.
    /// - Throws: ``RoomError`` for a room option outside its range, or a period or buffer size
    ///   that is not positive.
    public init(_ configuration: RoomConfiguration, talker: RoomTalker? = nil, clock: Clock,
                periodFrames: Int? = nil, playbackBufferFrames: Int? = nil,
                onPeriod: PeriodObserver? = nil, onPlayback: PlaybackObserver? = nil) throws(RoomError) {
        let room = try RoomSimulator(configuration, talker: talker)
        let period = periodFrames ?? Int((configuration.captureRate.hertz / 100).rounded())
        let buffer = playbackBufferFrames ?? 4 * Int((configuration.playbackRate.hertz / 100).rounded())
        guard (1...65_536).contains(period) else {
            throw .outOfRange(option: "microphone period (frames)", value: Double(period), range: 1...65_536)
        }
        guard (1...1_048_576).contains(buffer) else {
            throw .outOfRange(option: "loudspeaker buffer (frames)", value: Double(buffer), range: 1...1_048_576)
        }
        core = RoomCore(room: room, clock: clock, periodFrames: period, playbackBufferFrames: buffer,
                        onPeriod: onPeriod, onPlayback: onPlayback)
        microphone = SimulatedMicrophone(core: core)
        loudspeaker = SimulatedLoudspeaker(core: core)
    }

    /// On a manual clock, moves the timeline one microphone period: the room captures it and the
    /// tap gets it on this thread.
    /// - Returns: the period's report, or nil when no capture stream is running (or the clock is not manual).
    @discardableResult
    public func step() -> RoomCaptureReport? {
        guard core.clock == .manual else { return nil }
        return core.deliverPeriod()
    }

    /// The timestamp of the last microphone period delivered.
    public var lastCaptureTimestamp: RoomTimestamp? { core.state.withLock { $0.lastCapture } }
    /// The timestamp of the last loudspeaker block written.
    public var lastPlaybackTimestamp: RoomTimestamp? { core.state.withLock { $0.lastPlayback } }
    /// Microphone frames delivered so far.
    public var capturedFrames: Int { core.state.withLock { $0.room.capturedFrames } }
    /// Loudspeaker frames written so far.
    public var playedFrames: Int { core.state.withLock { $0.room.playedFrames } }
    /// The timeline's present (seconds): the instant of the microphone's next frame.
    public var time: Double { core.state.withLock { $0.room.time } }
}

/// The shared state of a room's two devices.
final class RoomCore: Sendable {
    struct Scratch: Sendable {
        var microphone: [Float]
        var echo: [Float]
        var nearEnd: [Float]
        var noise: [Float]
    }

    struct State: Sendable {
        var room: RoomSimulator
        var tap: StampedCaptureTap?
        var onEnd: (@Sendable () -> Void)?
        var streaming = false
        var stopRequested = false
        var threadRunning = false
        var scratch: Scratch?
        var capturedFrames = 0
        var overruns = 0
        var playbackStarted = false
        var playbackWritten = false
        var underruns = 0
        var closed = false
        var lastCapture: RoomTimestamp?
        var lastPlayback: RoomTimestamp?
        var lastPlaybackFrames = 0
    }

    let state: Guarded<State>
    let clock: SimulatedRoom.Clock
    let periodFrames: Int
    let playbackBufferFrames: Int
    let onPeriod: SimulatedRoom.PeriodObserver?
    let onPlayback: SimulatedRoom.PlaybackObserver?
    let configuration: RoomConfiguration
    /// Signalled after every period (room in the loudspeaker's buffer) and when a stream ends.
    let periodDone = WakeSignal()
    /// Signalled when the microphone's thread has ended.
    let threadEnded = WakeSignal()
    /// `CLOCK_MONOTONIC` nanoseconds at the timeline's 0 (real-time clock only; 0 otherwise).
    let origin = Atomic<Int64>(0)

    /// A timeline instant as stamps carry it: monotonic nanoseconds on a real-time clock, the
    /// timeline's own nanoseconds otherwise.
    func instant(ofTime time: Double) -> Int64 {
        origin.load(ordering: .acquiring) + Int64((time * 1e9).rounded())
    }

    init(room: RoomSimulator, clock: SimulatedRoom.Clock, periodFrames: Int, playbackBufferFrames: Int,
         onPeriod: SimulatedRoom.PeriodObserver?, onPlayback: SimulatedRoom.PlaybackObserver?) {
        configuration = room.configuration
        state = Guarded(State(room: room))
        self.clock = clock
        self.periodFrames = periodFrames
        self.playbackBufferFrames = playbackBufferFrames
        self.onPeriod = onPeriod
        self.onPlayback = onPlayback
    }

    /// Captures one period and hands it to the observer and the tap, outside the lock.
    /// - Returns: the period's report, or nil when no stream is running.
    func deliverPeriod() -> RoomCaptureReport? {
        let taken = state.withLock { state -> (Scratch, StampedCaptureTap, RoomCaptureReport)? in
            guard state.streaming, !state.stopRequested, let tap = state.tap, var scratch = state.scratch.take() else { return nil }
            let report = scratch.microphone.withUnsafeMutableBufferPointer { microphone in
                scratch.echo.withUnsafeMutableBufferPointer { echo in
                    scratch.nearEnd.withUnsafeMutableBufferPointer { nearEnd in
                        scratch.noise.withUnsafeMutableBufferPointer { noise in
                            state.room.capture(into: microphone, echo: echo, nearEnd: nearEnd, noise: noise)
                        }
                    }
                }
            }
            state.lastCapture = report.timestamp
            if report.underrunFrames > 0 && state.playbackStarted && state.playbackWritten { state.underruns += 1 }
            return (scratch, tap, report)
        }
        guard let (scratch, tap, report) = taken else { return nil }
        let stamp = CapturedBlockStamp(framePosition: report.timestamp.frame, instant: instant(ofTime: report.timestamp.time))
        if let onPeriod {
            scratch.microphone.withUnsafeBufferPointer { microphone in
                scratch.echo.withUnsafeBufferPointer { echo in
                    scratch.nearEnd.withUnsafeBufferPointer { nearEnd in
                        scratch.noise.withUnsafeBufferPointer { noise in
                            onPeriod(SimulatedRoom.Period(report: report, microphone: microphone, echo: echo, nearEnd: nearEnd, noise: noise))
                        }
                    }
                }
            }
        }
        let action = scratch.microphone.withUnsafeBytes { tap($0, stamp) }
        state.withLock { state in
            state.scratch = scratch
            state.capturedFrames += report.frames
        }
        periodDone.signal()
        if action == .stop { end() }
        return report
    }

    /// Marks the stream ended and, the first time, runs its end handler outside the lock.
    func end() {
        let onEnd = state.withLock { state -> (@Sendable () -> Void)? in
            state.stopRequested = true
            state.streaming = false
            defer { state.onEnd = nil }
            return state.onEnd
        }
        periodDone.signal()
        onEnd?()
    }

    /// Asks the stream to end: at once on a manual clock, else after the thread's current period
    /// (so the end handler runs after the tap's last call, on the microphone's thread).
    func requestStop() {
        let threaded = state.withLock { state in
            state.stopRequested = true
            return state.threadRunning
        }
        if threaded { periodDone.signal() } else { end() }
    }

    /// The microphone's thread: a period at a time until the stream ends.
    func runMicrophone() {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let start = deadline
        if clock == .realTime {
            let now = Int64(start.tv_sec) * 1_000_000_000 + Int64(start.tv_nsec)
            origin.store(now - Int64((state.withLock { $0.room.time } * 1e9).rounded()), ordering: .releasing)
        }
        let microphoneRate = configuration.captureRate.hertz * (1 + configuration.clockDriftPPM * 1e-6)
        var periods = 0
        while true {
            if clock == .realTime {
                // A period is ready once its last frame has been sampled.
                periods += 1
                let elapsed = Double(periods * periodFrames) / microphoneRate
                let whole = elapsed.rounded(.down)
                var nanoseconds = start.tv_nsec + Int((elapsed - whole) * 1e9)
                var seconds = start.tv_sec + Int(whole)
                if nanoseconds >= 1_000_000_000 {
                    nanoseconds -= 1_000_000_000
                    seconds += 1
                }
                deadline = timespec(tv_sec: seconds, tv_nsec: nanoseconds)
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
            }
            if deliverPeriod() == nil { break }
        }
        end()
        state.withLock { $0.threadRunning = false }
        threadEnded.signal()
    }
}

/// The microphone of a ``SimulatedRoom``: Float32 mono at the room's capture rate.
///
/// Each period is stamped with its first frame's position and instant: on a real-time clock the
/// instant is on `CLOCK_MONOTONIC`, as ALSA's are, so the loudspeaker's stamps (through a
/// ``DeviceReplyOutput``) and the microphone's meet on one timeline; on a fast or manual clock it
/// is the room's own timeline in nanoseconds.
public final class SimulatedMicrophone: TimestampingCaptureHardware {
    let core: RoomCore

    init(core: RoomCore) {
        self.core = core
    }

    public var name: String { "simulated room microphone" }

    public var reportedFormat: AudioFormat {
        AudioFormat(sampleRate: core.configuration.captureRate, channelCount: 1, sampleType: .float32, isInterleaved: true)
    }

    public func installTap(format: ValidatedFormat, _ tap: @escaping CaptureTap, onEnd: @escaping @Sendable () -> Void) throws(AudioDeviceError) {
        try installTap(format: format, stamped: { bytes, _ in tap(bytes) }, onEnd: onEnd)
    }

    public func installTap(format: ValidatedFormat, stamped tap: @escaping StampedCaptureTap, onEnd: @escaping @Sendable () -> Void) throws(AudioDeviceError) {
        let frames = core.periodFrames
        try core.state.withLock { state throws(AudioDeviceError) in
            guard !state.streaming, !state.threadRunning, !state.closed else { throw .alreadyStarted(device: name) }
            state.tap = tap
            state.onEnd = onEnd
            state.streaming = true
            state.stopRequested = false
            if state.scratch == nil {
                let zeros = [Float](repeating: 0, count: frames)
                state.scratch = RoomCore.Scratch(microphone: zeros, echo: zeros, nearEnd: zeros, noise: zeros)
            }
            state.threadRunning = core.clock != .manual
        }
        guard core.clock != .manual else { return }
        let thread = Thread { [core] in core.runMicrophone() }
        thread.name = "voicepipe simulated room"
        thread.start()
    }

    public func requestStop() {
        core.requestStop()
    }

    public var isStreaming: Bool { core.state.withLock { $0.streaming } }

    public func waitUntilStopped() throws(AudioDeviceError) -> CaptureReport {
        if core.clock == .manual { core.end() }
        while core.state.withLock({ $0.threadRunning }) { core.threadEnded.wait(seconds: 0.1) }
        return core.state.withLock { state in
            state.tap = nil
            return CaptureReport(frames: state.capturedFrames, overruns: state.overruns)
        }
    }

    public func close() {
        core.requestStop()
        core.state.withLock { $0.closed = true }
    }
}

/// The loudspeaker of a ``SimulatedRoom``: deinterleaved Float32 mono at the room's playback rate.
public final class SimulatedLoudspeaker: PlaybackHardware, Sendable {
    let core: RoomCore

    init(core: RoomCore) {
        self.core = core
    }

    public var name: String { "simulated room loudspeaker" }

    public var reportedFormat: AudioFormat {
        AudioFormat(sampleRate: core.configuration.playbackRate, channelCount: 1, sampleType: .float32, isInterleaved: false)
    }

    /// Periods in which the microphone needed sound the loudspeaker had not been given, while it
    /// was playing.
    public var underruns: Int { core.state.withLock { $0.underruns } }

    public func start(_ format: PlayerFormat) throws(PlayerSinkError) {
        guard format.audioFormat == reportedFormat else {
            throw .formatMismatch(expected: reportedFormat.description, received: format.description)
        }
        core.state.withLock { state in
            state.playbackStarted = true
            state.playbackWritten = false
        }
    }

    /// Plays `buffer` into the room. On a real-time or fast clock it first waits while the
    /// loudspeaker's buffer holds more than its size not yet played (and a microphone stream runs
    /// to play it out); a manual clock never waits.
    public func write(_ buffer: borrowing PlaybackBuffer) throws(PlayerSinkError) {
        if core.clock != .manual {
            while core.state.withLock({ $0.streaming && $0.room.bufferedPlaybackFrames > core.playbackBufferFrames }) {
                core.periodDone.wait(seconds: 0.05)
            }
        }
        let frames = buffer.frameCount
        let timestamp = buffer.withChannel(0) { channel in
            channel.withUnsafeBufferPointer { samples in
                core.state.withLock { state in
                    state.playbackWritten = true
                    let timestamp = state.room.play(samples)
                    state.lastPlayback = timestamp
                    state.lastPlaybackFrames = samples.count
                    return timestamp
                }
            }
        }
        core.onPlayback?(timestamp, frames)
    }

    /// Waits (on a real-time or fast clock, while the microphone runs) until everything written
    /// has been played, then stops the stream.
    /// On a real-time clock, the frames between now and the end of the last block written being
    /// heard (buffered, plus the loudspeaker's latency): what ALSA's `snd_pcm_delay` reports, so a
    /// ``DeviceReplyOutput`` stamps each period with the instant the room plays it (less the
    /// configuration's ``RoomConfiguration/unreportedLatency``, as a device that reports its
    /// delay wrong would). Nil on a fast
    /// or manual clock, whose timeline is not the host's.
    public var playbackDelayFrames: Int? {
        guard core.clock == .realTime else { return nil }
        let (last, frames) = core.state.withLock { ($0.lastPlayback, $0.lastPlaybackFrames) }
        guard let last else { return 0 }
        let now = Double(MonotonicClock.nanoseconds() - core.origin.load(ordering: .acquiring)) / 1e9
        let reported = last.time + last.latency - core.configuration.unreportedLatency - now
        return Int((reported * core.configuration.playbackRate.hertz).rounded()) + frames
    }

    public func drain() throws(PlayerSinkError) {
        if core.clock != .manual {
            while core.state.withLock({ $0.streaming && $0.room.bufferedPlaybackFrames > 0 }) {
                core.periodDone.wait(seconds: 0.05)
            }
        }
        core.state.withLock { $0.playbackStarted = false }
    }

    public func close() {
        core.state.withLock { $0.playbackStarted = false }
    }
}
