/// Why the reply player refused a chunk or could not play.
public enum ReplyPlayerError: SystemCodedError, Sendable, Hashable {
    /// A chunk at a rate the playback converter cannot take. Nothing of it was queued; the player
    /// carries on with the next chunk.
    case unplayableChunk(sampleRate: Int, PlaybackConverterError)
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
            "an audio chunk at \(AudioFormat.describe(rate: Double(rate))) cannot be played: \(error)"
        case .queue(let error):
            "the playback queue could not be set up: \(error)"
        case .sink(let error):
            error.message
        case .converter(let error):
            "converting reply audio failed: \(error)"
        }
    }
}

/// Reply audio from the wire, played through the playback path into any ``PlayerSink``:
///
/// ```
///  audio.chunk samples (Int16, any rate) ─▶ PlaybackConverter ─▶ PlaybackQueue ─▶ PlayerSink
///                                                               (pre-roll, fade on interrupt)
/// ```
///
/// The player renders on the caller's thread, as fast as the sink takes audio, and keeps the
/// queue's pre-roll buffered between chunks the way a device would; an ``interrupt()`` therefore
/// cuts exactly what had not been heard yet, with the queue's fade. It suits sinks whose
/// ``PlayerSink/play(_:)`` writes a file or blocks while a device's buffer is full.
///
/// Chunks may change rate mid-stream: the converter is rebuilt for the new rate after the old
/// one's tail is played. A chunk at a rate the converter cannot take is refused whole with
/// ``ReplyPlayerError/unplayableChunk(sampleRate:_:)``, and the player carries on.
public final class ReplyPlayer {
    /// The format the sink plays.
    public let format: PlayerFormat
    private let sink: any PlayerSink
    private let queue: PlaybackQueue
    private let kernels: DSPKernels
    private var converter: PlaybackConverter?
    private let period: UnsafeMutablePointer<Float>
    /// Frames rendered per call to the sink.
    private static let periodFrames = 240
    /// Frames handed to the sink so far.
    public private(set) var framesPlayed = 0

    /// Connects `sink` to `format` and sets up the queue.
    /// - Throws: ``ReplyPlayerError/sink(_:)`` when the sink refuses the format,
    ///   ``ReplyPlayerError/queue(_:)`` when the queue cannot hold it.
    public init(sink: any PlayerSink, format: PlayerFormat = .playback, queueOptions: PlaybackQueueOptions = PlaybackQueueOptions(), kernels: DSPKernels = .best) throws(ReplyPlayerError) {
        self.format = format
        self.sink = sink
        self.kernels = kernels
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
        period = .allocate(capacity: Self.periodFrames * format.channelCount)
        period.initialize(repeating: 0, count: Self.periodFrames * format.channelCount)
    }

    deinit {
        period.deallocate()
    }

    /// Interruptions applied so far.
    public var interruptions: Int { queue.statistics.interruptions }

    /// The queue's counters (played, dropped, silence, underruns).
    public var statistics: PlaybackQueue.Statistics { queue.statistics }

    /// Converts a chunk and plays what the queue holds beyond its pre-roll.
    public func play(_ chunk: AudioChunk) throws(ReplyPlayerError) {
        try chunk.samples.withUnsafeBufferPointer { samples throws(ReplyPlayerError) in
            try play(samples, sampleRate: chunk.sampleRate)
        }
    }

    /// Converts `samples` at `sampleRate` and plays what the queue holds beyond its pre-roll.
    /// - Throws: ``ReplyPlayerError/unplayableChunk(sampleRate:_:)`` before queuing anything when
    ///   the rate cannot be converted (the player stays usable); a sink or converter failure.
    public func play(_ samples: UnsafeBufferPointer<Int16>, sampleRate: Int) throws(ReplyPlayerError) {
        let active = try converter(for: sampleRate)
        do {
            try active.process(samples) { buffer in try self.enqueue(buffer) }
        } catch {
            throw Self.failure(error)
        }
        try render(keeping: queue.preRollFrames)
    }

    /// Cuts what is queued (with the queue's fade) and starts the next reply fresh.
    public func interrupt() throws(ReplyPlayerError) {
        queue.interrupt()
        converter?.reset()
        try render(frames: queue.fadeFrames)
    }

    /// Plays everything left and disconnects the sink (a file sink finishes its file).
    public func finish() throws(ReplyPlayerError) {
        try flushConverter()
        queue.markEndOfStream()
        try render(keeping: 0)
        do {
            try sink.disconnect()
        } catch {
            throw .sink(error)
        }
    }

    /// The converter for `sampleRate`: the current one, or a new one after the old one's tail.
    private func converter(for sampleRate: Int) throws(ReplyPlayerError) -> PlaybackConverter {
        if let converter, converter.sourceRate == Double(sampleRate) { return converter }
        let replacement: PlaybackConverter
        do {
            replacement = try PlaybackConverter(sourceRate: Double(sampleRate), outputRate: format.sampleRate, channelCount: format.channelCount, kernels: kernels)
        } catch {
            throw .unplayableChunk(sampleRate: sampleRate, error)
        }
        try flushConverter()
        converter = replacement
        return replacement
    }

    private func flushConverter() throws(ReplyPlayerError) {
        guard let converter else { return }
        do {
            try converter.flush { buffer in try self.enqueue(buffer) }
        } catch {
            throw Self.failure(error)
        }
    }

    /// Queues a buffer, playing queued audio first while the queue is too full to take it.
    private func enqueue(_ buffer: borrowing PlaybackBuffer) throws(ReplyPlayerError) {
        while true {
            do {
                try queue.enqueue(buffer)
                return
            } catch .full {
                // A buffer larger than the whole queue would never fit: report it rather than spin.
                guard try render(frames: Self.periodFrames) > 0 else { throw .queue(.full(frames: buffer.frameCount, free: queue.capacity - queue.queuedFrames)) }
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
            framesPlayed += played
            rendered += played
        }
        return rendered
    }

    private static func failure(_ error: any Error) -> ReplyPlayerError {
        switch error {
        case let error as ReplyPlayerError: error
        case let error as PlaybackConverterError: .converter(error)
        case let error as PlayerSinkError: .sink(error)
        default: .converter(.resampler(.backendFailure("\(error)", code: nil)))
        }
    }
}
