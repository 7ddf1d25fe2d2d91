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

    /// The defaults hold one turn open through each bundled speech sample (its quietest voiced
    /// 32 ms frames peak near −38 dBFS, its pauses last under 200 ms) and stay shut in a quiet room
    /// (noise peaks near −60 dBFS).
    public init(openThresholdDBFS: Double = -40, closeThresholdDBFS: Double = -46, hangOver: Duration = .milliseconds(500)) {
        self.openThresholdDBFS = openThresholdDBFS
        self.closeThresholdDBFS = closeThresholdDBFS
        self.hangOver = hangOver
    }
}

/// Decides, frame by frame from each capture frame's peak level, whether someone is speaking.
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

    public init(options: VoiceGateOptions = VoiceGateOptions()) {
        self.options = options
    }

    /// Takes one frame's peak and duration; returns the change it caused, if any.
    public mutating func process(_ level: PeakLevel, duration: Duration) -> Change? {
        let start = audioTime
        audioTime += duration
        let dB = level.isDigitalSilence ? -Double.infinity : level.dBFS
        if !isOpen {
            guard !level.isDigitalSilence, dB >= options.openThresholdDBFS else { return nil }
            isOpen = true
            speechStart = start
            speechEnd = audioTime
            turnPeakDBFS = dB
            return .opened(speechStart: start)
        }
        if !level.isDigitalSilence, dB >= options.closeThresholdDBFS {
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
