/// How the convergence guard decides (see ``EchoConvergenceGuard``).
public struct EchoConvergenceGuardOptions: Sendable, Hashable {
    /// The echo removal (dB, in far-end single talk) from which the canceller counts as converged.
    public var convergedDB: Double
    /// How much the guard takes off a block of echo while the canceller has not converged (dB).
    public var attenuationDB: Double
    /// How loud the microphone must be against the loudest reference of the last
    /// ``windowMilliseconds``, times the echo path's learnt peak gain, to count as the person
    /// speaking (dB; Geigel's detector with the path's gain learnt, 0 dB before it is).
    public var doubleTalkMarginDB: Double
    /// Once converged, how far the removal (over about 0.2 s of single talk) must fall below
    /// ``convergedDB`` before the guard counts the canceller as unconverged again (dB).
    public var hysteresisDB: Double
    /// How far back the loudest reference is looked for: the echo path's length.
    public var windowMilliseconds: Int
    /// A reference quieter than this (dBFS peak) is no far end: nothing to guard against.
    public var farActiveDBFS: Double

    public init(convergedDB: Double = 30, attenuationDB: Double = 30, doubleTalkMarginDB: Double = 6, hysteresisDB: Double = 5,
                windowMilliseconds: Int = 250, farActiveDBFS: Double = -50) {
        self.convergedDB = convergedDB
        self.hysteresisDB = hysteresisDB
        self.attenuationDB = attenuationDB
        self.doubleTalkMarginDB = doubleTalkMarginDB
        self.windowMilliseconds = windowMilliseconds
        self.farActiveDBFS = farActiveDBFS
    }
}

/// Holds back the echo a canceller lets through before it has converged: the first moments of
/// the first reply, when an adaptive filter has not yet learned the room, or after the room changed.
///
/// A canceller that starts from nothing passes most of the echo for its first 0.1 s (WebRTC) to
/// 1-2 s (speexdsp); a runtime's voice detector hears that as the user and interrupts its own
/// reply. The guard measures, block by block, how much the canceller removes in far-end single
/// talk (Geigel's detector: the microphone no louder than the loudest recent reference times the
/// echo path's gain, which it learns from echo removed well), and while that is under
/// ``EchoConvergenceGuardOptions/convergedDB`` it attenuates those blocks; once converged, it
/// still holds back a single-talk block the canceller removed less than 10 dB beyond that from (a
/// burst of echo from sound it has not learnt, or an echo as loud as a car's). Blocks in which the person
/// speaks louder than the echo path makes the reference, or with no reference, pass untouched.
/// Gains ramp over 2 ms, so the guard adds no clicks. One thread; nothing allocated after `init`.
public final class EchoConvergenceGuard {
    public let options: EchoConvergenceGuardOptions
    /// Frames over which a change of gain ramps (2 ms at 16 kHz).
    static let rampFrames = 32
    private let farPeaks: UnsafeMutableBufferPointer<Float>
    private var farIndex = 0
    private var microphoneAverage = 0.0
    private var outputAverage = 0.0
    private var gain: Float = 1
    private var converged = false
    /// The loudest microphone peak against the loudest recent reference seen in echo the
    /// canceller removed well: the echo path's peak gain, learnt; it starts at 1 (0 dB).
    private var echoPathGain: Float = 1
    private let attenuation: Float
    private let doubleTalkRatio: Float
    private let farActive: Float
    /// Energy ratios (microphone over output) of ``EchoConvergenceGuardOptions/convergedDB`` and of that less the hysteresis.
    private let convergedRatio: Double
    private let burstRatio: Double
    /// Blocks attenuated so far.
    public private(set) var blocksAttenuated = 0
    /// Far-end single-talk blocks seen so far.
    public private(set) var singleTalkBlocks = 0
    /// The single-talk block after which the canceller first counted as converged, if it has.
    public private(set) var convergedAfterBlocks: Int?

    public init(options: EchoConvergenceGuardOptions = EchoConvergenceGuardOptions()) {
        self.options = options
        farPeaks = .allocate(capacity: max(1, options.windowMilliseconds / EchoBlock.milliseconds))
        farPeaks.initialize(repeating: 0)
        attenuation = Float(Elementary.amplitudeRatio(decibels: -options.attenuationDB))
        doubleTalkRatio = Float(Elementary.amplitudeRatio(decibels: options.doubleTalkMarginDB))
        farActive = Float(Elementary.amplitudeRatio(decibels: options.farActiveDBFS))
        convergedRatio = Elementary.amplitudeRatio(decibels: 2 * options.convergedDB)
        burstRatio = Elementary.amplitudeRatio(decibels: 2 * (options.convergedDB + 10))
    }

    deinit { farPeaks.deallocate() }

    /// The echo removal the canceller achieves in far-end single talk now (dB, averaged over
    /// about 0.2 s of such blocks); nil before any.
    public var removalDB: Double? {
        guard singleTalkBlocks > 0, outputAverage > 0 else { return nil }
        return 10 * Elementary.log10(microphoneAverage / outputAverage)
    }

    /// Guards one block: `near` as the microphone heard it, `far` the aligned reference, `output`
    /// what the canceller made of it, attenuated in place when it is unconverged echo.
    public func apply(near: UnsafeBufferPointer<Float>, far: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        var farPeak: Float = 0, nearPeak: Float = 0
        var nearEnergy = 0.0, outputEnergy = 0.0
        for sample in far { farPeak = max(farPeak, abs(sample)) }
        for index in 0..<min(near.count, output.count) {
            nearPeak = max(nearPeak, abs(near[index]))
            nearEnergy += Double(near[index] * near[index])
            outputEnergy += Double(output[index] * output[index])
        }
        farPeaks[farIndex] = farPeak
        farIndex = (farIndex + 1) % farPeaks.count
        var recentFar: Float = 0
        for peak in farPeaks { recentFar = max(recentFar, peak) }
        let singleTalk = recentFar >= farActive && nearPeak <= recentFar * echoPathGain * doubleTalkRatio
        let blockRemoval = outputEnergy > 0 ? nearEnergy / outputEnergy : .infinity
        var target: Float = 1
        if singleTalk {
            if blockRemoval >= convergedRatio {
                echoPathGain = min(max(nearPeak / recentFar, echoPathGain * 0.995), 4)
            }
            singleTalkBlocks += 1
            // About 0.2 s of single talk (20 blocks) in the averages.
            let weight = singleTalkBlocks < 20 ? 1 / Double(singleTalkBlocks) : 0.05
            microphoneAverage += weight * (nearEnergy - microphoneAverage)
            outputAverage += weight * (outputEnergy - outputAverage)
            let removal = removalDB ?? 0
            if removal >= options.convergedDB {
                converged = true
                if convergedAfterBlocks == nil { convergedAfterBlocks = singleTalkBlocks }
            } else if removal < options.convergedDB - options.hysteresisDB {
                converged = false
            }
            // Unconverged, or a burst of residual the converged canceller lets through (echo of
            // sound it has not heard yet): this block is held back.
            if !converged || blockRemoval < burstRatio {
                target = attenuation
                blocksAttenuated += 1
            }
        }
        // A 2 ms ramp: short enough that a burst's first samples are held back too.
        let start = gain, ramp = min(output.count, Self.rampFrames), step = (target - start) / Float(max(ramp, 1))
        for index in output.indices { output[index] *= index < ramp ? start + step * Float(index + 1) : target }
        gain = target
    }

    /// The canceller started again in the same room (its reference moved): how much it removes is
    /// measured afresh, but the echo path's learnt gain stays, so a person speaking over the reply
    /// is still told from its echo while the canceller converges again.
    public func cancellerRestarted() {
        microphoneAverage = 0
        outputAverage = 0
        converged = false
        singleTalkBlocks = 0
    }

    /// Forgets what it measured, as a fresh canceller would (after a reset of the canceller).
    public func reset() {
        for index in farPeaks.indices { farPeaks[index] = 0 }
        microphoneAverage = 0
        outputAverage = 0
        gain = 1
        echoPathGain = 1
        converged = false
        singleTalkBlocks = 0
        convergedAfterBlocks = nil
    }
}
