import Testing
import VoicePipeCore
import VoicePipeSession
import VoicePipeTestSupport

/// Speech that starts 0.1 s into the noise, before the gate has heard the room (the kitchen
/// preset's case: the person speaks at once, people talking around them): every utterance is one
/// turn and each turn's speech ends within 0.6 s of where the utterance ends.
struct VoiceGateEarlySpeechTests {
    typealias Grid = VoiceGateInNoiseTests

    /// Each turn as (opened, speech end) in samples; a turn still open at the end is counted too.
    static func turns(_ scene: Grid.Scene, _ options: VoiceGateOptions) -> [(opened: Int, speechEnd: Int)] {
        var gate = VoiceGate(options: options)
        var turns = [(opened: Int, speechEnd: Int)]()
        var openedAt: Int?
        for start in stride(from: 0, to: scene.samples.count, by: Grid.frame) {
            let samples = scene.samples[start..<min(start + Grid.frame, scene.samples.count)]
            let peak = samples.map { abs(Int($0)) }.max() ?? 0
            let level = PeakLevel(peak: peak, floatPeak: Float(peak) / 32_768)
            switch gate.process(samples, level: level, sampleRate: SampleRate(hertz: Double(Grid.rate))) {
            case .opened(let at): openedAt = Grid.sample(at)
            case .closed(let end, _):
                turns.append((openedAt ?? 0, Grid.sample(end)))
                openedAt = nil
            case nil: break
            }
        }
        if let openedAt { turns.append((openedAt, Grid.sample(gate.speechEnd))) }
        return turns
    }

    /// One turn per utterance, opening inside it or at most 0.1 s before (the first utterance's
    /// lead is all the gate has heard of the room), its speech ending within 0.6 s of the utterance's end.
    static func endsWhereTheSpeechEnds(_ scene: Grid.Scene, _ options: VoiceGateOptions = VoiceGateOptions()) -> Bool {
        let turns = Self.turns(scene, options)
        let tolerance = Int(0.6 * Double(Grid.rate))
        return turns.count == scene.utterances.count && zip(turns, scene.utterances).allSatisfy { turn, utterance in
            turn.opened >= utterance.lowerBound - Grid.rate / 10 && turn.opened < utterance.upperBound
                && abs(turn.speechEnd - utterance.upperBound) <= tolerance
        }
    }

    /// The three utterances from 0.1 s, then 1.5 s of noise alone.
    static func scene(_ noise: Grid.Noise, speechDBFS: Double, snr: Double, noises: [Grid.Noise: [Double]] = Grid.noises) -> Grid.Scene {
        Grid.scene(noise, speechDBFS: speechDBFS, noiseDBFS: speechDBFS - snr, lead: 0.1, tail: 1.5, noises: noises)
    }

    /// The kitchen preset's babble (six synthetic talkers: syllable bursts and pauses, so its
    /// frames spread far wider than recorded babble's) at unit RMS.
    static let roomBabble: [Double] = {
        guard var generator = try? RoomNoiseGenerator(RoomNoise(.babble(talkers: 6), levelDBFS: 0), sampleRate: 16_000, seed: 1) else { return [] }
        return Signals.normalised((0..<(16 * Grid.rate)).map { _ in Double(generator.next()) }, rms: 1)
    }()

    /// The gate as it was: the floor trusted from the first frame, learnt frame by frame.
    static let trustedFromTheFirstFrame = VoiceGateOptions(noise: NoiseAdaptation(loudestNoisePeakDBFS: 0, floorKnownAfter: .zero, floorSmoothing: .zero))

    @Test(arguments: Grid.Noise.allCases)
    func speechFromTheFirstTenthOfASecondEndsWhereItEnds(noise: Grid.Noise) {
        var lines = ["\(noise), speech from 0.1 s: fixed / as it was / adaptive (✗: a turn count, start or end wrong)"]
        for snr in [25.0, 20, 10] {
            var cells = [String]()
            for level in Grid.levels {
                let scene = Self.scene(noise, speechDBFS: level, snr: snr)
                let marks = [VoiceGateOptions.fixed, Self.trustedFromTheFirstFrame, VoiceGateOptions()].map { Self.endsWhereTheSpeechEnds(scene, $0) ? "✓" : "✗" }
                cells.append(marks.joined(separator: "/"))
                #expect(Self.endsWhereTheSpeechEnds(scene), "\(noise) at \(level) dBFS, \(snr) dB SNR: \(Self.turns(scene, VoiceGateOptions()))")
            }
            lines.append("\(Int(snr)) dB: " + cells.joined(separator: " "))
        }
        print(lines.joined(separator: "\n"))
    }

    /// The kitchen itself: speech at −20 dBFS from 0.1 s under the preset's babble at −45 dBFS.
    @Test func theKitchensBabbleUnderSpeechFromTheStartGivesThreeTurnsEndingWithTheSpeech() {
        let scene = Self.scene(.babble, speechDBFS: -20, snr: 25, noises: [.babble: Self.roomBabble])
        #expect(Self.endsWhereTheSpeechEnds(scene), "\(Self.turns(scene, VoiceGateOptions())) for \(scene.utterances)")
        #expect(!Self.endsWhereTheSpeechEnds(scene, Self.trustedFromTheFirstFrame))
    }
}
