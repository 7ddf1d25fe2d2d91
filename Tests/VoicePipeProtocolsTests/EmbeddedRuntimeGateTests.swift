import Testing
import VoicePipeCore
import VoicePipeProtocols
import VoicePipeSession
import VoicePipeTestSupport

/// The embedded runtime's gate reads the client's samples, so it follows the noise floor as the
/// client's gate does, and it learns nothing while its own reply goes out.
struct EmbeddedRuntimeGateTests {
    typealias F = RuntimeFixtures

    /// Pink noise at −40 dBFS (its peaks over the fixed −40 dBFS threshold, so the fixed gate never
    /// closes) with a 1 kHz burst at −6 dBFS from 1.5 to 3.5 s, sent in 32 ms chunks at their own
    /// instants and drained as the shell would. While the reply goes out, and 0.5 s after its
    /// last chunk, the client's audio is the noise 30 dB down (what echo control leaves of the
    /// room there); then the room's noise comes back for 4 s, and the session ends.
    static func session() -> [String] {
        let rate = F.rate, chunk = 512
        let noise = Signals.pinkNoise(rms: Signals.amplitude(dBFS: -40), frames: 60 * rate, seed: 8)
        let tone = Signals.sine(frequency: 1_000, amplitude: Signals.amplitude(dBFS: -6), sampleRate: Double(rate), frames: 2 * rate)
        var core = EmbeddedRuntimeCore()
        core.receive(F.start, at: .origin)
        var actions = core.drain(at: .origin)
        var replyStarted = false, replyEndedAt: Int?, roomBackAt: Int?
        var start = 0
        while start + chunk <= noise.count, roomBackAt.map({ start < $0 + 4 * rate }) ?? true {
            let now = SessionInstant(sinceOrigin: .microseconds(Int64(start) * 1_000_000 / Int64(rate)))
            let quiet = replyStarted && roomBackAt.map { start < $0 } ?? true
            let samples = (start..<start + chunk).map { n in
                (quiet ? noise[n] / 31.6 : noise[n]) + (n >= 3 * rate / 2 && n < 7 * rate / 2 ? tone[n - 3 * rate / 2] : 0)
            }
            core.receive(F.audio(Signals.int16(samples)), at: now)
            let due = core.drain(at: now)
            let replyAudio = !F.replyChunks(due).isEmpty
            if replyAudio { replyStarted = true } else if replyStarted, replyEndedAt == nil { replyEndedAt = start }
            if let ended = replyEndedAt, roomBackAt == nil { roomBackAt = ended + rate / 2 }
            actions += due
            start += chunk
        }
        #expect(roomBackAt != nil, "the reply never ended")
        // Ending the session answers a turn still open.
        let end = SessionInstant(sinceOrigin: .microseconds(Int64(start) * 1_000_000 / Int64(rate)))
        core.receive(F.message(.sessionEnd), at: end)
        actions += core.run(from: end, until: end + .seconds(30)).map(\.1)
        return F.nonAudioTexts(actions)
    }

    @Test func aTurnInNoiseEndsWithItsSpeechAndTheRoomsNoiseAfterTheReplyOpensNoTurn() {
        let texts = Self.session()
        let heard = texts.filter { $0.contains(#""role":"user""#) }
        #expect(heard.count == 1, "\(heard)")
        #expect(heard.first?.contains(#""text":"2.0 s of speech"#) == true, "\(heard)")
        #expect(!texts.contains(#"{"type":"interruption"}"#), "\(texts)")
    }
}
