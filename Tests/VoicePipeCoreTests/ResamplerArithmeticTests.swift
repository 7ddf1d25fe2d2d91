import Testing
@testable import VoicePipeCore

/// The cost model counts each filter tap a stage applies once per output, and what the kernels
/// execute: tap pairs folded into one multiply-add plus the centre multiplication.
struct ResamplerArithmeticTests {
    static func nonzero(_ taps: [Double]) -> Double { Double(taps.filter { $0 != 0 }.count) }

    /// 32 → 16 kHz is the sharp ↓2 stage alone: every tap on every output.
    @Test func aSingleDecimatingStageAppliesEveryTapToEachOutput() throws {
        let taps = try SharpFilter.taps(factor: 2).get()
        let resampler = try BuiltInResampler(inputRate: 32_000, outputRate: 16_000)
        #expect(resampler.arithmetic.multiplyAdds == Self.nonzero(taps))
        #expect(resampler.arithmetic.executedMultiplyAdds == Double((taps.count - 1) / 2 + 1))
    }

    /// 48 → 16 kHz: a half-band to 24 kHz (1.5 of its outputs per output) and the 2/3 stage,
    /// whose two phases share the taps between them.
    @Test func aChainAddsItsStagesPerOutputOfTheChain() throws {
        let halfBand = SharpFilter.halfBand(rate: 48_000, band: 8_000)
        let sharp = try SharpFilter.taps(factor: 3).get()
        let resampler = try BuiltInResampler(inputRate: 48_000, outputRate: 16_000)
        #expect(resampler.arithmetic.multiplyAdds == 1.5 * Self.nonzero(halfBand) + Self.nonzero(sharp) / 2)
        #expect(resampler.arithmetic.executedMultiplyAdds < resampler.arithmetic.multiplyAdds / 2 + 3)
    }

    /// 8 → 16 kHz and 24 → 48 kHz are the 1:2 interpolator alone: 64 taps an output plus the
    /// centre on every other one.
    @Test(arguments: [(8_000.0, 16_000.0), (24_000.0, 48_000.0)])
    func theDoubleRateInterpolatorAppliesSixtyFourTapsAnOutput(rates: (Double, Double)) throws {
        let resampler = try BuiltInResampler(inputRate: SampleRate(hertz: rates.0), outputRate: SampleRate(hertz: rates.1))
        #expect(resampler.arithmetic == ResamplerArithmetic(multiplyAdds: 64.5, executedMultiplyAdds: 32.5))
    }

    /// 44.1 → 16 kHz: the polyphase stage to 32 kHz (two of its outputs per output, rows padded
    /// to whole vectors) and the sharp ↓2 stage.
    @Test func aPolyphaseStageCountsItsRowPerOutput() throws {
        let sharp = try SharpFilter.taps(factor: 2).get()
        let resampler = try BuiltInResampler(inputRate: 44_100, outputRate: 16_000)
        let polyphase = try PolyphaseStage(inputRate: 44_100, outputRate: 32_000, lowerRate: 16_000, maxInputBlock: 1_024, kernels: .portable)
        #expect(resampler.arithmetic.multiplyAdds == 2 * Double(polyphase.taps) + Self.nonzero(sharp))
        #expect(resampler.arithmetic.executedMultiplyAdds == 2 * Double(polyphase.paddedTaps) + Double((sharp.count - 1) / 2 + 1))
    }

    @Test func equalRatesCostNothing() throws {
        #expect(try BuiltInResampler(inputRate: 16_000, outputRate: 16_000).arithmetic == .none)
    }
}
