/// Parks–McClellan (Remez exchange) design of odd-length, linear-phase lowpass FIR filters.
///
/// Used once per process to design the resampler's sharp 2:1 filter (see ``SharpFilter``): an
/// equiripple design spends the passband ripple allowance and meets the stopband with about a third
/// fewer taps (and so less delay) than a Kaiser-windowed sinc.
///
/// Implementation notes: the classic algorithm on a dense frequency grid, with the amplitude
/// response A(ω) = Σ aₖ cos kω represented by barycentric Lagrange interpolation in x = cos ω.
/// Frequencies are in cycles per sample (0 … 0.5).
enum EquirippleDesign {
    /// The design failed to converge or was given an impossible specification.
    struct DesignError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// Designs an odd-length linear-phase lowpass filter.
    /// - Parameters:
    ///   - length: number of taps, odd, at least 5.
    ///   - passbandEdge: end of the passband (cycles per sample).
    ///   - stopbandEdge: start of the stopband (cycles per sample).
    ///   - stopbandWeight: weight of stopband error relative to passband error (δp/δs).
    /// - Returns: the impulse response (symmetric, unit gain in the passband).
    static func lowpass(length: Int, passbandEdge: Double, stopbandEdge: Double, stopbandWeight: Double) throws(DesignError) -> [Double] {
        guard length >= 5, length % 2 == 1 else { throw DesignError(message: "equiripple length must be odd and at least 5, got \(length)") }
        guard passbandEdge > 0, passbandEdge < stopbandEdge, stopbandEdge < 0.5 else {
            throw DesignError(message: "band edges must satisfy 0 < pass < stop < 0.5")
        }
        let halfLength = (length - 1) / 2
        let cosineTerms = halfLength + 1
        let extremalCount = cosineTerms + 1

        // Dense grid: about 32 points per extremal, split between the bands by width.
        let density = 32
        let totalWidth = passbandEdge + (0.5 - stopbandEdge)
        let gridSize = density * cosineTerms
        let passCount = max(Int((Double(gridSize) * passbandEdge / totalWidth).rounded()), extremalCount / 2)
        let stopCount = max(gridSize - passCount, extremalCount / 2)
        var frequency = [Double]()
        var desired = [Double]()
        var weight = [Double]()
        frequency.reserveCapacity(passCount + stopCount)
        for i in 0..<passCount {
            frequency.append(passbandEdge * Double(i) / Double(passCount - 1))
            desired.append(1)
            weight.append(1)
        }
        for i in 0..<stopCount {
            frequency.append(stopbandEdge + (0.5 - stopbandEdge) * Double(i) / Double(stopCount - 1))
            desired.append(0)
            weight.append(stopbandWeight)
        }
        let x = frequency.map { Elementary.cos(2 * Double.pi * $0) }
        let grid = frequency.count

        // Initial extremal set: evenly spread over the grid.
        var extremals = (0..<extremalCount).map { $0 * (grid - 1) / (extremalCount - 1) }
        var interpolator = BarycentricInterpolator(nodes: [], values: [])
        var error = [Double](repeating: 0, count: grid)

        var converged = false
        for _ in 0..<100 {
            // Deviation δ over all extremals, then interpolate through the first `cosineTerms` of them.
            let nodes = extremals.map { x[$0] }
            let fullWeights = BarycentricInterpolator.weights(for: nodes)
            var numerator = 0.0
            var denominator = 0.0
            for i in 0..<extremalCount {
                let sign = i % 2 == 0 ? 1.0 : -1.0
                numerator += fullWeights[i] * desired[extremals[i]]
                denominator += fullWeights[i] * sign / weight[extremals[i]]
            }
            let delta = numerator / denominator
            var values = [Double](repeating: 0, count: cosineTerms)
            for i in 0..<cosineTerms {
                let sign = i % 2 == 0 ? 1.0 : -1.0
                values[i] = desired[extremals[i]] - sign * delta / weight[extremals[i]]
            }
            interpolator = BarycentricInterpolator(nodes: Array(nodes[0..<cosineTerms]), values: values)
            for g in 0..<grid {
                error[g] = weight[g] * (desired[g] - interpolator.value(at: x[g]))
            }

            let next = alternatingExtrema(of: error, bandBoundary: passCount, count: extremalCount)
            let largest = next.reduce(0.0) { max($0, abs(error[$1])) }
            guard next.count == extremalCount else { break }
            if next == extremals || (largest - abs(delta)) <= abs(delta) * 1e-9 {
                converged = true
                extremals = next
                break
            }
            extremals = next
        }
        guard converged else { throw DesignError(message: "equiripple design did not converge (length \(length))") }

        // Impulse response from A(ω) sampled at ωₖ = 2πk/length (inverse DCT of a Type I response).
        let count = Double(length)
        let amplitude = (0...halfLength).map { k in interpolator.value(at: Elementary.cos(2 * Double.pi * Double(k) / count)) }
        var taps = [Double](repeating: 0, count: length)
        for n in 0...halfLength {
            var sum = amplitude[0]
            for k in 1...halfLength {
                sum += 2 * amplitude[k] * Elementary.cos(2 * Double.pi * Double(k) * Double(n - halfLength) / count)
            }
            taps[n] = sum / count
            taps[length - 1 - n] = sum / count
        }
        return taps
    }

    /// Picks `count` alternating local extrema of the weighted error, largest first where there are too many.
    private static func alternatingExtrema(of error: [Double], bandBoundary: Int, count: Int) -> [Int] {
        // Signed extrema (positive maxima, negative minima): a one-point hump next to a taller one
        // of the other sign is still an alternation point. Band edges are always candidates.
        var candidates = [Int]()
        for band in [0..<bandBoundary, bandBoundary..<error.count] {
            for i in band {
                if i == band.lowerBound || i == band.upperBound - 1 {
                    candidates.append(i)
                    continue
                }
                let (left, here, right) = (error[i - 1], error[i], error[i + 1])
                if here > 0 && here >= left && here > right || here < 0 && here <= left && here < right {
                    candidates.append(i)
                }
            }
        }
        // Merge neighbours of the same sign, keeping the larger.
        var alternating = [Int]()
        for index in candidates {
            if let last = alternating.last, (error[last] >= 0) == (error[index] >= 0) {
                if abs(error[index]) > abs(error[last]) { alternating[alternating.count - 1] = index }
            } else {
                alternating.append(index)
            }
        }
        // Too many: drop the smaller end (either end keeps the alternation intact).
        while alternating.count > count {
            if abs(error[alternating[0]]) < abs(error[alternating[alternating.count - 1]]) {
                alternating.removeFirst()
            } else {
                alternating.removeLast()
            }
        }
        return alternating
    }
}

/// Barycentric Lagrange interpolation through a few dozen nodes in [−1, 1].
struct BarycentricInterpolator {
    let nodes: [Double]
    let values: [Double]
    let weights: [Double]

    init(nodes: [Double], values: [Double]) {
        self.nodes = nodes
        self.values = values
        self.weights = Self.weights(for: nodes)
    }

    /// wᵢ = 1 / Πⱼ≠ᵢ 2(xᵢ − xⱼ); the factor 2 keeps the product away from underflow.
    static func weights(for nodes: [Double]) -> [Double] {
        nodes.indices.map { i in
            var product = 1.0
            for j in nodes.indices where j != i {
                product *= 2 * (nodes[i] - nodes[j])
            }
            return 1 / product
        }
    }

    func value(at x: Double) -> Double {
        var numerator = 0.0
        var denominator = 0.0
        for i in nodes.indices {
            let difference = x - nodes[i]
            if difference == 0 { return values[i] }
            let term = weights[i] / difference
            numerator += term * values[i]
            denominator += term
        }
        return numerator / denominator
    }
}
