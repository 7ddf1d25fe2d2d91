/// The room's deterministic random numbers (SplitMix64), so a seed gives the same room every time;
/// the tests' noise (`SplitMix64` in VoicePipeTestSupport) is this generator too.
public struct RoomRandom: RandomNumberGenerator, Sendable, Hashable {
    private var state: UInt64

    /// A generator that starts from `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// Uniform in [-1, 1).
    public mutating func symmetric() -> Double {
        2 * unit() - 1
    }

    /// Standard normal (Box–Muller; one value per call, the pair's second is dropped for simplicity).
    public mutating func gaussian() -> Double {
        let u = 1 - unit()
        let v = unit()
        return (-2 * Elementary.log(u)).squareRoot() * Elementary.cos(2 * Double.pi * v)
    }
}
