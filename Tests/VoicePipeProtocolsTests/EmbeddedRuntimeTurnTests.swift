import Testing
import VoicePipeCore
import VoicePipeProtocols
import VoicePipeSession
import VoicePipeTestSupport

/// The pure core answers a voice or typed turn with the exact messages and audio the protocol
/// promises, driven with explicit instants.
struct EmbeddedRuntimeTurnTests {
    typealias F = RuntimeFixtures

    /// A core that has greeted session "s-1" at the origin.
    static func started(_ options: EmbeddedRuntimeOptions = EmbeddedRuntimeOptions()) -> EmbeddedRuntimeCore {
        var core = EmbeddedRuntimeCore(options: options)
        core.receive(F.start, at: .origin)
        #expect(F.texts(core.drain(at: .origin)) == [F.greeting])
        return core
    }

    @Test func aVoiceTurnIsAnsweredWithItsExactMessagesThenItsReplyAudio() {
        var core = Self.started()
        let t0 = SessionInstant.seconds(1)
        core.receive(F.chunks(F.toneBurst()).map { F.audio($0) }, at: t0)
        let actions = core.drain(at: t0)
        #expect(F.texts(Array(actions.prefix(6))) == F.burstTurnMessages)
        // The first reply chunk goes with the messages; the next is 20 ms away.
        #expect(actions.count == 7)
        #expect(F.replyChunks(actions).map(\.count) == [480])
        #expect(core.nextDeadline == t0 + .milliseconds(20))
    }

    @Test(arguments: [(-6.0, "−6.0 dBFS", "-6"), (-20.0, "−20.0 dBFS", "-20"), (-3.5, "−3.5 dBFS", "-3.5")])
    func theTranscriptNamesTheSpeechAndTheLoudestFrame(dBFS: Double, peak: String, peakJSON: String) {
        var core = Self.started(EmbeddedRuntimeOptions(pacing: .unpaced))
        core.receive(F.chunks(F.toneBurst(dBFS: dBFS)).map { F.audio($0) }, at: .origin)
        let texts = F.nonAudioTexts(core.drain(at: .origin))
        #expect(texts.first == #"{"type":"transcript","role":"user","text":"2.4 s of speech, peak \#(peak)","final":true}"#)
        #expect(texts.count == 6)
        #expect(texts[3].contains(#""peakDBFS":\#(peakJSON),"#))
    }

    @Test func theReplyIsTheTurnsAudioResampledTo24kHzSampleForSample() throws {
        var core = Self.started(EmbeddedRuntimeOptions(pacing: .unpaced))
        let burst = F.toneBurst()
        core.receive(F.chunks(burst).map { F.audio($0) }, at: .origin)
        let chunks = F.replyChunks(core.drain(at: .origin))
        let reply = chunks.flatMap { $0 }
        // Exactly round(n × 24000 / 16000) samples, in 20 ms chunks, the last shorter.
        #expect(reply.count == 82_176)
        #expect(reply.count == (F.burstTurnSamples * 24_000 + 8_000) / 16_000)
        #expect(chunks.count == 172)
        #expect(chunks.dropLast().allSatisfy { $0.count == 480 })
        #expect(chunks.last?.count == 96)
        // Equal to Core's resampler over the turn's audio, cut however it was cut.
        let reference = try F.resampledReference(Array(burst.prefix(F.burstTurnSamples)))
        #expect(reply == reference)
        // The tone comes back at its frequency and level: 1 kHz at −6.0 dBFS, clean.
        let window = Measurement.window(reply, from: Int(0.6 * 24_000), to: Int(2.8 * 24_000))
        let fit = Measurement.fitTone(window, frequency: 1_000, sampleRate: 24_000)
        #expect(abs(Measurement.dB(fit.amplitude) - -6.0) < 0.1)
        #expect(fit.sinad > 70)
        // The silence before the tone stays silent.
        let lead = Measurement.window(reply, from: 0, to: Int(0.45 * 24_000))
        #expect(lead.allSatisfy { abs($0) < 1e-3 })
    }

    @Test(arguments: [8_000, 22_050, 44_100, 48_000])
    func anyPositiveRateIsTimedByItsOwnRateAndRepliedAtExactLength(rate: Int) {
        var core = Self.started(EmbeddedRuntimeOptions(pacing: .unpaced))
        let burst = F.toneBurst(tone: 1.0, tail: 0.7, rate: rate)
        core.receive(F.chunks(burst, size: rate / 50).map { F.audio($0, rate: rate) }, at: .origin)
        core.receive(F.message(.sessionEnd), at: .origin)
        let actions = core.drain(at: .origin)
        let texts = F.nonAudioTexts(actions)
        let reply = F.replyChunks(actions).flatMap { $0 }
        // The gate closes 0.5 s after the tone, on a 20 ms boundary: 1.5 + 0.5 s of audio.
        let turnSamples = rate * 2
        #expect(texts.first == #"{"type":"transcript","role":"user","text":"1.0 s of speech, peak −6.0 dBFS","final":true}"#)
        #expect(texts[2] == #"{"type":"tool.call","id":"audio_stats-1","name":"audio_stats","input":{"durationSeconds":2,"sampleRate":\#(rate)}}"#)
        #expect(reply.count == (turnSamples * 24_000 + rate / 2) / rate)
        #expect(texts.suffix(2) == [#"{"type":"session.ended","reason":"the client ended the session"}"#, "close"])
    }

    @Test func aRateTheResamplerCannotTakeIsAnsweredWithoutAudio() {
        var core = Self.started(EmbeddedRuntimeOptions(pacing: .unpaced))
        // 500 Hz: below the resampler's 1 kHz; the turn still counts and is described.
        let burst = F.toneBurst(lead: 0, tone: 1.0, tail: 0.6, frequency: 50, rate: 500)
        core.receive(F.chunks(burst, size: 10).map { F.audio($0, rate: 500) }, at: .origin)
        let actions = core.drain(at: .origin)
        let texts = F.nonAudioTexts(actions)
        #expect(F.replyChunks(actions).isEmpty)
        #expect(texts.contains(#"{"type":"debug","message":"audio at 500 Hz cannot be resampled to 24 kHz (the resampler takes 1000 to 768000 Hz): this turn's reply has no audio"}"#))
        #expect(texts.last == #"{"type":"transcript","role":"assistant","text":"Here is what I heard: 1.0 s of your speech. Audio at 500 Hz cannot be resampled, so there is no reply audio.","final":true}"#)
    }

    @Test func anOpenTurnEndsWhenNoAudioCameForTheTimeout() {
        var core = Self.started()
        let t0 = SessionInstant.seconds(2)
        // Up to mid-tone: the gate is open and the input ends there.
        let chunks = F.chunks(F.toneBurst())
        core.receive(chunks.prefix(60).map { F.audio($0) }, at: t0)
        #expect(core.drain(at: t0).isEmpty)
        #expect(core.nextDeadline == t0 + .milliseconds(500))
        #expect(core.drain(at: t0 + .milliseconds(500) - .nanoseconds(1)).isEmpty)
        let actions = core.drain(at: t0 + .milliseconds(500))
        // Speech from 0.480 s to the end of chunk 59 (1.920 s); the turn holds all 60 chunks.
        #expect(F.texts(Array(actions.prefix(6))) == F.voiceTurnMessages(
            speech: "1.4 s", peak: "−6.0 dBFS", durationSeconds: "1.92", audio: "1.920 s",
            peakJSON: "-6", rmsJSON: "-10.3", rms: "−10.3 dBFS", samples: 30_720))
        #expect(F.replyChunks(actions).map(\.count) == [480])
    }

    @Test func theTimeoutCountsFromTheLastAudioAndCanBeSet() {
        var core = Self.started(EmbeddedRuntimeOptions(endOfAudioTimeout: .seconds(2)))
        let chunks = F.chunks(F.toneBurst())
        core.receive(chunks.prefix(40).map { F.audio($0) }, at: .seconds(1))
        #expect(core.nextDeadline == .seconds(3))
        core.receive(F.audio(chunks[40]), at: .seconds(2.5))
        #expect(core.drain(at: .seconds(2.5)).isEmpty)
        #expect(core.nextDeadline == .seconds(4.5))
        #expect(F.texts(core.drain(at: .seconds(4.5))).first?.contains("of speech") == true)
    }

    /// A runtime that comes late to audio already waiting for it (its thread was not scheduled
    /// for longer than the timeout) goes on with the turn: the timeout is for a client that
    /// stopped sending, and the turn is the same one audio sent without the pause makes.
    @Test func audioArrivingPastTheTimeoutContinuesTheTurnUntilNothingComes() {
        var late = Self.started()
        var steady = Self.started()
        let chunks = F.chunks(F.toneBurst())
        late.receive(chunks.prefix(40).map { F.audio($0) }, at: .seconds(1))
        late.receive(chunks.dropFirst(40).map { F.audio($0) }, at: .seconds(2))
        steady.receive(chunks.map { F.audio($0) }, at: .seconds(1))
        let lateTexts = F.nonAudioTexts(late.drain(at: .seconds(2)))
        #expect(lateTexts == F.nonAudioTexts(steady.drain(at: .seconds(1))))
        #expect(lateTexts.filter { $0.contains(#""role":"user""#) }.count == 1, "\(lateTexts)")
        #expect(late.turns == 1)
    }

    @Test func aTypedTurnIsAnsweredWithItsTextAndAThreeToneReply() {
        var core = Self.started(EmbeddedRuntimeOptions(pacing: .unpaced))
        core.receive(F.message(.textInput(text: "Where is my \"order\"?")), at: .seconds(1))
        let actions = core.drain(at: .seconds(1))
        #expect(F.nonAudioTexts(actions) == [
            #"{"type":"transcript","role":"user","text":"Where is my \"order\"?","final":true}"#,
            #"{"type":"classification","label":"text","confidence":1}"#,
            #"{"type":"tool.call","id":"audio_stats-1","name":"audio_stats","input":{"durationSeconds":0,"sampleRate":16000,"source":"text"}}"#,
            #"{"type":"tool.result","id":"audio_stats-1","name":"audio_stats","output":{"peakDBFS":null,"rmsDBFS":null,"samples":0},"durationMs":0}"#,
            #"{"type":"info.message","markdown":"| turn | audio | speech | peak | RMS |\n|---:|---:|---:|---:|---:|\n| 1 | 0.000 s | typed | — | — |"}"#,
            #"{"type":"transcript","role":"assistant","text":"You typed “Where is my \"order\"?”. Here is a short tone for it.","final":true}"#,
        ])
        let chunks = F.replyChunks(actions)
        let tone = chunks.flatMap { $0 }
        // Three 150 ms tones at 24 kHz: 10 800 samples, 22 chunks of 480 and one of 240.
        #expect(tone.count == 10_800)
        #expect(chunks.map(\.count) == Array(repeating: 480, count: 22) + [240])
        for (index, frequency) in [440.0, 554, 659].enumerated() {
            let start = index * 3_600
            // Past the 5 ms ramps: the tone at −12 dBFS, clean.
            let fit = Measurement.fitTone(Measurement.window(tone, from: start + 120, to: start + 3_480), frequency: frequency, sampleRate: 24_000)
            #expect(abs(Measurement.dB(fit.amplitude) - -12) < 0.1, "tone \(index + 1)")
            #expect(fit.sinad > 60, "tone \(index + 1)")
            // Each tone starts and ends on its ramp: no click.
            #expect(tone[start] == 0)
            #expect(abs(Int(tone[start + 3_599])) < 100)
        }
    }

    @Test func turnsAreNumberedInOrderAcrossVoiceAndText() {
        var core = Self.started(EmbeddedRuntimeOptions(pacing: .unpaced))
        core.receive(F.message(.textInput(text: "one")), at: .origin)
        core.receive(F.chunks(F.toneBurst()).map { F.audio($0) }, at: .origin)
        core.receive(F.message(.textInput(text: "three")), at: .origin)
        let ids = F.nonAudioTexts(core.drain(at: .origin)).compactMap { text -> String? in
            guard text.hasPrefix(#"{"type":"tool.call""#) else { return nil }
            return text.split(separator: "\"")[7].description
        }
        #expect(ids == ["audio_stats-1", "audio_stats-2", "audio_stats-3"])
    }

    @Test func theTurnsAudioIsEverythingSinceThePreviousTurnEnded() {
        var core = Self.started(EmbeddedRuntimeOptions(pacing: .unpaced))
        let chunks = F.chunks(F.toneBurst())
        core.receive(chunks.map { F.audio($0) }, at: .origin)
        _ = core.drain(at: .origin)
        // Turn 1 held chunks 0 … 106; the 15 silent chunks after it and a second burst make turn 2.
        core.receive(chunks.map { F.audio($0) }, at: .seconds(10))
        let texts = F.nonAudioTexts(core.drain(at: .seconds(10)))
        let samples = (chunks.count - F.burstTurnChunks) * 512 - (512 - chunks.last!.count) + F.burstTurnSamples
        #expect(texts[2] == #"{"type":"tool.call","id":"audio_stats-2","name":"audio_stats","input":{"durationSeconds":\#(Double(samples) / 16_000),"sampleRate":16000}}"#)
        #expect(texts[3].contains(#""samples":\#(samples)}"#))
    }

    @Test func audioWithoutSpeechPastTheTurnLimitIsDroppedAndSaid() {
        var core = Self.started(EmbeddedRuntimeOptions(pacing: .unpaced, maxTurnAudio: .seconds(1)))
        let quiet = [Int16](repeating: 3, count: 512)   // −80 dBFS: under the gate
        core.receive(Array(repeating: F.audio(quiet), count: 32), at: .origin)
        #expect(F.texts(core.drain(at: .origin)) == [#"{"type":"debug","message":"dropped 1.0 s of audio without speech: a turn holds at most 1.0 s"}"#])
        // The next turn holds only what came after the drop.
        core.receive(F.chunks(F.toneBurst(lead: 0, tone: 0.2, tail: 0.6)).map { F.audio($0) }, at: .origin)
        let texts = F.nonAudioTexts(core.drain(at: .origin))
        #expect(texts[3].contains(#""samples":11776}"#))
    }

    @Test func aTurnStillInSpeechAtTheTurnLimitEndsThere() {
        var core = Self.started(EmbeddedRuntimeOptions(pacing: .unpaced, maxTurnAudio: .seconds(1)))
        core.receive(F.chunks(F.toneBurst(lead: 0, tone: 2, tail: 0)).map { F.audio($0) }, at: .origin)
        let texts = F.nonAudioTexts(core.drain(at: .origin))
        // 32 chunks (1.024 s) pass the limit: the turn ends on the 32nd; the rest opens turn 2.
        #expect(texts.first == #"{"type":"debug","message":"the turn reached 1.0 s, the most one turn holds: it ends here"}"#)
        #expect(texts[1] == #"{"type":"transcript","role":"user","text":"1.0 s of speech, peak −6.0 dBFS","final":true}"#)
        #expect(texts[3] == #"{"type":"tool.call","id":"audio_stats-1","name":"audio_stats","input":{"durationSeconds":1.024,"sampleRate":16000}}"#)
    }
}
