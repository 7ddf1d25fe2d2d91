/// Suppresses the echo a linear echo canceller leaves behind, per frequency bin, only where the
/// residual is echo: a near-end talker's bins pass, so double talk keeps the person speaking.
///
/// ```
///  linear filter's error e (mic − echo estimate) ─┐   10 ms blocks, one thread
///  linear filter's echo estimate y ───────────────┤
///  far-end reference (its level: is there echo?) ─┤
///                                                 ▼
///   256-point frames (96 samples of overlap, power-complementary taper), one FFT for e + i·y
///                                                 ▼
///   per 250 Hz band: regress |E|² on |Y|² and on Y's decaying past (late reverberation the
///   filter is too short for) by covariance, which near-end speech does not bias  ─▶ residual R
///                                                 ▼
///   per band: its echo share ΣR / Σ|E|² and coherence of microphone and estimate; per block:
///   the same over 250 Hz … 4 kHz (which opens the bands' judgement and, for the first 2.5 s of
///   far-end sound while the regression settles, judges every band)
///      ─▶ band in far-end single talk: per bin max(floor, 1 − 1000·R/|E|²), nearly all at the floor
///      └▶ near end in the band:        per bin max(floor, 1 − R/|E|²), only where the residual is
///                                      echo; the judgement holds 200 ms
///                                                 ▼
///                                inverse FFT ─▶ overlap-add ─▶ output
/// ```
/// The output lags the input by ``latencyFrames`` (the frame's overlap, 6 ms). Everything is
/// allocated in `init`; a block allocates nothing.
public final class ResidualEchoSuppressor {
    /// How the suppressor weighs echo against the near end; the defaults are what measured best
    /// over the echo tests' rooms (`EchoQualityMatrixTests`, `EchoCancellerTests` and
    /// `EchoSpeechScoreTests` in VoicePipeIOTests).
    public struct Tuning: Sendable, Hashable {
        /// The deepest attenuation of a bin, dB (positive): the floor of every gain.
        public var maximumAttenuationDB: Double
        /// How many times the residual estimate is taken off a bin in far-end single talk (a bin
        /// the near end still dominates keeps its sound should the judgement be wrong).
        public var singleTalkOverdrive: Float
        /// How many times the residual estimate is taken off a bin of a band the near end is in.
        public var doubleTalkOverdrive: Float
        /// The share of the error's energy (250 Hz … 4 kHz) the residual estimate must reach for a
        /// block to count as far-end single talk.
        public var singleTalkEchoShare: Float
        /// The mean coherence between the microphone and the echo estimate (250 Hz … 4 kHz) at
        /// or above which a block counts as far-end single talk whatever the residual estimate says.
        public var singleTalkCoherence: Float
        /// Blocks the block's near-end judgement holds after it was last made.
        public var doubleTalkHangoverBlocks: Int
        /// The share of a band's error energy its residual estimate must reach for the band to
        /// count as far-end single talk.
        public var bandEchoShare: Float
        /// The mean coherence of a band's bins at or above which the band counts as far-end
        /// single talk whatever its residual estimate says.
        public var bandCoherence: Float
        /// Blocks a band's near-end judgement holds after it was last made (a word's syllables
        /// and the gaps between them keep their sound).
        public var bandHangoverBlocks: Int
        /// The block's echo share (250 Hz … 4 kHz) below which its bands are judged: a block that
        /// is plainly far-end single talk judges no band near-end (a band's figures swing more).
        public var bandGateEchoShare: Float
        /// The block's mean coherence (250 Hz … 4 kHz) below which its bands are judged.
        public var bandGateCoherence: Float
        /// Blocks of far-end sound before bands are judged on their own; until then every band
        /// follows the block's judgement (the regression's statistics average over 1.5 s).
        public var bandWarmUpBlocks: Int
        /// Per-block decay of the late-reverberation regressor (0.93: 0.3 dB per 10 ms, slower
        /// than the rooms' tails, so the regression scales it down rather than missing them).
        public var lateDecay: Float

        /// Measured over the echo tests' rooms (the aligned matrix of T60 0.1 … 0.6 s × 10 … 200 ms
        /// with and without clipping, and rooms whose 60 ms delay the linear filter absorbs
        /// itself): the coherence test at 0.7 took the unaligned rooms from 28–29 dB to 33–37 dB
        /// (0.6 reached 48–56 dB but took double-talk STOI below the microphone's, 0.8 gave
        /// 29–34 dB); a single-talk overdrive of 1000 (every bin the near end does not dominate
        /// by 30 dB goes to the floor) against 6 or 12 is worth 7–25 dB of ERLE at 0.03 of STOI;
        /// the share of 0.1 gave 41 dB against 35 dB at 0.15 on T60 0.6 s.
        ///
        /// The bands' own judgement is what keeps a talker's words (EchoSpeechRecognitionTests:
        /// clean 81 of 81 words): with one judgement per block, blocks of double talk whose quiet
        /// phonemes left the residual 10 % of the error were taken for single talk, the talker went
        /// 8–13 dB down and 43 words were read (WER 49 %); holding the block's judgement 200 ms and
        /// a coherence test at 0.95 reached 74 (12 %) but 34 dB on T60 0.6 s. Per band, with the
        /// block's gate at 0.5 and 0.85 (without it T60 0.6 s fell to 30–36 dB), a hold of 20
        /// blocks (15 read 71 words, 25 read 76), the band coherence test at 0.97 (0.95 read 78,
        /// 0.96–0.98 read 80), a double-talk overdrive of 1 (0.5 read no more; 3 in the held
        /// blocks read 71) and 2.5 s of warm-up (with 1 s, windows in the second and third
        /// seconds fell under 20 dB): 80 words (WER 4.9 %), ERLE 39.8–55.0 dB on the linear rooms
        /// and 31.6 dB clipping (one judgement per block: 48.1–59.8 and 36.1 dB), 20 dB from the
        /// first half second, the near end's double-talk STOI 0.91 and PESQ 1.49 (0.86, 1.19; the
        /// microphone 0.84, 1.11). The cost is where the linear filter absorbs 60 ms of delay
        /// itself (EchoCancellerTests, unaligned): 22.9–27.1 dB there against 30.0–36.7.
        public init(maximumAttenuationDB: Double = 40, singleTalkOverdrive: Float = 1000, doubleTalkOverdrive: Float = 1, singleTalkEchoShare: Float = 0.1,
                    singleTalkCoherence: Float = 0.7, doubleTalkHangoverBlocks: Int = 3, bandEchoShare: Float = 0.1, bandCoherence: Float = 0.97,
                    bandHangoverBlocks: Int = 20, bandGateEchoShare: Float = 0.5, bandGateCoherence: Float = 0.85, bandWarmUpBlocks: Int = 250,
                    lateDecay: Float = 0.93) {
            self.maximumAttenuationDB = maximumAttenuationDB
            self.singleTalkOverdrive = singleTalkOverdrive
            self.doubleTalkOverdrive = doubleTalkOverdrive
            self.singleTalkEchoShare = singleTalkEchoShare
            self.singleTalkCoherence = singleTalkCoherence
            self.doubleTalkHangoverBlocks = doubleTalkHangoverBlocks
            self.bandEchoShare = bandEchoShare
            self.bandCoherence = bandCoherence
            self.bandHangoverBlocks = bandHangoverBlocks
            self.bandGateEchoShare = bandGateEchoShare
            self.bandGateCoherence = bandGateCoherence
            self.bandWarmUpBlocks = bandWarmUpBlocks
            self.lateDecay = lateDecay
        }

        /// The tuning for a suppression level: the floor is 20, 30 or 40 dB down.
        public init(level: EchoSuppressionLevel) {
            switch level {
            case .low: self.init(maximumAttenuationDB: 20)
            case .moderate: self.init(maximumAttenuationDB: 30)
            case .high: self.init(maximumAttenuationDB: 40)
            }
        }
    }

    /// The output's delay against the input, in samples.
    public static let latencyFrames = overlap
    static let fftSize = 256
    static let hop = EchoBlock.frameCount
    static let overlap = fftSize - hop
    static let bins = fftSize / 2 + 1
    static let bandWidth = 4
    static let bands = (bins - 1) / bandWidth
    /// Bands 1 ..< 16 (250 Hz … 4 kHz) decide single talk against double talk.
    static let decisionBands = 1..<16
    /// The bins of the decision bands (250 Hz … 4 kHz).
    static let coherenceBins = (1 + decisionBands.lowerBound * bandWidth)..<(1 + decisionBands.upperBound * bandWidth)
    /// Per-block smoothing of the coherence's spectra (about 25 ms).
    static let spectrumSmoothing: Float = 0.6
    /// Statistics average over about 1.5 s of blocks with far-end sound.
    static let statisticsWeight = 1.0 / 150
    /// Below this mean square of the reference (−70 dBFS), held over the echo's tail, the far end
    /// is silent and every block is the near end's.
    static let farActivityFloor: Float = 1e-7
    /// Per-block decay of the held reference level (1 dB per 10 ms: a 0.3 s tail is 30 dB down).
    static let farLevelDecay: Float = 0.8

    /// The tuning it was built with.
    public let tuning: Tuning
    /// Whether the last block, as a whole (250 Hz … 4 kHz), was judged to hold near-end speech.
    public private(set) var nearEndPresent = false
    /// The last block's residual estimate against the error's energy (250 Hz … 4 kHz).
    public private(set) var echoShare: Float = 0
    /// The last block's mean coherence between microphone and echo estimate (250 Hz … 4 kHz).
    public private(set) var coherence: Float = 0
    private let floorGain: Float
    private let fft = EchoFourierTransform(size: fftSize)
    private let window: UnsafeMutablePointer<Float>
    private let errorHistory: UnsafeMutablePointer<Float>
    private let estimateHistory: UnsafeMutablePointer<Float>
    private let real: UnsafeMutablePointer<Float>
    private let imaginary: UnsafeMutablePointer<Float>
    private let errorReal: UnsafeMutablePointer<Float>
    private let errorImaginary: UnsafeMutablePointer<Float>
    private let errorPower: UnsafeMutablePointer<Float>
    private let estimatePower: UnsafeMutablePointer<Float>
    private let previousEstimatePower: UnsafeMutablePointer<Float>
    private let late: UnsafeMutablePointer<Float>
    /// Smoothed auto- and cross-spectra of the microphone (D = E + Y) and the estimate, per bin.
    private let microphonePower: UnsafeMutablePointer<Float>
    private let smoothedEstimatePower: UnsafeMutablePointer<Float>
    private let crossReal: UnsafeMutablePointer<Float>
    private let crossImaginary: UnsafeMutablePointer<Float>
    private let residual: UnsafeMutablePointer<Float>
    private let tail: UnsafeMutablePointer<Float>
    /// Per band: running means and second moments of (error, estimate, late) band energies, and
    /// the two regression weights.
    private let statistics: UnsafeMutablePointer<BandStatistics>
    private var hangover = 0
    /// Per band: blocks its near-end judgement still holds (0: far-end single talk).
    private let bandHangover: UnsafeMutablePointer<Int>
    /// Per band: whether this block's figures say near end (before the block's gate).
    private let bandNearEnd: UnsafeMutablePointer<Bool>
    /// Blocks with far-end sound since the last reset, up to the warm-up.
    private var farBlocks = 0
    private var farLevel: Float = 0

    struct BandStatistics {
        var error = 0.0, direct = 0.0, late = 0.0
        var directDirect = 0.0, directLate = 0.0, lateLate = 0.0, directError = 0.0, lateError = 0.0
        var directWeight = 0.0, lateWeight = 0.0
    }

    /// A suppressor with `tuning`.
    public init(tuning: Tuning = Tuning()) {
        self.tuning = tuning
        floorGain = Float(Elementary.exp(-tuning.maximumAttenuationDB / 20 * Elementary.log(10)))
        let n = Self.fftSize
        window = .allocate(capacity: n)
        for i in 0..<n {
            let value: Double
            if i < Self.overlap {
                value = Elementary.sin(Double.pi / 2 * (Double(i) + 0.5) / Double(Self.overlap))
            } else if i < Self.hop {
                value = 1
            } else {
                value = Elementary.cos(Double.pi / 2 * (Double(i - Self.hop) + 0.5) / Double(Self.overlap))
            }
            window[i] = Float(value)
        }
        errorHistory = .allocate(capacity: n)
        estimateHistory = .allocate(capacity: n)
        real = .allocate(capacity: n)
        imaginary = .allocate(capacity: n)
        errorReal = .allocate(capacity: Self.bins)
        errorImaginary = .allocate(capacity: Self.bins)
        errorPower = .allocate(capacity: Self.bins)
        estimatePower = .allocate(capacity: Self.bins)
        previousEstimatePower = .allocate(capacity: Self.bins)
        late = .allocate(capacity: Self.bins)
        microphonePower = .allocate(capacity: Self.bins)
        smoothedEstimatePower = .allocate(capacity: Self.bins)
        crossReal = .allocate(capacity: Self.bins)
        crossImaginary = .allocate(capacity: Self.bins)
        residual = .allocate(capacity: Self.bins)
        tail = .allocate(capacity: Self.overlap)
        statistics = .allocate(capacity: Self.bands)
        bandHangover = .allocate(capacity: Self.bands)
        bandNearEnd = .allocate(capacity: Self.bands)
        reset()
    }

    deinit {
        for buffer in [window, errorHistory, estimateHistory, real, imaginary, errorReal, errorImaginary,
                       errorPower, estimatePower, previousEstimatePower, late, microphonePower, smoothedEstimatePower,
                       crossReal, crossImaginary, residual, tail] {
            buffer.deallocate()
        }
        statistics.deallocate()
        bandHangover.deallocate()
        bandNearEnd.deallocate()
    }

    /// Forgets everything learnt: the residual's weights, the histories and the overlap.
    public func reset() {
        errorHistory.initialize(repeating: 0, count: Self.fftSize)
        estimateHistory.initialize(repeating: 0, count: Self.fftSize)
        previousEstimatePower.initialize(repeating: 0, count: Self.bins)
        late.initialize(repeating: 0, count: Self.bins)
        for spectrum in [microphonePower, smoothedEstimatePower, crossReal, crossImaginary] {
            spectrum.initialize(repeating: 0, count: Self.bins)
        }
        tail.initialize(repeating: 0, count: Self.overlap)
        statistics.initialize(repeating: BandStatistics(), count: Self.bands)
        hangover = 0
        bandHangover.initialize(repeating: 0, count: Self.bands)
        bandNearEnd.initialize(repeating: false, count: Self.bands)
        farBlocks = 0
        farLevel = 0
        nearEndPresent = false
        echoShare = 0
        coherence = 0
    }

    /// Suppresses the residual echo in one block of the linear filter's error.
    /// - Parameters:
    ///   - error: one block of the linear canceller's output (microphone less its echo estimate).
    ///   - echoEstimate: the same block's echo estimate (microphone less `error`).
    ///   - farEnd: the reference block the linear filter was given: while it and its echo's tail
    ///     are silent, nothing is suppressed (an estimate made of the microphone alone, such as
    ///     what a DC filter takes off it, is no echo).
    ///   - output: one block for the result, ``latencyFrames`` behind `error`; it may be any
    ///     input's memory.
    /// - Throws: ``EchoControlError/wrongBlockLength(near:far:output:)`` for a buffer that is not
    ///   one block (`near` is the error's length, `far` the estimate's or the reference's).
    public func process(error: UnsafeBufferPointer<Float>, echoEstimate: UnsafeBufferPointer<Float>, farEnd: UnsafeBufferPointer<Float>,
                        into output: UnsafeMutableBufferPointer<Float>) throws(EchoControlError) {
        guard error.count == Self.hop, echoEstimate.count == Self.hop, farEnd.count == Self.hop, output.count == Self.hop,
              let errorBase = error.baseAddress, let estimateBase = echoEstimate.baseAddress, let farBase = farEnd.baseAddress,
              let outputBase = output.baseAddress else {
            throw .wrongBlockLength(near: error.count, far: echoEstimate.count == Self.hop ? farEnd.count : echoEstimate.count, output: output.count)
        }
        var farSquares: Float = 0
        for i in 0..<Self.hop { farSquares += farBase[i] * farBase[i] }
        farLevel = max(farSquares / Float(Self.hop), farLevel * Self.farLevelDecay)
        let n = Self.fftSize, overlap = Self.overlap
        errorHistory.update(from: errorHistory + Self.hop, count: overlap)
        estimateHistory.update(from: estimateHistory + Self.hop, count: overlap)
        (errorHistory + overlap).update(from: errorBase, count: Self.hop)
        (estimateHistory + overlap).update(from: estimateBase, count: Self.hop)
        for i in 0..<n {
            real[i] = window[i] * errorHistory[i]
            imaginary[i] = window[i] * estimateHistory[i]
        }
        fft.transform(real: real, imaginary: imaginary)
        analyse()
        let bandsJudged = farBlocks >= tuning.bandWarmUpBlocks
        for k in 0..<Self.bins {
            let nearEnd = bandsJudged ? bandHangover[max(0, k - 1) / Self.bandWidth] > 0 : nearEndPresent
            let overdrive = nearEnd ? tuning.doubleTalkOverdrive : tuning.singleTalkOverdrive
            let ratio = residual[k] / max(errorPower[k], 1e-20)
            let gain = max(floorGain, min(1, 1 - overdrive * ratio))
            real[k] = gain * errorReal[k]
            imaginary[k] = gain * errorImaginary[k]
        }
        imaginary[0] = 0
        imaginary[n / 2] = 0
        for k in 1..<(n / 2) {
            real[n - k] = real[k]
            imaginary[n - k] = -imaginary[k]
        }
        fft.transform(real: real, imaginary: imaginary, inverse: true)
        let scale = 1 / Float(n)
        for j in 0..<overlap {
            outputBase[j] = tail[j] + window[j] * real[j] * scale
        }
        for j in overlap..<Self.hop {
            outputBase[j] = window[j] * real[j] * scale
        }
        for j in 0..<overlap {
            tail[j] = window[Self.hop + j] * real[Self.hop + j] * scale
        }
    }

    /// Splits the packed spectrum into the error's and the estimate's, updates the per-band
    /// regression and the residual estimate per bin, and judges single or double talk for the
    /// block and for each band.
    private func analyse() {
        let n = Self.fftSize
        for k in 0..<Self.bins {
            let m = (n - k) & (n - 1)
            let a = real[k], b = imaginary[k], c = real[m], d = imaginary[m]
            let er = (a + c) * 0.5, ei = (b - d) * 0.5
            let yr = (b + d) * 0.5, yi = (c - a) * 0.5
            errorReal[k] = er
            errorImaginary[k] = ei
            errorPower[k] = er * er + ei * ei
            let py = yr * yr + yi * yi
            estimatePower[k] = py
            late[k] = tuning.lateDecay * (late[k] + previousEstimatePower[k])
            previousEstimatePower[k] = py
            let dr = er + yr, di = ei + yi
            let keep = Self.spectrumSmoothing
            microphonePower[k] = keep * microphonePower[k] + (1 - keep) * (dr * dr + di * di)
            smoothedEstimatePower[k] = keep * smoothedEstimatePower[k] + (1 - keep) * py
            crossReal[k] = keep * crossReal[k] + (1 - keep) * (dr * yr + di * yi)
            crossImaginary[k] = keep * crossImaginary[k] + (1 - keep) * (di * yr - dr * yi)
        }
        var coherenceSum: Float = 0
        for k in Self.coherenceBins {
            let cross = crossReal[k] * crossReal[k] + crossImaginary[k] * crossImaginary[k]
            coherenceSum += cross / max(microphonePower[k] * smoothedEstimatePower[k], 1e-30)
        }
        coherence = coherenceSum / Float(Self.coherenceBins.count)
        let farActive = farLevel > Self.farActivityFloor
        let w = Self.statisticsWeight
        var residualShare = 0.0, errorShare = 0.0
        for band in 0..<Self.bands {
            let first = band == 0 ? 0 : 1 + band * Self.bandWidth
            let end = 1 + (band + 1) * Self.bandWidth
            var e: Float = 0, y: Float = 0, l: Float = 0
            for k in first..<end {
                e += errorPower[k]; y += estimatePower[k]; l += late[k]
            }
            let be = Double(e), by = Double(y), bl = Double(l)
            if farActive {
                let s = statistics[band]
                statistics[band] = BandStatistics(
                    error: s.error + w * (be - s.error), direct: s.direct + w * (by - s.direct), late: s.late + w * (bl - s.late),
                    directDirect: s.directDirect + w * (by * by - s.directDirect), directLate: s.directLate + w * (by * bl - s.directLate),
                    lateLate: s.lateLate + w * (bl * bl - s.lateLate), directError: s.directError + w * (by * be - s.directError),
                    lateError: s.lateError + w * (bl * be - s.lateError),
                    directWeight: s.directWeight, lateWeight: s.lateWeight)
                solve(band)
            }
            let s = statistics[band]
            let directWeight = Float(s.directWeight), lateWeight = Float(s.lateWeight)
            var bandResidual: Float = 0
            for k in first..<end {
                let r = directWeight * estimatePower[k] + lateWeight * late[k]
                residual[k] = r
                bandResidual += r
            }
            var bandCoherence: Float = 0
            for k in first..<end {
                let cross = crossReal[k] * crossReal[k] + crossImaginary[k] * crossImaginary[k]
                bandCoherence += cross / max(microphonePower[k] * smoothedEstimatePower[k], 1e-30)
            }
            bandNearEnd[band] = bandResidual < tuning.bandEchoShare * e && bandCoherence < tuning.bandCoherence * Float(end - first)
            if Self.decisionBands.contains(band) {
                residualShare += Double(bandResidual)
                errorShare += be
            }
        }
        echoShare = Float(residualShare / max(errorShare, 1e-30))
        let singleTalk = farActive && (residualShare >= Double(tuning.singleTalkEchoShare) * errorShare || coherence >= tuning.singleTalkCoherence)
        if singleTalk {
            hangover = max(0, hangover - 1)
        } else {
            hangover = tuning.doubleTalkHangoverBlocks
        }
        nearEndPresent = !singleTalk || hangover > 0
        if farActive { farBlocks = min(farBlocks + 1, tuning.bandWarmUpBlocks) }
        // With the far end silent every band is the near end's for this block only: the hold is
        // for a talker's syllables, and would let the echo through when the far end speaks again.
        let judgeBands = echoShare < tuning.bandGateEchoShare && coherence < tuning.bandGateCoherence
        for band in 0..<Self.bands {
            if !farActive {
                bandHangover[band] = 1
            } else {
                bandHangover[band] = judgeBands && bandNearEnd[band] ? tuning.bandHangoverBlocks + 1 : max(0, bandHangover[band] - 1)
            }
        }
    }

    /// The least-squares weights of the band's error energy on its direct and late regressors,
    /// from covariances (near-end speech, uncorrelated with the echo, adds no covariance), kept
    /// non-negative.
    private func solve(_ band: Int) {
        var s = statistics[band]
        let c00 = s.directDirect - s.direct * s.direct
        let c11 = s.lateLate - s.late * s.late
        let c01 = s.directLate - s.direct * s.late
        let c0e = s.directError - s.direct * s.error
        let c1e = s.lateError - s.late * s.error
        let ridge = 1e-3 * (c00 + c11) + 1e-30
        let a = c00 + ridge, d = c11 + ridge
        let determinant = a * d - c01 * c01
        var direct = (c0e * d - c1e * c01) / determinant
        var lateWeight = (c1e * a - c0e * c01) / determinant
        if direct < 0 || lateWeight < 0 || !direct.isFinite || !lateWeight.isFinite {
            let directAlone = max(0, c0e / a), lateAlone = max(0, c1e / d)
            // The single regressor that explains more of the covariance.
            if directAlone * c0e >= lateAlone * c1e {
                direct = directAlone; lateWeight = 0
            } else {
                direct = 0; lateWeight = lateAlone
            }
        }
        s.directWeight = min(direct.isFinite ? direct : 0, 1e3)
        s.lateWeight = min(lateWeight.isFinite ? lateWeight : 0, 1e3)
        statistics[band] = s
    }
}
