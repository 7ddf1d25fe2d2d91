import Foundation

/// Exact test signals: tones, band-limited pulses, sweeps and reproducible noise.
public enum Signals {
    /// Peak amplitude of a level in dBFS (full scale 1.0).
    public static func amplitude(dBFS: Double) -> Double { pow(10, dBFS / 20) }

    /// A sine tone, `frames` samples long.
    public static func sine(frequency: Double, amplitude: Double, sampleRate: Double, frames: Int, phase: Double = 0) -> [Double] {
        (0..<frames).map { amplitude * sin(2 * .pi * frequency * Double($0) / sampleRate + phase) }
    }

    /// A band-limited pulse: a Blackman-windowed sinc of bandwidth `bandwidth` Hz centred at
    /// `time` seconds, peak 1 × `amplitude`. Its energy lies below `bandwidth`, so a resampler that
    /// passes that band must reproduce it exactly, centred at the same time.
    public static func bandLimitedPulse(at time: Double, bandwidth: Double, amplitude: Double, sampleRate: Double, frames: Int, halfWidth: Double = 0.004) -> [Double] {
        (0..<frames).map { n in
            amplitude * pulseShape(Double(n) / sampleRate - time, bandwidth: bandwidth, halfWidth: halfWidth)
        }
    }

    /// The pulse of ``bandLimitedPulse(at:bandwidth:amplitude:sampleRate:frames:halfWidth:)`` at
    /// `t` seconds from its centre, peak 1.
    public static func pulseShape(_ t: Double, bandwidth: Double, halfWidth: Double = 0.004) -> Double {
        guard abs(t) < halfWidth else { return 0 }
        let x = 2 * bandwidth * t
        let sinc = x == 0 ? 1 : sin(.pi * x) / (.pi * x)
        let w = 0.42 + 0.5 * cos(.pi * t / halfWidth) + 0.08 * cos(2 * .pi * t / halfWidth)
        return sinc * w
    }

    /// A logarithmic sine sweep from `from` to `to` Hz over `frames` samples.
    public static func sweep(from: Double, to: Double, amplitude: Double, sampleRate: Double, frames: Int) -> [Double] {
        let duration = Double(frames) / sampleRate
        let k = log(to / from)
        return (0..<frames).map { n in
            let t = Double(n) / sampleRate
            return amplitude * sin(2 * .pi * from * duration / k * (exp(t / duration * k) - 1))
        }
    }

    /// Uniform white noise in [−amplitude, amplitude], the same for the same seed.
    public static func noise(amplitude: Double, frames: Int, seed: UInt64) -> [Double] {
        var generator = SplitMix64(seed: seed)
        return (0..<frames).map { _ in amplitude * (2 * generator.nextUnit() - 1) }
    }

    /// Interleaves channels of equal length.
    public static func interleave<T>(_ channels: [[T]]) -> [T] {
        guard let first = channels.first else { return [] }
        var out = [T]()
        out.reserveCapacity(first.count * channels.count)
        for frame in first.indices {
            for channel in channels { out.append(channel[frame]) }
        }
        return out
    }

    /// Rounds full-scale-1.0 samples to Int16 (×32768, nearest-even, saturating).
    public static func int16(_ samples: [Double]) -> [Int16] {
        samples.map { x in
            let scaled = (x * 32768).rounded(.toNearestOrEven)
            return Int16(max(-32768, min(32767, scaled)))
        }
    }
}

/// SplitMix64: a tiny, fast, reproducible generator for test noise and random cuts.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A double in [0, 1).
    public mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
