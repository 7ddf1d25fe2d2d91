import Foundation
import Glibc
import Synchronization
import VoicePipeCore
import VoicePipeSession

/// Reply audio on a playback device (a speaker), played in real time by a thread of its own.
///
/// ```
///  driver thread:  chunk ─▶ PlaybackConverter (device rate) ─▶ PlaybackQueue
///  render thread:  PlaybackQueue ─▶ 10 ms periods (silence when empty) ─▶ PlaybackDevice.play
/// ```
///
/// The device's own buffer absorbs jitter, so the queue starts each chunk as soon as it arrives
/// (no pre-roll). A cut drops what is queued with the queue's fade of at most 5 ms. The render
/// thread also keeps to the clock, so a device that takes audio faster than real time (ALSA's
/// `null`) still plays at real-time pace. When everything queued has played, ``onDrained`` is
/// called from the render thread with the number of chunks that covers (wire it to
/// ``SessionDriver/playbackDrained(chunks:)``). A failing device stops the render thread and is
/// reported by the next call.
public final class DeviceReplyOutput: ReplyOutput, @unchecked Sendable {
    // Safety: `converter` and `queuedSinceDrain` are used on the driver's thread only; the queue
    // is built for one producer and one render thread; the rest is atomic or set before the
    // render thread starts.
    private let device: PlaybackDevice
    private let queue: PlaybackQueue
    private var converter: PlaybackConverter?
    private let control = RenderControl()
    private var thread: Thread?
    /// Called on the render thread when everything queued has played, with ``chunksQueued`` as
    /// it was when the queue ran dry. A driver that owns this output is captured weakly here, or
    /// the two keep each other alive.
    public var onDrained: (@Sendable (Int) -> Void)?
    public private(set) var chunksQueued = 0

    /// Starts `device` in its own format and the render thread.
    /// - Throws: ``ReplyPlayerError/sink(_:)`` when the device refuses to start, ``ReplyPlayerError/queue(_:)``.
    public init(device: PlaybackDevice) throws(ReplyPlayerError) {
        self.device = device
        do {
            queue = try PlaybackQueue(format: device.format, options: PlaybackQueueOptions(preRollMilliseconds: 0))
        } catch {
            throw .queue(error)
        }
        do {
            try device.connect()
        } catch {
            throw .sink(error)
        }
    }

    public var name: String { "speaker '\(device.name)'" }
    public var sampleRate: Double { device.format.sampleRate }
    public var framesPlayed: Int { queue.statistics.playedFrames }
    public var framesCut: Int { queue.statistics.droppedFrames }

    public func play(_ chunk: AudioChunk) throws(ReplyPlayerError) -> Bool {
        if let failure = control.failure.withLock({ $0 }) { throw .sink(failure) }
        startIfNeeded()
        let active: PlaybackConverter
        if let converter, converter.sourceRate == Double(chunk.sampleRate) {
            active = converter
        } else {
            do {
                active = try PlaybackConverter(sourceRate: Double(chunk.sampleRate), outputRate: device.format.sampleRate, channelCount: device.format.channelCount)
            } catch {
                throw .unplayableChunk(sampleRate: chunk.sampleRate, error)
            }
            try flushConverter()
            converter = active
        }
        do {
            try chunk.samples.withUnsafeBufferPointer { samples in
                try active.process(samples) { buffer in try self.enqueue(buffer) }
            }
        } catch let error as ReplyPlayerError {
            throw error
        } catch {
            throw .converter(.resampler(.backendFailure("\(error)", code: nil)))
        }
        chunksQueued += 1
        control.queuedChunks.store(chunksQueued, ordering: .releasing)
        return false
    }

    public func cut() throws(ReplyPlayerError) {
        queue.interrupt()
        converter?.reset()
    }

    /// Lets the converter's last samples of the reply out and marks the end of the stream, so
    /// the reply's tail is not held back until the next one.
    public func replyEnded() throws(ReplyPlayerError) {
        try flushConverter()
        queue.markEndOfStream()
    }

    public func finish() throws(ReplyPlayerError) {
        try flushConverter()
        queue.markEndOfStream()
        // Let what is queued play out, bounded by its own length and a second to spare.
        let limit = ContinuousClock.now + .seconds(Double(queue.queuedFrames) / device.format.sampleRate + 1)
        while queue.queuedFrames > 0, thread != nil, ContinuousClock.now < limit { usleep(5_000) }
        control.running.store(false, ordering: .releasing)
        while thread != nil, !control.stopped.load(ordering: .acquiring) { usleep(1_000) }
        if let failure = control.failure.withLock({ $0 }) { throw .sink(failure) }
        do {
            try device.disconnect()
        } catch {
            throw .sink(error)
        }
    }

    private func flushConverter() throws(ReplyPlayerError) {
        guard let converter else { return }
        do {
            try converter.flush { buffer in try self.enqueue(buffer) }
        } catch let error as ReplyPlayerError {
            throw error
        } catch {
            throw .converter(.resampler(.backendFailure("\(error)", code: nil)))
        }
    }

    /// Queues a buffer, waiting for the render thread while the queue is full.
    private func enqueue(_ buffer: borrowing PlaybackBuffer) throws(ReplyPlayerError) {
        while true {
            do {
                try queue.enqueue(buffer)
                return
            } catch .full {
                guard control.running.load(ordering: .acquiring) else { throw .queue(.full(frames: buffer.frameCount, free: 0)) }
                usleep(2_000)
            } catch {
                throw .queue(error)
            }
        }
    }

    private func startIfNeeded() {
        guard thread == nil else { return }
        control.running.store(true, ordering: .releasing)
        let (queue, control, period) = (self.queue, self.control, max(Int(device.format.sampleRate / 100), 1))
        // The render thread is the only one that plays on the device until it has stopped
        // (`finish` disconnects it after that); its format and name never change.
        let handOver = DeviceHandOver(device: device)
        let drained = onDrained
        let render = Thread {
            let device = handOver.device
            let channels = device.format.channelCount
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: period * channels)
            defer { buffer.deallocate() }
            let clock = ContinuousClock()
            let start = clock.now
            var rendered = 0
            while control.running.load(ordering: .acquiring) {
                queue.render(into: buffer, channelStride: period, frameCount: period)
                // Read before rendering: a chunk queued after this is not covered by a drain below.
                let covered = control.queuedChunks.load(ordering: .acquiring)
                do throws(PlayerSinkError) {
                    try device.play(PlaybackBuffer(base: buffer, frameCount: period, channelCount: channels, channelStride: period))
                } catch {
                    control.failure.withLock { $0 = error }
                    control.running.store(false, ordering: .releasing)
                    break
                }
                rendered += period
                if queue.queuedFrames == 0, covered > control.reportedChunks.load(ordering: .relaxed) {
                    control.reportedChunks.store(covered, ordering: .relaxed)
                    drained?(covered)
                }
                // Never more than 100 ms ahead of the clock, whatever the device takes.
                let due = start + .seconds(Double(rendered) / device.format.sampleRate) - .milliseconds(100)
                if clock.now < due { Thread.sleep(forTimeInterval: (due - clock.now).seconds) }
            }
            control.stopped.store(true, ordering: .releasing)
        }
        render.name = "voicepipe playback"
        thread = render
        render.start()
    }
}

/// What the driver's thread and the render thread share.
private final class RenderControl: Sendable {
    let running = Atomic<Bool>(false)
    let stopped = Atomic<Bool>(false)
    /// Chunks queued so far (written by the driver's thread) and covered by the last drained report.
    let queuedChunks = Atomic<Int>(0)
    let reportedChunks = Atomic<Int>(0)
    let failure = Guarded<PlayerSinkError?>(nil)
}

/// Moves the device to the render thread, which alone plays on it while it runs.
private struct DeviceHandOver: @unchecked Sendable {
    let device: PlaybackDevice
}
