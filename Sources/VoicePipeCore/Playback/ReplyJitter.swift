/// How unevenly reply audio arrives, and the pre-roll that absorbs it: a jitter buffer that
/// grows with the jitter measured on this connection, bounded, and shrinks again once the
/// network calms.
///
/// Each chunk's offset is its arrival time minus the audio that came before it in the reply; a
/// reply paced in real time keeps the offset constant, one sent ahead lowers it. A chunk is late
/// by how far its offset rose above the lowest of the chunks before it, and a pre-roll of the
/// largest such rise plays the reply without a hole wherever playback started. The pre-roll is
/// the largest rise of the current reply and the last ``window`` ones, plus ``margin`` for the
/// render period, within ``minimum`` … ``maximum``.
public struct ReplyJitter: Sendable, Hashable {
    /// Replies remembered: a burst of jitter keeps the pre-roll up for this many calm replies.
    public static let window = 4
    /// Added to the measured lateness: a chunk of 20 ms arriving as the last one runs out, plus
    /// the render period (10 ms) the player takes at a time.
    public static let margin: Duration = .milliseconds(30)
    /// The pre-roll on a calm network: below it, chunks paced exactly in real time already run
    /// dry between render periods.
    public static let minimum: Duration = .milliseconds(40)
    public static let maximum: Duration = .milliseconds(300)

    private var rises: [Duration] = []
    private var smallestOffset: Duration?
    private var largestRise: Duration = .zero
    private var audioSoFar: Duration = .zero
    /// The largest pre-roll this connection has needed.
    public private(set) var largestPreRoll: Duration = ReplyJitter.minimum

    public init() {}

    /// A chunk of `audio` arrived at `arrival` (any monotonic origin).
    public mutating func chunkArrived(at arrival: Duration, audio: Duration) {
        let offset = arrival - audioSoFar
        let lowest = min(smallestOffset ?? offset, offset)
        smallestOffset = lowest
        largestRise = max(largestRise, offset - lowest)
        audioSoFar += audio
        largestPreRoll = max(largestPreRoll, preRoll)
    }

    /// The reply ended (or was cut): the next chunk starts a new one.
    public mutating func replyEnded() {
        guard smallestOffset != nil else { return }
        rises.append(largestRise)
        if rises.count > Self.window { rises.removeFirst(rises.count - Self.window) }
        smallestOffset = nil
        largestRise = .zero
        audioSoFar = .zero
    }

    /// How late the latest chunk of the current reply came, at most, so far.
    public var currentLateness: Duration { largestRise }

    /// The pre-roll to play with now.
    public var preRoll: Duration {
        let rise = rises.reduce(largestRise) { Swift.max($0, $1) }
        return Swift.min(Swift.max(rise + Self.margin, Self.minimum), Self.maximum)
    }
}
