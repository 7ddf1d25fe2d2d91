import Glibc

/// Signal measurements for the quality tables, in Double.
enum Analysis {
    /// A least-squares fit of DC plus a cosine and a sine at each frequency.
    struct ToneFit {
        /// Amplitude at each requested frequency (full scale 1.0).
        var amplitudes: [Double]
        /// Power of the residual (what the model does not explain: noise + distortion).
        var residualPower: Double
        var dc: Double
    }

    /// Fits `x[n] ≈ c + Σ a_k cos(ω_k n) + b_k sin(ω_k n)` by least squares (normal equations,
    /// Gaussian elimination with pivoting), `ω_k = 2π f_k / rate`.
    static func fit(_ x: [Double], rate: Double, frequencies: [Double]) -> ToneFit {
        let columns = 1 + 2 * frequencies.count
        var normal = [[Double]](repeating: [Double](repeating: 0, count: columns + 1), count: columns)
        var basis = [Double](repeating: 0, count: columns)
        let omegas = frequencies.map { 2 * Double.pi * $0 / rate }
        for n in x.indices {
            basis[0] = 1
            for (k, w) in omegas.enumerated() {
                basis[1 + 2 * k] = cos(w * Double(n))
                basis[2 + 2 * k] = sin(w * Double(n))
            }
            for i in 0..<columns {
                for j in i..<columns { normal[i][j] += basis[i] * basis[j] }
                normal[i][columns] += basis[i] * x[n]
            }
        }
        for i in 0..<columns { for j in 0..<i { normal[i][j] = normal[j][i] } }
        // Solve.
        for pivot in 0..<columns {
            let best = (pivot..<columns).max { abs(normal[$0][pivot]) < abs(normal[$1][pivot]) }!
            normal.swapAt(pivot, best)
            let p = normal[pivot][pivot]
            guard p != 0 else { continue }
            for row in 0..<columns where row != pivot {
                let factor = normal[row][pivot] / p
                if factor == 0 { continue }
                for col in pivot...columns { normal[row][col] -= factor * normal[pivot][col] }
            }
        }
        let coefficients = (0..<columns).map { normal[$0][$0] == 0 ? 0 : normal[$0][columns] / normal[$0][$0] }
        var residual = 0.0
        for n in x.indices {
            var model = coefficients[0]
            for (k, w) in omegas.enumerated() {
                model += coefficients[1 + 2 * k] * cos(w * Double(n)) + coefficients[2 + 2 * k] * sin(w * Double(n))
            }
            let e = x[n] - model
            residual += e * e
        }
        let amplitudes = frequencies.indices.map { k in (coefficients[1 + 2 * k] * coefficients[1 + 2 * k] + coefficients[2 + 2 * k] * coefficients[2 + 2 * k]).squareRoot() }
        return ToneFit(amplitudes: amplitudes, residualPower: residual / Double(max(x.count, 1)), dc: coefficients[0])
    }

    /// SINAD in dB of the tone at `frequency`: fitted tone power over residual power.
    static func sinad(_ x: [Double], rate: Double, frequency: Double) -> Double {
        let fit = fit(x, rate: rate, frequencies: [frequency])
        let signal = fit.amplitudes[0] * fit.amplitudes[0] / 2
        return 10 * log10(signal / fit.residualPower)
    }

    static func rms(_ x: [Double]) -> Double {
        guard !x.isEmpty else { return 0 }
        return (x.reduce(0) { $0 + $1 * $1 } / Double(x.count)).squareRoot()
    }

    /// 20·log10(ratio); −∞ for 0.
    static func decibels(_ ratio: Double) -> Double { ratio > 0 ? 20 * log10(ratio) : -.infinity }

    /// The position of the largest |x|, refined by a parabola through it and its neighbours.
    static func peakPosition(_ x: [Double]) -> Double {
        guard x.count >= 3 else { return 0 }
        var index = 1
        for i in 1..<(x.count - 1) where abs(x[i]) > abs(x[index]) { index = i }
        let (a, b, c) = (abs(x[index - 1]), abs(x[index]), abs(x[index + 1]))
        let denominator = a - 2 * b + c
        return Double(index) + (denominator == 0 ? 0 : 0.5 * (a - c) / denominator)
    }

    /// Samples `start ..< end` of `x`, as Double (clamped to what exists).
    static func window<T: BinaryFloatingPoint>(_ x: [T], from start: Int, to end: Int) -> [Double] {
        let s = min(max(start, 0), x.count), e = min(max(end, s), x.count)
        return x[s..<e].map { Double($0) }
    }

    static func window(_ x: [Int16], from start: Int, to end: Int) -> [Double] {
        let s = min(max(start, 0), x.count), e = min(max(end, s), x.count)
        return x[s..<e].map { Double($0) / 32768 }
    }
}
