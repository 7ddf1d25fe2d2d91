import VoicePipeCore

/// The RMS level of a frame in the speech band (300–3 400 Hz), in dBFS, measured frame by frame
/// with the filter state carried across frames.
///
/// Road, fan and rumble noise put most of their energy below 300 Hz, where speech carries little
/// that a gate needs, and a single click sets a frame's peak but hardly its RMS; so this is the
/// level the adaptive voice gate compares with the noise floor.
///
/// Implementation notes: a second-order Butterworth high-pass at 300 Hz and low-pass at 3 400 Hz
/// (RBJ biquads, transposed direct form II, in Double), designed for the rate of the frames and
/// redesigned (state cleared) when that rate changes. About 10 multiply-adds per sample.
public struct SpeechBandMeter: Sendable, Hashable {
    /// The band's lower and upper edges in hertz.
    public static let band: ClosedRange<Double> = 300...3_400

    private var sampleRate: SampleRate?
    private var highPass = Biquad.identity
    private var lowPass = Biquad.identity

    public init() {}

    /// Filters one frame and returns its speech-band RMS in dBFS (−∞ for a silent band).
    /// - Parameters:
    ///   - samples: the frame, Int16 (x/32768 is full scale 1.0).
    ///   - sampleRate: their rate; the band's upper edge is kept below 45 % of it.
    /// - Returns: 10·log10 of the mean square of the filtered frame; −∞ for an empty or silent frame.
    public mutating func measure(_ samples: UnsafeBufferPointer<Int16>, sampleRate: SampleRate) -> Double {
        if self.sampleRate != sampleRate { design(for: sampleRate) }
        // The sections' state in locals, so it stays in registers across the frame.
        var (high, low) = (highPass, lowPass)
        var sum = 0.0
        for sample in samples {
            let y = low.process(high.process(Double(sample) / 32_768))
            sum += y * y
        }
        (highPass, lowPass) = (high, low)
        guard !samples.isEmpty, sum > 0 else { return -.infinity }
        return 10 * Elementary.log10(sum / Double(samples.count))
    }

    /// ``measure(_:sampleRate:)`` over any collection of samples (an array, a slice).
    public mutating func measure<S: Collection>(_ samples: S, sampleRate: SampleRate) -> Double where S.Element == Int16 {
        if let level = samples.withContiguousStorageIfAvailable({ measure($0, sampleRate: sampleRate) }) { return level }
        return Array(samples).withUnsafeBufferPointer { measure($0, sampleRate: sampleRate) }
    }

    private mutating func design(for rate: SampleRate) {
        sampleRate = rate
        let hertz = rate.hertz
        highPass = Biquad.butterworth(highPass: true, cutoff: min(Self.band.lowerBound, 0.2 * hertz), sampleRate: hertz)
        lowPass = Biquad.butterworth(highPass: false, cutoff: min(Self.band.upperBound, 0.45 * hertz), sampleRate: hertz)
    }
}

/// One second-order section with its state, in direct form I: the only dependency from one
/// output to the next is one multiply and one subtraction (the transposed form II had three
/// operations on it), which is what bounds a recursive filter's speed.
struct Biquad: Sendable, Hashable {
    var b0, b1, b2, a1, a2: Double
    /// The last two inputs and outputs.
    var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0

    static let identity = Biquad(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)

    /// A Butterworth (Q = 1/√2) high- or low-pass from the RBJ audio-EQ cookbook.
    static func butterworth(highPass: Bool, cutoff: Double, sampleRate: Double) -> Biquad {
        let w0 = 2 * Double.pi * cutoff / sampleRate
        let cosine = Elementary.cos(w0)
        let alpha = Elementary.sin(w0) / (2 * 0.707_106_781_186_547_6)
        let a0 = 1 + alpha
        let edge = (highPass ? 1 + cosine : 1 - cosine) / a0
        let b1 = highPass ? -edge : edge
        return Biquad(b0: edge / 2, b1: b1, b2: edge / 2, a1: -2 * cosine / a0, a2: (1 - alpha) / a0)
    }

    mutating func process(_ x: Double) -> Double {
        // Everything but the last output is summed first, off the recursion's critical path.
        let ahead = b0 * x + b1 * x1 + b2 * x2 - a2 * y2
        let y = ahead - a1 * y1
        (x2, x1, y2, y1) = (x1, x, y1, y)
        return y
    }
}

/// The noise floor under a signal: a low percentile (10 % by default) of the frame levels of
/// the last few seconds, so it falls within a fraction of a second when the room gets quieter and
/// rises only when nearly the whole window is louder, which speech, with its gaps between words,
/// does not fill.
///
/// ```
///  frame level ─▶ arrival order [oldest … newest] ─(window full: drop the oldest)─┐
///                       │ insert                                                  │ remove
///                       ▼                                                         ▼
///                 sorted levels [quietest … loudest] ──index ⌊(n−1)·percentile⌋──▶ floorDBFS
/// ```
/// A percentile rather than the minimum: babble and other fluctuating noise has rare deep dips
/// that would set a minimum far below where the noise usually is. Until the window is full the
/// floor is the percentile of the frames so far. Time is audio time, counted from the frames'
/// durations; the window holds `window / duration` frames of the latest frame's duration.
public struct NoiseFloorTracker: Sendable, Hashable {
    /// How far back the floor looks.
    public let window: Duration
    /// Which fraction of the window's frames lies below the floor (0 is the minimum).
    public let percentile: Double

    /// Audio observed so far (NaN frames excluded): a floor from a few frames is no floor yet.
    public private(set) var heard: Duration = .zero

    private var arrivals: [Double] = []
    private var sorted: [Double] = []

    /// - Parameters:
    ///   - window: the memory of the floor (at least one frame and at most 100 000 are kept).
    ///   - percentile: the fraction of frames below the floor, clamped to 0…1.
    public init(window: Duration, percentile: Double = 0.1) {
        self.window = window
        self.percentile = percentile.isNaN ? 0 : min(max(percentile, 0), 1)
    }

    /// The floor in dBFS: +∞ before any frame, −∞ when digital silence makes up the percentile.
    public var floorDBFS: Double {
        guard !sorted.isEmpty else { return .infinity }
        return sorted[Int(Double(sorted.count - 1) * percentile)]
    }

    /// Takes one frame's level (NaN is ignored) and duration.
    public mutating func observe(_ levelDBFS: Double, duration: Duration) {
        guard !levelDBFS.isNaN else { return }
        let capacity = duration > .zero ? Int(min(max(1, (window / duration).rounded()), 100_000)) : max(1, arrivals.count)
        while arrivals.count >= capacity {
            let oldest = arrivals.removeFirst()
            sorted.remove(at: Self.position(of: oldest, in: sorted))
        }
        heard += max(duration, .zero)
        arrivals.append(levelDBFS)
        sorted.insert(levelDBFS, at: Self.position(of: levelDBFS, in: sorted))
    }

    /// The first index whose level is not below `level` (binary search).
    private static func position(of level: Double, in sorted: [Double]) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < level { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
