import Foundation

extension Measurement {
    /// Power spectral density (dB, arbitrary reference) around `frequency`: Welch's method with
    /// Hann-windowed segments of `segment` samples, averaged over seven frequencies spread across
    /// ±1/6 octave, so a noise's level at one frequency is read to about ±0.2 dB from ten seconds.
    public static func spectralDensityDB<S: Collection>(_ samples: S, at frequency: Double, sampleRate: Double, segment: Int = 1024) -> Double where S.Element: BinaryFloatingPoint {
        let x = samples.map { Double($0) }
        let window = (0..<segment).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(segment)) }
        var total = 0.0
        var count = 0
        for step in -3...3 {
            let f = frequency * pow(2, Double(step) / 18)
            let (stepCos, stepSin) = (cos(2 * Double.pi * f / sampleRate), sin(2 * Double.pi * f / sampleRate))
            var start = 0
            while start + segment <= x.count {
                var re = 0.0, im = 0.0, c = 1.0, s = 0.0
                for i in 0..<segment {
                    let value = x[start + i] * window[i]
                    re += value * c
                    im -= value * s
                    (c, s) = (c * stepCos - s * stepSin, s * stepCos + c * stepSin)
                }
                total += re * re + im * im
                count += 1
                start += segment / 2
            }
        }
        return 10 * log10(total / Double(max(count, 1)))
    }

    /// Reverberation time (T60, seconds) of an impulse response's tail: Schroeder's backward
    /// integration, a straight line fitted from −5 dB to −25 dB, extrapolated to 60 dB.
    public static func reverberationTime<S: Collection>(_ response: S, sampleRate: Double) -> Double where S.Element: BinaryFloatingPoint {
        let energy = response.map { Double($0) * Double($0) }
        var remaining = [Double](repeating: 0, count: energy.count)
        var sum = 0.0
        for index in energy.indices.reversed() {
            sum += energy[index]
            remaining[index] = sum
        }
        guard sum > 0 else { return .nan }
        var points: [(Double, Double)] = []
        for (index, value) in remaining.enumerated() {
            let level = 10 * log10(value / sum)
            if level <= -5 && level >= -25 { points.append((Double(index) / sampleRate, level)) }
        }
        guard points.count > 1 else { return .nan }
        let meanT = points.map(\.0).reduce(0, +) / Double(points.count)
        let meanL = points.map(\.1).reduce(0, +) / Double(points.count)
        let covariance = points.map { ($0.0 - meanT) * ($0.1 - meanL) }.reduce(0, +)
        let variance = points.map { ($0.0 - meanT) * ($0.0 - meanT) }.reduce(0, +)
        return -60 / (covariance / variance)
    }
}
