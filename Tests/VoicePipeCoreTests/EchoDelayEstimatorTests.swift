import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// The echo delay estimator on signals whose delay is known exactly: it finds an echo that is
/// late or early by more than the filter can take, to within a decimated sample (0.25 ms), says
/// nothing about delays the filter takes as they are, and never moves the reference on a
/// microphone that holds no echo of it.
struct EchoDelayEstimatorTests {
    /// Feeds `seconds` of a white-noise reference and a microphone that hears it `delay` seconds
    /// late (`gain` down, under independent noise) in 10 ms blocks; every correction and when.
    static func run(_ estimator: EchoDelayEstimator, delay: Double, gain: Double = 0.3, echo: Bool = true, seconds: Double = 6,
                    farAmplitude: Double = 0.1) -> [(at: Double, correction: Double)] {
        let frames = Int(seconds * 16_000)
        let shift = Int((delay * 16_000).rounded())
        let far = Signals.noise(amplitude: farAmplitude, frames: frames + 16_000, seed: 7).map(Float.init)
        let talker = Signals.noise(amplitude: 0.003, frames: frames, seed: 11).map(Float.init)
        var corrections: [(Double, Double)] = []
        for start in stride(from: 0, to: frames, by: 160) {
            var near = [Float](repeating: 0, count: 160)
            let reference = Array(far[(start + 8_000)..<(start + 8_160)])
            for index in 0..<160 {
                let source = start + 8_000 + index - shift
                near[index] = talker[start + index] + (echo ? Float(gain) * far[source] : 0)
            }
            let found = near.withUnsafeBufferPointer { n in reference.withUnsafeBufferPointer { estimator.observe(near: n, far: $0) } }
            if let found { corrections.append((Double(start + 160) / 16_000, found)) }
        }
        return corrections
    }

    @Test(arguments: [0.1, 0.25, -0.04, 0.4])
    func anEchoLaterOrEarlierThanTheFilterTakesIsFoundAndCorrectedToTheTargetLead(delay: Double) throws {
        let estimator = EchoDelayEstimator()
        let corrections = Self.run(estimator, delay: delay)
        let first = try #require(corrections.first, "no correction for an echo \(delay) s late")
        // Two agreeing windows: the first once half a window (0.512 s) is in, the next 0.256 s
        // later; a lag of 0.4 s overlaps that half window by 0.1 s only and needs more of it.
        #expect(first.at <= (delay > 0.3 ? 1.1 : 0.8), "found after \(first.at) s")
        #expect(abs(first.correction - (delay - 0.005)) <= 0.000_25, "correction \(first.correction) for \(delay)")
        #expect(abs((estimator.measuredLag ?? .nan) - delay) <= 0.000_25)
        // Once is enough: the estimator starts afresh on the corrected timeline, which this
        // signal does not follow, so any later correction would be the same size again.
        #expect(corrections.allSatisfy { abs($0.correction - first.correction) <= 0.000_25 })
    }

    @Test(arguments: [0.0, 0.01, 0.029])
    func aDelayTheFilterTakesIsMeasuredButLeftAsItIs(delay: Double) {
        let estimator = EchoDelayEstimator()
        #expect(Self.run(estimator, delay: delay).isEmpty)
        #expect(abs((estimator.measuredLag ?? .nan) - delay) <= 0.000_25)
    }

    @Test func aMicrophoneWithoutEchoOfTheReferenceNeverMovesIt() {
        let estimator = EchoDelayEstimator()
        #expect(Self.run(estimator, delay: 0.1, echo: false, seconds: 30).isEmpty)
        #expect(estimator.windowsExamined >= 50)
        #expect(estimator.windowsConfident == 0)
        #expect(estimator.measuredLag == nil)
        print("no echo: last peak ratio \(estimator.lastPeakRatio ?? 0)")
    }

    @Test func aSilentSpeakerIsNotLookedAt() {
        let estimator = EchoDelayEstimator()
        // A reference at -70 dBFS RMS: under the -50 dBFS the estimator needs.
        #expect(Self.run(estimator, delay: 0.1, farAmplitude: 0.000_5).isEmpty)
        #expect(estimator.windowsExamined == 0)
    }

    @Test func anEchoBuriedInTheTalkerIsStillFoundOnceItAgrees() throws {
        // Echo 30 dB under a talker 10 dB louder than the reference: double talk throughout.
        let estimator = EchoDelayEstimator()
        let corrections = Self.run(estimator, delay: 0.12, gain: 0.03, seconds: 10)
        print("echo 30 dB down under a talker: windows \(estimator.windowsExamined), confident \(estimator.windowsConfident), last peak ratio \(estimator.lastPeakRatio ?? 0)")
        let first = try #require(corrections.first)
        #expect(abs(first.correction - 0.115) <= 0.000_25)
    }
}
