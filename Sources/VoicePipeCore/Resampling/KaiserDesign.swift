/// Kaiser-windowed sinc, the continuous prototype behind the arbitrary-ratio stage.
///
/// A Kaiser window gives a closed-form impulse response that can be evaluated at any fractional
/// position, which is what a polyphase stage with hundreds or thousands of phases needs.
struct KaiserLowpass: Sendable {
    /// Cutoff (the middle of the transition band) in cycles per input sample.
    let cutoff: Double
    /// Window half-width in input samples; the response is zero outside ±halfWidth.
    let halfWidth: Double
    /// Kaiser shape parameter β.
    let beta: Double
    private let inverseI0Beta: Double

    /// Designs the prototype.
    /// - Parameters:
    ///   - cutoff: middle of the transition band, cycles per input sample.
    ///   - transitionWidth: width of the transition band, cycles per input sample.
    ///   - attenuation: stopband attenuation in dB.
    /// - Returns: the prototype and the even tap count that spans its window.
    static func design(cutoff: Double, transitionWidth: Double, attenuation: Double) -> (KaiserLowpass, taps: Int) {
        // Kaiser's formulas: β from the attenuation, length from attenuation and transition width.
        let beta = beta(attenuation: attenuation)
        let span = (attenuation - 7.95) / (14.36 * transitionWidth)
        var taps = Int(span.rounded(.up)) + 1
        if taps % 2 == 1 { taps += 1 }
        let prototype = KaiserLowpass(cutoff: cutoff, halfWidth: Double(taps) / 2, beta: beta)
        return (prototype, taps)
    }

    /// Kaiser's β for a stopband attenuation in dB.
    static func beta(attenuation: Double) -> Double {
        attenuation > 50 ? 0.1102 * (attenuation - 8.7) : 0.5842 * pow04(attenuation - 21) + 0.07886 * (attenuation - 21)
    }

    init(cutoff: Double, halfWidth: Double, beta: Double) {
        self.cutoff = cutoff
        self.halfWidth = halfWidth
        self.beta = beta
        self.inverseI0Beta = 1 / Elementary.besselI0(beta)
    }

    /// The impulse response at `t` input samples from the centre; unit gain at DC.
    func value(at t: Double) -> Double {
        guard abs(t) <= halfWidth else { return 0 }
        let ratio = t / halfWidth
        let window = Elementary.besselI0(beta * (1 - ratio * ratio).squareRoot()) * inverseI0Beta
        let argument = 2 * cutoff * t
        let sinc = argument == 0 ? 1 : Elementary.sin(Double.pi * argument) / (Double.pi * argument)
        return 2 * cutoff * sinc * window
    }

    /// (a)^0.4 for Kaiser's mid-range β formula, via exp/log.
    private static func pow04(_ a: Double) -> Double {
        a <= 0 ? 0 : Elementary.exp(0.4 * Elementary.log(a))
    }
}
