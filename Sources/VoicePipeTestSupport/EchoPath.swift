import Foundation

/// A synthetic loudspeaker-to-microphone path for echo-control tests: a direct path after a delay,
/// then a reverberant tail of exponentially decaying velvet noise (sparse ±1 impulses, about 4 000
/// a second, perceptually the same as dense noise and cheap to convolve), scaled so the echo is a
/// chosen number of dB below the far end. A small stand-in of our own, beside the room simulator.
public struct EchoPath: Sendable {
    /// Taps as (sample offset, gain), in increasing offset.
    public let taps: [(offset: Int, gain: Float)]
    /// The reverberation time (60 dB decay), seconds.
    public let reverberationTime: Double
    /// The delay of the direct path, milliseconds.
    public let delayMilliseconds: Double

    /// Builds a path.
    /// - Parameters:
    ///   - reverberationTime: T60 in seconds (0.1 … 0.6 for the tests' rooms).
    ///   - delayMilliseconds: when the direct sound arrives.
    ///   - echoLossDB: how far the echo's energy is below the far end's (10 dB: the room).
    ///   - directToReverberantDB: the direct sound's energy against the tail's.
    ///   - sampleRate: samples per second.
    ///   - seed: the tail's noise.
    public init(reverberationTime: Double, delayMilliseconds: Double, echoLossDB: Double = 10, directToReverberantDB: Double = 3, sampleRate: Double = 16_000, seed: UInt64 = 0xEC40) {
        self.reverberationTime = reverberationTime
        self.delayMilliseconds = delayMilliseconds
        let direct = Int((delayMilliseconds * sampleRate / 1_000).rounded())
        var generator = SplitMix64(seed: seed)
        let spacing = sampleRate / 4_000
        let length = Int(reverberationTime * sampleRate)
        var tail = [(offset: Int, gain: Double)]()
        var slot = 0.0
        while Int(slot) < length {
            let offset = Int(slot + generator.nextUnit() * spacing) + 1
            let decay = exp(-6.907755 * Double(offset) / sampleRate / reverberationTime)
            tail.append((direct + offset, (generator.nextUnit() < 0.5 ? -1 : 1) * decay))
            slot += spacing
        }
        let tailEnergy = tail.reduce(0) { $0 + $1.gain * $1.gain }
        let tailScale = tailEnergy > 0 ? (pow(10, -directToReverberantDB / 10) / tailEnergy).squareRoot() : 0
        let total = 1 + pow(10, -directToReverberantDB / 10)
        let overall = (pow(10, -echoLossDB / 10) / total).squareRoot()
        taps = [(direct, Float(overall))] + tail.map { ($0.offset, Float($0.gain * tailScale * overall)) }
    }

    /// The echo of `far` at the microphone: `far` convolved with the path, the same length.
    public func echo(of far: [Float]) -> [Float] {
        var out = [Float](repeating: 0, count: far.count)
        far.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { destination in
                for (offset, gain) in taps where offset < source.count {
                    let count = source.count - offset
                    for n in 0..<count {
                        destination[n &+ offset] += gain * source[n]
                    }
                }
            }
        }
        return out
    }
}

extension Measurement {
    /// Mean power (mean square) of `samples[range]`.
    public static func power(_ samples: [Float], _ range: Range<Int>) -> Double {
        guard !range.isEmpty else { return 0 }
        var sum = 0.0
        for n in range { sum += Double(samples[n]) * Double(samples[n]) }
        return sum / Double(range.count)
    }

    /// Echo return loss enhancement over `range`: 10·log10(microphone power / output power).
    public static func erle(microphone: [Float], output: [Float], _ range: Range<Int>) -> Double {
        10 * log10(power(microphone, range) / max(power(output, range), 1e-20))
    }

    /// How a processed signal holds a reference after a short linear filter: the canceller may
    /// delay the near end (a block, or its filterbank's latency) and equalise it (a high-pass
    /// filter), which leaves speech intact; what no such filter explains is residual echo, noise
    /// and distortion.
    public struct LinearFit: Sendable {
        /// The lag (samples) where `estimate` correlates best with `reference`.
        public var lag: Int
        /// The explained part's energy against everything else, dB.
        public var signalToDistortionDB: Double
        /// The explained part's level against the reference's, dB.
        public var levelDB: Double
    }

    /// Fits `estimate[range]` as a 48-tap filter of `reference` around the best lag in
    /// `lags` (least squares on the Toeplitz normal equations) and reports the fit.
    public static func linearFit(estimate: [Float], reference: [Float], _ range: Range<Int>, lags: ClosedRange<Int> = 0...400) -> LinearFit {
        func cross(_ lag: Int) -> Double {
            var sum = 0.0
            for n in range where n - lag >= 0 && n - lag < reference.count { sum += Double(estimate[n]) * Double(reference[n - lag]) }
            return sum
        }
        var bestLag = lags.lowerBound, best = -1.0
        for lag in lags {
            let c = abs(cross(lag))
            if c > best { best = c; bestLag = lag }
        }
        let taps = 48, lead = 8
        let first = bestLag - lead
        var autocorrelation = [Double](repeating: 0, count: taps)
        for k in 0..<taps {
            var sum = 0.0
            for n in range where n - k >= 0 { sum += Double(reference[n]) * Double(reference[n - k]) }
            autocorrelation[k] = sum
        }
        var matrix = [Double](repeating: 0, count: taps * taps)
        for i in 0..<taps { for j in 0..<taps { matrix[i * taps + j] = autocorrelation[abs(i - j)] } }
        for i in 0..<taps { matrix[i * taps + i] += 1e-9 * autocorrelation[0] + 1e-20 }
        var coefficients = (0..<taps).map { cross(first + $0) }
        // Cholesky: matrix = L Lᵀ, then two triangular solves.
        for j in 0..<taps {
            var diagonal = matrix[j * taps + j]
            for k in 0..<j { diagonal -= matrix[j * taps + k] * matrix[j * taps + k] }
            let root = max(diagonal, 1e-30).squareRoot()
            matrix[j * taps + j] = root
            for i in (j + 1)..<taps {
                var value = matrix[i * taps + j]
                for k in 0..<j { value -= matrix[i * taps + k] * matrix[j * taps + k] }
                matrix[i * taps + j] = value / root
            }
        }
        for i in 0..<taps {
            var value = coefficients[i]
            for k in 0..<i { value -= matrix[i * taps + k] * coefficients[k] }
            coefficients[i] = value / matrix[i * taps + i]
        }
        for i in stride(from: taps - 1, through: 0, by: -1) {
            var value = coefficients[i]
            for k in (i + 1)..<taps { value -= matrix[k * taps + i] * coefficients[k] }
            coefficients[i] = value / matrix[i * taps + i]
        }
        var explained = 0.0, rest = 0.0, referenceEnergy = 0.0
        for n in range {
            var target = 0.0
            for k in 0..<taps where n - first - k >= 0 && n - first - k < reference.count {
                target += coefficients[k] * Double(reference[n - first - k])
            }
            explained += target * target
            rest += (Double(estimate[n]) - target) * (Double(estimate[n]) - target)
            referenceEnergy += Double(reference[n]) * Double(reference[n])
        }
        return LinearFit(lag: bestLag, signalToDistortionDB: 10 * log10(max(explained, 1e-20) / max(rest, 1e-20)),
                         levelDB: 10 * log10(max(explained, 1e-20) / max(referenceEnergy, 1e-20)))
    }
}
