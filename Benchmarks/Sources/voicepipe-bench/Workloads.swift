import Glibc

/// The stream conversions every resampler contender runs: the same input bytes for everyone.
struct Workload: Hashable {
    enum SampleFormat: String, Hashable {
        case float32 = "Float32"
        case int16 = "Int16"

        var byteCount: Int { self == .float32 ? 4 : 2 }
    }

    /// Short id used in names and tables: C1, C2, C3, P1.
    let id: String
    let inputRate: Int
    let channels: Int
    let format: SampleFormat
    let outputRate: Int
    /// Playback (Int16 → Float32 at the device rate) rather than capture (→ 16 kHz mono Int16).
    let isPlayback: Bool

    var bytesPerFrame: Int { channels * format.byteCount }
    var title: String {
        let rate = { (hz: Int) in hz % 1000 == 0 ? "\(hz / 1000) kHz" : "\(Double(hz) / 1000) kHz" }
        let layout = channels == 1 ? "mono" : "stereo"
        let output = isPlayback ? "\(rate(outputRate)) mono Float32 (playback)" : "\(rate(outputRate)) mono Int16"
        return "\(id): \(rate(inputRate)) \(layout) \(format.rawValue) → \(output)"
    }

    /// Input frames in a chunk of `milliseconds`.
    func chunkFrames(milliseconds: Int) -> Int { inputRate * milliseconds / 1000 }

    static let c1 = Workload(id: "C1", inputRate: 48_000, channels: 2, format: .float32, outputRate: 16_000, isPlayback: false)
    static let c2 = Workload(id: "C2", inputRate: 44_100, channels: 2, format: .int16, outputRate: 16_000, isPlayback: false)
    static let c3 = Workload(id: "C3", inputRate: 8_000, channels: 1, format: .int16, outputRate: 16_000, isPlayback: false)
    static let p1 = Workload(id: "P1", inputRate: 24_000, channels: 1, format: .int16, outputRate: 48_000, isPlayback: true)
    static let all = [c1, c2, c3, p1]

    /// Chunk durations every throughput cell is streamed in.
    static let chunkMilliseconds = [10, 20, 100]
}

/// Input bytes in a workload's format, built from per-channel Float signals.
struct InputSignal {
    let workload: Workload
    let frames: Int
    /// Interleaved samples in the workload's format, native byte order.
    let bytes: UnsafeMutableRawBufferPointer

    /// Encodes `channels` (one array per channel, full scale 1.0) in the workload's format;
    /// Int16 rounds to nearest with saturation (like any 16-bit recorder).
    init(workload: Workload, channels: [[Float]]) {
        precondition(channels.count == workload.channels)
        self.workload = workload
        frames = channels[0].count
        bytes = .allocate(byteCount: max(frames * workload.bytesPerFrame, 1), alignment: 64)
        let count = workload.channels
        switch workload.format {
        case .float32:
            let out = bytes.bindMemory(to: Float.self)
            for c in 0..<count { for f in 0..<frames { out[f * count + c] = channels[c][f] } }
        case .int16:
            let out = bytes.bindMemory(to: Int16.self)
            for c in 0..<count { for f in 0..<frames { out[f * count + c] = Int16(clamping: Int((channels[c][f] * 32768).rounded())) } }
        }
    }

    /// The same signal in every channel.
    init(workload: Workload, mono: [Float]) {
        self.init(workload: workload, channels: Array(repeating: mono, count: workload.channels))
    }

    func release() { bytes.deallocate() }

    /// The first `frames` frames.
    func prefix(frames count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[0..<(min(count, frames) * workload.bytesPerFrame)])
    }
}

/// Deterministic test signals.
enum Signals {
    /// The throughput signal: speech-band tones whose levels wander, plus white noise, about
    /// −12 dBFS RMS, different in each channel; never silent, never clipping, no denormals.
    static func program(rate: Int, frames: Int, channel: Int) -> [Float] {
        var generator = LinearCongruential(seed: 0x5EED + UInt64(channel))
        let r = Double(rate)
        let partials: [(Double, Double)] = [(180, 0.20), (440, 0.12), (1_250, 0.08), (2_900, 0.05), (5_100, 0.03)]
        var out = [Float](repeating: 0, count: frames)
        for n in 0..<frames {
            let t = Double(n) / r
            let envelope = 0.6 + 0.4 * sin(2 * .pi * (0.7 + 0.2 * Double(channel)) * t)
            var value = 0.0
            for (k, partial) in partials.enumerated() {
                value += partial.1 * sin(2 * .pi * partial.0 * t + Double(k + channel))
            }
            value = value * envelope + 0.02 * (generator.nextUnit() - 0.5)
            out[n] = Float(value)
        }
        return out
    }

    /// A sine of `frequency` Hz at `dBFS` peak (full scale 1.0) and starting `phase` radians.
    static func tone(rate: Int, frames: Int, frequency: Double, dBFS: Double, phase: Double = 0) -> [Float] {
        let amplitude = pow(10, dBFS / 20)
        let step = 2 * Double.pi * frequency / Double(rate)
        return (0..<frames).map { Float(amplitude * sin(step * Double($0) + phase)) }
    }

    /// A band-limited pulse: a Hann-windowed sinc with cutoff `cutoff` Hz, half-width 4 ms, peak
    /// `amplitude`, centred on frame `centre`.
    static func pulse(rate: Int, frames: Int, centre: Int, cutoff: Double, amplitude: Double) -> [Float] {
        var out = [Float](repeating: 0, count: frames)
        let halfWidth = Int(0.004 * Double(rate))
        let wc = 2 * cutoff / Double(rate)
        for k in -halfWidth...halfWidth where centre + k >= 0 && centre + k < frames {
            let x = Double(k)
            let sinc = k == 0 ? 1 : sin(.pi * wc * x) / (.pi * wc * x)
            let window = 0.5 + 0.5 * cos(.pi * x / Double(halfWidth + 1))
            out[centre + k] = Float(amplitude * sinc * window)
        }
        return out
    }
}

/// A small deterministic generator (Knuth's MMIX constants).
struct LinearCongruential {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state
    }
    /// Uniform in [0, 1).
    mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1p-53 }
}
