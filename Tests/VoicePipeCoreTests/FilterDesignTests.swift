import Foundation
import Testing
@testable import VoicePipeCore

/// The filters the resampler is built from meet their specifications on a dense frequency grid.
struct FilterDesignTests {
    /// |H(f)| in dB of a symmetric FIR, f in cycles per sample.
    static func responseDB(_ taps: [Double], at f: Double) -> Double {
        let centre = Double(taps.count - 1) / 2
        var sum = 0.0
        for (n, h) in taps.enumerated() {
            sum += h * cos(2 * .pi * f * (Double(n) - centre))
        }
        return 20 * log10(abs(sum))
    }

    @Test(arguments: [2, 3])
    func sharpFilterIsEquirippleWithinSpecification(factor: Int) throws {
        let taps = try SharpFilter.taps(factor: factor).get()
        #expect(taps.count == SharpFilter.lengths[factor])
        for n in 0..<(taps.count / 2) { #expect(taps[n] == taps[taps.count - 1 - n]) }
        var passMax = -Double.infinity, passMin = Double.infinity, stopMax = -Double.infinity
        let passEdge = SharpFilter.passbandEdge(factor: factor), stopEdge = SharpFilter.stopbandEdge(factor: factor)
        for i in 0...4000 {
            let f = passEdge * Double(i) / 4000
            let db = Self.responseDB(taps, at: f)
            passMax = max(passMax, db)
            passMin = min(passMin, db)
        }
        for i in 0...8000 {
            let f = stopEdge + (0.5 - stopEdge) * Double(i) / 8000
            stopMax = max(stopMax, Self.responseDB(taps, at: f))
        }
        // The delay stays about 32 samples of the lower rate whatever the factor (≤ 4 ms at 8 kHz).
        #expect(Double(taps.count - 1) / 2 / Double(factor) <= 32.5)
        #expect(passMax <= 0.08 && passMin >= -0.08, "passband \(passMin) … \(passMax) dB")
        print("sharp filter ×\(factor): passband \(passMin) … \(passMax) dB, stopband peak \(stopMax) dB")
        #expect(stopMax <= -105.5, "stopband peak \(stopMax) dB")
        // Equiripple: the passband ripple is used, not wasted.
        #expect(passMax >= 0.06, "passband peak \(passMax) dB")
    }

    @Test(arguments: [(48_000.0, 16_000.0), (96_000, 16_000), (64_000, 16_000), (192_000, 16_000)])
    func halfBandsAreHalfZeroAndKeepTheBandClean(rate: Double, output: Double) {
        let band = output / 2
        let taps = SharpFilter.halfBand(rate: rate, band: band)
        let centre = (taps.count - 1) / 2
        #expect(taps.count % 4 == 3)
        for (k, tap) in taps.enumerated() where k != centre && (k - centre) % 2 == 0 { #expect(tap == 0) }
        for k in 0..<centre { #expect(taps[k] == taps[taps.count - 1 - k]) }
        var passWorst = 0.0, stopWorst = -Double.infinity
        for i in 0...1000 {
            passWorst = max(passWorst, abs(Self.responseDB(taps, at: band / rate * Double(i) / 1000)))
            let stopEdge = 0.5 - band / rate
            stopWorst = max(stopWorst, Self.responseDB(taps, at: stopEdge + (0.5 - stopEdge) * Double(i) / 1000))
        }
        #expect(passWorst < 0.001, "passband deviation \(passWorst) dB")
        #expect(stopWorst <= -104, "stopband peak \(stopWorst) dB")
    }

    @Test(arguments: [48_000.0, 44_100.0, 22_050.0, 192_000.0])
    func kaiserPrototypeMeetsItsAttenuation(inputRate: Double) {
        // The stage into 32 kHz for a 16 kHz output: keep 0 … 8 kHz, stop from 24 kHz.
        let width = 16_000.0 / inputRate
        let (prototype, taps) = KaiserLowpass.design(cutoff: width, transitionWidth: width, attenuation: 110)
        #expect(taps % 2 == 0)
        // The continuous response, from the prototype sampled 16 times per input sample.
        let oversampling = 16.0
        let h = stride(from: -prototype.halfWidth, through: prototype.halfWidth, by: 1 / oversampling).map { prototype.value(at: $0) / oversampling }
        let passEdge = 8_000 / inputRate, stopEdge = 24_000 / inputRate
        var passWorst = 0.0, stopWorst = -Double.infinity
        for i in 0...500 {
            passWorst = max(passWorst, abs(Self.responseDB(h, at: passEdge * Double(i) / 500 / oversampling)))
            let f = stopEdge + (oversampling / 2 - stopEdge) * Double(i) / 500
            stopWorst = max(stopWorst, Self.responseDB(h, at: f / oversampling))
        }
        #expect(passWorst < 0.001, "passband deviation \(passWorst) dB")
        #expect(stopWorst <= -104, "stopband peak \(stopWorst) dB")
    }
}
