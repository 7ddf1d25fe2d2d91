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
        let x = samples.map { Double($0) }
        let w = 2 * Double.pi * frequency / sampleRate
        // Normal equations for [1, cos, sin].
        var m = [[Double]](repeating: [0, 0, 0], count: 3)
        var v = [0.0, 0.0, 0.0]
        for (n, value) in x.enumerated() {
            let basis = [1.0, cos(w * Double(n)), sin(w * Double(n))]
            for i in 0..<3 {
                v[i] += basis[i] * value
                for j in 0..<3 { m[i][j] += basis[i] * basis[j] }
            }
        }
        let (dc, a, b) = solve3(m, v)
        var residual = 0.0
        for (n, value) in x.enumerated() {
            let model = dc + a * cos(w * Double(n)) + b * sin(w * Double(n))
            residual += (value - model) * (value - model)
        }
        let amplitude = (a * a + b * b).squareRoot()
        return ToneFit(amplitude: amplitude, phase: atan2(a, b), dc: dc, residualRMS: (residual / Double(max(x.count, 1))).squareRoot())
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

    /// Position of the largest |sample|, refined by a parabola through it and its neighbours.
    public static func peakPosition<S: Collection>(_ samples: S) -> Double where S.Element: BinaryFloatingPoint, S.Index == Int {
        let x = samples.map { Double($0) }
        guard let i = x.indices.max(by: { abs(x[$0]) < abs(x[$1]) }) else { return .nan }
        guard i > 0, i < x.count - 1 else { return Double(i) }
        let (a, b, c) = (abs(x[i - 1]), abs(x[i]), abs(x[i + 1]))
        let denominator = a - 2 * b + c
        return denominator == 0 ? Double(i) : Double(i) + 0.5 * (a - c) / denominator
    }

    private static func solve3(_ m: [[Double]], _ v: [Double]) -> (Double, Double, Double) {
        var a = m
        var b = v
        for col in 0..<3 {
            let pivot = (col..<3).max { abs(a[$0][col]) < abs(a[$1][col]) } ?? col
            a.swapAt(col, pivot)
            b.swapAt(col, pivot)
            for row in (col + 1)..<3 {
                let f = a[row][col] / a[col][col]
                for k in col..<3 { a[row][k] -= f * a[col][k] }
                b[row] -= f * b[col]
            }
        }
        var x = [0.0, 0.0, 0.0]
        for row in stride(from: 2, through: 0, by: -1) {
            var s = b[row]
            for k in (row + 1)..<3 { s -= a[row][k] * x[k] }
            x[row] = s / a[row][row]
        }
        return (x[0], x[1], x[2])
    }
}
