import Foundation
import Testing
@testable import VoicePipeCore

/// Core's own sin/cos/exp/log must agree with the C library where filter design uses them.
struct ElementaryTests {
    @Test func trigonometryMatchesLibm() {
        var generator = SplitMixLocal(seed: 7)
        for _ in 0..<20_000 {
            let x = (generator.nextUnit() * 2 - 1) * 2_000
            #expect(abs(Elementary.sin(x) - sin(x)) <= 2e-15 * max(1, abs(x) / 100))
            #expect(abs(Elementary.cos(x) - cos(x)) <= 2e-15 * max(1, abs(x) / 100))
        }
    }

    @Test func expAndLogMatchLibm() {
        var generator = SplitMixLocal(seed: 11)
        for _ in 0..<20_000 {
            let x = (generator.nextUnit() * 2 - 1) * 700
            let e = Elementary.exp(x)
            #expect(abs(e - exp(x)) <= 1e-15 * exp(x) * max(1, abs(x)))
            let y = exp((generator.nextUnit() * 2 - 1) * 700)
            #expect(abs(Elementary.log(y) - log(y)) <= 1e-15 * max(1, abs(log(y))))
        }
        #expect(Elementary.log(0) == -.infinity)
        #expect(Elementary.log(-1).isNaN)
        #expect(Elementary.log10(1000) == 3 || abs(Elementary.log10(1000) - 3) < 1e-15)
    }

    @Test func besselI0MatchesSeriesValues() {
        // Reference values of I0 (Abramowitz & Stegun table 9.8 / scipy.special.i0).
        #expect(abs(Elementary.besselI0(0) - 1) < 1e-15)
        #expect(abs(Elementary.besselI0(1) - 1.2660658777520082) < 1e-14)
        #expect(abs(Elementary.besselI0(10) / 2815.716628466254 - 1) < 1e-13)
    }
}

struct SplitMixLocal {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func nextUnit() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
    }
}
