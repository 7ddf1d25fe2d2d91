import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// Streaming rules for the built-in resampler: exact lengths, identical output however the input
/// is cut, flush drains, reset restarts.
struct ResamplerStreamingTests {
    static let ratePairs: [(Double, Double)] = [
        (48_000, 16_000), (44_100, 16_000), (8_000, 16_000), (22_050, 16_000), (32_000, 16_000),
        (16_000, 16_000), (96_000, 16_000), (11_025, 16_000), (24_000, 48_000), (24_000, 44_100),
        (44_056, 16_000), (192_000, 16_000), (16_000, 8_000),
    ]

    static func testSignal(rate: Double, frames: Int) -> [Float] {
        let tone = Signals.sine(frequency: 997, amplitude: 0.5, sampleRate: rate, frames: frames)
        let noise = Signals.noise(amplitude: 0.2, frames: frames, seed: 42)
        return zip(tone, noise).map { Float($0 + $1) }
    }

    @Test(arguments: ratePairs)
    func outputIsIdenticalHoweverTheInputIsCut(inputRate: Double, outputRate: Double) throws {
        let input = Self.testSignal(rate: inputRate, frames: Int(inputRate * 0.25) + 17)
        let resampler = try BuiltInResampler(inputRate: SampleRate(hertz: inputRate), outputRate: SampleRate(hertz: outputRate))
        let reference = try ResamplerHarness.stream(resampler, input, chunkSizes: [input.count])
        let cuttings: [[Int]] = [[1], [7], [480], [4410], ResamplerHarness.randomCuts(count: 200, maximum: 3000, seed: 9)]
        for cuts in cuttings {
            let output = try ResamplerHarness.stream(resampler, input, chunkSizes: cuts)
            #expect(output == reference, "chunks \(cuts.prefix(3)) differ from the whole-buffer output")
        }
    }

    /// Interleaved stereo test input, Float32 and Int16 (with a NaN and an out-of-range sample),
    /// and the mono signal each downmixes to.
    static func stereoSignal(rate: Double, frames: Int) -> (floats: [Float], ints: [Int16], floatMono: [Float], intMono: [Float]) {
        let left = testSignal(rate: rate, frames: frames)
        let right = Signals.noise(amplitude: 0.7, frames: frames, seed: 7).map { Float($0) }
        var floats = [Float](repeating: 0, count: 2 * frames)
        for f in 0..<frames {
            floats[2 * f] = left[f]
            floats[2 * f + 1] = right[f]
        }
        floats[101] = .nan
        floats[2 * frames - 3] = 4
        let ints = floats.map { Int16(clamping: Int(($0.isNaN ? 0 : $0) * 32767)) }
        let floatMono = (0..<frames).map { (floats[2 * $0].normalized + floats[2 * $0 + 1].normalized) * 0.5 }
        let intMono = (0..<frames).map { (ints[2 * $0].normalized + ints[2 * $0 + 1].normalized) * 0.5 }
        return (floats, ints, floatMono, intMono)
    }

    /// Streams `frames` input frames through `resampler`, chunk k being `chunkSize(k)` frames (or
    /// what is left) that `feed(offset, count, output)` hands over; then flushes. The whole output.
    static func stream(_ resampler: BuiltInResampler, frames: Int, chunkSize: (Int) -> Int,
                       feed: (_ offset: Int, _ count: Int, _ output: UnsafeMutableBufferPointer<Float>) throws -> Int) throws -> [Float] {
        var output: [Float] = []
        var offset = 0
        var chunk = 0
        while offset < frames {
            let count = min(chunkSize(chunk), frames - offset)
            var buffer = [Float](repeating: .nan, count: resampler.maxOutputFrames(forInputFrames: count))
            let made = try buffer.withUnsafeMutableBufferPointer { try feed(offset, count, $0) }
            output += buffer.prefix(made)
            offset += count
            chunk += 1
        }
        var tail = [Float](repeating: .nan, count: resampler.maxFlushFrames)
        let flushed = try tail.withUnsafeMutableBufferPointer { try resampler.flush(into: $0) }
        return output + tail.prefix(flushed)
    }

    /// 48 and 96 kHz start with a decimate-by-2 stage, which takes the downmix into its two
    /// streams; 32 kHz is that stage alone; 44.1 kHz starts with the polyphase stage, which takes
    /// it into its history; 8 kHz starts with the interpolator and 16 kHz has no stage, so both
    /// downmix into a buffer first. Every one, with either sample type and kernel set, must give
    /// the output of downmixing, then `process`, however the input is cut.
    @Test(arguments: [48_000.0, 96_000, 32_000, 44_100, 8_000, 16_000])
    func stereoInputGivesTheOutputOfItsDownmix(inputRate: Double) throws {
        let frames = Int(inputRate * 0.1) + 13
        let signal = Self.stereoSignal(rate: inputRate, frames: frames)
        for kernels in [DSPKernels.best, .portable] {
            for (type, mono) in [("Float32", signal.floatMono), ("Int16", signal.intMono)] {
                let expected = try ResamplerHarness.stream(BuiltInResampler(inputRate: SampleRate(hertz: inputRate), outputRate: 16_000, kernels: kernels), mono, chunkSizes: [frames])
                let resampler = try BuiltInResampler(inputRate: SampleRate(hertz: inputRate), outputRate: 16_000, kernels: kernels)
                // Odd chunk sizes change which stream the next sample starts; 3 000 spans internal blocks.
                for cuts in [[frames], [1], [7], [480], [3_000], ResamplerHarness.randomCuts(count: 100, maximum: 2_500, seed: 5)] {
                    let output = try Self.stream(resampler, frames: frames, chunkSize: { cuts[$0 % cuts.count] }) { offset, count, out in
                        try signal.floats.withUnsafeBufferPointer { f in
                            try signal.ints.withUnsafeBufferPointer { i in
                                let stereo: InterleavedStereo = type == "Int16" ? .int16(i.baseAddress! + 2 * offset) : .float32(f.baseAddress! + 2 * offset)
                                return try resampler.processStereo(stereo, frames: count, into: out)
                            }
                        }
                    }
                    #expect(output.map(\.bitPattern) == expected.map(\.bitPattern), "\(kernels.name), \(type) at \(inputRate) Hz in chunks \(cuts.prefix(3))")
                }
            }
        }
    }

    /// A stream may switch between stereo and mono buffers: the downmixed samples join the same
    /// history, so the output is that of the whole mono signal.
    @Test(arguments: [48_000.0, 44_100])
    func stereoAndMonoBuffersMixInOneStream(inputRate: Double) throws {
        let frames = Int(inputRate * 0.1) + 13
        let signal = Self.stereoSignal(rate: inputRate, frames: frames)
        let expected = try ResamplerHarness.stream(BuiltInResampler(inputRate: SampleRate(hertz: inputRate), outputRate: 16_000), signal.floatMono, chunkSizes: [frames])
        let resampler = try BuiltInResampler(inputRate: SampleRate(hertz: inputRate), outputRate: 16_000)
        // Chunk k is 37 + 101·(k mod 5) frames; even chunks go in as stereo, odd ones as mono.
        var stereoNext = true
        let output = try Self.stream(resampler, frames: frames, chunkSize: { 37 + 101 * ($0 % 5) }) { offset, count, out in
            defer { stereoNext.toggle() }
            if stereoNext {
                return try signal.floats.withUnsafeBufferPointer { try resampler.processStereo(.float32($0.baseAddress! + 2 * offset), frames: count, into: out) }
            }
            return try signal.floatMono.withUnsafeBufferPointer { try resampler.process(UnsafeBufferPointer(rebasing: $0[offset..<offset + count]), into: out) }
        }
        #expect(output.map(\.bitPattern) == expected.map(\.bitPattern))
    }

    @Test(arguments: ratePairs)
    func streamLengthIsTheRoundedExactRatio(inputRate: Double, outputRate: Double) throws {
        let resampler = try BuiltInResampler(inputRate: SampleRate(hertz: inputRate), outputRate: SampleRate(hertz: outputRate))
        for frames in [0, 1, 2, 3, 5, 100, 441, 1_000, 4_410, 12_345] {
            let output = try ResamplerHarness.stream(resampler, Self.testSignal(rate: inputRate, frames: frames), chunkSizes: [256])
            let exact = Double(frames) * outputRate / inputRate
            #expect(output.count == Int((exact).rounded(.toNearestOrAwayFromZero)), "\(frames) frames at \(inputRate) Hz")
        }
    }

    @Test func halvesRoundUp() throws {
        // 32 kHz → 16 kHz: an odd input length is a half-frame of output, which rounds up.
        let ratio = try RationalRatio(inputRate: 32_000, outputRate: 16_000)
        #expect(ratio.outputFrames(forInputFrames: 1) == 1)
        #expect(ratio.outputFrames(forInputFrames: 3) == 2)
        #expect(ratio.outputFrames(forInputFrames: 4) == 2)
        let resampler = try BuiltInResampler(inputRate: 32_000, outputRate: 16_000)
        #expect(try ResamplerHarness.stream(resampler, [Float](repeating: 0.1, count: 5), chunkSizes: [1]).count == 3)
        // Very long streams still count exactly (128-bit intermediate).
        let odd = try RationalRatio(inputRate: 44_100, outputRate: 16_000)
        #expect(odd.outputFrames(forInputFrames: 44_100 * 3_600 * 24 * 365) == 16_000 * 3_600 * 24 * 365)
    }

    @Test func resetStartsAFreshStream() throws {
        let resampler = try BuiltInResampler(inputRate: 44_100, outputRate: 16_000)
        let input = Self.testSignal(rate: 44_100, frames: 5_000)
        let first = try ResamplerHarness.stream(resampler, input, chunkSizes: [333])
        // Abandon a stream half way, then run the same input again.
        var scratch = [Float](repeating: 0, count: resampler.maxOutputFrames(forInputFrames: 2_000))
        _ = try input.withUnsafeBufferPointer { all in
            try scratch.withUnsafeMutableBufferPointer { try resampler.process(UnsafeBufferPointer(rebasing: all[0..<2_000]), into: $0) }
        }
        resampler.reset()
        #expect(try ResamplerHarness.stream(resampler, input, chunkSizes: [333]) == first)
        // flush() also leaves the resampler ready for a new stream.
        #expect(try ResamplerHarness.stream(resampler, input, chunkSizes: [4_096]) == first)
    }

    @Test func tooSmallAnOutputBufferIsATypedError() throws {
        let resampler = try BuiltInResampler(inputRate: 8_000, outputRate: 16_000)
        let input = [Float](repeating: 0.25, count: 1_000)
        var small = [Float](repeating: 0, count: 10)
        let needed = resampler.maxOutputFrames(forInputFrames: 1_000)
        #expect(throws: ResamplerError.outputBufferTooSmall(needed: needed, available: 10)) {
            try input.withUnsafeBufferPointer { i in try small.withUnsafeMutableBufferPointer { try resampler.process(i, into: $0) } }
        }
    }

    @Test(arguments: [0.0, -48_000, .nan, .infinity, 500, 1_000_000])
    func unsupportedRatesAreRefused(rate: Double) {
        #expect(throws: ResamplerError.self) { try BuiltInResampler(inputRate: SampleRate(hertz: rate), outputRate: 16_000) }
    }

    @Test func latencyStaysWithinFourMilliseconds() throws {
        for (input, output) in Self.ratePairs where input != output && min(input, output) >= 8_000 {
            let resampler = try BuiltInResampler(inputRate: SampleRate(hertz: input), outputRate: SampleRate(hertz: output))
            #expect(resampler.latency <= 0.004 + 1e-12, "\(input) → \(output): \(resampler.latency * 1000) ms")
        }
    }
}
