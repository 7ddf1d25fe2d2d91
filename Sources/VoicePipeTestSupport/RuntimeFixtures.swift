import VoicePipeCore

/// The embedded runtime's test material, shared by the tests of its pure core and of the shell
/// that serves it on a thread: a one-utterance test file, the greeting and the exact messages that
/// answer its turn, and the reply audio that turn must come back as.
public enum RuntimeFixtures {
    /// The rate of the test audio (the capture target's).
    public static let rate = 16_000

    /// Digital silence, then a 1 kHz tone at `dBFS`, then silence, as Int16 at `rate`: a file
    /// with one utterance.
    public static func toneBurst(lead: Double = 0.5, tone: Double = 2.4, tail: Double = 1.0, dBFS: Double = -6, frequency: Double = 1_000, rate: Int = rate) -> [Int16] {
        let leadFrames = Int((lead * Double(rate)).rounded())
        let toneFrames = Int((tone * Double(rate)).rounded())
        let tailFrames = Int((tail * Double(rate)).rounded())
        let sine = Signals.sine(frequency: frequency, amplitude: Signals.amplitude(dBFS: dBFS), sampleRate: Double(rate), frames: toneFrames)
        return [Int16](repeating: 0, count: leadFrames) + Signals.int16(sine) + [Int16](repeating: 0, count: tailFrames)
    }

    /// `samples` cut into chunks of `size` (the last may be shorter), as a capture sends them.
    public static func chunks(_ samples: [Int16], size: Int = 512) -> [[Int16]] {
        stride(from: 0, to: samples.count, by: size).map { Array(samples[$0..<min($0 + size, samples.count)]) }
    }

    public static let greeting = #"{"type":"info.message","markdown":"Hello from the **embedded runtime** (session `s-1`).\nSpeak or type: each turn is answered with its audio statistics and played back at 24 kHz."}"#

    /// What Core's resampler makes of `samples` (16 kHz Int16) at 24 kHz, streamed in chunks of
    /// 512 and flushed, rounded to Int16: the reference a reply must equal sample for sample.
    public static func resampledReference(_ samples: [Int16], from rate: Int = rate) throws -> [Int16] {
        let resampler = try BuiltInResampler(inputRate: SampleRate(hertz: Double(rate)), outputRate: .reply)
        let floats = try ResamplerHarness.stream(resampler, samples.map(SampleConversion.float), chunkSizes: [512])
        return floats.map(SampleConversion.int16)
    }

    /// The messages a voice turn is answered with before its audio (turn 1 of the default burst).
    public static func voiceTurnMessages(turn: Int = 1, speech: String, peak: String, durationSeconds: String, audio: String,
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
    public static let burstTurnMessages = voiceTurnMessages(
        speech: "2.4 s", peak: "−6.0 dBFS", durationSeconds: "3.424", audio: "3.424 s",
        peakJSON: "-6", rmsJSON: "-10.6", rms: "−10.6 dBFS", samples: 54_784)
    public static let burstTurnSamples = 54_784
    public static let burstTurnChunks = 107
}
