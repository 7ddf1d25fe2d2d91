import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeSession
import VoicePipeTestSupport

/// Client messages, test audio and ways to drive an ``EmbeddedRuntimeCore`` with explicit instants.
enum RuntimeFixtures {
    static let rate = 16_000

    /// Digital silence, then a 1 kHz tone at `dBFS`, then silence, as Int16 at `rate`: a file
    /// with one utterance.
    static func toneBurst(lead: Double = 0.5, tone: Double = 2.4, tail: Double = 1.0, dBFS: Double = -6, frequency: Double = 1_000, rate: Int = rate) -> [Int16] {
        let leadFrames = Int((lead * Double(rate)).rounded())
        let toneFrames = Int((tone * Double(rate)).rounded())
        let tailFrames = Int((tail * Double(rate)).rounded())
        let sine = Signals.sine(frequency: frequency, amplitude: Signals.amplitude(dBFS: dBFS), sampleRate: Double(rate), frames: toneFrames)
        return [Int16](repeating: 0, count: leadFrames) + Signals.int16(sine) + [Int16](repeating: 0, count: tailFrames)
    }

    /// `samples` cut into chunks of `size` (the last may be shorter), as a capture sends them.
    static func chunks(_ samples: [Int16], size: Int = 512) -> [[Int16]] {
        stride(from: 0, to: samples.count, by: size).map { Array(samples[$0..<min($0 + size, samples.count)]) }
    }

    static func message(_ message: WireMessage) -> TransportEvent {
        .message(WireCodec.encode(message))
    }

    static func audio(_ samples: [Int16], rate: Int = rate) -> TransportEvent {
        message(.audioChunk(AudioChunk(sampleRate: rate, samples: samples)))
    }

    static let start = message(.sessionStart(sessionId: "s-1", context: [:]))
    static let greeting = #"{"type":"info.message","markdown":"Hello from the **embedded runtime** (session `s-1`).\nSpeak or type: each turn is answered with its audio statistics and played back at 24 kHz."}"#

    /// What Core's resampler makes of `samples` (16 kHz Int16) at 24 kHz, streamed in chunks of
    /// 512 and flushed, rounded to Int16: the reference a reply must equal sample for sample.
    static func resampledReference(_ samples: [Int16], from rate: Int = rate) throws -> [Int16] {
        let resampler = try BuiltInResampler(inputRate: Double(rate), outputRate: 24_000)
        let floats = try ResamplerHarness.stream(resampler, samples.map(SampleConversion.float), chunkSizes: [512])
        return floats.map(SampleConversion.int16)
    }

    /// The JSON a list of actions sends, with other actions by name.
    static func texts(_ actions: [EmbeddedRuntimeCore.Action]) -> [String] {
        actions.map { action in
            if case .send(let message) = action { return WireCodec.encode(message) }
            return action.description
        }
    }

    /// The samples of the reply chunks among `actions`, each chunk checked to be 24 kHz.
    static func replyChunks(_ actions: [EmbeddedRuntimeCore.Action]) -> [[Int16]] {
        actions.compactMap { action in
            guard case .send(.audioChunk(let chunk)) = action else { return nil }
            #expect(chunk.sampleRate == 24_000)
            return chunk.samples
        }
    }

    /// The non-audio messages among `actions`, as JSON.
    static func nonAudioTexts(_ actions: [EmbeddedRuntimeCore.Action]) -> [String] {
        texts(actions.filter { if case .send(.audioChunk) = $0 { false } else { true } })
    }

    /// The messages a voice turn is answered with before its audio (turn 1 of the default burst).
    static func voiceTurnMessages(turn: Int = 1, speech: String, peak: String, durationSeconds: String, audio: String,
                                  peakJSON: String, rmsJSON: String, rms: String, samples: Int, rate: Int = rate) -> [String] {
        [
            #"{"type":"transcript","role":"user","text":"\#(speech) of speech, peak \#(peak)","final":true}"#,
            #"{"type":"classification","label":"speech","confidence":1}"#,
            #"{"type":"tool.call","id":"audio_stats-\#(turn)","name":"audio_stats","input":{"durationSeconds":\#(durationSeconds),"sampleRate":\#(rate)}}"#,
            #"{"type":"tool.result","id":"audio_stats-\#(turn)","name":"audio_stats","output":{"peakDBFS":\#(peakJSON),"rmsDBFS":\#(rmsJSON),"samples":\#(samples)},"durationMs":0}"#,
            #"{"type":"info.message","markdown":"| turn | audio | speech | peak | RMS |\n|---:|---:|---:|---:|---:|\n| \#(turn) | \#(audio) | \#(speech) | \#(peak) | \#(rms) |"}"#,
            #"{"type":"transcript","role":"assistant","text":"Here is what I heard: \#(speech) of your speech, played back at 24 kHz.","final":true}"#,
        ]
    }

    /// The default burst's turn (0.5 s silence, 2.4 s at −6 dBFS, 1 s silence; chunks of 512):
    /// the gate opens on chunk 15 (0.480 s) and last hears the tone in chunk 90 (ends 2.912 s),
    /// so 2.432 s of speech; the hang-over runs out at the end of chunk 106 (3.424 s), so the
    /// turn holds 107 × 512 = 54 784 samples, replied with 82 176 samples in 172 chunks.
    static let burstTurnMessages = voiceTurnMessages(
        speech: "2.4 s", peak: "−6.0 dBFS", durationSeconds: "3.424", audio: "3.424 s",
        peakJSON: "-6", rmsJSON: "-10.6", rms: "−10.6 dBFS", samples: 54_784)
    static let burstTurnSamples = 54_784
    static let burstTurnChunks = 107
}

extension EmbeddedRuntimeCore {
    /// Receives each event at `now`.
    mutating func receive(_ events: [TransportEvent], at now: SessionInstant) {
        for event in events { receive(event, at: now) }
    }

    /// Every action due at `now`; afterwards nothing may be due before the next deadline (a
    /// deadline at or before `now` with nothing to hand out would spin the shell's loop).
    mutating func drain(at now: SessionInstant) -> [Action] {
        let actions = takeDueActions(at: now)
        let deadline = nextDeadline
        #expect(deadline.map { $0 > now } ?? true, "nothing due, yet the next deadline \(String(describing: deadline)) is not after \(now)")
        return actions
    }

    /// Runs the clock from `start` through every deadline until none is left or `limit` is
    /// reached, collecting each action with the instant it was handed out.
    mutating func run(from start: SessionInstant, until limit: SessionInstant) -> [(SessionInstant, Action)] {
        var out = drain(at: start).map { (start, $0) }
        while let deadline = nextDeadline, deadline <= limit {
            out += drain(at: deadline).map { (deadline, $0) }
        }
        return out
    }
}

extension SessionInstant {
    static func milliseconds(_ milliseconds: Int) -> SessionInstant {
        SessionInstant(sinceOrigin: .milliseconds(milliseconds))
    }
}
