/// How an ``EchoDelayEstimator`` searches for the echo's delay and when it moves the reference.
public struct EchoDelayEstimatorOptions: Sendable, Hashable {
    /// Lags searched, in seconds: how much later (positive) or earlier (negative) the echo reaches
    /// the microphone than the devices' stamps put the reference.
    public var searchRange: ClosedRange<Double>
    /// Lags left as they are: the canceller's filter models a delay this small itself (the
    /// acoustic path from the loudspeaker, a few milliseconds of stamp jitter).
    public var acceptedRange: ClosedRange<Double>
    /// Where a correction puts the echo's strongest path: this far after the reference, inside
    /// the filter, so a little jitter never moves it before the reference (which no causal filter
    /// can follow).
    public var targetLead: Double
    /// A window's correlation peak must stand this many times above the correlation's RMS over
    /// the search range to count.
    public var minimumPeakRatio: Double
    /// Consecutive windows whose peaks agree (within ``agreementTolerance``) before the lag is
    /// believed: one window of coincidence never moves the reference.
    public var agreeingWindows: Int
    /// Seconds two windows' lags may differ and still agree.
    public var agreementTolerance: Double
    /// A window is looked at only when the reference's RMS over it reaches this (dBFS): with the
    /// speaker silent there is no echo to find.
    public var activeReferenceDBFS: Double

    /// The defaults search from 100 ms early to 450 ms late (a Bluetooth speaker's latency, a
    /// plugin that reports none of its buffering) and leave 0–30 ms to the filter. The peak ratio
    /// and two agreeing windows are measured (`EchoDelayEstimatorTests`): a room's echo at 10 dB
    /// below the reply peaks at 20–60 times the RMS, a talker unrelated to the reply at under 6.
    public init(searchRange: ClosedRange<Double> = -0.1...0.45, acceptedRange: ClosedRange<Double> = -0.002...0.03,
                targetLead: Double = 0.005, minimumPeakRatio: Double = 10, agreeingWindows: Int = 2,
                agreementTolerance: Double = 0.001, activeReferenceDBFS: Double = -50) {
        self.searchRange = searchRange
        self.acceptedRange = acceptedRange
        self.targetLead = targetLead
        self.minimumPeakRatio = minimumPeakRatio
        self.agreeingWindows = agreeingWindows
        self.agreementTolerance = agreementTolerance
        self.activeReferenceDBFS = activeReferenceDBFS
    }
}

/// Finds how late the echo really is against the reference the devices' stamps give, and says
/// how far to move the reference when that is more than the canceller's filter can take.
///
/// ```
///  microphone block (16 kHz) ─▶ ÷4 (mean of 4) ─▶ last 1.024 s ─┐  every 0.256 s, speaker active:
///  reference block  (16 kHz) ─▶ ÷4 (mean of 4) ─▶ last 1.024 s ─┴─▶ GCC-PHAT over 80–1 900 Hz
///      ─▶ peak lag in the search range, peak / RMS ≥ ratio ─▶ agreeing windows ─▶ lag
///      ─▶ outside the accepted range: correction = lag − target lead (the reference moves)
/// ```
///
/// Why: a device's reported delay is often wrong. ALSA's file plugin counts neither its own
/// buffer nor its pipe (the reference was 100 ms early); Bluetooth and USB devices, sound servers
/// and resampling plugins each add latency the driver does not report. A canceller whose filter is
/// a few hundred milliseconds long spends it on that offset and cancels little; one offset by the
/// wrong sign cancels nothing. The generalised cross-correlation with phase transform (Knapp and
/// Carter, 1976) whitens both signals, so a reverberant room and speech's coloured spectrum still
/// give one sharp peak at the direct path.
///
/// Everything is allocated in `init`; nothing per block. Used on the capture thread.
public final class EchoDelayEstimator {
    /// The options it was built with.
    public let options: EchoDelayEstimatorOptions
    /// The lag the last agreeing windows found, in seconds (positive: the echo is later than the
    /// reference); nil before any.
    public private(set) var measuredLag: Double?
    /// Windows looked at (the speaker active) and windows whose peak counted.
    public private(set) var windowsExamined = 0
    public private(set) var windowsConfident = 0
    /// The last window's correlation peak over its RMS (how sure it was); nil before any.
    public private(set) var lastPeakRatio: Double?

    private static let decimation = 4
    private static let rate = Double(EchoBlock.sampleRate.hertz) / Double(decimation)
    private static let window = 4_096
    private static let hop = 1_024
    /// Samples (at 4 kHz) a window needs after a restart before it is looked at: half of it.
    private static let minimumFill = 2_048
    private static let size = 8_192
    private static let band: ClosedRange<Double> = 80...1_900

    private let fft = EchoFourierTransform(size: size)
    private let real: UnsafeMutablePointer<Float>
    private let imaginary: UnsafeMutablePointer<Float>
    private let nearHistory: UnsafeMutablePointer<Float>
    private let farHistory: UnsafeMutablePointer<Float>
    private var written = 0
    private var sinceEstimate = 0
    private var nearSum: Float = 0
    private var farSum: Float = 0
    private var phase = 0
    private var agreeing = 0
    private var candidate = 0.0
    private let lowestLag: Int
    private let highestLag: Int
    private let firstBin: Int
    private let lastBin: Int

    public init(options: EchoDelayEstimatorOptions = EchoDelayEstimatorOptions()) {
        self.options = options
        real = .allocate(capacity: Self.size)
        imaginary = .allocate(capacity: Self.size)
        nearHistory = .allocate(capacity: Self.window)
        nearHistory.initialize(repeating: 0, count: Self.window)
        farHistory = .allocate(capacity: Self.window)
        farHistory.initialize(repeating: 0, count: Self.window)
        let limit = Self.window - 1
        lowestLag = max(-limit, Int((options.searchRange.lowerBound * Self.rate).rounded(.down)))
        highestLag = min(limit, Int((options.searchRange.upperBound * Self.rate).rounded(.up)))
        firstBin = max(1, Int((Self.band.lowerBound / Self.rate * Double(Self.size)).rounded()))
        lastBin = min(Self.size / 2 - 1, Int((Self.band.upperBound / Self.rate * Double(Self.size)).rounded()))
    }

    deinit {
        real.deallocate()
        imaginary.deallocate()
        nearHistory.deallocate()
        farHistory.deallocate()
    }

    /// Takes one block of the microphone and of the reference the canceller got for it (16 kHz,
    /// the same length); returns the seconds to move the reference later (positive) or earlier
    /// when the agreeing windows found the echo outside the accepted range, else nil. After a
    /// correction the estimator starts afresh: its windows held the reference's old timeline.
    public func observe(near: UnsafeBufferPointer<Float>, far: UnsafeBufferPointer<Float>) -> Double? {
        let count = min(near.count, far.count)
        var correction: Double?
        for index in 0..<count {
            nearSum += near[index]
            farSum += far[index]
            phase += 1
            guard phase == Self.decimation else { continue }
            let slot = written % Self.window
            nearHistory[slot] = nearSum / Float(Self.decimation)
            farHistory[slot] = farSum / Float(Self.decimation)
            nearSum = 0
            farSum = 0
            phase = 0
            written += 1
            sinceEstimate += 1
            if written >= Self.minimumFill, sinceEstimate >= Self.hop {
                sinceEstimate = 0
                if let found = estimate() { correction = found }
            }
        }
        return correction
    }

    /// Forgets the windows (the reference moved, or a new stream began); keeps ``measuredLag``.
    public func restart() {
        written = 0
        sinceEstimate = 0
        nearSum = 0
        farSum = 0
        phase = 0
        agreeing = 0
        nearHistory.update(repeating: 0, count: Self.window)
        farHistory.update(repeating: 0, count: Self.window)
    }

    /// One window: the lag of the correlation peak when it is confident, fed to the agreement
    /// count; a correction once enough windows agree on a lag outside the accepted range.
    private func estimate() -> Double? {
        let start = written % Self.window
        var farEnergy: Float = 0
        for index in 0..<Self.window {
            let slot = (start + index) % Self.window
            real[index] = nearHistory[slot]
            imaginary[index] = farHistory[slot]
            farEnergy += farHistory[slot] * farHistory[slot]
        }
        let farDBFS = farEnergy > 0 ? 10 * Elementary.log10(Double(farEnergy) / Double(Self.window)) : -Double.infinity
        guard farDBFS >= options.activeReferenceDBFS else {
            agreeing = 0
            return nil
        }
        windowsExamined += 1
        for index in Self.window..<Self.size {
            real[index] = 0
            imaginary[index] = 0
        }
        fft.transform(real: real, imaginary: imaginary)
        whitenCrossSpectrum()
        fft.transform(real: real, imaginary: imaginary, inverse: true)

        var peak: Float = -.infinity
        var peakLag = 0
        var sumSquares: Float = 0
        for lag in lowestLag...highestLag {
            let value = real[lag >= 0 ? lag : Self.size + lag]
            sumSquares += value * value
            if value > peak {
                peak = value
                peakLag = lag
            }
        }
        let rms = (sumSquares / Float(highestLag - lowestLag + 1)).squareRoot()
        lastPeakRatio = rms > 0 ? Double(peak / rms) : nil
        guard rms > 0, peak / rms >= Float(options.minimumPeakRatio) else {
            agreeing = 0
            return nil
        }
        windowsConfident += 1
        let lag = Double(peakLag) / Self.rate
        if agreeing > 0, abs(lag - candidate) <= options.agreementTolerance {
            agreeing += 1
        } else {
            agreeing = 1
            candidate = lag
        }
        guard agreeing >= options.agreeingWindows else { return nil }
        measuredLag = lag
        guard !options.acceptedRange.contains(lag) else { return nil }
        restart()
        return lag - options.targetLead
    }

    /// Turns the transform of near + i·far into the phase of their cross-spectrum,
    /// near · conj(far) / |near · conj(far)|, over the band (zero elsewhere), Hermitian so its
    /// inverse is the real correlation.
    private func whitenCrossSpectrum() {
        let size = Self.size
        // Bins k and size − k hold both signals' spectra; compute every kept k first, then write.
        for k in firstBin...lastBin {
            let ar = real[k], ai = imaginary[k]
            let br = real[size - k], bi = -imaginary[size - k]
            // near = (a + b) / 2, conj(far) = i · conj(a − b) / 2; their product, times 4.
            let sr = ar + br, si = ai + bi
            let dr = ar - br, di = -(ai - bi)
            // i · (dr + i di) = −di + i dr
            let cr = -di, ci = dr
            let productReal = sr * cr - si * ci
            let productImaginary = sr * ci + si * cr
            let magnitude = (productReal * productReal + productImaginary * productImaginary).squareRoot()
            let scale: Float = magnitude > 1e-20 ? 1 / magnitude : 0
            // Bin k is read only here, and the upper half stays as it was until the mirror below.
            real[k] = productReal * scale
            imaginary[k] = productImaginary * scale
        }
        for k in 0..<firstBin { real[k] = 0; imaginary[k] = 0 }
        for k in (lastBin + 1)...(size / 2) { real[k] = 0; imaginary[k] = 0 }
        for k in 1..<(size / 2) {
            real[size - k] = real[k]
            imaginary[size - k] = -imaginary[k]
        }
    }
}
