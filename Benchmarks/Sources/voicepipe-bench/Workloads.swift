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

/// Input bytes in a workload's format, built from per-channel signals (VoicePipeTestSupport's
/// generators).
struct InputSignal {
    let workload: Workload
    let frames: Int
    /// Interleaved samples in the workload's format, native byte order.
    let bytes: UnsafeMutableRawBufferPointer

    /// Encodes `channels` (one array per channel, full scale 1.0) in the workload's format: each
    /// sample becomes a Float first; Int16 then rounds to nearest with saturation (like any 16-bit
    /// recorder).
    init(workload: Workload, channels: [[Double]]) {
        precondition(channels.count == workload.channels)
        self.workload = workload
        frames = channels[0].count
        bytes = .allocate(byteCount: max(frames * workload.bytesPerFrame, 1), alignment: 64)
        let count = workload.channels
        switch workload.format {
        case .float32:
            let out = bytes.bindMemory(to: Float.self)
            for c in 0..<count { for f in 0..<frames { out[f * count + c] = Float(channels[c][f]) } }
        case .int16:
            let out = bytes.bindMemory(to: Int16.self)
            for c in 0..<count { for f in 0..<frames { out[f * count + c] = Int16(clamping: Int((Float(channels[c][f]) * 32768).rounded())) } }
        }
    }

    /// The same signal in every channel.
    init(workload: Workload, mono: [Double]) {
        self.init(workload: workload, channels: Array(repeating: mono, count: workload.channels))
    }

    func release() { bytes.deallocate() }

    /// The first `frames` frames.
    func prefix(frames count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[0..<(min(count, frames) * workload.bytesPerFrame)])
    }
}
