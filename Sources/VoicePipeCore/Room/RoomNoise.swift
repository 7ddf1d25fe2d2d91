/// Background noise in a simulated room: what kind, and how loud.
public struct RoomNoise: Sendable, Hashable {
    /// The colour or source of the noise.
    public enum Kind: Sendable, Hashable {
        /// Flat spectrum.
        case white
        /// −3 dB per octave (Paul Kellett's refined filter on white noise).
        case pink
        /// −6 dB per octave (a leaky integrator of white noise, corner at 5 Hz): road and engine rumble.
        case brown
        /// Several speech-shaped talkers summed: each a band of noise (flat from 100 Hz, −6 dB per
        /// octave above 700 Hz) under syllable-long raised-cosine bursts with pauses.
        case babble(talkers: Int)
        /// Samples from a file at the microphone's rate, looped.
        case samples([Float])
    }

    /// Noise levels the room models (RMS, dBFS).
    public static let levels: ClosedRange<Double> = -100...0

    /// The colour or source.
    public var kind: Kind
    /// The long-term RMS level in dB relative to full scale (1.0), so a full-scale sine is −3 dBFS.
    public var levelDBFS: Double

    public init(_ kind: Kind, levelDBFS: Double) {
        self.kind = kind
        self.levelDBFS = levelDBFS
    }
}

/// Makes a stream of ``RoomNoise`` at its level, sample by sample, deterministic from a seed.
///
/// The level is set by measuring: at construction a copy of the generator runs for ten seconds and
/// the gain makes that stretch's RMS the asked level (file samples are measured whole).
public struct RoomNoiseGenerator: Sendable {
    private enum Source: Sendable {
        case white
        case pink(PinkState)
        case brown(previous: Double, pole: Double)
        case babble([BabbleTalker])
        case samples([Float], position: Int)
    }

    private struct PinkState: Sendable {
        var b0 = 0.0, b1 = 0.0, b2 = 0.0, b3 = 0.0, b4 = 0.0, b5 = 0.0, b6 = 0.0
    }

    /// One talker of babble: shaped noise under syllable bursts.
    private struct BabbleTalker: Sendable {
        var lowPass = 0.0
        var highPassIn = 0.0
        var highPassOut = 0.0
        /// Frames left in the current syllable or pause.
        var remaining = 0
        var voiced = false
        /// The raised-cosine envelope's oscillator, advanced by rotation.
        var cosine = 1.0
        var sine = 0.0
        var stepCosine = 1.0
        var stepSine = 0.0
    }

    private var source: Source
    private var random: RoomRandom
    private var gain: Double
    private let rate: Double
    /// Babble's one-pole low-pass coefficient (700 Hz) and high-pass pole (100 Hz).
    private let babbleLowPass: Double
    private let babbleHighPass: Double

    /// A generator for `noise` at `sampleRate`.
    /// - Throws: ``RoomError/outOfRange(option:value:range:)`` for a level or talker count outside
    ///   its range; ``RoomError/unusableSamples(_:)`` for empty, silent or non-finite file samples.
    public init(_ noise: RoomNoise, sampleRate: SampleRate, seed: UInt64) throws(RoomError) {
        try RoomError.check(rate: sampleRate)
        try RoomError.check("noise level (dBFS)", noise.levelDBFS, in: RoomNoise.levels)
        rate = sampleRate.hertz
        random = RoomRandom(seed: seed)
        gain = 1
        babbleLowPass = 1 - Elementary.exp(-2 * Double.pi * 700 / sampleRate.hertz)
        babbleHighPass = Elementary.exp(-2 * Double.pi * 100 / sampleRate.hertz)
        switch noise.kind {
        case .white:
            source = .white
        case .pink:
            source = .pink(PinkState())
        case .brown:
            source = .brown(previous: 0, pole: 1 - 2 * Double.pi * 5 / rate)
        case .babble(let talkers):
            try RoomError.check("babble talker count", Double(talkers), in: 1...32)
            source = .babble(Array(repeating: BabbleTalker(), count: talkers))
        case .samples(let samples):
            guard !samples.isEmpty else { throw .unusableSamples("the noise file has no samples") }
            guard samples.allSatisfy(\.isFinite) else { throw .unusableSamples("the noise file has a sample that is not a finite number") }
            source = .samples(samples, position: 0)
        }
        let target = Elementary.exp(noise.levelDBFS / 20 * Elementary.log(10))
        let measured: Double
        if case .samples(let samples, _) = source {
            var sum = 0.0
            for sample in samples { sum += Double(sample) * Double(sample) }
            measured = (sum / Double(samples.count)).squareRoot()
        } else {
            var probe = self
            let frames = Int(10 * rate)
            var sum = 0.0
            for _ in 0..<frames {
                let value = probe.nextRaw()
                sum += value * value
            }
            measured = (sum / Double(frames)).squareRoot()
        }
        guard measured > 0 else { throw .unusableSamples("the noise is silent, so no level can be set") }
        gain = target / measured
    }

    /// The next sample at the noise's level.
    @inline(__always)
    public mutating func next() -> Float {
        Float(nextRaw() * gain)
    }

    /// Fills `output` with the next samples.
    public mutating func fill(_ output: UnsafeMutableBufferPointer<Float>) {
        for index in output.indices { output[index] = next() }
    }

    private mutating func nextRaw() -> Double {
        switch source {
        case .white:
            return random.symmetric()
        case .pink(var s):
            let white = random.symmetric()
            s.b0 = 0.99886 * s.b0 + white * 0.0555179
            s.b1 = 0.99332 * s.b1 + white * 0.0750759
            s.b2 = 0.96900 * s.b2 + white * 0.1538520
            s.b3 = 0.86650 * s.b3 + white * 0.3104856
            s.b4 = 0.55000 * s.b4 + white * 0.5329522
            s.b5 = -0.7616 * s.b5 - white * 0.0168980
            let pink = s.b0 + s.b1 + s.b2 + s.b3 + s.b4 + s.b5 + s.b6 + white * 0.5362
            s.b6 = white * 0.115926
            source = .pink(s)
            return pink
        case .brown(let previous, let pole):
            let value = pole * previous + random.symmetric()
            source = .brown(previous: value, pole: pole)
            return value
        case .babble(var talkers):
            source = .white
            var sum = 0.0
            for index in talkers.indices {
                sum += nextBabble(&talkers[index])
            }
            source = .babble(talkers)
            return sum
        case .samples(let samples, let position):
            source = .white
            let value = Double(samples[position])
            source = .samples(samples, position: position + 1 == samples.count ? 0 : position + 1)
            return value
        }
    }

    /// One talker's next sample: a syllable (120–280 ms raised cosine) or a pause (40–400 ms).
    private mutating func nextBabble(_ talker: inout BabbleTalker) -> Double {
        if talker.remaining == 0 {
            talker.voiced = !talker.voiced || random.unit() < 0.2
            let seconds = talker.voiced ? 0.12 + 0.16 * random.unit() : 0.04 + 0.36 * random.unit()
            talker.remaining = max(1, Int(seconds * rate))
            let step = 2 * Double.pi / Double(talker.remaining)
            talker.cosine = 1
            talker.sine = 0
            talker.stepCosine = Elementary.cos(step)
            talker.stepSine = Elementary.sin(step)
        }
        talker.remaining -= 1
        let white = random.symmetric()
        talker.lowPass += babbleLowPass * (white - talker.lowPass)
        talker.highPassOut = babbleHighPass * (talker.highPassOut + talker.lowPass - talker.highPassIn)
        talker.highPassIn = talker.lowPass
        let envelope = talker.voiced ? 0.5 * (1 - talker.cosine) : 0
        let cosine = talker.cosine * talker.stepCosine - talker.sine * talker.stepSine
        talker.sine = talker.sine * talker.stepCosine + talker.cosine * talker.stepSine
        talker.cosine = cosine
        return envelope * talker.highPassOut
    }
}
