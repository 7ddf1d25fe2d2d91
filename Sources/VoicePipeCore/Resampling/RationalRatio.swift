/// The exact ratio between two sample rates, as a reduced fraction `up / down` (output per input).
///
/// Rates are taken to the millihertz, so every real device rate (whole hertz) gives an exact ratio;
/// a fractional rate such as 44 100.5 Hz is still represented exactly to 1 mHz.
public struct RationalRatio: Sendable, Hashable, CustomStringConvertible {
    /// Output frames per `down` input frames.
    public let up: Int
    /// Input frames per `up` output frames.
    public let down: Int

    /// Lowest rate the built-in resampler accepts.
    public static let minimumRate: SampleRate = 1_000
    /// Highest rate the built-in resampler accepts.
    public static let maximumRate: SampleRate = 768_000

    /// The ratio outputRate / inputRate.
    /// - Throws: ``ResamplerError/unsupportedRate(_:)`` for a rate outside 1 kHz … 768 kHz or not finite.
    public init(inputRate: SampleRate, outputRate: SampleRate) throws(ResamplerError) {
        let input = try Self.millihertz(inputRate)
        let output = try Self.millihertz(outputRate)
        let divisor = Self.gcd(input, output)
        up = output / divisor
        down = input / divisor
    }

    /// A ratio from two positive integers, reduced.
    init(up: Int, down: Int) {
        let divisor = Self.gcd(up, down)
        self.up = up / divisor
        self.down = down / divisor
    }

    /// The length of a whole stream's output: `inputFrames × up / down`, rounded to the nearest
    /// integer with halves rounded up. Exact for any length (128-bit intermediate).
    public func outputFrames(forInputFrames inputFrames: Int) -> Int {
        // floor((2·n·up + down) / (2·down))
        let product = (2 * inputFrames).multipliedFullWidth(by: up)
        let (low, overflow) = product.low.addingReportingOverflow(UInt(down))
        let numerator = (high: product.high + (overflow ? 1 : 0), low: low)
        let quotient = (2 * down).dividingFullWidth(numerator).quotient
        return quotient
    }

    public var description: String { "\(up)/\(down)" }

    static func millihertz(_ rate: SampleRate) throws(ResamplerError) -> Int {
        guard rate.hertz.isFinite, rate >= minimumRate, rate <= maximumRate else { throw .unsupportedRate(rate) }
        return Int((rate.hertz * 1000).rounded())
    }

    static func gcd(_ a: Int, _ b: Int) -> Int {
        var (x, y) = (a, b)
        while y != 0 { (x, y) = (y, x % y) }
        return x
    }
}
