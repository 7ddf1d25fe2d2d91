/// The sharp lowpass filters that set every conversion's response: equiripple (Parks–McClellan)
/// designs whose transition band sits just below the lower rate's Nyquist frequency.
///
/// A design for factor D runs at D times the lower rate. It passes 0 … 87.5 % of the lower Nyquist
/// frequency within ±0.08 dB and stops everything from the lower Nyquist frequency up by at least
/// 106 dB. Factor 2 (129 taps) serves every conversion through the doubled lower rate; factor 3
/// (195 taps, at 48 kHz for a 16 kHz output) serves the 2/3 stage from 24 kHz that 48 kHz and its
/// multiples reach through half-band decimators. The delay is about 32 samples of the lower rate
/// whatever the factor: 2 ms for a 16 kHz output, 4 ms for an 8 kHz input.
///
/// Frequencies here are in cycles per sample at D times the lower rate.
enum SharpFilter {
    /// Taps of the factor-2 design.
    static let length = 129
    /// Half the factor-2 length: its delay in samples at the doubled rate.
    static let halfLength = 64
    /// Passband edge of the factor-2 design: 87.5 % of the lower Nyquist frequency.
    static let passbandEdge = passbandEdge(factor: 2)
    /// Stopband edge of the factor-2 design: the lower Nyquist frequency.
    static let stopbandEdge = stopbandEdge(factor: 2)
    /// Design ripple, dB peak (the specification allows ±0.1 dB).
    static let passbandRippleDB = 0.08
    /// Design attenuation, dB (the specification asks for 100 dB).
    static let stopbandAttenuationDB = 106.0

    /// Factors with a design, and the (odd) length that meets the specification for each.
    static let lengths: [Int: Int] = [2: 129, 3: 195]

    static func passbandEdge(factor: Int) -> Double { 0.875 / (2 * Double(factor)) }
    static func stopbandEdge(factor: Int) -> Double { 1 / (2 * Double(factor)) }

    /// The factor-2 taps, symmetric, unit passband gain; or why the design failed.
    static let taps = design(factor: 2)
    private static let taps3 = design(factor: 3)

    /// The taps for a factor (designed once per process, on first use).
    static func taps(factor: Int) -> Result<[Double], EquirippleDesign.DesignError> {
        switch factor {
        case 2: taps
        case 3: taps3
        default: .failure(EquirippleDesign.DesignError(message: "no sharp filter is designed for factor \(factor)"))
        }
    }

    /// A half-band decimator from `rate` that keeps 0 … `band` Hz clean: a Kaiser-windowed sinc with
    /// cutoff rate / 4, so every other tap is zero, whose stopband starts at rate / 2 − band (what
    /// folds onto 0 … band) with the sharp filters' 106 dB. Odd length 4K + 3, so the outermost
    /// taps are not zero.
    static func halfBand(rate: Double, band: Double) -> [Double] {
        let transition = (rate / 2 - 2 * band) / rate
        let (_, span) = KaiserLowpass.design(cutoff: 0.25, transitionWidth: transition, attenuation: stopbandAttenuationDB)
        var length = span + 1
        while length % 4 != 3 { length += 1 }
        let prototype = KaiserLowpass(cutoff: 0.25, halfWidth: Double(length + 1) / 2, beta: KaiserLowpass.beta(attenuation: stopbandAttenuationDB))
        let centre = (length - 1) / 2
        return (0..<length).map { k in
            let offset = k - centre
            // Exact zeros where the sinc crosses zero (even offsets other than the centre).
            return offset != 0 && offset % 2 == 0 ? 0 : prototype.value(at: Double(offset))
        }
    }

    private static func design(factor: Int) -> Result<[Double], EquirippleDesign.DesignError> {
        let passDeviation = Elementary.exp(passbandRippleDB / 20 * 2.302585092994046) - 1
        let stopDeviation = Elementary.exp(-stopbandAttenuationDB / 20 * 2.302585092994046)
        return Result { () throws(EquirippleDesign.DesignError) in
            try EquirippleDesign.lowpass(
                length: lengths[factor] ?? 0,
                passbandEdge: passbandEdge(factor: factor),
                stopbandEdge: stopbandEdge(factor: factor),
                stopbandWeight: passDeviation / stopDeviation)
        }
    }

    /// The taps split for folded polyphase use, as `Float`.
    ///
    /// With h the 129 taps and centre 64:
    /// - `even[t] = h[2t]` for t in 0…32 (`even[32]` is the centre tap h[64]);
    /// - `odd[t] = h[2t + 1]` for t in 0…31.
    /// Symmetry (h[k] = h[128 − k]) means each of these multiplies a pair of input samples.
    struct Polyphase: Sendable {
        let even: [Float]
        let odd: [Float]
    }

    /// The polyphase split scaled by `gain` (2 for the interpolator, which inserts zeros).
    static func polyphase(gain: Double) throws(ResamplerError) -> Polyphase {
        let h: [Double]
        switch taps {
        case .success(let designed): h = designed
        case .failure(let error): throw .filterDesignFailed(error.description)
        }
        let even = (0...32).map { Float(gain * h[2 * $0]) }
        let odd = (0..<32).map { Float(gain * h[2 * $0 + 1]) }
        return Polyphase(even: even, odd: odd)
    }
}
