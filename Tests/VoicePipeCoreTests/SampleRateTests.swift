import Testing
import VoicePipeCore

/// The one rate type: how it prints, the frame and time arithmetic it replaces, and how the wire's
/// whole-hertz field maps onto it.
struct SampleRateTests {
    @Test func aRatePrintsAsPeopleWriteIt() {
        #expect(SampleRate(hertz: 16_000).description == "16000 Hz")
        #expect(SampleRate(hertz: 44_100.5).description == "44100.5 Hz")
        #expect(SampleRate(hertz: -44_100).description == "-44100 Hz")
        #expect(SampleRate(hertz: 0).description == "0 Hz")
        #expect(SampleRate(hertz: .nan).description == "nan Hz")
        #expect(SampleRate(hertz: .infinity).description == "inf Hz")
        #expect(SampleRate(hertz: 1e15).description == "1000000000000000.0 Hz")
    }

    @Test func literalsAndThePinnedRatesAreTheRatesTheyName() {
        let whole: SampleRate = 48_000
        let fractional: SampleRate = 44_100.5
        #expect(whole.hertz == 48_000 && fractional.hertz == 44_100.5)
        #expect(SampleRate.capture == AudioFormat.captureTarget.sampleRate && SampleRate.capture.hertz == 16_000)
        #expect(SampleRate.reply == AudioFormat.wirePlayback.sampleRate && SampleRate.reply == AudioFormat.playback.sampleRate)
        #expect(SampleRate.reply.hertz == 24_000)
    }

    @Test func ratesOrderByHertz() {
        let rates: [SampleRate] = [48_000, 8_000, 44_100, 16_000]
        #expect(rates.sorted() == [8_000, 16_000, 44_100, 48_000])
        #expect(SampleRate(hertz: 22_050) < 22_050.5)
    }

    @Test func durationOfFramesIsExactToTheNanosecondAtAWholeRate() {
        #expect(SampleRate.capture.duration(ofFrames: 16_000) == .seconds(1))
        #expect(SampleRate.capture.duration(ofFrames: 512) == .milliseconds(32))
        // 1 / 24 000 s is 41 666.67 ns: truncated to the nanosecond, as the session's counters were.
        #expect(SampleRate.reply.duration(ofFrames: 1) == .nanoseconds(41_666))
        #expect(SampleRate.reply.duration(ofFrames: 24_001) == .seconds(1) + .nanoseconds(41_666))
        #expect(SampleRate(hertz: 0x1p63).duration(ofFrames: 3) == .zero)   // the largest rate the wire accepts
    }

    @Test func durationAtAFractionalRateAndAtAnUnusableRate() {
        #expect(SampleRate(hertz: 44_100.5).duration(ofFrames: 88_201) == .seconds(2))
        for rate in [0, -16_000, Double.nan, .infinity] {
            #expect(SampleRate(hertz: rate).duration(ofFrames: 16_000) == .zero, "\(rate)")
        }
    }

    @Test func framesInADurationRoundToTheNearestFrame() {
        #expect(SampleRate.capture.frames(in: .milliseconds(100)) == 1_600)
        #expect(SampleRate.capture.frames(in: .seconds(10)) == 160_000)
        #expect(SampleRate(hertz: 44_100).frames(in: .milliseconds(1)) == 44)
        #expect(SampleRate(hertz: 44_100).frames(in: .microseconds(1_010)) == 45)
        #expect(SampleRate(hertz: .nan).frames(in: .seconds(1)) == 0)
        #expect(SampleRate(hertz: -8_000).frames(in: .seconds(1)) == 0)
    }

    @Test func wholeAndRoundedHertz() {
        #expect(SampleRate.capture.wholeHertz == 16_000 && SampleRate.capture.roundedHertz == 16_000)
        #expect(SampleRate(hertz: 16_000.5).wholeHertz == nil && SampleRate(hertz: 16_000.5).roundedHertz == 16_001)
        #expect(SampleRate(hertz: .nan).wholeHertz == nil && SampleRate(hertz: .nan).roundedHertz == 0)
        #expect(SampleRate(hertz: 0x1p63).wholeHertz == nil && SampleRate(hertz: 0x1p63).roundedHertz == .max)
        #expect(SampleRate(hertz: -.infinity).roundedHertz == .min)
    }

    /// The wire's `sampleRate` stays a JSON integer: a fractional rate is written to the nearest
    /// hertz, and the largest rate the wire accepts is written back exactly as it was read.
    @Test func theWireCarriesWholeHertz() {
        #expect(AudioChunkJSON.encode([1], sampleRate: 16_000.4) == #"{"type":"audio.chunk","data":"AQA=","sampleRate":16000}"#)
        let largest = #"{"type":"audio.chunk","data":"AQA=","sampleRate":9223372036854775807}"#
        guard case .chunk(let chunk) = AudioChunkJSON.decode(largest) else {
            Issue.record("the largest wire rate was refused")
            return
        }
        #expect(AudioChunkJSON.encode(chunk.samples, sampleRate: chunk.sampleRate) == largest)
    }
}
