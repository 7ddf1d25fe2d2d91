import VoicePipeCore

/// A simulated room driven as a live pair of devices would be, on the room's one timeline and by
/// hand: before each capture block the speaker is topped up with reply periods (as a render thread
/// writes when its device has room), every period and block gets the stamp a device would give it
/// (with optional timing jitter, as ALSA's delay-based stamps have), and nothing waits.
///
/// ```
///  reply(frame) ─▶ period (speaker rate) ─▶ RoomSimulator.play ─▶ PlayedPeriod + stamp ─▶ onPlayed
///                      (while the speaker holds less than `bufferedPeriods` periods)
///  RoomSimulator.capture(blockFrames) ─▶ microphone, echo, near end + CapturedBlockStamp ─▶ Block
/// ```
/// The timeline is the loudspeaker's clock (the room's); the microphone's clock runs
/// `clockDriftPPM` fast against it, so an aligner fitting both clocks measures that drift.
public struct PacedRoom {
    /// One captured block: the microphone and its parts, and the block's stamp.
    public struct Block {
        public var microphone: [Float]
        public var echo: [Float]
        public var nearEnd: [Float]
        public var stamp: CapturedBlockStamp
    }

    /// The room itself.
    public private(set) var room: RoomSimulator
    /// Speaker frames per period.
    public let periodFrames: Int
    /// Microphone frames per block.
    public let blockFrames: Int
    /// Periods the speaker is kept topped up to before each block.
    public let bufferedPeriods: Int
    /// Largest timing error (seconds, uniform ±) on every stamp's instant.
    public let jitterSeconds: Double
    /// Speaker frames played so far (the reply's frame index of the next period).
    public private(set) var playedFrames = 0
    private var random: SplitMix64
    private var period: [Float]

    /// - Parameters:
    ///   - room: the room, fresh.
    ///   - periodFrames: the speaker's period (240 is 10 ms at 24 kHz).
    ///   - blockFrames: the microphone's block (160 is 10 ms at 16 kHz).
    ///   - bufferedPeriods: how far ahead the speaker is kept.
    ///   - jitterSeconds: ± error on each stamp's instant; 0 for exact stamps.
    ///   - seed: chooses the jitter.
    public init(room: RoomSimulator, periodFrames: Int = 240, blockFrames: Int = 160, bufferedPeriods: Int = 2, jitterSeconds: Double = 0, seed: UInt64 = 7) {
        self.room = room
        self.periodFrames = max(1, periodFrames)
        self.blockFrames = max(1, blockFrames)
        self.bufferedPeriods = max(1, bufferedPeriods)
        self.jitterSeconds = max(0, jitterSeconds)
        random = SplitMix64(seed: seed)
        period = [Float](repeating: 0, count: self.periodFrames)
    }

    /// Tops the speaker up with periods of `reply` (the sample at each reply frame index), hands
    /// each period to `onPlayed` with its stamp (the instant it is heard), then captures one block.
    public mutating func next(reply: (Int) -> Float, onPlayed: (PlayedPeriod) -> Void) -> Block {
        let rate = room.configuration.playbackRate
        while room.bufferedPlaybackFrames < bufferedPeriods * periodFrames {
            for index in 0..<periodFrames { period[index] = reply(playedFrames + index) }
            let heard = period.withUnsafeBufferPointer { room.play($0) }
            let instant = instant(ofSeconds: heard.time + heard.latency)
            period.withUnsafeBufferPointer {
                onPlayed(PlayedPeriod(samples: $0, sampleRate: rate, stamp: PlayedPeriodStamp(framePosition: heard.frame, instant: instant)))
            }
            playedFrames += periodFrames
        }
        let captured = room.capture(frames: blockFrames)
        let stamp = CapturedBlockStamp(framePosition: captured.report.timestamp.frame, instant: instant(ofSeconds: captured.report.timestamp.time))
        return Block(microphone: captured.microphone, echo: captured.echo, nearEnd: captured.nearEnd, stamp: stamp)
    }

    /// Nanoseconds of the timeline at `seconds`, with this stamp's jitter.
    private mutating func instant(ofSeconds seconds: Double) -> Int64 {
        let error = jitterSeconds > 0 ? jitterSeconds * random.symmetric() : 0
        return Int64(((seconds + error) * 1e9).rounded())
    }
}
