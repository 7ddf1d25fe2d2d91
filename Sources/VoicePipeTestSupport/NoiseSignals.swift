import Foundation

/// Coloured and speech-like noise at an exact RMS level, the same for the same seed: what a voice
/// gate meets in a car (brown), an office or a fan (pink) and a canteen (babble).
extension Signals {
    /// Scales `samples` so their RMS over the whole buffer is `rms` (full scale 1.0).
    public static func normalised(_ samples: [Double], rms: Double) -> [Double] {
        let current = Measurement.rms(samples)
        guard current > 0 else { return samples }
        return samples.map { $0 * rms / current }
    }

    /// Pink noise (−3 dB per octave): uniform white noise through Paul Kellet's refined filter,
    /// whose seven poles hold the slope from a few hertz to a few kilohertz at 16 kHz.
    /// - Parameters:
    ///   - rms: the RMS of the result over its length (full scale 1.0).
    ///   - frames: length in samples.
    ///   - seed: the white noise's seed.
    public static func pinkNoise(rms: Double, frames: Int, seed: UInt64) -> [Double] {
        let white = noise(amplitude: 1, frames: frames, seed: seed)
        var b = [Double](repeating: 0, count: 7)
        let pink = white.map { w in
            b[0] = 0.99886 * b[0] + w * 0.0555179
            b[1] = 0.99332 * b[1] + w * 0.0750759
            b[2] = 0.96900 * b[2] + w * 0.1538520
            b[3] = 0.86650 * b[3] + w * 0.3104856
            b[4] = 0.55000 * b[4] + w * 0.5329522
            b[5] = -0.7616 * b[5] - w * 0.0168980
            let value = b[0] + b[1] + b[2] + b[3] + b[4] + b[5] + b[6] + w * 0.5362
            b[6] = w * 0.115926
            return value
        }
        return normalised(pink, rms: rms)
    }

    /// Brown (red) noise (−6 dB per octave): uniform white noise through a leaky integrator whose
    /// corner sits near 5 Hz at 16 kHz, so it rumbles like road noise without drifting off.
    /// - Parameters:
    ///   - rms: the RMS of the result over its length (full scale 1.0).
    ///   - frames: length in samples.
    ///   - seed: the white noise's seed.
    public static func brownNoise(rms: Double, frames: Int, seed: UInt64) -> [Double] {
        var state = 0.0
        let brown = noise(amplitude: 1, frames: frames, seed: seed).map { w in
            state = 0.998 * state + w
            return state
        }
        return normalised(brown, rms: rms)
    }

    /// Babble: `talkers` copies of a speech recording talking over each other, each looping from
    /// its own random start with its own gain (±3 dB), digital silence left out, so the noise has
    /// speech's spectrum and its syllable-rate swings.
    /// - Parameters:
    ///   - speech: one talker's recording (full scale 1.0); its exact zeros are dropped first.
    ///   - talkers: how many voices (6 or more sounds like a crowd rather than a conversation).
    ///   - rms: the RMS of the result over its length.
    ///   - frames: length in samples.
    ///   - seed: chooses the starts and gains.
    /// - Returns: `frames` samples; silence if `speech` has no non-zero sample.
    public static func babble(from speech: [Double], talkers: Int, rms: Double, frames: Int, seed: UInt64) -> [Double] {
        let voiced = speech.filter { $0 != 0 }
        guard !voiced.isEmpty, talkers > 0 else { return [Double](repeating: 0, count: frames) }
        var generator = SplitMix64(seed: seed)
        var mix = [Double](repeating: 0, count: frames)
        for _ in 0..<talkers {
            let start = Int(generator.nextUnit() * Double(voiced.count))
            let gain = amplitude(dBFS: 6 * generator.nextUnit() - 3)
            for n in 0..<frames { mix[n] += gain * voiced[(start + n) % voiced.count] }
        }
        return normalised(mix, rms: rms)
    }
}
