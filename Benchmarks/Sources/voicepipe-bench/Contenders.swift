import CBenchSampleRate
import CSoxr
import CBenchSpeexDSP
import VoicePipeCore
import VoicePipeIO

/// Keeps a contender's output for the quality analysis; timed runs have none and send the output
/// to the black hole instead.
final class OutputRecorder {
    /// The Int16 output of a capture pipeline (empty for playback).
    var int16: [Int16] = []
    /// The resampler's Float32 output: before Int16 rounding for capture, the output itself for playback.
    var float: [Float] = []
    /// Resampler output count after each chunk (for the held-back output).
    var producedAfterChunk: [Int] = []
}

/// A streaming conversion under test: chunks of raw input bytes in the workload's format go in,
/// state carries across chunks, and the output goes to the recorder or the black hole.
protocol StreamContender: AnyObject {
    /// Output samples the resampling stage has produced in this stream (before any framing).
    var produced: Int { get }
    /// Set for quality runs; nil in timed runs.
    var recorder: OutputRecorder? { get set }
    /// Converts one chunk (whole frames).
    func process(_ chunk: UnsafeRawBufferPointer)
}

/// A named contender and how to build it for a workload.
struct ContenderSpec {
    enum Family: String { case voicepipe = "VoicePipe", libsamplerate, soxr, speex, memcpy }

    let name: String
    let family: Family
    /// Fraction of the full signal a throughput pass streams (below 1 for the slowest peers, so a
    /// full run stays within minutes; the tables say so).
    let signalFraction: Double
    /// Builds an instance; `maxChunkFrames` bounds every chunk it will be given; `tap` asks
    /// VoicePipe to also record its Float32 resampler output (quality runs).
    let make: (_ workload: Workload, _ chunkMilliseconds: Int, _ maxChunkFrames: Int, _ tap: Bool) -> StreamContender

    var isResampler: Bool { family != .memcpy }

    /// Every contender in table order: VoicePipe, libsamplerate, soxr, speexdsp, the memcpy ceiling.
    /// VoicePipe with each kernel set this CPU runs, by contender name: AVX-512 and AVX2 + FMA
    /// where present, the portable Swift kernels every x86-64 build has, and the calibration's
    /// choice (DSPKernels.best) as "VoicePipe chosen" when it combines the decimators of one set
    /// with the interpolator of another.
    static let voicepipeKernelSets: [(String, DSPKernels)] = {
        var kernelSets: [(String, DSPKernels)] = []
        if let avx512 = DSPKernels.avx512 { kernelSets.append(("VoicePipe AVX-512", avx512)) }
        if let avx2 = DSPKernels.avx2 { kernelSets.append(("VoicePipe AVX2", avx2)) }
        kernelSets.append(("VoicePipe portable", .portable))
        if !kernelSets.contains(where: { $0.1.name == DSPKernels.best.name }) { kernelSets.append(("VoicePipe chosen", .best)) }
        return kernelSets
    }()

    static let all: [ContenderSpec] = {
        var specs: [ContenderSpec] = voicepipeKernelSets.map { name, kernels in
            ContenderSpec(name: name, family: .voicepipe, signalFraction: 1) { workload, ms, _, tap in
                workload.isPlayback
                    ? VoicePipePlayback(workload: workload, kernels: kernels) as StreamContender
                    : VoicePipeCapture(workload: workload, frameMilliseconds: ms, tap: tap, kernels: kernels)
            }
        }
        let lsr: [(String, Int32, Double)] = [
            ("SINC_BEST_QUALITY", Int32(SRC_SINC_BEST_QUALITY), 10.0 / 60),
            ("SINC_MEDIUM_QUALITY", Int32(SRC_SINC_MEDIUM_QUALITY), 30.0 / 60),
            ("SINC_FASTEST", Int32(SRC_SINC_FASTEST), 1),
            ("LINEAR", Int32(SRC_LINEAR), 1),
        ]
        for (name, type, fraction) in lsr {
            specs.append(ContenderSpec(name: "lsr \(name)", family: .libsamplerate, signalFraction: fraction) { workload, _, frames, _ in
                LibsamplerateContender(workload: workload, maxChunkFrames: frames, converter: type)
            })
        }
        let soxr: [(String, UInt)] = [("QQ", UInt(SOXR_QQ)), ("LQ", UInt(SOXR_LQ)), ("MQ", UInt(SOXR_MQ)), ("HQ", UInt(SOXR_HQ)), ("VHQ", UInt(SOXR_VHQ))]
        for (name, recipe) in soxr {
            specs.append(ContenderSpec(name: "soxr \(name)", family: .soxr, signalFraction: 1) { workload, _, frames, _ in
                SoxrContender(workload: workload, maxChunkFrames: frames, recipe: recipe)
            })
        }
        for quality in [0, 3, 5, 8, 10] {
            specs.append(ContenderSpec(name: "speex q\(quality)\(quality == 5 ? " (VoIP default)" : "")", family: .speex, signalFraction: quality == 10 ? 20.0 / 60 : 1) { workload, _, frames, _ in
                SpeexContender(workload: workload, maxChunkFrames: frames, quality: Int32(quality))
            })
        }
        specs.append(ContenderSpec(name: "memcpy of input bytes", family: .memcpy, signalFraction: 1) { workload, _, frames, _ in
            MemcpyContender(workload: workload, maxChunkFrames: frames)
        })
        return specs
    }()

    /// The reference every resampler is compared with.
    static let referenceName = "soxr HQ"
}

// MARK: VoicePipe

/// VoicePipe's capture path as a user runs it: `CaptureConverter` fed raw bytes of the input
/// format. It does more than a resampler: downmix, resample, frame assembly into frames as long
/// as the chunk, Int16 conversion and a peak meter per frame.
final class VoicePipeCapture: StreamContender {
    let converter: CaptureConverter
    private let tap: TapResampler?
    var recorder: OutputRecorder? {
        didSet { tap?.recorder = recorder }
    }

    var produced: Int { converter.outputSamples }

    init(workload: Workload, frameMilliseconds: Int, tap wantsTap: Bool, kernels: DSPKernels) {
        let format = AudioFormat(sampleRate: SampleRate(hertz: Double(workload.inputRate)), channelCount: workload.channels, sampleType: workload.format == .float32 ? .float32 : .int16)
        let validated = try! FormatGuard.validate(format)
        // With a tap, the converter gets the same resampler wrapped so its Float32 output is also
        // recorded; everything else is the default pipeline.
        let resampler = try! BuiltInResampler(inputRate: format.sampleRate, outputRate: 16_000, kernels: kernels)
        tap = wantsTap ? TapResampler(resampler) : nil
        converter = try! CaptureConverter(input: validated, options: CaptureOptions(frameMilliseconds: frameMilliseconds), resampler: tap ?? resampler)
    }

    func process(_ chunk: UnsafeRawBufferPointer) {
        try! converter.process(chunk) { frame in
            if let recorder = self.recorder {
                frame.withSamples { $0.withUnsafeBufferPointer { recorder.int16.append(contentsOf: $0) } }
            } else {
                BlackHole.consume(frame.sampleCount &+ frame.level.peak)
            }
        }
    }
}

/// Passes a resampler's calls through and records its output (quality runs only).
final class TapResampler: Resampler {
    let inner: BuiltInResampler
    var recorder: OutputRecorder?
    init(_ inner: BuiltInResampler) { self.inner = inner }

    var inputRate: SampleRate { inner.inputRate }
    var outputRate: SampleRate { inner.outputRate }
    var latency: Double { inner.latency }
    var maxFlushFrames: Int { inner.maxFlushFrames }
    func maxOutputFrames(forInputFrames count: Int) -> Int { inner.maxOutputFrames(forInputFrames: count) }
    func reset() { inner.reset() }

    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) throws(ResamplerError) -> Int {
        let count = try inner.process(input, into: output)
        recorder?.float.append(contentsOf: UnsafeBufferPointer(rebasing: output[0..<count]))
        return count
    }

    func flush(into output: UnsafeMutableBufferPointer<Float>) throws(ResamplerError) -> Int {
        let count = try inner.flush(into: output)
        recorder?.float.append(contentsOf: UnsafeBufferPointer(rebasing: output[0..<count]))
        return count
    }
}

/// VoicePipe's playback path: `PlaybackConverter` from 24 kHz Int16 to deinterleaved Float32 at
/// the device rate (x / 32768, then the built-in resampler).
final class VoicePipePlayback: StreamContender {
    let converter: PlaybackConverter
    var recorder: OutputRecorder?
    private(set) var produced = 0

    init(workload: Workload, kernels: DSPKernels) {
        converter = try! PlaybackConverter(sourceRate: SampleRate(hertz: Double(workload.inputRate)), outputRate: SampleRate(hertz: Double(workload.outputRate)), kernels: kernels)
    }

    func process(_ chunk: UnsafeRawBufferPointer) {
        let samples = chunk.assumingMemoryBound(to: Int16.self)
        try! converter.process(samples) { buffer in
            self.produced += buffer.frameCount
            if let recorder = self.recorder {
                buffer.withChannel(0) { $0.withUnsafeBufferPointer { recorder.float.append(contentsOf: $0) } }
            } else {
                BlackHole.consume(buffer.frameCount)
            }
        }
    }
}

// MARK: The ceiling

/// Copies each chunk's input bytes into a small buffer: the speed no conversion can beat.
final class MemcpyContender: StreamContender {
    private let destination: UnsafeMutableRawPointer
    var recorder: OutputRecorder?
    var produced: Int { 0 }

    init(workload: Workload, maxChunkFrames: Int) {
        destination = .allocate(byteCount: maxChunkFrames * workload.bytesPerFrame, alignment: 64)
    }

    deinit { destination.deallocate() }

    func process(_ chunk: UnsafeRawBufferPointer) {
        guard let source = chunk.baseAddress else { return }
        destination.copyMemory(from: source, byteCount: chunk.count)
        BlackHole.consume(chunk.count)
    }
}

// MARK: Peers

/// The work the C harness wrapped around every peer resampler, done the same way for each:
/// capture: input → mono Float32 (average, x / 32768) → resample → Int16 (round, clip);
/// playback: Int16 → Float32 (x / 32768) → resample.
class PeerContender: StreamContender {
    let workload: Workload
    let mono: UnsafeMutablePointer<Float>
    let resampled: UnsafeMutablePointer<Float>
    let resampledCapacity: Int
    let rounded: UnsafeMutablePointer<Int16>
    var recorder: OutputRecorder?
    private(set) var produced = 0

    init(workload: Workload, maxChunkFrames: Int) {
        self.workload = workload
        mono = .allocate(capacity: maxChunkFrames)
        resampledCapacity = maxChunkFrames * workload.outputRate / workload.inputRate + 8_192
        resampled = .allocate(capacity: resampledCapacity)
        rounded = .allocate(capacity: resampledCapacity)
    }

    deinit {
        mono.deallocate()
        resampled.deallocate()
        rounded.deallocate()
    }

    /// Resamples `count` mono frames into `output`; returns the frames written.
    func resample(_ input: UnsafeMutablePointer<Float>, count: Int, into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int {
        fatalError("subclass")
    }

    final func process(_ chunk: UnsafeRawBufferPointer) {
        let frames = chunk.count / workload.bytesPerFrame
        PeerGlue.toMono(chunk, workload: workload, frames: frames, into: mono)
        let count = resample(mono, count: frames, into: resampled, capacity: resampledCapacity)
        produced += count
        if workload.isPlayback {
            if let recorder {
                recorder.float.append(contentsOf: UnsafeBufferPointer(start: resampled, count: count))
            } else {
                BlackHole.consume(count)
            }
        } else {
            PeerGlue.toInt16(resampled, count: count, into: rounded)
            if let recorder {
                recorder.float.append(contentsOf: UnsafeBufferPointer(start: resampled, count: count))
                recorder.int16.append(contentsOf: UnsafeBufferPointer(start: rounded, count: count))
            } else {
                BlackHole.consume(count)
            }
        }
    }
}

/// The conversions around the peers, as plain loops the compiler vectorises.
enum PeerGlue {
    static func toMono(_ chunk: UnsafeRawBufferPointer, workload: Workload, frames: Int, into mono: UnsafeMutablePointer<Float>) {
        switch (workload.format, workload.channels) {
        case (.float32, 2):
            let s = chunk.assumingMemoryBound(to: Float.self)
            for f in 0..<frames { mono[f] = (s[2 * f] + s[2 * f + 1]) * 0.5 }
        case (.float32, _):
            let s = chunk.assumingMemoryBound(to: Float.self)
            for f in 0..<frames { mono[f] = s[f] }
        case (.int16, 2):
            let s = chunk.assumingMemoryBound(to: Int16.self)
            for f in 0..<frames { mono[f] = Float(Int32(s[2 * f]) &+ Int32(s[2 * f + 1])) * (0.5 / 32768) }
        case (.int16, _):
            let s = chunk.assumingMemoryBound(to: Int16.self)
            for f in 0..<frames { mono[f] = Float(s[f]) * (1 / 32768) }
        }
    }

    /// ×32768, clip to the Int16 range, round to nearest-even (1.5·2²³ added: the integer lands in
    /// the low mantissa bits).
    static func toInt16(_ source: UnsafeMutablePointer<Float>, count: Int, into destination: UnsafeMutablePointer<Int16>) {
        for i in 0..<count {
            let clipped = Swift.min(Swift.max(source[i] * 32768, -32768), 32767)
            let shifted = clipped + 12_582_912
            destination[i] = Int16(truncatingIfNeeded: Int32(bitPattern: shifted.bitPattern) &- 0x4B40_0000)
        }
    }
}

/// libsamplerate through `src_process`, one mono state, streaming (`end_of_input` = 0).
final class LibsamplerateContender: PeerContender {
    private let state: OpaquePointer
    private var data = SRC_DATA()
    private let ratio: Double

    init(workload: Workload, maxChunkFrames: Int, converter: Int32) {
        var error: Int32 = 0
        state = src_new(converter, 1, &error)!
        precondition(error == 0, String(cString: src_strerror(error)))
        ratio = Double(workload.outputRate) / Double(workload.inputRate)
        super.init(workload: workload, maxChunkFrames: maxChunkFrames)
    }

    deinit { src_delete(state) }

    override func resample(_ input: UnsafeMutablePointer<Float>, count: Int, into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int {
        var consumed = 0
        var made = 0
        repeat {
            data.data_in = UnsafePointer(input + consumed)
            data.input_frames = count - consumed
            data.data_out = output + made
            data.output_frames = capacity - made
            data.end_of_input = 0
            data.src_ratio = ratio
            let error = src_process(state, &data)
            precondition(error == 0, String(cString: src_strerror(error)))
            consumed += data.input_frames_used
            made += data.output_frames_gen
            if data.input_frames_used == 0 && data.output_frames_gen == 0 { break }
        } while consumed < count
        return made
    }
}

/// soxr through `soxr_process`, Float32 in and out, `soxr_quality_spec(recipe, 0)`.
final class SoxrContender: PeerContender {
    private let handle: OpaquePointer

    init(workload: Workload, maxChunkFrames: Int, recipe: UInt) {
        var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var quality = soxr_quality_spec(recipe, 0)
        var error: soxr_error_t?
        handle = soxr_create(Double(workload.inputRate), Double(workload.outputRate), 1, &error, &io, &quality, nil)!
        precondition(error == nil, String(cString: error!))
        super.init(workload: workload, maxChunkFrames: maxChunkFrames)
    }

    deinit { soxr_delete(handle) }

    /// The engine soxr chose (`soxr_engine`).
    var engine: String { String(cString: soxr_engine(handle)) }

    override func resample(_ input: UnsafeMutablePointer<Float>, count: Int, into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int {
        var consumed = 0
        var made = 0
        repeat {
            var used = 0
            var done = 0
            let error = soxr_process(handle, input + consumed, count - consumed, &used, output + made, capacity - made, &done)
            precondition(error == nil, String(cString: error!))
            consumed += used
            made += done
            if used == 0 && done == 0 { break }
        } while consumed < count
        return made
    }
}

/// speexdsp through `speex_resampler_process_float`, one channel, without `skip_zeros` (its delay
/// shows in the output, as in a plain VoIP stream).
final class SpeexContender: PeerContender {
    private let state: OpaquePointer

    init(workload: Workload, maxChunkFrames: Int, quality: Int32) {
        var error: Int32 = 0
        state = speex_resampler_init(1, UInt32(workload.inputRate), UInt32(workload.outputRate), quality, &error)!
        precondition(error == 0, "speex_resampler_init failed: \(error)")
        super.init(workload: workload, maxChunkFrames: maxChunkFrames)
    }

    deinit { speex_resampler_destroy(state) }

    /// `speex_resampler_get_output_latency`, in output samples.
    var reportedLatency: Int { Int(speex_resampler_get_output_latency(state)) }

    override func resample(_ input: UnsafeMutablePointer<Float>, count: Int, into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int {
        var consumed = 0
        var made = 0
        repeat {
            var inLength = UInt32(count - consumed)
            var outLength = UInt32(capacity - made)
            let error = speex_resampler_process_float(state, 0, input + consumed, &inLength, output + made, &outLength)
            precondition(error == 0, "speex_resampler_process_float failed: \(error)")
            consumed += Int(inLength)
            made += Int(outLength)
            if inLength == 0 && outLength == 0 { break }
        } while consumed < count
        return made
    }
}
