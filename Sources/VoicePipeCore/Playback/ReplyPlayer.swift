/// Why the reply player refused a chunk or could not play.
public enum ReplyPlayerError: SystemCodedError, Sendable, Hashable {
    /// A chunk at a rate the playback converter cannot take. Nothing of it was queued; the player
    /// carries on with the next chunk.
    case unplayableChunk(sampleRate: SampleRate, PlaybackConverterError)
    /// The playback queue could not be built for the player's format.
    case queue(PlaybackQueueError)
    /// The sink refused the format or a buffer, or failed.
    case sink(PlayerSinkError)
    /// The resampler failed mid-stream (a bug, never caused by input).
    case converter(PlaybackConverterError)

    /// The sink's code, when the device or file behind it failed.
    public var code: SystemErrorCode? {
        if case .sink(let error) = self { return error.code }
        return nil
    }

    public var message: String {
        switch self {
        case .unplayableChunk(let rate, let error):
            "an audio chunk at \(rate) cannot be played: \(error)"
        case .queue(let error):
            "the playback queue could not be set up: \(error)"
        case .sink(let error):
            error.message
        case .converter(let error):
            "converting reply audio failed: \(error)"
        }
    }
}

/// The one playback path for reply audio: each chunk through a converter at the chunk's rate into the
/// queue, and from the queue into any ``PlayerSink`` (a file, a device, a test's recorder).
///
/// ```
///  producer thread (play, interrupt, replyEnded, finish):
///    audio.chunk samples (Int16, any rate) ─▶ PlaybackConverter ─▶ PlaybackQueue
///                                             (one per rate: rebuilt,   (pre-roll, fade
///                                              old tail queued first)    on interrupt)
///  rendering, on the producer's thread or a render thread (renderPeriod):
///    PlaybackQueue ─▶ periods ─▶ PlayerSink
/// ```
///
/// Chunks may change rate mid-stream: the converter is rebuilt for the new rate after the old
/// one's tail is queued, so every part keeps its exact rational length. A chunk at a rate the
/// converter cannot take is refused whole with ``ReplyPlayerError/unplayableChunk(sampleRate:_:)``,
/// and the player carries on.
///
/// With ``Rendering/onCallersThread`` the player renders as fast as the sink takes audio and keeps
/// the queue's pre-roll buffered between chunks the way a device would, so ``interrupt()`` cuts
/// exactly what had not been heard yet, with the queue's fade: for sinks that write a file or block
/// while a device's buffer is full. With ``Rendering/onRenderThread(waitForRoom:)`` the producer
/// only converts and queues, and the owner's real-time thread calls ``renderPeriod()``.
public final class ReplyPlayer: @unchecked Sendable {
    // Safety: `converter` is used by the producer side only (play, interrupt, replyEnded, finish),
    // which runs on one thread. `period` and the sink are used by whoever renders: the producer
    // with `.onCallersThread`; with `.onRenderThread`, the render thread in `renderPeriod()`, except
    // `connect` in `init` and `disconnect` in `finish()`, which run before that thread starts and
    // after it has stopped. The queue is built for one producer and one consumer; the rest is immutable.

    /// Where the queue is rendered to the sink.
    public enum Rendering: Sendable {
        /// ``ReplyPlayer/play(_:)`` renders on the caller's thread, as fast as the sink takes audio.
        case onCallersThread
        /// A thread of the owner's calls ``ReplyPlayer/renderPeriod()`` at the device's pace; the
        /// producer only queues. While the queue is full it calls `waitForRoom`, which waits for a
        /// period to be rendered and returns false once the render thread has stopped (the chunk
        /// then fails with ``ReplyPlayerError/queue(_:)``).
        case onRenderThread(waitForRoom: @Sendable () -> Bool)
    }

    /// The format the sink plays.
    public let format: PlayerFormat
    /// Frames in each ``renderPeriod()``: 10 ms at the sink's rate.
    public let renderPeriodFrames: Int
    private let sink: any PlayerSink
    private let queue: PlaybackQueue
    private let rendering: Rendering
    private let kernels: DSPKernels
    private var converter: PlaybackConverter?
    private let period: UnsafeMutablePointer<Float>
    /// Frames rendered per call to the sink on the caller's thread.
    private static let periodFrames = 240

    /// Connects `sink` to `format` and sets up the queue.
    /// - Throws: ``ReplyPlayerError/sink(_:)`` when the sink refuses the format,
    ///   ``ReplyPlayerError/queue(_:)`` when the queue cannot hold it.
    public init(sink: any PlayerSink, format: PlayerFormat = .playback, queueOptions: PlaybackQueueOptions = PlaybackQueueOptions(),
                rendering: Rendering = .onCallersThread, kernels: DSPKernels = .best) throws(ReplyPlayerError) {
        self.format = format
        self.sink = sink
        self.rendering = rendering
        self.kernels = kernels
        renderPeriodFrames = max(Int(format.sampleRate.hertz / 100), 1)
        do {
            queue = try PlaybackQueue(format: format, options: queueOptions)
        } catch {
            throw .queue(error)
        }
        do {
            try sink.connect(format)
        } catch {
            throw .sink(error)
        }
        let capacity = max(Self.periodFrames, renderPeriodFrames) * format.channelCount
        period = .allocate(capacity: capacity)
        period.initialize(repeating: 0, count: capacity)
    }

    deinit {
        period.deallocate()
    }

    /// Frames of reply audio rendered to the sink so far (faded frames included, silence not).
    public var framesPlayed: Int { queue.statistics.playedFrames }

    /// Frames queued and not yet rendered.
    public var queuedFrames: Int { queue.queuedFrames }
    /// The queue's positions (frames since it was made): where the next audio goes, and where
    /// rendering has got to.
    public var queueWrittenPosition: Int { queue.writtenPosition }
    public var queueConsumedPosition: Int { queue.consumedPosition }

    /// Interruptions applied so far.
    public var interruptions: Int { queue.statistics.interruptions }

    /// The queue's counters (played, dropped, silence, underruns).
    public var statistics: PlaybackQueue.Statistics { queue.statistics }

    /// The queue's pre-roll from its next start on (a jitter buffer following the network).
    public func setPreRoll(_ duration: Duration) {
        queue.setPreRoll(frames: format.sampleRate.frames(in: duration))
    }

    /// Converts a chunk and queues it; on the caller's thread, plays what the queue holds beyond its pre-roll.
    public func play(_ chunk: AudioChunk) throws(ReplyPlayerError) {
        try play(chunk.samples, sampleRate: chunk.sampleRate)
    }

    /// Converts `samples` at `sampleRate` and queues them, as the buffer-pointer form does.
    public func play(_ samples: [Int16], sampleRate: SampleRate) throws(ReplyPlayerError) {
        try samples.withUnsafeBufferPointer { buffer throws(ReplyPlayerError) in try play(buffer, sampleRate: sampleRate) }
    }

    /// Converts `samples` at `sampleRate` and queues them, as the buffer-pointer form does.
    public func play(_ samples: Span<Int16>, sampleRate: SampleRate) throws(ReplyPlayerError) {
        try samples.withUnsafeBufferPointer { buffer throws(ReplyPlayerError) in try play(buffer, sampleRate: sampleRate) }
    }

    /// Converts `samples` at `sampleRate` and queues them; on the caller's thread, plays what the
    /// queue holds beyond its pre-roll.
    /// - Throws: ``ReplyPlayerError/unplayableChunk(sampleRate:_:)`` before queuing anything when
    ///   the rate cannot be converted (the player stays usable); a sink, queue or converter failure.
    public func play(_ samples: UnsafeBufferPointer<Int16>, sampleRate: SampleRate) throws(ReplyPlayerError) {
        let active = try converter(for: sampleRate)
        try active.process(samples, converterError: ReplyPlayerError.converter) { buffer throws(ReplyPlayerError) in try enqueue(buffer) }
        if case .onCallersThread = rendering { try render(keeping: queue.preRollFrames) }
    }

    /// Builds the converter for chunks at `sampleRate` now, so the first reply does not wait for
    /// its filter to be designed (a real-time output's first chunk would otherwise be late).
    /// - Throws: ``ReplyPlayerError/unplayableChunk(sampleRate:_:)`` for a rate it cannot convert.
    public func prepare(for sampleRate: SampleRate) throws(ReplyPlayerError) {
        _ = try converter(for: sampleRate)
    }

    /// Cuts what is queued (with the queue's fade) and starts the next reply fresh.
    public func interrupt() throws(ReplyPlayerError) {
        queue.interrupt()
        converter?.reset()
        if case .onCallersThread = rendering { try render(frames: queue.fadeFrames) }
    }

    /// The reply is over: the converter's last samples are queued and the queue is told, so they
    /// play out now instead of waiting for the next reply (on the caller's thread, at once).
    public func replyEnded() throws(ReplyPlayerError) {
        queue.replyEnding()
        try flushConverter()
        queue.markEndOfStream()
        if case .onCallersThread = rendering { try render(keeping: 0) }
    }

    /// Ends the reply as ``replyEnded()`` and disconnects the sink (a file sink finishes its file).
    /// With a render thread, stop that thread first: what it has not rendered is not played.
    public func finish() throws(ReplyPlayerError) {
        try replyEnded()
        do {
            try sink.disconnect()
        } catch {
            throw .sink(error)
        }
    }

    /// Renders one period of ``renderPeriodFrames`` to the sink: queued audio where it is ready,
    /// silence elsewhere. The render thread's call, with ``Rendering/onRenderThread(waitForRoom:)``.
    /// - Returns: the frames of queued audio in the period (the rest was silence).
    /// - Throws: ``ReplyPlayerError/sink(_:)`` when the sink fails.
    @discardableResult
    public func renderPeriod() throws(ReplyPlayerError) -> Int {
        let frames = renderPeriodFrames
        let audio = queue.render(into: period, channelStride: frames, frameCount: frames)
        do {
            try sink.play(PlaybackBuffer(base: period, frameCount: frames, channelCount: format.channelCount, channelStride: frames))
        } catch {
            throw .sink(error)
        }
        return audio
    }

    /// Renders one period of silence to the sink without taking anything from the queue: a
    /// render thread's first periods, which fill the device's buffer before any reply is taken.
    /// - Throws: ``ReplyPlayerError/sink(_:)`` when the sink fails.
    public func renderSilencePeriod() throws(ReplyPlayerError) {
        let frames = renderPeriodFrames
        period.update(repeating: 0, count: frames * format.channelCount)
        do {
            try sink.play(PlaybackBuffer(base: period, frameCount: frames, channelCount: format.channelCount, channelStride: frames))
        } catch {
            throw .sink(error)
        }
    }

    /// The first channel of the period the last ``renderPeriod()`` gave the sink (after fades and
    /// cuts, silence included), ``renderPeriodFrames`` long; valid until the next render. Render
    /// thread only: what a reply output hands an echo reference.
    public var lastRenderedPeriod: UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: period, count: renderPeriodFrames)
    }

    /// The converter for `sampleRate`: the current one, or a new one after the old one's tail.
    private func converter(for sampleRate: SampleRate) throws(ReplyPlayerError) -> PlaybackConverter {
        if let converter, converter.sourceRate == sampleRate { return converter }
        let replacement: PlaybackConverter
        do {
            replacement = try PlaybackConverter(sourceRate: sampleRate, outputRate: format.sampleRate, channelCount: format.channelCount, kernels: kernels)
        } catch {
            throw .unplayableChunk(sampleRate: sampleRate, error)
        }
        try flushConverter()
        converter = replacement
        return replacement
    }

    private func flushConverter() throws(ReplyPlayerError) {
        guard let converter else { return }
        try converter.flush(converterError: ReplyPlayerError.converter) { buffer throws(ReplyPlayerError) in try enqueue(buffer) }
    }

    /// Queues a buffer; while the queue is too full to take it, plays queued audio first (on the
    /// caller's thread) or waits for the render thread.
    private func enqueue(_ buffer: borrowing PlaybackBuffer) throws(ReplyPlayerError) {
        while true {
            do {
                try queue.enqueue(buffer)
                return
            } catch .full(let frames, let free) {
                // A buffer larger than the whole queue would never fit: report it rather than wait.
                guard frames <= queue.capacity else { throw .queue(.full(frames: frames, free: free)) }
                switch rendering {
                case .onCallersThread:
                    guard try render(frames: Self.periodFrames) > 0 else { throw .queue(.full(frames: frames, free: free)) }
                case .onRenderThread(let waitForRoom):
                    guard waitForRoom() else { throw .queue(.full(frames: frames, free: free)) }
                }
            } catch {
                throw .queue(error)
            }
        }
    }

    /// Renders periods while more than `keeping` frames are queued.
    private func render(keeping: Int) throws(ReplyPlayerError) {
        while queue.queuedFrames > keeping {
            guard try render(frames: min(Self.periodFrames, queue.queuedFrames - keeping)) > 0 else { return }
        }
    }

    /// Renders up to `frames` frames of queued audio to the sink, a period at a time (no silence:
    /// the caller's thread is not a clock to fill).
    @discardableResult
    private func render(frames: Int) throws(ReplyPlayerError) -> Int {
        var rendered = 0
        while rendered < frames {
            let count = min(Self.periodFrames, frames - rendered)
            let played = queue.render(into: period, channelStride: count, frameCount: count)
            guard played > 0 else { break }
            do {
                try sink.play(PlaybackBuffer(base: period, frameCount: played, channelCount: format.channelCount, channelStride: count))
            } catch {
                throw .sink(error)
            }
            rendered += played
        }
        return rendered
    }
}
