import Foundation

/// Level and quality measurement in dB: least-squares tone fits, SINAD, RMS, single-bin DFT.
public enum Measurement {
    /// Result of fitting DC + a·cos + b·sin at a known frequency.
    public struct ToneFit {
        /// Peak amplitude of the fitted tone.
        public let amplitude: Double
        /// Phase of the fitted tone at sample 0 of the window, radians (sine convention).
        public let phase: Double
        /// Fitted DC offset.
        public let dc: Double
        /// RMS of what the fit does not explain (noise + distortion + other tones).
        public let residualRMS: Double
        /// Signal-to-noise-and-distortion ratio in dB: tone RMS over residual RMS.
        public var sinad: Double { 20 * log10((amplitude / sqrt(2)) / residualRMS) }
    }

    /// Least-squares fit of DC + tone at `frequency` over `samples`.
    public static func fitTone<S: Collection>(_ samples: S, frequency: Double, sampleRate: Double) -> ToneFit where S.Element: BinaryFloatingPoint {
        fitTones(samples, frequencies: [frequency], sampleRate: sampleRate)[0]
    }

    /// Joint least-squares fit of DC + one tone per frequency; separates tones exactly however
    /// close in level (a strong tone does not leak into a weak one's estimate).
    /// - Returns: one fit per frequency; all share the DC and the residual.
    public static func fitTones<S: Collection>(_ samples: S, frequencies: [Double], sampleRate: Double) -> [ToneFit] where S.Element: BinaryFloatingPoint {
        let x = samples.map { Double($0) }
        let size = 1 + 2 * frequencies.count
        let omegas = frequencies.map { 2 * Double.pi * $0 / sampleRate }
        var m = [[Double]](repeating: [Double](repeating: 0, count: size), count: size)
        var v = [Double](repeating: 0, count: size)
        var basis = [Double](repeating: 0, count: size)
        func fillBasis(_ n: Int) {
            basis[0] = 1
            for (k, w) in omegas.enumerated() {
                basis[1 + 2 * k] = cos(w * Double(n))
                basis[2 + 2 * k] = sin(w * Double(n))
            }
        }
        for (n, value) in x.enumerated() {
            fillBasis(n)
            for i in 0..<size {
                v[i] += basis[i] * value
                for j in 0..<size { m[i][j] += basis[i] * basis[j] }
            }
        }
        let c = solve(m, v)
        var residual = 0.0
        for (n, value) in x.enumerated() {
            fillBasis(n)
            var model = 0.0
            for i in 0..<size { model += c[i] * basis[i] }
            residual += (value - model) * (value - model)
        }
        let residualRMS = (residual / Double(max(x.count, 1))).squareRoot()
        return frequencies.indices.map { k in
            let a = c[1 + 2 * k], b = c[2 + 2 * k]
            return ToneFit(amplitude: (a * a + b * b).squareRoot(), phase: atan2(a, b), dc: c[0], residualRMS: residualRMS)
        }
    }

    /// RMS of the samples.
    public static func rms<S: Collection>(_ samples: S) -> Double where S.Element: BinaryFloatingPoint {
        guard !samples.isEmpty else { return 0 }
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return (sum / Double(samples.count)).squareRoot()
    }

    /// 20·log10 of an amplitude ratio; −∞ for 0.
    public static func dB(_ ratio: Double) -> Double { 20 * log10(ratio) }

    /// Peak amplitude of the component at `frequency` (a single DFT bin with a Blackman–Harris window).
    public static func toneLevel<S: Collection>(_ samples: S, frequency: Double, sampleRate: Double) -> Double where S.Element: BinaryFloatingPoint {
        let x = samples.map { Double($0) }
        let n = Double(x.count)
        var re = 0.0, im = 0.0, windowSum = 0.0
        for (i, value) in x.enumerated() {
            let p = 2 * Double.pi * Double(i) / (n - 1)
            let window = 0.35875 - 0.48829 * cos(p) + 0.14128 * cos(2 * p) - 0.01168 * cos(3 * p)
            let w = 2 * Double.pi * frequency * Double(i) / sampleRate
            re += window * value * cos(w)
            im -= window * value * sin(w)
            windowSum += window
        }
        return 2 * (re * re + im * im).squareRoot() / windowSum
    }

    /// Samples `start ..< end` of `samples` as Double: an analysis window that skips a stream's
    /// onset and tail. The bounds are clamped to what exists, so a short output gives a shorter
    /// (possibly empty) window instead of a trap.
    public static func window<T: BinaryFloatingPoint>(_ samples: [T], from start: Int, to end: Int) -> [Double] {
        samples[clampedRange(count: samples.count, from: start, to: end)].map { Double($0) }
    }

    /// Samples `start ..< end` of Int16 `samples` at full scale 1.0 (x / 32768), clamped like
    /// the floating-point overload.
    public static func window(_ samples: [Int16], from start: Int, to end: Int) -> [Double] {
        samples[clampedRange(count: samples.count, from: start, to: end)].map { Double($0) / 32768 }
    }

    private static func clampedRange(count: Int, from start: Int, to end: Int) -> Range<Int> {
        let lower = min(max(start, 0), count)
        return lower..<min(max(end, lower), count)
    }

    /// Position of the largest |sample|, refined by a parabola through it and its neighbours.
    public static func peakPosition<S: Collection>(_ samples: S) -> Double where S.Element: BinaryFloatingPoint, S.Index == Int {
        let x = samples.map { Double($0) }
        guard let i = x.indices.max(by: { abs(x[$0]) < abs(x[$1]) }) else { return .nan }
        guard i > 0, i < x.count - 1 else { return Double(i) }
        let (a, b, c) = (abs(x[i - 1]), abs(x[i]), abs(x[i + 1]))
        let denominator = a - 2 * b + c
        return denominator == 0 ? Double(i) : Double(i) + 0.5 * (a - c) / denominator
    }

    /// Solves m·x = v by Gaussian elimination with partial pivoting.
    private static func solve(_ m: [[Double]], _ v: [Double]) -> [Double] {
        var a = m
        var b = v
        let n = v.count
        for col in 0..<n {
            let pivot = (col..<n).max { abs(a[$0][col]) < abs(a[$1][col]) } ?? col
            a.swapAt(col, pivot)
            b.swapAt(col, pivot)
            for row in (col + 1)..<n {
                let f = a[row][col] / a[col][col]
                for k in col..<n { a[row][k] -= f * a[col][k] }
                b[row] -= f * b[col]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var s = b[row]
            for k in (row + 1)..<n { s -= a[row][k] * x[k] }
            x[row] = s / a[row][row]
        }
        return x
    }
}
