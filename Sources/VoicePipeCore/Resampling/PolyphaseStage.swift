/// The arbitrary-ratio stage: a polyphase Kaiser-windowed-sinc filter with a wide transition band.
///
/// It converts between the doubled lower rate and the other rate (48 → 32 kHz, 32 → 44.1 kHz, …)
/// while the sharp 2:1 stage does the steep filtering. Its transition band runs from half the
/// lower rate to one and a half times it, so it needs only 10–90 taps.
///
/// Output n sits at input position n·down/up exactly (integer part `base`, fraction
/// `phase / up`), so the ratio is exact for any pair of whole-hertz rates. Up to 4096 phases get
/// their own precomputed row; beyond that (odd rates with a huge `up`), rows of a 4096-phase table
/// are interpolated linearly, which stays 130 dB below the signal.
final class PolyphaseStage {
    let ratio: RationalRatio
    /// Taps per output (even).
    let taps: Int
    private let halfTaps: Int
    /// Phase rows: exact mode `up` rows, interpolated mode `tablePhases + 1` rows, `taps` each.
    private let table: UnsafeMutablePointer<Float>
    /// Interpolated mode only: row differences (row i+1 − row i).
    private let slopes: UnsafeMutablePointer<Float>?
    private let tablePhases: Int
    private let history: SampleHistory
    private let stepWhole: Int
    private let stepPhase: Int
    /// Integer part of the next output's input position.
    private var base = 0
    /// Fractional part of the next output's input position, in units of 1/up.
    private var phase = 0

    /// Most phases that get an exact row of their own.
    static let maximumExactPhases = 4096

    /// - Parameters:
    ///   - inputRate, outputRate: the stage's rates in hertz.
    ///   - lowerRate: the lower of the whole conversion's two rates; the band kept is half of it.
    ///   - maxInputBlock: the most input one ``process(_:into:)`` call receives.
    init(inputRate: Double, outputRate: Double, lowerRate: Double, maxInputBlock: Int) throws(ResamplerError) {
        ratio = try RationalRatio(inputRate: inputRate, outputRate: outputRate)
        let relativeWidth = lowerRate / inputRate
        let (prototype, tapCount) = KaiserLowpass.design(cutoff: relativeWidth, transitionWidth: relativeWidth, attenuation: 110)
        taps = tapCount
        halfTaps = tapCount / 2
        stepWhole = ratio.down / ratio.up
        stepPhase = ratio.down % ratio.up

        let exact = ratio.up <= Self.maximumExactPhases
        tablePhases = exact ? ratio.up : Self.maximumExactPhases
        let rows = exact ? tablePhases : tablePhases + 1
        table = .allocate(capacity: rows * tapCount)
        for row in 0..<rows {
            let fraction = Double(row) / Double(tablePhases)
            for j in 0..<tapCount {
                // Tap j multiplies input base − halfTaps + 1 + j, at distance fraction + halfTaps − 1 − j.
                table[row * tapCount + j] = Float(prototype.value(at: fraction + Double(halfTaps - 1 - j)))
            }
        }
        if exact {
            slopes = nil
        } else {
            let slopes = UnsafeMutablePointer<Float>.allocate(capacity: tablePhases * tapCount)
            for i in 0..<(tablePhases * tapCount) {
                slopes[i] = table[i + tapCount] - table[i]
            }
            self.slopes = slopes
        }
        history = SampleHistory(capacity: 2 * tapCount + maxInputBlock + 4)
        reset()
    }

    deinit {
        table.deallocate()
        slopes?.deallocate()
    }

    /// Input samples the stage must see after an output's position: its lookahead.
    var lookahead: Int { halfTaps }

    func reset() {
        history.reset(leadingZeros: halfTaps - 1)
        base = 0
        phase = 0
    }

    func maxOutput(forInput count: Int) -> Int {
        (count * ratio.up + ratio.down - 1) / ratio.down + 2
    }

    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Int {
        history.append(input)
        var produced = 0
        while base + halfTaps < history.end {
            let window = UnsafePointer(history.pointer(at: base - halfTaps + 1))
            if let slopes {
                let scaled = phase * tablePhases
                let row = scaled / ratio.up
                let fraction = Float(scaled % ratio.up) / Float(ratio.up)
                output[produced] = Self.interpolatedDot(window, table + row * taps, slopes + row * taps, fraction, taps)
            } else {
                output[produced] = Self.dot(window, table + phase * taps, taps)
            }
            produced += 1
            base += stepWhole
            phase += stepPhase
            if phase >= ratio.up {
                phase -= ratio.up
                base += 1
            }
        }
        history.discard(before: base - halfTaps + 1)
        return produced
    }

    /// Σ x[j]·c[j], in order.
    @inline(__always)
    static func dot(_ x: UnsafePointer<Float>, _ c: UnsafePointer<Float>, _ count: Int) -> Float {
        var sum: Float = 0
        for j in 0..<count {
            sum += x[j] * c[j]
        }
        return sum
    }

    /// Σ x[j]·(c[j] + f·d[j]), in order: taps interpolated between two table rows.
    @inline(__always)
    static func interpolatedDot(_ x: UnsafePointer<Float>, _ c: UnsafePointer<Float>, _ d: UnsafePointer<Float>, _ f: Float, _ count: Int) -> Float {
        var sum: Float = 0
        for j in 0..<count {
            sum += x[j] * (c[j] + f * d[j])
        }
        return sum
    }
}
