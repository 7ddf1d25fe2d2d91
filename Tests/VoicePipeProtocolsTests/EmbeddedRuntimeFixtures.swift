import Testing
import VoicePipeCore
import VoicePipeProtocols
import VoicePipeSession
import VoicePipeTestSupport

/// Client messages as transport events, what a list of actions sends, and ways to drive an
/// ``EmbeddedRuntimeCore`` with explicit instants (the test audio and the expected answers are
/// ``RuntimeFixtures`` in VoicePipeTestSupport, shared with the shell's tests).
extension RuntimeFixtures {
    static func message(_ message: WireMessage) -> TransportEvent {
        .message(WireCodec.encode(message))
    }

    static func audio(_ samples: [Int16], rate: Int = rate) -> TransportEvent {
        message(.audioChunk(AudioChunk(sampleRate: SampleRate(hertz: Double(rate)), samples: samples)))
    }

    static let start = message(.sessionStart(sessionId: "s-1", context: [:]))

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
