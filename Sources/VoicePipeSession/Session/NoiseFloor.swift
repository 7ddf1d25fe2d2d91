import VoicePipeCore

/// The RMS level of a frame in the speech band (300–3 400 Hz), in dBFS, measured frame by frame
/// with the filter state carried across frames.
///
/// Road, fan and rumble noise put most of their energy below 300 Hz, where speech carries little
/// that a gate needs, and a single click sets a frame's peak but hardly its RMS; so this is the
/// level the adaptive voice gate compares with the noise floor.
///
/// Implementation notes: a second-order Butterworth high-pass at 300 Hz and low-pass at 3 400 Hz
/// (RBJ biquads in direct form I, in Double: ``BiquadPair``, eight samples at a time where the
/// CPU has AVX2 and FMA), designed for the rate of the frames and redesigned (state cleared) when that
/// rate changes.
public struct SpeechBandMeter: Sendable, Hashable {
    /// The band's lower and upper edges in hertz.
    public static let band: ClosedRange<Double> = 300...3_400

    private let usesBlockKernel: Bool
    private var sampleRate: SampleRate?
    private var filter: BiquadPair?

    /// - Parameter usesBlockKernel: the pair's eight-sample kernel where the CPU runs it (the
    ///   default); false runs it one sample at a time, as on a CPU without AVX2 and FMA.
    public init(usesBlockKernel: Bool = BiquadPair.blockKernelAvailable) {
        self.usesBlockKernel = usesBlockKernel
    }

    /// Filters one frame and returns its speech-band RMS in dBFS (−∞ for a silent band).
    /// - Parameters:
    ///   - samples: the frame, Int16 (x/32768 is full scale 1.0).
    ///   - sampleRate: their rate; the band's upper edge is kept below 45 % of it.
    /// - Returns: 10·log10 of the mean square of the filtered frame; −∞ for an empty or silent frame.
    public mutating func measure(_ samples: UnsafeBufferPointer<Int16>, sampleRate: SampleRate) -> Double {
        if self.sampleRate != sampleRate { design(for: sampleRate) }
        guard let sum = filter?.sumOfSquares(samples), !samples.isEmpty, sum > 0 else { return -.infinity }
        return 10 * Elementary.log10(sum / Double(samples.count))
    }

    /// ``measure(_:sampleRate:)`` over any collection of samples (an array, a slice).
    public mutating func measure<S: Collection>(_ samples: S, sampleRate: SampleRate) -> Double where S.Element == Int16 {
        if let level = samples.withContiguousStorageIfAvailable({ measure($0, sampleRate: sampleRate) }) { return level }
        return Array(samples).withUnsafeBufferPointer { measure($0, sampleRate: sampleRate) }
    }

    private mutating func design(for rate: SampleRate) {
        sampleRate = rate
        filter = rate == .capture
            ? Self.captureRateFilters[usesBlockKernel ? 1 : 0]
            : Self.filter(for: rate, usesBlockKernel: usesBlockKernel)
    }

    /// The filters for the 16 kHz capture rate, where nearly every meter runs, one sample and eight
    /// at a time: designed once and shared by every meter, because their block matrix (1.4 KB) is
    /// read on every frame of every session, and one copy stays in cache where one per session
    /// would not.
    private static let captureRateFilters = [false, true].map { filter(for: .capture, usesBlockKernel: $0) }

    private static func filter(for rate: SampleRate, usesBlockKernel: Bool) -> BiquadPair {
        let hertz = rate.hertz
        return BiquadPair(.butterworth(highPass: true, cutoff: min(band.lowerBound, 0.2 * hertz), sampleRate: hertz),
                          .butterworth(highPass: false, cutoff: min(band.upperBound, 0.45 * hertz), sampleRate: hertz),
                          usesBlockKernel: usesBlockKernel)
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
