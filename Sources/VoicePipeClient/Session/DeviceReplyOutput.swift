import Foundation
import Synchronization
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// Reply audio on a playback device (a speaker): a ``ReplyPlayer`` whose queue a thread of its own
/// renders in real time.
///
/// ```
///  driver thread:  chunk ─▶ ReplyPlayer (converter at the chunk's rate) ─▶ PlaybackQueue
///  render thread:  PlaybackQueue ─▶ 10 ms periods (silence when empty) ─▶ PlaybackDevice.play
///                  ├─▶ drained: the handler given to reportDrained(to:)
///                  └─▶ periodObserver: each period as written (PlayedPeriod: samples, frame
///                      position, instant heard = now + (delay − period) / rate after the write)
/// ```
///
/// Network jitter is absorbed by an adaptive pre-roll (``ReplyJitter``): each reply waits until
/// as much audio is queued as this connection's chunks have been late, 20 … 300 ms, or until its
/// first audio has waited that long; a reply that runs dry and then resumes counts an underrun
/// (``underruns``). The render thread starts with the first chunk and renders its lead over the
/// clock (100 ms, the device's buffer) as silence first, so building that lead does not swallow
/// the reply's first chunks and leave a hole behind them. A cut drops what is queued with the queue's fade of at most 5 ms. The
/// render thread keeps to the clock, so a device that takes audio faster than real time (ALSA's
/// `null`) still plays at real-time pace. When everything queued has played, the handler given to
/// ``reportDrained(to:)`` is called from the render thread with the number of chunks that covers.
/// A failing device stops the render thread and is reported by the next call.
public final class DeviceReplyOutput: ReplyOutput, @unchecked Sendable {
    // Safety: the player's producer side, `chunksQueued` and `thread` are used on the driver's
    // thread only; the render thread uses only `renderPeriod()` (the player's render side, while
    // the thread runs), the player's queue counters and `control`, which is Sendable.
    private let player: ReplyPlayer
    private let deviceName: String
    private let delay: DeviceDelay
    private let periodObserver: PlayedPeriodObserver?
    private let control: RenderControl
    private var thread: Thread?
    private var jitter = ReplyJitter()
    /// The token of the next chunk to watch until it is heard (``markNextChunk(_:)``).
    private var markedToken: Int?
    private let now: () -> ContinuousClock.Instant
    private let origin: ContinuousClock.Instant
    public private(set) var chunksQueued = 0
    /// How far the render thread keeps ahead of the clock: the device buffer it keeps filled.
    static let renderLead: Duration = .milliseconds(100)

    /// Starts `device` in its own format; the render thread starts with the first chunk.
    /// - Parameters:
    ///   - device: the speaker.
    ///   - periodObserver: called on the render thread with every period right after it went to
    ///     the device (reply audio after fades and cuts, silence included) and its stamp on
    ///     `CLOCK_MONOTONIC`: how the echo reference learns what played when. It must not wait.
    /// - Throws: ``ReplyPlayerError/sink(_:)`` when the device refuses to start, ``ReplyPlayerError/queue(_:)``.
    ///   - now: the clock chunk arrivals are measured on (a test's, to script the network).
    public init(device: PlaybackDevice, periodObserver: PlayedPeriodObserver? = nil,
                now: @escaping () -> ContinuousClock.Instant = { ContinuousClock.now }) throws(ReplyPlayerError) {
        let control = RenderControl()
        self.control = control
        self.periodObserver = periodObserver
        self.now = now
        origin = now()
        delay = DeviceDelay(hardware: device.hardware)
        deviceName = device.name
        player = try ReplyPlayer(sink: device, format: device.format, rendering: .onRenderThread(waitForRoom: { control.waitForRoom() }))
        player.setPreRoll(jitter.preRoll)
        // Replies come at the wire's 24 kHz: their converter is designed now, not at the first chunk.
        try player.prepare(for: .reply)
    }

    /// Replies that ran dry and resumed (holes the jitter buffer did not absorb).
    public var underruns: Int { player.statistics.underruns }
    /// The jitter buffer's pre-roll now, and the largest this connection needed.
    public var jitterBuffer: (current: Duration, largest: Duration) { (jitter.preRoll, jitter.largestPreRoll) }

    public var jitterReport: JitterBufferReport? {
        JitterBufferReport(underruns: underruns, preRoll: jitter.preRoll, largestPreRoll: jitter.largestPreRoll)
    }

    public var name: String { "speaker '\(deviceName)'" }
    public var sampleRate: SampleRate { player.format.sampleRate }
    public var framesPlayed: Int { player.framesPlayed }
    public var framesCut: Int { player.statistics.droppedFrames }

    public func markNextChunk(_ token: Int) {
        markedToken = token
    }

    public func reportHeard(to handler: @escaping @Sendable (_ token: Int, _ delay: Duration) -> Void) {
        control.heard.withLock { $0 = handler }
    }

    public func play(_ chunk: AudioChunk) throws(ReplyPlayerError) -> Bool {
        if let failure = control.failure.withLock({ $0 }) { throw failure }
        startIfNeeded()
        if let token = markedToken {
            markedToken = nil
            control.watch(HeardWatch(position: player.queueWrittenPosition, token: token, handedAt: MonotonicClock.nanoseconds()))
        }
        jitter.chunkArrived(at: now() - origin, audio: .seconds(Double(chunk.samples.count) / max(chunk.sampleRate.hertz, 1)))
        player.setPreRoll(jitter.preRoll)
        do {
            try player.play(chunk)
        } catch {
            // A queue that stopped taking audio because the device failed: the device's failure is the cause.
            if case .queue = error, let failure = control.failure.withLock({ $0 }) { throw failure }
            throw error
        }
        chunksQueued += 1
        control.queuedChunks.store(chunksQueued, ordering: .releasing)
        return false
    }

    /// Has the render thread call `handler` each time everything queued has played, with
    /// ``chunksQueued`` as it was when the queue ran dry: once per drain.
    public func reportDrained(to handler: @escaping @Sendable (Int) -> Void) {
        control.drained.withLock { $0 = handler }
    }

    public func cut() throws(ReplyPlayerError) {
        jitter.replyEnded()
        try player.interrupt()
    }

    /// Lets the converter's last samples of the reply out and marks the end of the stream, so
    /// the reply's tail is not held back until the next one.
    public func replyEnded() throws(ReplyPlayerError) {
        jitter.replyEnded()
        try player.replyEnded()
    }

    public func finish() throws(ReplyPlayerError) {
        try player.replyEnded()
        if thread != nil {
            // Let what is queued play out, bounded by its own length and a second to spare.
            let limit = ContinuousClock.now + .seconds(Double(player.queuedFrames) / sampleRate.hertz + 1)
            control.wait { player.queuedFrames == 0 || !control.running.load(ordering: .acquiring) || ContinuousClock.now >= limit }
            control.requestStop()
            control.wait { control.stopped.load(ordering: .acquiring) }
        }
        if let failure = control.failure.withLock({ $0 }) { throw failure }
        try player.finish()
    }

    private func startIfNeeded() {
        guard thread == nil else { return }
        control.running.store(true, ordering: .releasing)
        let (player, control, delay, observer) = (self.player, self.control, self.delay, self.periodObserver)
        let leadFrames = Int((player.format.sampleRate.hertz * Self.renderLead.seconds).rounded())
        let render = Thread {
            let clock = ContinuousClock()
            let start = clock.now
            var rendered = 0
            while control.running.load(ordering: .acquiring) {
                // Read before rendering: a chunk queued after this is not covered by a drain below.
                let covered = control.queuedChunks.load(ordering: .acquiring)
                let consumedBefore = player.queueConsumedPosition
                do throws(ReplyPlayerError) {
                    if rendered < leadFrames { try player.renderSilencePeriod() } else { try player.renderPeriod() }
                } catch {
                    control.failure.withLock { $0 = error }
                    control.running.store(false, ordering: .releasing)
                    break
                }
                let watching = control.watchCount.load(ordering: .acquiring) > 0
                if observer != nil || watching {
                    let now = MonotonicClock.nanoseconds()
                    // A period is never heard before it is written: a device that reports less
                    // delay than that (one that leaves latency out) is stamped at the writing.
                    let ahead = Double(max(0, (delay.hardware.playbackDelayFrames ?? player.renderPeriodFrames) - player.renderPeriodFrames))
                    let heardAt = now + Int64((ahead * 1e9 / player.format.sampleRate.hertz).rounded())
                    if let observer {
                        let stamp = PlayedPeriodStamp(framePosition: rendered, instant: heardAt)
                        observer(PlayedPeriod(samples: player.lastRenderedPeriod, sampleRate: player.format.sampleRate, stamp: stamp))
                    }
                    if watching {
                        control.reportHeard(consumed: consumedBefore..<player.queueConsumedPosition, periodHeardAt: heardAt, rate: player.format.sampleRate)
                    }
                }
                rendered += player.renderPeriodFrames
                control.periodRendered()
                if player.queuedFrames == 0, covered > control.reportedChunks.load(ordering: .relaxed) {
                    control.reportedChunks.store(covered, ordering: .relaxed)
                    control.drained.withLock { $0 }?(covered)
                }
                // Never more than 100 ms ahead of the clock, whatever the device takes; a stop
                // request ends the wait at once.
                let due = start + .seconds(Double(rendered) / player.format.sampleRate.hertz) - Self.renderLead
                let now = clock.now
                if now < due { control.stopRequested.wait(seconds: (due - now).seconds) }
            }
            control.stopped.store(true, ordering: .releasing)
            control.rendered.signal()
        }
        render.name = "voicepipe playback"
        thread = render
        render.start()
    }
}

/// The speaker's hardware, asked for its delay on the render thread after each write.
private struct DeviceDelay: @unchecked Sendable {
    // Safety: only the render thread uses it, right after it wrote to the same hardware; the
    // driver's thread never touches the hardware while the render thread runs.
    let hardware: any PlaybackHardware
}

/// What the driver's thread and the render thread share.
private final class RenderControl: Sendable {
    let running = Atomic<Bool>(false)
    let stopped = Atomic<Bool>(false)
    /// Chunks queued so far (written by the driver's thread) and covered by the last drained report.
    let queuedChunks = Atomic<Int>(0)
    let reportedChunks = Atomic<Int>(0)
    let failure = Guarded<ReplyPlayerError?>(nil)
    /// Told when everything queued has played.
    let drained = Guarded<(@Sendable (Int) -> Void)?>(nil)
    /// Told when a watched chunk's first sample is heard.
    let heard = Guarded<(@Sendable (Int, Duration) -> Void)?>(nil)
    /// Chunks waiting to be heard, by their queue position; the count spares the render thread
    /// the lock while there are none.
    private let watches = Guarded<[HeardWatch]>([])
    let watchCount = Atomic<Int>(0)

    /// Driver thread: watches a chunk that starts at queue position `watch.position`.
    func watch(_ watch: HeardWatch) {
        watches.withLock { $0.append(watch) }
        watchCount.add(1, ordering: .releasing)
    }

    /// Render thread: the period just written took queue positions `consumed` and its first
    /// frame is heard at `periodHeardAt` (monotonic ns): a watched chunk that starts inside it is
    /// heard that far into the period; one the queue dropped (a cut) before it played is let go.
    func reportHeard(consumed: Range<Int>, periodHeardAt: Int64, rate: SampleRate) {
        let (due, removed) = watches.withLock { list -> ([(Int, Duration)], Int) in
            var due = [(Int, Duration)]()
            let before = list.count
            list.removeAll { watch in
                guard watch.position < consumed.upperBound else { return false }
                if watch.position >= consumed.lowerBound {
                    let heardAt = periodHeardAt + Int64((Double(watch.position - consumed.lowerBound) * 1e9 / rate.hertz).rounded())
                    due.append((watch.token, .nanoseconds(heardAt - watch.handedAt)))
                }
                return true
            }
            return (due, before - list.count)
        }
        if removed > 0 { watchCount.subtract(removed, ordering: .releasing) }
        guard !due.isEmpty else { return }
        let handler = heard.withLock { $0 }
        for (token, delay) in due { handler?(token, delay) }
    }
    /// Posted by the render thread after a period while the driver's thread waits, and when it stops.
    let rendered = WakeSignal()
    /// Posted once to stop the render thread: it ends its pacing wait at once.
    let stopRequested = WakeSignal()
    private let waiters = Atomic<Int>(0)

    /// Render thread: a period went to the device; a waiting driver thread looks again.
    func periodRendered() {
        if waiters.load(ordering: .sequentiallyConsistent) > 0 { rendered.signal() }
    }

    /// Driver thread: waits until `done` holds, looking again after each period rendered (and at
    /// least every 20 ms, so a wake-up missed in a race costs one look, not a hang).
    func wait(until done: () -> Bool) {
        waiters.add(1, ordering: .sequentiallyConsistent)
        defer { waiters.subtract(1, ordering: .sequentiallyConsistent) }
        while !done() { rendered.wait(seconds: 0.02) }
    }

    /// Driver thread, with the queue full: waits for a period to be rendered; false once the
    /// render thread has stopped.
    func waitForRoom() -> Bool {
        guard running.load(ordering: .acquiring) else { return false }
        waiters.add(1, ordering: .sequentiallyConsistent)
        defer { waiters.subtract(1, ordering: .sequentiallyConsistent) }
        rendered.wait(seconds: 0.02)
        return running.load(ordering: .acquiring)
    }

    /// Driver thread: the render thread stops after the period it is on.
    func requestStop() {
        running.store(false, ordering: .releasing)
        stopRequested.signal()
    }
}

/// A chunk watched until its first sample is heard.
struct HeardWatch: Sendable {
    /// Its first frame's position in the playback queue.
    let position: Int
    let token: Int
    /// When it was handed to the output (monotonic ns).
    let handedAt: Int64
}
