import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// Both sides of a conversation on the capture's timeline: the captured audio exactly on the
/// left, the reply on the right from the capture position it arrived at, at 16 kHz, cut with a fade.
struct ConversationMixTests {
    static func channels(_ stereo: [Int16]) -> (left: [Int16], right: [Int16]) {
        (stride(from: 0, to: stereo.count, by: 2).map { stereo[$0] }, stride(from: 1, to: stereo.count, by: 2).map { stereo[$0] })
    }

    @Test func theCapturedAudioIsTheLeftChannelExactlyAndTheRightIsSilentWithoutAReply() {
        let mix = ConversationMix()
        let captured = (0..<1_500).map { Int16(truncatingIfNeeded: $0 &* 37) }
        mix.captured(captured[..<512])
        mix.captured(captured[512...])
        let (left, right) = Self.channels(mix.takeFinished())
        #expect(left == captured)
        #expect(right == [Int16](repeating: 0, count: 1_500))
        #expect(mix.takeFinished().isEmpty)
    }

    @Test func aReplyAtTheRecordingsRateStartsAtTheCapturePositionItArrivedAtAndQueuedChunksFollowOn() {
        let mix = ConversationMix()
        mix.captured([Int16](repeating: 1, count: 1_000))
        mix.reply(AudioChunk(sampleRate: 16_000, samples: [Int16](repeating: 500, count: 300)))
        mix.reply(AudioChunk(sampleRate: 16_000, samples: [Int16](repeating: 700, count: 300)))
        mix.captured([Int16](repeating: 2, count: 1_000))
        mix.replyEnded()
        let (left, right) = Self.channels(mix.takeFinished(all: true))
        #expect(left.count == 2_000)
        #expect(right[..<1_000].allSatisfy { $0 == 0 })
        #expect(right[1_000..<1_300].allSatisfy { $0 == 500 })
        #expect(right[1_300..<1_600].allSatisfy { $0 == 700 })
        #expect(right[1_600...].allSatisfy { $0 == 0 })
    }

    @Test func aReplyThatOutlastsTheCaptureIsHandedOutAtTheEndWithSilenceOnTheLeft() {
        let mix = ConversationMix()
        mix.captured([Int16](repeating: 3, count: 100))
        mix.reply(AudioChunk(sampleRate: 16_000, samples: [Int16](repeating: 900, count: 400)))
        #expect(Self.channels(mix.takeFinished()).left.count == 100)
        let (left, right) = Self.channels(mix.takeFinished(all: true))
        #expect(left == [Int16](repeating: 0, count: 400))
        #expect(right == [Int16](repeating: 900, count: 400))
    }

    /// A 24 kHz reply: 2.4 s of a 1 kHz tone at −6 dBFS becomes exactly 1.6 s at 16 kHz at the
    /// same level (±0.1 dB), starting where it arrived: the onset lands within 2 samples.
    @Test func aReplyAt24kHzIsResampledToTheSameLevelAndLengthAndPlacedWhereItArrived() {
        let mix = ConversationMix()
        mix.captured([Int16](repeating: 0, count: 8_000))
        let tone = Signals.int16(Signals.sine(frequency: 1_000, amplitude: Signals.amplitude(dBFS: -6), sampleRate: 24_000, frames: 57_600))
        for start in stride(from: 0, to: tone.count, by: 480) {
            mix.reply(AudioChunk(sampleRate: 24_000, samples: Array(tone[start..<min(start + 480, tone.count)])))
        }
        mix.replyEnded()
        mix.captured([Int16](repeating: 0, count: 40_000))
        let (_, right) = Self.channels(mix.takeFinished(all: true))
        let onset = right.firstIndex { abs(Int($0)) > 1_000 } ?? -1
        #expect(abs(onset - 8_000) <= 2, "onset at \(onset)")
        let last = right.lastIndex { abs(Int($0)) > 1_000 } ?? -1
        #expect(abs(last - (8_000 + 38_400)) <= 3, "end at \(last)")
        let middle = right[12_000..<40_000].map { Double($0) / 32_768 }
        #expect(abs(Measurement.dB(Measurement.toneLevel(middle, frequency: 1_000, sampleRate: 16_000)) - (-6)) < 0.1)
    }

    @Test func theSameReplyInOtherChunkSizesGivesTheSameRecording() {
        let tone = Signals.int16(Signals.sine(frequency: 440, amplitude: 0.3, sampleRate: 24_000, frames: 24_000))
        func record(_ size: Int) -> [Int16] {
            let mix = ConversationMix()
            mix.captured([Int16](repeating: 0, count: 512))
            for start in stride(from: 0, to: tone.count, by: size) {
                mix.reply(AudioChunk(sampleRate: 24_000, samples: Array(tone[start..<min(start + size, tone.count)])))
            }
            mix.replyEnded()
            mix.captured([Int16](repeating: 0, count: 20_000))
            return mix.takeFinished(all: true)
        }
        let reference = record(480)
        #expect(record(4_800) == reference)
        #expect(record(77) == reference)
    }

    @Test func aCutEndsTheReplyAtTheCapturePositionWithAFiveMillisecondFade() {
        let mix = ConversationMix()
        mix.reply(AudioChunk(sampleRate: 16_000, samples: [Int16](repeating: 8_100, count: 3_000)))
        mix.captured([Int16](repeating: 0, count: 2_000))
        mix.cut()
        mix.captured([Int16](repeating: 0, count: 2_000))
        let (_, right) = Self.channels(mix.takeFinished(all: true))
        #expect(right.count == 4_000)
        #expect(right[..<1_920].allSatisfy { $0 == 8_100 })
        #expect(right[1_920] == 8_000 && right[1_999] == 100)
        #expect(zip(right[1_920..<1_999], right[1_921..<2_000]).allSatisfy { $0 > $1 })
        #expect(right[2_000...].allSatisfy { $0 == 0 })
    }

    @Test func aReplyChunkThatArrivesAfterTheLastRanOutStartsWhereItArrived() {
        let mix = ConversationMix()
        mix.reply(AudioChunk(sampleRate: 16_000, samples: [Int16](repeating: 400, count: 100)))
        mix.captured([Int16](repeating: 0, count: 500))
        mix.reply(AudioChunk(sampleRate: 16_000, samples: [Int16](repeating: 600, count: 100)))
        mix.captured([Int16](repeating: 0, count: 500))
        let (_, right) = Self.channels(mix.takeFinished(all: true))
        #expect(right[..<100].allSatisfy { $0 == 400 })
        #expect(right[100..<500].allSatisfy { $0 == 0 })
        #expect(right[500..<600].allSatisfy { $0 == 600 })
    }
}
