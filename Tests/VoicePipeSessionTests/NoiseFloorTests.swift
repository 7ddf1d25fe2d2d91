import Testing
import VoicePipeCore
import VoicePipeSession
import VoicePipeTestSupport

/// The speech-band meter and the noise-floor tracker the adaptive voice gate stands on.
struct NoiseFloorTests {
    static func measure(_ samples: [Double], frame: Int = 512) -> [Double] {
        var meter = SpeechBandMeter()
        let int16 = Signals.int16(samples)
        return stride(from: 0, to: int16.count, by: frame).map { start in
            meter.measure(int16[start..<min(start + frame, int16.count)], sampleRate: 16_000)
        }
    }

    @Test func aToneInTheSpeechBandReadsItsRMS() {
        // A sine of peak −20 dBFS has an RMS of −23.01 dBFS; past the filters' settling, 1 kHz is
        // in the pass band.
        let levels = Self.measure(Signals.sine(frequency: 1_000, amplitude: Signals.amplitude(dBFS: -20), sampleRate: 16_000, frames: 16_000))
        for level in levels.dropFirst(2) { #expect(abs(level - -23.01) < 0.2, "\(level)") }
    }

    @Test func rumbleBelowTheBandIsThirtyDecibelsDown() {
        let levels = Self.measure(Signals.sine(frequency: 50, amplitude: Signals.amplitude(dBFS: -20), sampleRate: 16_000, frames: 16_000))
        for level in levels.dropFirst(4) { #expect(level < -23.01 - 30, "\(level)") }
    }

    @Test func theLevelDoesNotDependOnHowTheSignalIsCutIntoFrames() {
        let signal = Signals.int16(Signals.pinkNoise(rms: 0.05, frames: 4_096, seed: 3))
        var whole = SpeechBandMeter()
        let one = whole.measure(signal, sampleRate: 16_000)
        var pieces = SpeechBandMeter()
        var squares = 0.0
        for start in stride(from: 0, to: signal.count, by: 512) {
            let level = pieces.measure(signal[start..<start + 512], sampleRate: 16_000)
            squares += Elementary.exp(level / 10 * Elementary.log(10)) * 512
        }
        #expect(abs(10 * Elementary.log10(squares / 4_096) - one) < 1e-9)
    }

    /// Eight samples a step (where the CPU has AVX2 and FMA) or one: the gate reads the same
    /// levels, frame by frame, to a billionth of a decibel.
    @Test(.enabled(if: BiquadPair.blockKernelAvailable, "this CPU has no AVX2 and FMA"))
    func theBlockKernelReadsTheSameLevelsAsOneSampleAStep() {
        let signal = Signals.int16(Signals.pinkNoise(rms: 0.05, frames: 16_000, seed: 5))
        var block = SpeechBandMeter(usesBlockKernel: true)
        var single = SpeechBandMeter(usesBlockKernel: false)
        for start in stride(from: 0, to: signal.count, by: 500) {
            let frame = signal[start..<min(start + 500, signal.count)]
            let (a, b) = (block.measure(frame, sampleRate: 16_000), single.measure(frame, sampleRate: 16_000))
            #expect(abs(a - b) < 1e-9, "frame at \(start): \(a) against \(b) dBFS")
        }
    }

    @Test func silenceAndEmptyFramesReadMinusInfinity() {
        var meter = SpeechBandMeter()
        #expect(meter.measure([Int16](repeating: 0, count: 512), sampleRate: 16_000) == -.infinity)
        #expect(meter.measure([Int16](), sampleRate: 16_000) == -.infinity)
    }

    @Test func theFloorIsTheTenthPercentileOfTheWindow() {
        var tracker = NoiseFloorTracker(window: .seconds(1), percentile: 0.1)
        #expect(tracker.floorDBFS == .infinity)
        // Ten 100 ms frames at −50 … −41 dBFS: index ⌊9 · 0.1⌋ = 0 of the sorted window.
        for k in 0..<10 { tracker.observe(-50 + Double(k), duration: .milliseconds(100)) }
        #expect(tracker.floorDBFS == -50)
        // The next frame pushes −50 out of the window.
        tracker.observe(-30, duration: .milliseconds(100))
        #expect(tracker.floorDBFS == -49)
        tracker.observe(.nan, duration: .milliseconds(100))
        #expect(tracker.floorDBFS == -49)
    }

    @Test func theFloorFallsWithinAFractionOfTheWindowAndRisesOnlyWhenNearlyAllOfItIsLouder() {
        var tracker = NoiseFloorTracker(window: .seconds(3), percentile: 0.1)
        for _ in 0..<94 { tracker.observe(-50, duration: .milliseconds(32)) }
        #expect(tracker.floorDBFS == -50)
        var frames = 0
        while tracker.floorDBFS == -50 {
            tracker.observe(-70, duration: .milliseconds(32))
            frames += 1
        }
        // A quieter room shows after 10 % of the window (94 frames of 32 ms).
        #expect(frames == 10 && tracker.floorDBFS == -70, "\(frames)")
        frames = 0
        while tracker.floorDBFS == -70 {
            tracker.observe(-40, duration: .milliseconds(32))
            frames += 1
        }
        // A louder one only once the quieter frames are under 10 % of the window.
        #expect(frames == 85 && tracker.floorDBFS == -40, "\(frames)")
    }
}

/// The gate's own regressions: odd chunk sizes and rates, an early turn, frames while a reply plays.
struct VoiceGateFloorRegressionTests {
    /// The embedded runtime's case that once failed ("Index out of range" in the runtime's tests):
    /// a 50 Hz tone at −6 dBFS from the first sample at 500 Hz, in chunks of 2, 10 and 25 samples,
    /// then silence. The gate opens on the first chunk and closes 0.5 s after the tone, exactly.
    @Test(arguments: [2, 10, 25])
    func aToneFromTheFirstSampleAt500HzIsOneTurnWhateverTheChunkSize(chunk: Int) {
        let tone = RuntimeFixtures.toneBurst(lead: 0, tone: 1.0, tail: 0.6, frequency: 50, rate: 500)
        var gate = VoiceGate()
        var changes = [VoiceGate.Change]()
        for start in stride(from: 0, to: tone.count, by: chunk) {
            let samples = tone[start..<min(start + chunk, tone.count)]
            let peak = samples.map { abs(Int($0)) }.max() ?? 0
            if let change = gate.process(samples, level: PeakLevel(peak: peak, floatPeak: Float(peak) / 32_768), sampleRate: 500) { changes.append(change) }
        }
        #expect(changes == [.opened(speechStart: .zero), .closed(speechEnd: .seconds(1), closedAt: .milliseconds(1_500))])
    }

    /// Pink noise at −40 dBFS for 2 s, then 2 s of it 30 dB down (what echo control leaves while a
    /// reply plays), then the noise again: told that those frames are no measure of the room, the
    /// gate stays shut when the noise comes back; learning from them, it opens on the room's noise.
    @Test func framesWhileAReplyPlaysDoNotTeachTheFloor() {
        let rate = 16_000
        let noise = Signals.pinkNoise(rms: Signals.amplitude(dBFS: -40), frames: 8 * rate, seed: 4)
        let signal = Signals.int16(noise.enumerated().map { $0.offset >= 2 * rate && $0.offset < 4 * rate ? $0.element / 31.6 : $0.element })
        func opened(learningDuringTheReply: Bool) -> Bool {
            var gate = VoiceGate()
            var opened = false
            for start in stride(from: 0, to: signal.count, by: 512) {
                let samples = signal[start..<start + 512]
                let peak = samples.map { abs(Int($0)) }.max() ?? 0
                let replyPlays = start >= 2 * rate && start < 4 * rate
                let change = gate.process(samples, level: PeakLevel(peak: peak, floatPeak: Float(peak) / 32_768), sampleRate: 16_000,
                                          learnsFloor: learningDuringTheReply || !replyPlays)
                if case .opened = change { opened = true }
            }
            return opened
        }
        #expect(!opened(learningDuringTheReply: false))
        #expect(opened(learningDuringTheReply: true))
    }
}
