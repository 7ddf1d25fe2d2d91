/// The one sharp lowpass every conversion uses: a 2:1 filter whose transition band sits just
/// below the lower rate's Nyquist frequency.
///
/// Working at twice the lower of the two rates (32 kHz for 16 kHz output), it passes 0 … 87.5 % of
/// the lower Nyquist frequency within ±0.08 dB and stops everything from the lower Nyquist
/// frequency up by at least 106 dB. It is an equiripple (Parks–McClellan) design of 129 taps: the
/// delay is 64 samples at twice the lower rate, 2 ms for a 16 kHz output, 4 ms for an 8 kHz input.
///
/// Frequencies here are in cycles per sample at the doubled rate, where the lower rate's Nyquist
/// frequency is 0.25.
enum SharpFilter {
    /// Taps of the designed filter.
    static let length = 129
    /// Half the length: the delay in samples at the doubled rate.
    static let halfLength = 64
    /// Passband edge: 87.5 % of the lower Nyquist frequency.
    static let passbandEdge = 0.875 * 0.25
    /// Stopband edge: the lower Nyquist frequency.
    static let stopbandEdge = 0.25
    /// Design ripple, dB peak (the specification allows ±0.1 dB).
    static let passbandRippleDB = 0.08
    /// Design attenuation, dB (the specification asks for 100 dB).
    static let stopbandAttenuationDB = 106.0

    /// The designed taps, symmetric, unit passband gain; or why the design failed.
    static let taps: Result<[Double], EquirippleDesign.DesignError> = {
        let passDeviation = Elementary.exp(passbandRippleDB / 20 * 2.302585092994046) - 1
        let stopDeviation = Elementary.exp(-stopbandAttenuationDB / 20 * 2.302585092994046)
        return Result { () throws(EquirippleDesign.DesignError) in
            try EquirippleDesign.lowpass(
                length: length,
                passbandEdge: passbandEdge,
                stopbandEdge: stopbandEdge,
                stopbandWeight: passDeviation / stopDeviation)
        }
    }()

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
