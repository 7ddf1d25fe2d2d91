import Testing
import VoicePipeCore
import VoicePipeSession
import VoicePipeTestSupport

/// The voice gate: thresholds with hysteresis, the hang-over in audio time, digital silence.
struct VoiceGateTests {
    static func level(dBFS: Double) -> PeakLevel {
        let amplitude = Signals.amplitude(dBFS: dBFS)
        return PeakLevel(peak: Int((amplitude * 32_768).rounded()), floatPeak: Float(amplitude))
    }

    static let frame = Duration.milliseconds(32)

    @Test func opensAtTheOpenThresholdAndNotBelow() {
        var gate = VoiceGate()
        #expect(gate.process(Self.level(dBFS: -40.5), duration: Self.frame) == nil)
        #expect(gate.process(Self.level(dBFS: -39.9), duration: Self.frame) == .opened(speechStart: .milliseconds(32)))
        #expect(gate.isOpen)
    }

    @Test func levelsBetweenTheThresholdsKeepItOpenButDoNotOpenIt() {
        var gate = VoiceGate()
        for _ in 0..<50 { #expect(gate.process(Self.level(dBFS: -43), duration: Self.frame) == nil) }
        #expect(!gate.isOpen)
        _ = gate.process(Self.level(dBFS: -10), duration: Self.frame)
        for _ in 0..<50 { #expect(gate.process(Self.level(dBFS: -43), duration: Self.frame) == nil) }
        #expect(gate.isOpen)
        #expect(gate.speechEnd == gate.audioTime)
    }

    @Test func closesWhenTheHangOverOfQuietHasPassedInAudioTime() {
        var gate = VoiceGate(options: VoiceGateOptions(hangOver: .milliseconds(200)))
        _ = gate.process(Self.level(dBFS: -6), duration: .milliseconds(100))
        _ = gate.process(Self.level(dBFS: -60), duration: .milliseconds(100))
        #expect(gate.process(Self.level(dBFS: -60), duration: .milliseconds(99)) == nil)
        #expect(gate.process(Self.level(dBFS: -60), duration: .milliseconds(1)) == .closed(speechEnd: .milliseconds(100), closedAt: .milliseconds(300)))
        #expect(gate.turnPeakDBFS > -6.01 && gate.turnPeakDBFS < -5.99)
    }

    @Test func digitalSilenceNeverOpensItWhateverTheThreshold() {
        var gate = VoiceGate(options: VoiceGateOptions(openThresholdDBFS: -400, closeThresholdDBFS: -400))
        for _ in 0..<100 { #expect(gate.process(PeakLevel(peak: 0, floatPeak: 0), duration: Self.frame) == nil) }
        #expect(!gate.isOpen)
        // The quietest non-zero level does open a gate set that low: it is not digital silence.
        #expect(gate.process(PeakLevel(peak: 0, floatPeak: 1e-9), duration: Self.frame) != nil)
    }

    @Test func aQuietRoomNeverOpensTheDefaultGate() {
        var gate = VoiceGate()
        let noise = Signals.noise(amplitude: Signals.amplitude(dBFS: -55), frames: 16_000 * 30, seed: 7)
        var opened = 0
        for start in stride(from: 0, to: noise.count, by: 512) {
            let slice = noise[start..<min(start + 512, noise.count)]
            let peak = slice.map { abs($0) }.max() ?? 0
            if gate.process(PeakLevel(peak: Int((peak * 32_768).rounded()), floatPeak: Float(peak)), duration: .samples(slice.count, at: 16_000)) != nil { opened += 1 }
        }
        #expect(opened == 0)
    }

    @Test func closeEndsAnOpenTurnAtOnce() {
        var gate = VoiceGate()
        #expect(gate.close() == nil)
        _ = gate.process(Self.level(dBFS: -6), duration: Self.frame)
        _ = gate.process(Self.level(dBFS: -60), duration: Self.frame)
        #expect(gate.close() == .closed(speechEnd: .milliseconds(32), closedAt: .milliseconds(64)))
        #expect(!gate.isOpen)
    }
}
