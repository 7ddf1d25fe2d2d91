import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// The speaker's reply output tells an observer what it played and when: every period as the
/// device got it, at consecutive frame positions, stamped with the instant it will be heard.
struct DeviceReplyPeriodObserverTests {
    private struct Seen: Sendable {
        var samples: [Float] = []
        var positions: [Int] = []
        var aheadNanoseconds: [Int64] = []
        var rates: Set<SampleRate> = []
    }

    @Test func everyPeriodWrittenReachesTheObserverWithItsPositionAndTheInstantItIsHeard() throws {
        let speaker = FakeAudioDevice(name: "fake-speaker", format: AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: false))
        // 50 ms written and not yet heard after each write: the period's first frame is 40 ms away.
        speaker.playbackDelayFrames = 2_400
        let seen = Locked(Seen())
        let output = try DeviceReplyOutput(device: PlaybackDevice(speaker)) { period in
            let now = MonotonicClock.nanoseconds()
            let samples = Array(period.samples)
            seen.withLock { seen in
                seen.samples += samples
                seen.positions.append(period.stamp.framePosition)
                seen.aheadNanoseconds.append(period.stamp.instant - now)
                seen.rates.insert(period.sampleRate)
            }
        }
        // 20 ms at 24 kHz, then a cut during a long chunk: the fade and the silence are what played.
        #expect(try output.play(AudioChunk(sampleRate: 24_000, samples: [Int16](repeating: 8_192, count: 480))) == false)
        try output.replyEnded()
        #expect(waitUntil { seen.value.samples.filter { abs($0 - 0.25) < 0.01 }.count >= 900 })
        #expect(try output.play(AudioChunk(sampleRate: 24_000, samples: [Int16](repeating: 8_192, count: 24_000))) == false)
        try output.cut()
        try output.finish()
        let result = seen.value
        #expect(result.samples == speaker.played[0], "the observer saw exactly what the speaker played")
        #expect(result.rates == [48_000])
        #expect(result.positions == (0..<result.positions.count).map { $0 * 480 })
        #expect(result.samples.filter { abs($0 - 0.25) < 0.01 }.count >= 900)
        // The stamp was taken just before the observer ran: 40 ms ahead, less the microseconds between.
        #expect(result.aheadNanoseconds.allSatisfy { $0 <= 40_000_000 && $0 > 30_000_000 }, "\(result.aheadNanoseconds.prefix(5))")
    }
}
