import Foundation
import VoicePipeCore

/// Exact test signals: tones, band-limited pulses, sweeps and reproducible noise.
public enum Signals {
    /// Peak amplitude of a level in dBFS (full scale 1.0).
    public static func amplitude(dBFS: Double) -> Double { pow(10, dBFS / 20) }

    /// A sine tone, `frames` samples long: `amplitude · sin(ω·n + phase)` with
    /// `ω = 2π · frequency / sampleRate` rounded once.
    ///
    /// Implementation notes: the phase is `ω·n`, not `2π·frequency·n / sampleRate`. The two differ
    /// in the last bits of the phase, which is far below any threshold here, but the benchmark's
    /// alias figures for tones at a simple fraction of the rate (16 kHz at 48 kHz, whose samples
    /// repeat every 3) sit at the Float32 rounding floor of the input and move by tens of dB with
    /// those bits; this is the form its recorded figures were measured with.
    public static func sine(frequency: Double, amplitude: Double, sampleRate: Double, frames: Int, phase: Double = 0) -> [Double] {
        let omega = 2 * Double.pi * frequency / sampleRate
        return (0..<frames).map { amplitude * sin(omega * Double($0) + phase) }
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

    /// A deterministic stand-in for programme material (the benchmark's throughput signal): five
    /// speech-band partials (180 Hz to 5.1 kHz) under a slowly wandering envelope, plus white
    /// noise (uniform, ±0.01): about −18.5 dBFS RMS with peaks below −6 dBFS; never silent, never
    /// clipping, no denormals. Each channel has its own phases, envelope rate and noise, so a
    /// downmix is not a copy of one channel.
    /// - Parameters:
    ///   - sampleRate: samples per second.
    ///   - frames: length in samples.
    ///   - channel: which channel's variant (0, 1, …).
    /// - Returns: samples at full scale 1.0, the same for the same arguments.
    public static func program(sampleRate: Double, frames: Int, channel: Int) -> [Double] {
        let partials: [(frequency: Double, amplitude: Double)] = [(180, 0.20), (440, 0.12), (1_250, 0.08), (2_900, 0.05), (5_100, 0.03)]
        let noise = noise(amplitude: 0.01, frames: frames, seed: 0x5EED + UInt64(channel))
        return (0..<frames).map { n in
            let t = Double(n) / sampleRate
            let envelope = 0.6 + 0.4 * sin(2 * .pi * (0.7 + 0.2 * Double(channel)) * t)
            var value = 0.0
            for (k, partial) in partials.enumerated() {
                value += partial.amplitude * sin(2 * .pi * partial.frequency * t + Double(k + channel))
            }
            return value * envelope + noise[n]
        }
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

/// SplitMix64: a tiny, fast, reproducible generator for test noise and random cuts (the room
/// simulator's generator, under the name the tests know).
public typealias SplitMix64 = RoomRandom

extension RoomRandom {
    /// A double in [0, 1).
    public mutating func nextUnit() -> Double { unit() }
}
