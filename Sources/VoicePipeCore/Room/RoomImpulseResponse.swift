/// What the room does to sound between the loudspeaker and the microphone: a finite impulse response
/// at the microphone's rate.
///
/// A generated one is a direct path and a reverberant tail:
///
/// ```
///  gain
///  1/d ┤        █  direct path: frame round(d / 343 m/s · rate), gain 1/d (0 dB at 1 m)
///      │        █▇▆▅▄▃▃▂▂▂▁▁▁▁▁  tail: Gaussian noise under an envelope falling 60 dB over T60,
///    0 ┼────────┴──────────────▶ frames   from the frame after the direct path to T60 after it
///       0      direct
/// ```
///
/// The tail's energy equals that of the direct path at 1 m (a critical distance of 1 m), whatever
/// the distance: further away, the room's reverberation matters more, as in a real room. A
/// measured response (read from a WAV file in VoicePipeIO) is taken as samples and a rate.
public struct RoomImpulseResponse: Sendable, Hashable {
    /// The speed of sound the direct-path delay is computed with, metres per second.
    public static let speedOfSound = 343.0
    /// Reverberation times (T60, seconds) a generated response models.
    public static let reverberationTimes: ClosedRange<Double> = 0.05...2
    /// Speaker–microphone distances (metres) a generated response models.
    public static let distances: ClosedRange<Double> = 0.05...20
    /// The longest measured response taken, in seconds.
    public static let maximumDuration = 4.0

    /// The response, one sample per frame at ``sampleRate``.
    public let samples: [Float]
    /// The rate of ``samples``.
    public let sampleRate: SampleRate
    /// The frame of the direct path: the sound's first arrival (for a measured response, its
    /// largest magnitude).
    public private(set) var directPathFrame: Int

    /// Generates a response from a reverberation time and a distance, the same for the same seed.
    /// - Parameters:
    ///   - reverberationTime: T60 in seconds (0.05 ... 2): the time the tail takes to fall 60 dB.
    ///   - distance: speaker to microphone in metres (0.05 ... 20).
    ///   - sampleRate: the microphone's rate.
    ///   - seed: chooses the tail's noise.
    /// - Throws: ``RoomError/outOfRange(option:value:range:)`` or ``RoomError/unsupportedRate(_:)``.
    public init(reverberationTime: Double, distance: Double, sampleRate: SampleRate, seed: UInt64 = 1) throws(RoomError) {
        try RoomError.check("reverberation time (s)", reverberationTime, in: Self.reverberationTimes)
        try RoomError.check("speaker distance (m)", distance, in: Self.distances)
        try RoomError.check(rate: sampleRate)
        let rate = sampleRate.hertz
        let direct = Int((distance / Self.speedOfSound * rate).rounded())
        let tailFrames = Int((reverberationTime * rate).rounded(.up))
        var samples = [Float](repeating: 0, count: direct + 1 + tailFrames)
        samples[direct] = Float(1 / distance)
        // Amplitude falls 60 dB (a factor 1000) over T60 frames: 10^(-3 m / (T60 rate)) per frame m.
        let framesPerT60 = reverberationTime * rate
        let decay = Elementary.exp(-3 * Elementary.log(10) / framesPerT60)
        // Tail energy a² Σ decay^(2m) = 1 (the direct path's at 1 m): a² = 1 − decay².
        var envelope = (1 - decay * decay).squareRoot()
        var random = RoomRandom(seed: seed)
        for m in 1...tailFrames {
            envelope *= decay
            samples[direct + m] = Float(envelope * random.gaussian())
        }
        self.samples = samples
        self.sampleRate = sampleRate
        self.directPathFrame = direct
    }

    /// Takes a measured response (read elsewhere, at the microphone's rate).
    /// - Throws: ``RoomError/unusableImpulseResponse(_:)`` for no samples, a non-finite sample,
    ///   silence or more than ``maximumDuration``; ``RoomError/unsupportedRate(_:)``.
    public init(samples: [Float], sampleRate: SampleRate) throws(RoomError) {
        try RoomError.check(rate: sampleRate)
        guard !samples.isEmpty else { throw .unusableImpulseResponse("it has no samples") }
        guard Double(samples.count) <= Self.maximumDuration * sampleRate.hertz else {
            throw .unusableImpulseResponse("it lasts \(Double(samples.count) / sampleRate.hertz) s, longer than the \(Self.maximumDuration) s a room takes")
        }
        var peak: Float = 0
        var peakFrame = 0
        for (index, sample) in samples.enumerated() {
            guard sample.isFinite else { throw .unusableImpulseResponse("sample \(index) is not a finite number") }
            if sample.magnitude > peak {
                peak = sample.magnitude
                peakFrame = index
            }
        }
        guard peak > 0 else { throw .unusableImpulseResponse("it is silent") }
        self.samples = samples
        self.sampleRate = sampleRate
        self.directPathFrame = peakFrame
    }

    /// The same response at `rate` (a measured one read at 48 kHz, for a 16 kHz microphone):
    /// band-limited by ``FractionalResampler`` and scaled by the rate ratio, so a tone's gain
    /// through it stays the same; the direct path moves to its frame at the new rate.
    /// - Throws: ``RoomError/unsupportedRate(_:)``.
    public func resampled(to rate: SampleRate) throws(RoomError) -> RoomImpulseResponse {
        try RoomError.check(rate: rate)
        if rate == sampleRate { return self }
        let resampler = FractionalResampler(inputRate: sampleRate.hertz, outputRate: rate.hertz)
        let reach = resampler.reach
        var padded = [Float](repeating: 0, count: samples.count + 2 * reach + 2)
        for (index, sample) in samples.enumerated() { padded[reach + index] = sample }
        let count = max(1, Int((Double(samples.count) / resampler.step).rounded(.up)))
        let scale = Float(resampler.step)
        var output = [Float](repeating: 0, count: count)
        padded.withUnsafeBufferPointer { padded in
            for frame in 0..<count {
                output[frame] = scale * resampler.value(at: resampler.position(ofOutputFrame: frame), input: padded, base: -reach)
            }
        }
        var result = try RoomImpulseResponse(samples: output, sampleRate: rate)
        result.directPathFrame = Int((Double(directPathFrame) / resampler.step).rounded())
        return result
    }

    /// The response's gain for white noise (its energy, Σh²) in dB.
    public var energyDB: Double {
        var sum = 0.0
        for sample in samples { sum += Double(sample) * Double(sample) }
        return 10 * Elementary.log10(sum)
    }

    /// The response's length in seconds.
    public var duration: Double { Double(samples.count) / sampleRate.hertz }
}
