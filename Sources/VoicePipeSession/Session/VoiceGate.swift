import VoicePipeCore

/// When a voice gate opens and closes.
public struct VoiceGateOptions: Sendable, Hashable {
    /// A frame whose peak reaches this level opens the gate.
    public var openThresholdDBFS: Double
    /// Once open, frames below this level count toward closing.
    public var closeThresholdDBFS: Double
    /// How long the level must stay below the close threshold before the gate closes: pauses
    /// between words shorter than this stay inside the turn.
    public var hangOver: Duration
    /// How the gate follows the noise floor, or nil for the fixed thresholds alone.
    public var noise: NoiseAdaptation?

    /// The defaults hold one turn open through each bundled speech sample (its quietest voiced
    /// 32 ms frames peak near −38 dBFS, its pauses last under 200 ms) and stay shut in a quiet room
    /// (noise peaks near −60 dBFS). They adapt to the noise floor (``NoiseAdaptation``'s
    /// defaults), which in a quiet room changes nothing.
    public init(openThresholdDBFS: Double = -40, closeThresholdDBFS: Double = -46, hangOver: Duration = .milliseconds(500), noise: NoiseAdaptation? = NoiseAdaptation()) {
        self.openThresholdDBFS = openThresholdDBFS
        self.closeThresholdDBFS = closeThresholdDBFS
        self.hangOver = hangOver
        self.noise = noise
    }

    /// Today's fixed gate: the peak thresholds and nothing else.
    public static let fixed = VoiceGateOptions(noise: nil)
}

/// How a voice gate adapts to noise: beside the fixed peak thresholds (which stay the floor of
/// what counts as voice), a frame's speech-band level (``SpeechBandMeter``) must stand a margin
/// above the noise floor (``NoiseFloorTracker``) to open the gate, and a smaller one to keep it open.
public struct NoiseAdaptation: Sendable, Hashable {
    /// Opening needs the speech-band level this far above the floor.
    public var openMarginDB: Double
    /// Staying open needs the speech-band level this far above the floor.
    public var closeMarginDB: Double
    /// How far back the floor looks: longer than the longest run of speech without a gap,
    /// short enough that a new noise is learnt in seconds.
    public var floorWindow: Duration
    /// Which fraction of the window's frames lies below the floor (``NoiseFloorTracker``).
    public var floorPercentile: Double
    /// Frames that hold a turn open are kept out of the floor until the turn has lasted this
    /// long; after it they count too, so a noise that started loud enough to open the gate is
    /// learnt and the gate closes. Well past a turn of speech, short pauses included.
    public var learnInTurnsAfter: Duration
    /// The gate adapts only once the noise's frame peaks (their floor, tracked like the level's)
    /// come within this of the close threshold: quieter noise cannot hold the fixed gate open, so
    /// there the fixed thresholds alone decide, exactly as without adaptation.
    public var noisePeakMarginDB: Double
    /// A speech-band floor below this is no room noise but digital silence, dither or a synthetic
    /// signal: there too the fixed thresholds alone decide.
    public var quietestFloorDBFS: Double
    /// Noise whose frames nearly all peak above this (the floor of their peaks) is no room noise
    /// but a steady signal there from the first frame, a tone or music: the fixed thresholds decide.
    public var loudestNoisePeakDBFS: Double
    /// The floor learns the frames' speech-band power averaged over about this long (one pole),
    /// so the dips where every babbling talker pauses at once do not become the floor; zero
    /// learns each frame as it is.
    public var floorSmoothing: Duration
    /// A floor is known once it has heard this much audio. Before, every frame teaches it, an
    /// open turn's too: someone who starts speaking before the noise was heard still gets a floor
    /// from the gaps in their own speech, and the turn ends when the speech does.
    public var floorKnownAfter: Duration

    /// The defaults are measured (`VoiceGateInNoiseTests` over five noise draws,
    /// `VoiceGateEarlySpeechTests`): 12 dB to open and 9 dB to stay open over the 10th percentile
    /// of 3 s of the 100 ms power average count every turn at 20 and 10 dB SNR in brown, pink and
    /// babble noise and at 5 dB in brown and pink; babble at 5 dB is right in one draw of five.
    /// The minimum instead of a percentile, or 8 dB to stay open, lost babble turns; the frames
    /// themselves instead of their average kept the kitchen preset's babble turns open.
    public init(openMarginDB: Double = 12, closeMarginDB: Double = 9, floorWindow: Duration = .seconds(3), floorPercentile: Double = 0.1, learnInTurnsAfter: Duration = .seconds(10), noisePeakMarginDB: Double = 12, quietestFloorDBFS: Double = -90,
                loudestNoisePeakDBFS: Double = -12, floorKnownAfter: Duration = .seconds(1),
                floorSmoothing: Duration = .milliseconds(100)) {
        self.openMarginDB = openMarginDB
        self.closeMarginDB = closeMarginDB
        self.floorWindow = floorWindow
        self.floorPercentile = floorPercentile
        self.learnInTurnsAfter = learnInTurnsAfter
        self.noisePeakMarginDB = noisePeakMarginDB
        self.quietestFloorDBFS = quietestFloorDBFS
        self.loudestNoisePeakDBFS = loudestNoisePeakDBFS
        self.floorKnownAfter = floorKnownAfter
        self.floorSmoothing = floorSmoothing
    }
}

/// Decides, frame by frame from each capture frame's peak level (and, when it adapts to noise,
/// its speech-band level against the noise floor), whether someone is speaking.
///
/// ```
///  frame ─┬─ peak ─────────────────────────────▶ ≥ open / close threshold (dBFS) ─┐
///         └─ speech-band RMS ─┬───────────────▶ ≥ floor + open / close margin ───┴─ both ─▶ voice
///                             └▶ 100 ms average ▶ noise floor (10th percentile of the last 3 s)
/// ```
/// A frame counts as voice only when both hold, and the floor comes into it only once noise
/// peaks within ``NoiseAdaptation/noisePeakMarginDB`` of the close threshold: in a quiet room the
/// gate is exactly the fixed one, and in a noisy one the floor sets the bar. Fed only a peak
/// (``process(_:duration:)``), the gate uses the fixed thresholds alone.
///
/// Audio time is counted from the frames themselves (their durations), not from a clock, so the
/// gate gives the same answer for a file sent as fast as possible and for a live microphone.
/// Digital silence never opens it, whatever the thresholds.
public struct VoiceGate: Sendable, Hashable {
    /// A change of the gate, with where it happened in audio time (since the first frame).
    public enum Change: Sendable, Hashable {
        /// Voice started at `speechStart` (the start of the first loud frame).
        case opened(speechStart: Duration)
        /// The turn ended: the last frame above the close threshold ended at `speechEnd`; the
        /// hang-over ran out at `closedAt`.
        case closed(speechEnd: Duration, closedAt: Duration)
    }

    public let options: VoiceGateOptions
    /// True while voice is present (from opening until the hang-over runs out).
    public private(set) var isOpen = false
    /// Audio seen so far.
    public private(set) var audioTime: Duration = .zero
    /// Where the current (or last) stretch of voice started and last rose above the close threshold.
    public private(set) var speechStart: Duration = .zero
    public private(set) var speechEnd: Duration = .zero
    /// The loudest frame of the current (or last) turn.
    public private(set) var turnPeakDBFS = -Double.infinity
    /// The last frame's speech-band level in dBFS (−∞ until a frame with samples came).
    public private(set) var speechBandDBFS = -Double.infinity
    private var meter = SpeechBandMeter()
    /// The speech-band power averaged over ``NoiseAdaptation/floorSmoothing`` (nil before a frame).
    private var smoothedPower: Double?
    private var floor: NoiseFloorTracker
    private var peakFloor: NoiseFloorTracker

    /// The noise floor the gate measures against, in speech-band dBFS: +∞ before any frame with
    /// samples, −∞ after digital silence.
    public var noiseFloorDBFS: Double { floor.floorDBFS }

    public init(options: VoiceGateOptions = VoiceGateOptions()) {
        self.options = options
        floor = NoiseFloorTracker(window: options.noise?.floorWindow ?? .seconds(3), percentile: options.noise?.floorPercentile ?? 0.1)
        peakFloor = floor
    }

    /// Takes one frame's samples and peak; returns the change it caused, if any. With
    /// ``VoiceGateOptions/noise`` set, the samples' speech-band level is measured against the
    /// noise floor; the floor learns from every frame except those that hold an open turn open
    /// (so a long utterance does not become the floor), and from those too before it has heard
    /// ``NoiseAdaptation/floorKnownAfter`` (so speech from the first moment gets a floor from its
    /// own gaps) and once the turn has lasted ``NoiseAdaptation/learnInTurnsAfter`` (so a noise
    /// that starts loud enough to open the gate is learnt and the gate closes). Without it, only
    /// the peak counts.
    /// - Parameters:
    ///   - samples: the frame (as sent), whose count and `sampleRate` give its duration.
    ///   - level: the frame's peak, from the converter.
    ///   - sampleRate: the frames' rate.
    ///   - learnsFloor: false while the frame is no measure of the room: while a reply plays,
    ///     the microphone hears the reply, or what echo control left of it 20–40 dB down, and a
    ///     floor learnt there would hold the next turn open once the room's noise is back.
    public mutating func process<S: Collection>(_ samples: S, level: PeakLevel, sampleRate: SampleRate, learnsFloor: Bool = true) -> Change? where S.Element == Int16 {
        let duration = sampleRate.duration(ofFrames: samples.count)
        guard let noise = options.noise else { return decide(level, duration: duration, margin: nil) }
        let peakDBFS = level.isDigitalSilence ? -Double.infinity : level.dBFS
        speechBandDBFS = meter.measure(samples, sampleRate: sampleRate)
        let smoothedDBFS = smooth(speechBandDBFS, duration: duration, over: noise.floorSmoothing)
        let holdsTurn = isOpen && floor.heard >= noise.floorKnownAfter && audioTime - speechStart < noise.learnInTurnsAfter
            && !level.isDigitalSilence && peakDBFS >= options.closeThresholdDBFS && margin(noise)?.keep ?? true
        if learnsFloor, !holdsTurn {
            floor.observe(smoothedDBFS, duration: duration)
            peakFloor.observe(peakDBFS, duration: duration)
        }
        return decide(level, duration: duration, margin: margin(noise))
    }

    /// The frame's speech-band level averaged in power with the frames before it over `time`.
    private mutating func smooth(_ levelDBFS: Double, duration: Duration, over time: Duration) -> Double {
        guard time > .zero, duration > .zero, levelDBFS.isFinite || levelDBFS == -.infinity else { return levelDBFS }
        let power = levelDBFS == -.infinity ? 0 : Elementary.exp(levelDBFS / 10 * Elementary.log(10))
        let keep = Elementary.exp(-(duration / time))
        let average = smoothedPower.map { keep * $0 + (1 - keep) * power } ?? power
        smoothedPower = average
        return average > 0 ? 10 * Elementary.log10(average) : -.infinity
    }

    /// Whether the last frame's speech-band level clears the open and keep margins over the
    /// floor; nil while the floor says the room is quiet (the fixed thresholds alone decide).
    private func margin(_ noise: NoiseAdaptation) -> (open: Bool, keep: Bool)? {
        guard floor.floorDBFS >= noise.quietestFloorDBFS,
              peakFloor.floorDBFS >= options.closeThresholdDBFS - noise.noisePeakMarginDB,
              peakFloor.floorDBFS <= noise.loudestNoisePeakDBFS else { return nil }
        let aboveFloor = speechBandDBFS - floor.floorDBFS
        return (open: aboveFloor >= noise.openMarginDB, keep: aboveFloor >= noise.closeMarginDB)
    }

    /// Takes one frame's peak and duration; returns the change it caused, if any. The fixed
    /// thresholds alone decide: without samples there is no noise floor to follow.
    public mutating func process(_ level: PeakLevel, duration: Duration) -> Change? {
        decide(level, duration: duration, margin: nil)
    }

    private mutating func decide(_ level: PeakLevel, duration: Duration, margin: (open: Bool, keep: Bool)?) -> Change? {
        let start = audioTime
        audioTime += duration
        let dB = level.isDigitalSilence ? -Double.infinity : level.dBFS
        if !isOpen {
            guard !level.isDigitalSilence, dB >= options.openThresholdDBFS, margin?.open ?? true else { return nil }
            isOpen = true
            speechStart = start
            speechEnd = audioTime
            turnPeakDBFS = dB
            return .opened(speechStart: start)
        }
        if !level.isDigitalSilence, dB >= options.closeThresholdDBFS, margin?.keep ?? true {
            speechEnd = audioTime
            turnPeakDBFS = max(turnPeakDBFS, dB)
            return nil
        }
        guard audioTime - speechEnd >= options.hangOver else { return nil }
        isOpen = false
        return .closed(speechEnd: speechEnd, closedAt: audioTime)
    }

    /// Opens the gate at the current audio time because someone else heard voice (the runtime's
    /// interruption); it closes after the hang-over of quiet like any other opening.
    public mutating func open() {
        guard !isOpen else { return }
        isOpen = true
        speechStart = audioTime
        speechEnd = audioTime
        turnPeakDBFS = -Double.infinity
    }

    /// Ends an open turn at once (the input ended): returns the closing change, or nil when shut.
    public mutating func close() -> Change? {
        guard isOpen else { return nil }
        isOpen = false
        return .closed(speechEnd: speechEnd, closedAt: audioTime)
    }
}
