/// Elementary functions in pure Swift, for filter design and level reporting.
///
/// The standard library has no `sin`, `exp` or `log`, and Core may not import Foundation or the C
/// library. These run at configuration time (filter design) and once per frame (dBFS), never per
/// sample, so they favour clarity over speed; accuracy is within about 10⁻¹⁵ relative of the C library over the
/// ranges VoicePipe uses (|x| < 10⁶ for the trigonometric functions), which the tests check.
public enum Elementary {
    /// π/2 split for Cody–Waite range reduction: the high part has 33 significant bits, so
    /// q·halfPiHigh is exact for |q| < 2²⁰.
    private static let halfPiHigh = 1.57079632673412561417
    private static let halfPiLow = 6.07710050650619224932e-11
    private static let ln2High = 0.6931471803691238
    private static let ln2Low = 1.9082149292705877e-10

    /// Sine of `x` radians.
    public static func sin(_ x: Double) -> Double {
        guard x.isFinite else { return .nan }
        let (quadrant, r) = reduceByHalfPi(x)
        switch quadrant & 3 {
        case 0: return sinKernel(r)
        case 1: return cosKernel(r)
        case 2: return -sinKernel(r)
        default: return -cosKernel(r)
        }
    }

    /// Cosine of `x` radians.
    public static func cos(_ x: Double) -> Double {
        guard x.isFinite else { return .nan }
        let (quadrant, r) = reduceByHalfPi(x)
        switch quadrant & 3 {
        case 0: return cosKernel(r)
        case 1: return -sinKernel(r)
        case 2: return -cosKernel(r)
        default: return sinKernel(r)
        }
    }

    /// e raised to `x`.
    public static func exp(_ x: Double) -> Double {
        if x.isNaN { return .nan }
        if x > 709.78 { return .infinity }
        if x < -745.2 { return 0 }
        let k = (x / (ln2High + ln2Low)).rounded()
        let r = (x - k * ln2High) - k * ln2Low
        // Taylor series of e^r for |r| ≤ ln2/2: 20 terms reach double precision.
        var term = 1.0
        var sum = 1.0
        for n in 1...20 {
            term *= r / Double(n)
            sum += term
        }
        return scaleByPowerOfTwo(sum, Int(k))
    }

    /// Natural logarithm of `x`; −∞ for 0, NaN for negative input.
    public static func log(_ x: Double) -> Double {
        if x.isNaN || x < 0 { return .nan }
        if x == 0 { return -.infinity }
        if x.isInfinite { return .infinity }
        // x = m · 2^e with m in [1, 2); move m into [√½, √2) so the series argument stays small.
        var e = Double(x.exponent)
        var m = x.significand
        if m > 1.4142135623730951 {
            m /= 2
            e += 1
        }
        // ln m = 2·atanh(s), s = (m − 1)/(m + 1), |s| ≤ 0.1716.
        let s = (m - 1) / (m + 1)
        let s2 = s * s
        var power = s
        var sum = 0.0
        var n = 1.0
        while n < 60 {
            sum += power / n
            power *= s2
            n += 2
        }
        return e * ln2High + (2 * sum + e * ln2Low)
    }

    /// Base-10 logarithm of `x`.
    public static func log10(_ x: Double) -> Double {
        log(x) * 0.43429448190325176
    }

    /// Decibels of an amplitude ratio: 20·log10(ratio); −∞ for 0.
    public static func decibels(amplitudeRatio ratio: Double) -> Double {
        20 * log10(ratio)
    }

    /// The amplitude ratio of a level in decibels: 10^(dB/20).
    public static func amplitudeRatio(decibels: Double) -> Double {
        exp(decibels * 0.11512925464970229)
    }

    /// Modified Bessel function of the first kind, order 0, for the Kaiser window.
    public static func besselI0(_ x: Double) -> Double {
        // Σ ((x/2)^k / k!)²; all terms positive, so the sum is accurate; stops at double precision.
        let halfX = x / 2
        var term = 1.0
        var sum = 1.0
        var k = 1.0
        while k < 500 {
            let factor = halfX / k
            term *= factor * factor
            sum += term
            if term < sum * 1e-17 { break }
            k += 1
        }
        return sum
    }

    /// Reduces `x` to `r` in [−π/4, π/4] with x = q·π/2 + r.
    private static func reduceByHalfPi(_ x: Double) -> (Int, Double) {
        let q = (x / (halfPiHigh + halfPiLow)).rounded()
        let r = (x - q * halfPiHigh) - q * halfPiLow
        return (Int(q), r)
    }

    /// sin(r) for |r| ≤ π/4 by its Taylor series.
    private static func sinKernel(_ r: Double) -> Double {
        let r2 = r * r
        var term = r
        var sum = r
        var n = 1.0
        while n < 30 {
            term *= -r2 / ((n + 1) * (n + 2))
            sum += term
            n += 2
        }
        return sum
    }

    /// cos(r) for |r| ≤ π/4 by its Taylor series.
    private static func cosKernel(_ r: Double) -> Double {
        let r2 = r * r
        var term = 1.0
        var sum = 1.0
        var n = 0.0
        while n < 30 {
            term *= -r2 / ((n + 1) * (n + 2))
            sum += term
            n += 2
        }
        return sum
    }

    /// x · 2^k without overflow in the intermediate power.
    private static func scaleByPowerOfTwo(_ x: Double, _ k: Int) -> Double {
        var result = x
        var remaining = k
        while remaining > 1000 {
            result *= Double(sign: .plus, exponent: 1000, significand: 1)
            remaining -= 1000
        }
        while remaining < -1000 {
            result *= Double(sign: .plus, exponent: -1000, significand: 1)
            remaining += 1000
        }
        return result * Double(sign: .plus, exponent: remaining, significand: 1)
    }
}
