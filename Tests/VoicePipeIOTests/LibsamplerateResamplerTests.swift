import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// The libsamplerate backend keeps the same streaming contract as the built-in resampler.
struct LibsamplerateResamplerTests {
    static let cases: [(LibsamplerateResampler.Quality, Double, Double)] = LibsamplerateResampler.Quality.allCases.flatMap { quality in
        [(quality, 48_000.0, 16_000.0), (quality, 44_100, 16_000), (quality, 8_000, 16_000), (quality, 22_050, 16_000), (quality, 24_000, 44_100)]
    }

    static func signal(rate: Double, frames: Int) -> [Float] {
        zip(Signals.sine(frequency: 997, amplitude: 0.5, sampleRate: rate, frames: frames), Signals.noise(amplitude: 0.2, frames: frames, seed: 42)).map { Float($0 + $1) }
    }

    @Test(arguments: cases)
    func outputIsIdenticalHoweverTheInputIsCut(quality: LibsamplerateResampler.Quality, inputRate: Double, outputRate: Double) throws {
        let input = Self.signal(rate: inputRate, frames: Int(inputRate * 0.1) + 17)
        let resampler = try LibsamplerateResampler(inputRate: SampleRate(hertz: inputRate), outputRate: SampleRate(hertz: outputRate), quality: quality)
        let reference = try ResamplerHarness.stream(resampler, input, chunkSizes: [input.count])
        for cuts in [[1], [7], [480], [4_410], ResamplerHarness.randomCuts(count: 100, maximum: 3_000, seed: 9)] {
            #expect(try ResamplerHarness.stream(resampler, input, chunkSizes: cuts) == reference, "\(quality) chunks \(cuts.prefix(2))")
        }
    }

    @Test(arguments: cases)
    func streamLengthIsTheRoundedExactRatio(quality: LibsamplerateResampler.Quality, inputRate: Double, outputRate: Double) throws {
        let resampler = try LibsamplerateResampler(inputRate: SampleRate(hertz: inputRate), outputRate: SampleRate(hertz: outputRate), quality: quality)
        for frames in [0, 1, 2, 3, 100, 441, 1_000, 12_345] {
            let output = try ResamplerHarness.stream(resampler, Self.signal(rate: inputRate, frames: frames), chunkSizes: [256])
            #expect(output.count == Int((Double(frames) * outputRate / inputRate).rounded()), "\(quality) \(frames) frames")
        }
    }

    @Test func agreesWithTheBuiltInResamplerOnLevelAndTiming() throws {
        // Both are flat to 7 kHz and time-aligned: a 1 kHz tone comes out at the same level
        // (within the built-in filter's ±0.08 dB ripple) and the same phase (within 0.01 sample).
        let input = Signals.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 44_100, frames: 22_050).map(Float.init)
        let ours = try ResamplerHarness.stream(BuiltInResampler(inputRate: 44_100, outputRate: 16_000), input, chunkSizes: [441])
        let theirs = try ResamplerHarness.stream(LibsamplerateResampler(inputRate: 44_100, outputRate: 16_000, quality: .sincBest), input, chunkSizes: [441])
        #expect(ours.count == theirs.count)
        let a = Measurement.fitTone(ours[800..<(ours.count - 800)], frequency: 1_000, sampleRate: 16_000)
        let b = Measurement.fitTone(theirs[800..<(theirs.count - 800)], frequency: 1_000, sampleRate: 16_000)
        #expect(abs(Measurement.dB(a.amplitude / b.amplitude)) < 0.08)
        let samplesApart = abs(a.phase - b.phase) / (2 * Double.pi * 1_000 / 16_000)
        #expect(samplesApart < 0.01, "\(samplesApart) samples apart")
    }

    @Test func resetAndFlushStartFreshStreams() throws {
        let resampler = try LibsamplerateResampler(inputRate: 48_000, outputRate: 16_000, quality: .sincMedium)
        let input = Self.signal(rate: 48_000, frames: 4_800)
        let first = try ResamplerHarness.stream(resampler, input, chunkSizes: [480])
        var scratch = [Float](repeating: 0, count: resampler.maxOutputFrames(forInputFrames: 1_000))
        _ = try input.withUnsafeBufferPointer { i in try scratch.withUnsafeMutableBufferPointer { try resampler.process(UnsafeBufferPointer(rebasing: i[0..<1_000]), into: $0) } }
        resampler.reset()
        #expect(try ResamplerHarness.stream(resampler, input, chunkSizes: [480]) == first)
        #expect(try ResamplerHarness.stream(resampler, input, chunkSizes: [4_800]) == first)
    }

    @Test func errorsAreTyped() throws {
        #expect(throws: ResamplerError.unsupportedRate(0)) { try LibsamplerateResampler(inputRate: 0, outputRate: 16_000) }
        // 768 kHz → 1 kHz is a ratio libsamplerate refuses (beyond 1/256).
        #expect(throws: ResamplerError.self) { try LibsamplerateResampler(inputRate: 768_000, outputRate: 1_000) }
        let resampler = try LibsamplerateResampler(inputRate: 48_000, outputRate: 16_000, quality: .sincFastest)
        var small = [Float](repeating: 0, count: 4)
        #expect(throws: ResamplerError.self) {
            try [Float](repeating: 0, count: 100).withUnsafeBufferPointer { i in try small.withUnsafeMutableBufferPointer { try resampler.process(i, into: $0) } }
        }
    }
}
