import Synchronization

/// Why the playback queue refused a buffer or an option.
public enum PlaybackQueueError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The buffer does not fit in the free space; nothing was queued. Render some audio first.
    case full(frames: Int, free: Int)
    /// A buffer with a different channel count from the queue's format.
    case channelCountMismatch(expected: Int, received: Int)
    /// An option outside its range.
    case optionOutOfRange(String)

    public var description: String {
        switch self {
        case .full(let frames, let free):
            "the playback queue has room for \(free) frames, not \(frames); nothing was queued"
        case .channelCountMismatch(let expected, let received):
            "the playback queue holds \(expected)-channel audio, not \(received)-channel"
        case .optionOutOfRange(let reason):
            reason
        }
    }
}

/// Options of a ``PlaybackQueue``.
public struct PlaybackQueueOptions: Sendable, Hashable {
    /// Audio buffered before playback starts (and restarts after an underrun), ms (0 … 1000).
    public var preRollMilliseconds: Double
    /// Length of the fade-out that ends the audio playing when ``PlaybackQueue/interrupt()`` is called, ms (0 … 5).
    public var fadeOutMilliseconds: Double
    /// Most audio the queue holds, seconds (0.1 … 3600).
    public var capacitySeconds: Double

    public init(preRollMilliseconds: Double = 60, fadeOutMilliseconds: Double = 5, capacitySeconds: Double = 120) {
        self.preRollMilliseconds = preRollMilliseconds
        self.fadeOutMilliseconds = fadeOutMilliseconds
        self.capacitySeconds = capacitySeconds
    }
}

/// The queue between reply decoding and a player: chunks in arrival order, a pre-roll before
/// playback starts (or until the first audio has waited that long), silence (counted) when it runs dry, and an interruption that cuts at once
/// with a short fade so the cut does not click. ``ReplyPlayer`` fills it and renders from it.
///
/// One producer thread calls ``enqueue(_:)`` and ``markEndOfStream()``; one consumer (the audio
/// thread) calls ``render(into:channelStride:frameCount:)``; ``interrupt()`` and ``statistics``
/// may be used from any thread. The queue is lock-free (a ring buffer with atomic positions), so
/// the audio thread never waits, and nothing allocates after `init`.
///
/// Implementation notes: positions are frame counts since the queue was made, so they only grow;
/// a frame's place in the ring is its position modulo the capacity.
///
/// ```
///  consumed ─▶ [ frames queued, oldest first ] ◀─ written
///               ▲ interrupt(): everything before the write position at that moment is dropped,
///                 the first ≤ 5 ms of it faded out
/// ```
public final class PlaybackQueue: @unchecked Sendable {
    /// What the consumer has done so far.
    public struct Statistics: Sendable, Hashable {
        /// Frames of queued audio rendered (faded frames included): how much of the reply was heard.
        public var playedFrames: Int
        /// Frames of silence rendered because nothing was ready (pre-roll, underruns, idle).
        public var silenceFrames: Int
        /// Holes in a reply: times the queue ran dry while playing, before the end of the
        /// stream, and more of the same reply came after (a reply that simply ended before its
        /// end was marked is not one).
        public var underruns: Int
        /// Frames dropped by interruptions.
        public var droppedFrames: Int
        /// Interruptions handled.
        public var interruptions: Int
    }

    /// The format of every buffer in and out.
    public let format: PlayerFormat
    /// Frames the queue can hold.
    public let capacity: Int
    /// Frames buffered before playback starts (set again by ``setPreRoll(frames:)``).
    public var preRollFrames: Int { preRoll.load(ordering: .relaxed) }
    /// Frames over which an interrupted reply fades out.
    public let fadeFrames: Int

    private let storage: UnsafeMutablePointer<Float>
    private let fadeGains: UnsafeMutablePointer<Float>

    // Shared positions.
    private let written = Atomic<Int>(0)
    private let consumed = Atomic<Int>(0)
    private let interruptBoundary = Atomic<Int>(0)
    private let endBoundary = Atomic<Int>(0)

    // Shared statistics, written by the consumer.
    private let played = Atomic<Int>(0)
    private let silence = Atomic<Int>(0)
    private let underrunCount = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    private let interruptionCount = Atomic<Int>(0)
    private let preRoll: Atomic<Int>
    /// Where the consumer ran dry mid-reply (−1: it has not, or the reply ended or was cut there;
    /// −2: the reply's end is being queued):
    /// more audio for the same reply makes that dry spell an underrun, a hole in the reply.
    private let dryAt = Atomic<Int>(-1)

    // Consumer-only state.
    private var playing = false
    private var seenInterruptBoundary = 0
    private var fadeStart = 0
    private var fadeEnd = 0
    private var dropTo = 0
    /// Frames of silence rendered while audio waited for the pre-roll.
    private var waitedFrames = 0

    /// Builds a queue; all memory is allocated here.
    /// - Throws: ``PlaybackQueueError/optionOutOfRange(_:)``.
    public init(format: PlayerFormat = .playback, options: PlaybackQueueOptions = PlaybackQueueOptions()) throws(PlaybackQueueError) {
        guard (0...1000).contains(options.preRollMilliseconds) else {
            throw .optionOutOfRange("the pre-roll must be 0 to 1000 ms, not \(options.preRollMilliseconds)")
        }
        guard (0...5).contains(options.fadeOutMilliseconds) else {
            throw .optionOutOfRange("the interruption fade must be 0 to 5 ms, not \(options.fadeOutMilliseconds)")
        }
        guard (0.1...3600).contains(options.capacitySeconds) else {
            throw .optionOutOfRange("the queue capacity must be 0.1 to 3600 s, not \(options.capacitySeconds)")
        }
        self.format = format
        let rate = format.sampleRate.hertz
        capacity = Int((options.capacitySeconds * rate).rounded(.up))
        preRoll = Atomic(Int((options.preRollMilliseconds / 1000 * rate).rounded()))
        fadeFrames = Int((options.fadeOutMilliseconds / 1000 * rate).rounded(.down))
        storage = .allocate(capacity: capacity * format.channelCount)
        storage.initialize(repeating: 0, count: capacity * format.channelCount)
        fadeGains = .allocate(capacity: max(fadeFrames, 1))
        // Raised-cosine ramp from just below 1 to exactly 0.
        for i in 0..<fadeFrames {
            fadeGains[i] = Float(0.5 * (1 + Elementary.cos(Double.pi * Double(i + 1) / Double(fadeFrames))))
        }
    }

    deinit {
        storage.deallocate()
        fadeGains.deallocate()
    }

    /// Frames queued since the queue was made: where the next buffer's first frame will be.
    public var writtenPosition: Int { written.load(ordering: .acquiring) }
    /// Frames rendered (or dropped) since the queue was made: where rendering has got to.
    public var consumedPosition: Int { consumed.load(ordering: .acquiring) }

    /// Frames queued and not yet rendered.
    public var queuedFrames: Int {
        written.load(ordering: .acquiring) - consumed.load(ordering: .acquiring)
    }

    /// A snapshot of what the consumer has done.
    public var statistics: Statistics {
        Statistics(
            playedFrames: played.load(ordering: .relaxed), silenceFrames: silence.load(ordering: .relaxed),
            underruns: underrunCount.load(ordering: .relaxed), droppedFrames: dropped.load(ordering: .relaxed),
            interruptions: interruptionCount.load(ordering: .relaxed))
    }

    // MARK: Producer

    /// Queues a buffer after everything already queued. Audio that follows a dry spell of the
    /// same reply counts that spell as an underrun. Producer thread only.
    /// - Throws: ``PlaybackQueueError/full(frames:free:)`` (nothing queued) or a channel mismatch.
    public func enqueue(_ buffer: borrowing PlaybackBuffer) throws(PlaybackQueueError) {
        guard buffer.channelCount == format.channelCount else {
            throw .channelCountMismatch(expected: format.channelCount, received: buffer.channelCount)
        }
        let write = written.load(ordering: .relaxed)
        let dry = dryAt.load(ordering: .acquiring)
        if buffer.frameCount > 0, dry >= 0, dryAt.compareExchange(expected: dry, desired: -1, ordering: .acquiringAndReleasing).exchanged, dry == write {
            underrunCount.add(1, ordering: .relaxed)
        }
        let free = capacity - (write - consumed.load(ordering: .acquiring))
        guard buffer.frameCount <= free else { throw .full(frames: buffer.frameCount, free: free) }
        let start = write % capacity
        let first = min(buffer.frameCount, capacity - start)
        for channel in 0..<format.channelCount {
            let source = buffer.base + channel * buffer.channelStride
            let ring = storage + channel * capacity
            (ring + start).update(from: source, count: first)
            ring.update(from: source + first, count: buffer.frameCount - first)
        }
        written.store(write + buffer.frameCount, ordering: .releasing)
    }

    /// Marks the end of a reply: what is queued plays out even if it is shorter than the pre-roll,
    /// and running out after it is not an underrun. Producer thread only.
    public func markEndOfStream() {
        endBoundary.store(written.load(ordering: .relaxed), ordering: .releasing)
        dryAt.store(-1, ordering: .releasing)
    }

    /// The reply's last samples (a converter's tail) follow, then its end is marked: a dry
    /// spell before them is the reply ending, not a hole. Producer thread only.
    public func replyEnding() {
        dryAt.store(Self.replyEndingMark, ordering: .releasing)
    }

    /// `dryAt` between ``replyEnding()`` and ``markEndOfStream()``: no dry spell is recorded.
    private static let replyEndingMark = -2

    /// The pre-roll from now on (0 … 1000 ms of frames): a jitter buffer that follows the
    /// network. Any thread; the next start of playback uses it.
    public func setPreRoll(frames: Int) {
        let limit = Int((format.sampleRate.hertz).rounded())
        preRoll.store(min(max(frames, 0), limit), ordering: .relaxed)
    }

    // MARK: Any thread

    /// Drops everything queued so far at once; the audio playing fades out over ≤ 5 ms. The next
    /// reply starts with a fresh pre-roll. Audio queued after this call is kept.
    public func interrupt() {
        interruptBoundary.store(written.load(ordering: .acquiring), ordering: .releasing)
        dryAt.store(-1, ordering: .releasing)
    }

    // MARK: Consumer

    /// Renders `frameCount` frames into `destination` (channel c at `destination + c × channelStride`):
    /// queued audio where it is ready, silence elsewhere. Audio thread only; never blocks or allocates.
    /// - Returns: the frames of queued audio rendered (the rest is silence).
    @discardableResult
    public func render(into destination: UnsafeMutablePointer<Float>, channelStride: Int, frameCount: Int) -> Int {
        var read = consumed.load(ordering: .relaxed)
        let write = written.load(ordering: .acquiring)
        let boundary = interruptBoundary.load(ordering: .acquiring)
        if boundary > seenInterruptBoundary {
            seenInterruptBoundary = boundary
            interruptionCount.add(1, ordering: .relaxed)
            if read >= fadeEnd {
                // Fade what is playing; a second interruption during a fade lets that fade finish.
                let audible = playing ? min(fadeFrames, max(boundary - read, 0)) : 0
                fadeStart = read
                fadeEnd = read + audible
            }
            dropTo = max(boundary, read)
            playing = false
        }
        var out = 0
        var audio = 0
        while out < frameCount {
            if read < fadeEnd {
                let count = min(frameCount - out, fadeEnd - read)
                copy(from: read, count: count, to: destination, at: out, channelStride: channelStride, fadeFrom: read - fadeStart, fadeLength: fadeEnd - fadeStart)
                read += count
                out += count
                audio += count
                if read == fadeEnd {
                    dropped.add(dropTo - read, ordering: .relaxed)
                    read = dropTo
                }
                continue
            }
            if read < dropTo {
                dropped.add(dropTo - read, ordering: .relaxed)
                read = dropTo
            }
            let available = write - read
            if !playing {
                let end = endBoundary.load(ordering: .acquiring)
                // Playback starts once the pre-roll is queued, the reply has ended, or the audio
                // has waited as long as the pre-roll lasts (a short reply is never held back).
                let preRollFrames = self.preRollFrames
                if available > 0 && (available >= preRollFrames || end > read || waitedFrames >= preRollFrames) {
                    playing = true
                    waitedFrames = 0
                } else {
                    if available > 0 { waitedFrames += frameCount - out } else { waitedFrames = 0 }
                    break
                }
            }
            if available == 0 {
                // Running dry exactly at the end of a reply is its end; anywhere else it is an
                // underrun if more of the reply follows (counted when it is queued).
                if endBoundary.load(ordering: .acquiring) != read {
                    _ = dryAt.compareExchange(expected: -1, desired: read, ordering: .acquiringAndReleasing)
                }
                playing = false
                break
            }
            let count = min(frameCount - out, available)
            copy(from: read, count: count, to: destination, at: out, channelStride: channelStride, fadeFrom: 0, fadeLength: 0)
            read += count
            out += count
            audio += count
        }
        if out < frameCount {
            for channel in 0..<format.channelCount {
                (destination + channel * channelStride + out).update(repeating: 0, count: frameCount - out)
            }
            silence.add(frameCount - out, ordering: .relaxed)
        }
        played.add(audio, ordering: .relaxed)
        consumed.store(read, ordering: .releasing)
        return audio
    }

    /// Copies `count` frames starting at position `from` out of the ring, optionally through the fade.
    private func copy(from position: Int, count: Int, to destination: UnsafeMutablePointer<Float>, at offset: Int, channelStride: Int, fadeFrom: Int, fadeLength: Int) {
        let start = position % capacity
        let first = min(count, capacity - start)
        for channel in 0..<format.channelCount {
            let ring = storage + channel * capacity
            let target = destination + channel * channelStride + offset
            target.update(from: ring + start, count: first)
            (target + first).update(from: ring, count: count - first)
            if fadeLength > 0 {
                // A fade shorter than fadeFrames (little audio left) walks the same ramp faster.
                for i in 0..<count {
                    let step = (fadeFrom + i + 1) * fadeFrames / fadeLength - 1
                    target[i] *= fadeGains[min(max(step, 0), fadeFrames - 1)]
                }
            }
        }
    }
}
