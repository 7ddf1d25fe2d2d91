import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// The speech-band meter's filter: two biquads in series, one sample at a time or eight at a time.
struct BiquadPairTests {
    static let rate = 16_000.0
    static let highPass = BiquadPair.Section.butterworth(highPass: true, cutoff: 300, sampleRate: rate)
    static let lowPass = BiquadPair.Section.butterworth(highPass: false, cutoff: 3_400, sampleRate: rate)

    /// |H(e^jω)|² of one section at `frequency`.
    static func powerGain(_ s: BiquadPair.Section, at frequency: Double) -> Double {
        let w = 2 * Double.pi * frequency / rate
        let (c1, s1, c2, s2) = (Elementary.cos(w), Elementary.sin(w), Elementary.cos(2 * w), Elementary.sin(2 * w))
        let (nr, ni) = (s.b0 + s.b1 * c1 + s.b2 * c2, -(s.b1 * s1 + s.b2 * s2))
        let (dr, di) = (1 + s.a1 * c1 + s.a2 * c2, -(s.a1 * s1 + s.a2 * s2))
        return (nr * nr + ni * ni) / (dr * dr + di * di)
    }

    static func sumOfSquares(_ samples: [Int16], chunk: Int, blockKernel: Bool) -> [Double] {
        var pair = BiquadPair(highPass, lowPass, usesBlockKernel: blockKernel)
        return stride(from: 0, to: samples.count, by: chunk).map { start in
            samples[start..<min(start + chunk, samples.count)].withUnsafeBufferPointer { pair.sumOfSquares($0) }
        }
    }

    /// A steady tone's output power is its input power times both sections' |H|², to 0.01 dB,
    /// in the pass band and in either stop band: the block matrix is the filter, not an approximation.
    @Test(arguments: [false, true], [100.0, 300, 1_000, 3_400, 6_000])
    func aTonesPowerIsScaledByThePairsResponse(blockKernel: Bool, frequency: Double) {
        let amplitude = Signals.amplitude(dBFS: -6)
        let tone = Signals.int16(Signals.sine(frequency: frequency, amplitude: amplitude, sampleRate: Self.rate, frames: 32_000))
        // Past the first second the filters have settled; whole periods of every tone above fit in it.
        let sums = Self.sumOfSquares(tone, chunk: 16_000, blockKernel: blockKernel)
        let measured = 10 * Elementary.log10(sums[1] / 16_000)
        let inputPower = tone[16_000...].reduce(0.0) { $0 + (Double($1) / 32_768) * (Double($1) / 32_768) } / 16_000
        let expected = 10 * Elementary.log10(inputPower * Self.powerGain(Self.highPass, at: frequency) * Self.powerGain(Self.lowPass, at: frequency))
        #expect(abs(measured - expected) < 0.01, "\(frequency) Hz: \(measured) dB, expected \(expected) dB")
    }

    /// Eight at a time or one at a time, and however the samples are cut (chunks shorter than a
    /// block, not a multiple of it), each chunk's sum agrees to a part in 10¹².
    @Test(.enabled(if: BiquadPair.blockKernelAvailable, "this CPU has no AVX2 and FMA"), arguments: [1, 3, 7, 8, 9, 13, 64, 511, 512])
    func theBlockKernelAgreesWithTheSampleBySampleOneHoweverTheSamplesAreCut(chunk: Int) {
        let noise = Signals.int16(Signals.pinkNoise(rms: 0.1, frames: 4_099, seed: 11))
        let reference = Self.sumOfSquares(noise, chunk: 4_099, blockKernel: false)[0]
        let scalar = Self.sumOfSquares(noise, chunk: chunk, blockKernel: false)
        let block = Self.sumOfSquares(noise, chunk: chunk, blockKernel: true)
        #expect(scalar.count == block.count)
        for (s, b) in zip(scalar, block) { #expect(abs(s - b) <= 1e-12 * max(s, 1e-300), "\(s) vs \(b)") }
        #expect(abs(block.reduce(0, +) - reference) <= 1e-12 * reference)
    }

    @Test func emptyInputSumsToZeroAndLeavesTheStateAsItWas() {
        var pair = BiquadPair(Self.highPass, Self.lowPass)
        let before = pair
        #expect([Int16]().withUnsafeBufferPointer { pair.sumOfSquares($0) } == 0)
        #expect(pair == before)
    }
}
