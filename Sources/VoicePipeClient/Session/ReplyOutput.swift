import VoicePipeCore
import VoicePipeIO

/// Where the session driver sends reply audio: ``FileReplyOutput``, ``DeviceReplyOutput``,
/// ``DiscardedReplyOutput``, or ``TallyingReplyOutput`` around another.
///
/// The driver calls it on its own thread. An output that plays in real time (a device) tells
/// whoever drives it when it has played everything, through the handler given to
/// ``reportDrained(to:)``, which the driver hooks to its own inbox when a session starts; one that plays synchronously (a file) says so from ``play(_:)`` and never calls the handler.
public protocol ReplyOutput: AnyObject {
    /// What it is, for the timeline and the summary ("reply.wav", "speaker 'default'").
    var name: String { get }
    /// Queues a reply chunk.
    /// - Returns: true when everything given so far has already been "played" (written).
    /// - Throws: ``ReplyPlayerError``: an unplayable chunk (the output stays usable) or a sink failure.
    func play(_ chunk: AudioChunk) throws(ReplyPlayerError) -> Bool
    /// Cuts what is queued at once (with at most a 5 ms fade) and starts the next reply fresh.
    func cut() throws(ReplyPlayerError)
    /// The reply is over (nothing more came for the playback gap): let its last samples out.
    func replyEnded() throws(ReplyPlayerError)
    /// Chunks given to ``play(_:)`` so far: a drained report names how many it covers, so a
    /// report overtaken by a newer chunk is recognised.
    var chunksQueued: Int { get }
    /// Has `handler` called, from any thread, each time everything queued so far has played, with
    /// the ``chunksQueued`` count the report covers. A later call replaces the handler.
    func reportDrained(to handler: @escaping @Sendable (Int) -> Void)
    /// Plays what is left and closes the output (a file gets its final header).
    func finish() throws(ReplyPlayerError)
    /// Frames heard (written) so far, at ``sampleRate``.
    var framesPlayed: Int { get }
    /// The rate ``framesPlayed`` counts in.
    var sampleRate: SampleRate { get }
    /// Frames dropped by cuts.
    var framesCut: Int { get }
    /// How the output absorbed network jitter, for an output that plays in real time; nil otherwise.
    var jitterReport: JitterBufferReport? { get }
    /// Watches the next chunk given to ``play(_:)``: when its first sample is heard, the handler
    /// given to ``reportHeard(to:)`` is told `token`. An output that cannot tell does nothing.
    func markNextChunk(_ token: Int)
    /// Has `handler` called, from any thread, when a marked chunk's first sample was heard, with
    /// its token and how long after its ``play(_:)`` that was.
    func reportHeard(to handler: @escaping @Sendable (_ token: Int, _ delay: Duration) -> Void)
}

extension ReplyOutput {
    public var jitterReport: JitterBufferReport? { nil }
    public func markNextChunk(_ token: Int) {}
    public func reportHeard(to handler: @escaping @Sendable (_ token: Int, _ delay: Duration) -> Void) {}
}

/// What a real-time output's jitter buffer did over a session.
public struct JitterBufferReport: Sendable, Hashable {
    /// Replies that ran dry and then resumed: holes the buffer did not absorb.
    public var underruns: Int
    /// The pre-roll at the end of the session.
    public var preRoll: Duration
    /// The largest pre-roll the connection needed.
    public var largestPreRoll: Duration

    public init(underruns: Int, preRoll: Duration, largestPreRoll: Duration) {
        self.underruns = underruns
        self.preRoll = preRoll
        self.largestPreRoll = largestPreRoll
    }
}

/// Reply audio into a Float32 audio file through a ``ReplyPlayer``: exactly what a player would
/// have heard, each reply after the last, cuts included.
public final class FileReplyOutput: ReplyOutput {
    private let sink: AudioFileSink
    private let player: ReplyPlayer

    /// Creates the file (`path`, in `container`) in the player format, 24 kHz Float32.
    /// - Throws: ``ReplyPlayerError/sink(_:)`` when the file cannot be created.
    public init(path: String, container: AudioContainer = .wav, format: PlayerFormat = .playback) throws(ReplyPlayerError) {
        sink = AudioFileSink(path: path, container: container)
        player = try ReplyPlayer(sink: sink, format: format)
    }

    public var name: String { sink.path == "-" ? "standard output" : "'\(sink.path)'" }
    public var sampleRate: SampleRate { player.format.sampleRate }
    public var framesPlayed: Int { player.framesPlayed }
    public var framesCut: Int { player.statistics.droppedFrames }
    public private(set) var chunksQueued = 0

    public func play(_ chunk: AudioChunk) throws(ReplyPlayerError) -> Bool {
        chunksQueued += 1
        try player.play(chunk)
        return true
    }

    /// Never calls `handler`: the file has each chunk when ``play(_:)`` returns, which says so.
    public func reportDrained(to handler: @escaping @Sendable (Int) -> Void) {}

    public func cut() throws(ReplyPlayerError) {
        try player.interrupt()
    }

    /// Nothing to do: the file gets each reply's audio as it comes (the player's pre-roll stays
    /// queued, as a device's would, and is written before the next reply or at the end).
    public func replyEnded() throws(ReplyPlayerError) {}

    public func finish() throws(ReplyPlayerError) {
        try player.finish()
    }
}

/// Reply audio counted and dropped, with no player: a session with nowhere to play (text only, or no `--out`).
public final class DiscardedReplyOutput: ReplyOutput {
    public let name = "nowhere"
    public let sampleRate = AudioFormat.playback.sampleRate
    public private(set) var framesPlayed = 0
    public let framesCut = 0
    public private(set) var chunksQueued = 0

    public init() {}

    public func replyEnded() throws(ReplyPlayerError) {}

    public func play(_ chunk: AudioChunk) throws(ReplyPlayerError) -> Bool {
        chunksQueued += 1
        framesPlayed += Int((Double(chunk.samples.count) * sampleRate.hertz / max(chunk.sampleRate.hertz, 1)).rounded())
        return true
    }

    /// Never calls `handler`: nothing plays, and ``play(_:)`` says at once that it is done.
    public func reportDrained(to handler: @escaping @Sendable (Int) -> Void) {}

    public func cut() throws(ReplyPlayerError) {}
    public func finish() throws(ReplyPlayerError) {}
}

/// Another output, with every reply chunk it is given counted and checksummed on the way in:
/// what the client received of the runtime's reply audio, to compare with what the runtime says
/// it sent (a load test), and the cuts applied.
public final class TallyingReplyOutput: ReplyOutput {
    /// The output the chunks go on to.
    public let output: any ReplyOutput
    /// Every chunk given to ``play(_:)``, in order, refused ones included.
    public private(set) var tally = AudioTally()
    /// Calls to ``cut()``.
    public private(set) var cuts = 0

    public init(wrapping output: any ReplyOutput) {
        self.output = output
    }

    public var name: String { output.name }
    public var sampleRate: SampleRate { output.sampleRate }
    public var framesPlayed: Int { output.framesPlayed }
    public var framesCut: Int { output.framesCut }
    public var chunksQueued: Int { output.chunksQueued }
    public var jitterReport: JitterBufferReport? { output.jitterReport }
    public func markNextChunk(_ token: Int) { output.markNextChunk(token) }
    public func reportHeard(to handler: @escaping @Sendable (_ token: Int, _ delay: Duration) -> Void) { output.reportHeard(to: handler) }

    public func play(_ chunk: AudioChunk) throws(ReplyPlayerError) -> Bool {
        tally.add(chunk.samples)
        return try output.play(chunk)
    }

    /// Forwards to the wrapped output, which reports its own drains.
    public func reportDrained(to handler: @escaping @Sendable (Int) -> Void) {
        output.reportDrained(to: handler)
    }

    public func cut() throws(ReplyPlayerError) {
        cuts += 1
        try output.cut()
    }

    public func replyEnded() throws(ReplyPlayerError) {
        try output.replyEnded()
    }

    public func finish() throws(ReplyPlayerError) {
        try output.finish()
    }
}
