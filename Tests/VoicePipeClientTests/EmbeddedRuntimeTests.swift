import Dispatch
import Synchronization
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession
import VoicePipeTestSupport

/// Reads a client end's events on a task of its own, so a test can wait (boundedly) for what it
/// expects without polling or sleeping.
final class ClientRecorder: Sendable {
    typealias Predicate = @Sendable ([TransportEvent]) -> Bool

    private struct Waiter {
        let id: Int
        let predicate: Predicate
        let continuation: CheckedContinuation<[TransportEvent]?, Never>
    }

    private struct State {
        var events: [TransportEvent] = []
        var waiters: [Waiter] = []
        var nextId = 0
    }

    private let state = Guarded(State())

    /// Records through the transport's handler, on the sending thread: recording never waits for
    /// a Swift concurrency thread, however busy the test run keeps them.
    init(_ transport: InMemoryTransport) {
        transport.receive { [self] event in record(event) }
    }

    /// Everything received so far.
    var events: [TransportEvent] { state.withLock { $0.events } }

    private func record(_ event: TransportEvent) {
        let ready = state.withLock { state -> [(CheckedContinuation<[TransportEvent]?, Never>, [TransportEvent])] in
            state.events.append(event)
            var ready: [(CheckedContinuation<[TransportEvent]?, Never>, [TransportEvent])] = []
            let events = state.events
            state.waiters.removeAll { waiter in
                guard waiter.predicate(events) else { return false }
                ready.append((waiter.continuation, events))
                return true
            }
            return ready
        }
        for (continuation, events) in ready { continuation.resume(returning: events) }
    }

    /// The events once `predicate` holds for them; nil if it did not within `timeout`.
    func wait(timeout: Duration = .seconds(30), until predicate: @escaping Predicate) async -> [TransportEvent]? {
        await withCheckedContinuation { continuation in
            let id = state.withLock { state -> Int? in
                if predicate(state.events) { return nil }
                state.nextId += 1
                state.waiters.append(Waiter(id: state.nextId, predicate: predicate, continuation: continuation))
                return state.nextId
            }
            guard let id else {
                continuation.resume(returning: events)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(timeout.seconds * 1000))) { [self] in
                let expired = state.withLock { state -> Waiter? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index)
                }
                expired?.continuation.resume(returning: nil)
            }
        }
    }

    /// Waits until at least `count` messages have arrived.
    func waitForMessages(_ count: Int) async -> [WireMessage] {
        let events = await wait { $0.messages.count >= count }
        #expect(events != nil, "waited in vain for \(count) messages")
        return events?.messages ?? []
    }
}

extension [TransportEvent] {
    /// The messages among the events, decoded.
    var messages: [WireMessage] {
        compactMap { event in
            guard case .message(let text) = event else { return nil }
            return try? WireCodec.decode(text).message
        }
    }

    /// The reason the transport closed, once it has.
    var closeReason: TransportCloseReason? {
        for case .closed(let reason) in self { return reason }
        return nil
    }
}

/// The threaded runtime serves a session end to end through an in-memory transport: paced by
/// a manual clock, unpaced through a small backlog, and misbehaving on purpose.
struct EmbeddedRuntimeTests {
    typealias F = RuntimeFixtures

    static func send(_ message: WireMessage, to client: InMemoryTransport) throws {
        try client.send(WireCodec.encode(message))
    }

    /// Sends a message if the backlog has room: false when it is full.
    static func offer(_ message: WireMessage, to client: InMemoryTransport) -> Bool {
        do {
            try client.send(WireCodec.encode(message))
            return true
        } catch {
            return false
        }
    }

    /// Sends every message, waiting for room whenever the backlog is full (the runtime reads on).
    static func sendAll(_ messages: [WireMessage], to client: InMemoryTransport) async throws {
        for message in messages {
            let text = WireCodec.encode(message)
            var attempts = 0
            while true {
                do throws(TransportError) {
                    try client.send(text)
                    break
                } catch .backlogFull {
                    attempts += 1
                    try #require(attempts < 10_000_000, "the runtime stopped reading")
                    await Task.yield()
                }
            }
        }
    }

    static func json(_ messages: some Sequence<WireMessage>) -> [String] {
        messages.map { WireCodec.encode($0) }
    }

    @Test func aSessionIsPacedByTheManualClockChunkByChunk() async throws {
        let clock = ManualSessionClock()
        let runtime = EmbeddedRuntime(clock: clock)
        let client = runtime.connect()
        let recorder = ClientRecorder(client)
        client.open()
        try Self.send(.sessionStart(sessionId: "s-1", context: [:]), to: client)
        #expect(Self.json(await recorder.waitForMessages(1)) == [F.greeting])

        // The whole file at once: the turn ends in audio time, so its answer and first chunk
        // come without the clock moving.
        try await Self.sendAll(F.chunks(F.toneBurst()).map { .audioChunk(AudioChunk(sampleRate: 16_000, samples: $0)) }, to: client)
        let answered = await recorder.waitForMessages(8)
        try #require(answered.count >= 8)
        #expect(Self.json(answered[1...6]) == F.burstTurnMessages)
        var reply: [Int16] = []
        if case .audioChunk(let chunk) = answered[7] { reply += chunk.samples }

        // Each 20 ms of clock time releases exactly one more chunk.
        for k in 1..<172 {
            clock.advance(by: .milliseconds(20))
            let messages = await recorder.waitForMessages(8 + k)
            #expect(messages.count == 8 + k, "after \(k) steps")
            guard case .audioChunk(let chunk)? = messages.last else {
                Issue.record("message \(8 + k) is not a reply chunk")
                break
            }
            reply += chunk.samples
        }
        #expect(reply == (try F.resampledReference(Array(F.toneBurst().prefix(F.burstTurnSamples)))))

        try Self.send(.sessionEnd, to: client)
        let ended = await recorder.wait { $0.closeReason != nil }
        #expect(ended?.messages.last == .sessionEnded(reason: "the client ended the session"))
        #expect(ended?.closeReason == .closedByRuntime(nil))
        #expect(await runtime.waitUntilFinished(timeout: .seconds(30)))
        #expect(runtime.isFinished)
    }

    @Test func theEndOfAudioTimeoutRunsOnTheManualClock() async throws {
        let clock = ManualSessionClock()
        let runtime = EmbeddedRuntime(clock: clock)
        let client = runtime.connect()
        let recorder = ClientRecorder(client)
        client.open()
        try Self.send(.sessionStart(sessionId: "s-1", context: [:]), to: client)
        // Up to mid-tone, then a message of an unknown type: its debug note proves the audio
        // before it was taken in, so the clock moves only after that.
        try await Self.sendAll(F.chunks(F.toneBurst()).prefix(60).map { .audioChunk(AudioChunk(sampleRate: 16_000, samples: $0)) }, to: client)
        try client.send(#"{"type":"sync"}"#)
        #expect(await recorder.waitForMessages(2).last == .debug(message: #"message type "sync" is not known to this version (kept, ignored)"#))

        clock.advance(by: .milliseconds(499))
        // The runtime is idle again and has sent nothing: none received, none waiting.
        #expect(recorder.events.messages.count + client.unreadEventCount == 2)
        clock.advance(by: .milliseconds(1))
        let answered = await recorder.waitForMessages(2 + 7)
        try #require(answered.count >= 3)
        #expect(answered[2] == .transcript(role: .user, text: "1.4 s of speech, peak −6.0 dBFS", isFinal: true))

        client.close()
        #expect(await runtime.waitUntilFinished(timeout: .seconds(30)))
    }

    /// Unpaced, but the open turn never ends on the runtime's wall clock: the burst's trailing
    /// second of silence closes the voice gate in audio time. With the default end-of-audio
    /// timeout (500 ms of clock time), a sender starved for half a second mid-tone on a busy
    /// machine would split the voice turn in two, and every count below would change.
    static let unpacedOnAudioTime = EmbeddedRuntimeOptions(endOfAudioTimeout: .seconds(3_600), pacing: .unpaced)

    @Test func anUnpacedSessionThroughASmallBacklogLosesNothing() async throws {
        let runtime = EmbeddedRuntime(options: Self.unpacedOnAudioTime)
        // 16 KiB each way: the 230 KB reply fills the runtime's backlog many times over.
        let client = runtime.connect(backlogLimit: 16 << 10)
        let recorder = ClientRecorder(client)
        client.open()
        let burst = F.toneBurst()
        try await Self.sendAll([.sessionStart(sessionId: "s-1", context: [:])]
            + F.chunks(burst).map { .audioChunk(AudioChunk(sampleRate: 16_000, samples: $0)) }
            + [.textInput(text: "and a typed one"), .sessionEnd], to: client)
        let events = await recorder.wait { $0.closeReason != nil }
        let messages = events?.messages ?? []
        let withoutToolTime = { (text: String) in text.replacing(#/"durationMs":[0-9.e-]+/#, with: "") }
        let texts = Self.json(messages.filter { if case .audioChunk = $0 { false } else { true } })
        try #require(texts.count == 14, "the greeting, two turns of six, session.ended")
        #expect(texts.first == F.greeting)
        #expect(texts[1...6].map(withoutToolTime) == F.burstTurnMessages.map(withoutToolTime))
        #expect(texts[7] == #"{"type":"transcript","role":"user","text":"and a typed one","final":true}"#)
        #expect(texts.last == #"{"type":"session.ended","reason":"the client ended the session"}"#)
        // Both replies whole and in order: the voice turn's, then the tone.
        let reply = messages.compactMap { message -> [Int16]? in
            if case .audioChunk(let chunk) = message { return chunk.samples }
            return nil
        }.flatMap { $0 }
        let voice = try F.resampledReference(Array(burst.prefix(F.burstTurnSamples)))
        #expect(reply.count == voice.count + 10_800)
        #expect(Array(reply.prefix(voice.count)) == voice)
        #expect(await runtime.waitUntilFinished(timeout: .seconds(30)))
    }

    @Test func trafficCountsTheAudioEachWayOnceEvenWhenSendsAreRefusedAndRetried() async throws {
        let runtime = EmbeddedRuntime(options: Self.unpacedOnAudioTime)
        // A 16 KiB backlog refuses many reply chunks; each must be counted once, when it goes.
        let client = runtime.connect(backlogLimit: 16 << 10)
        let recorder = ClientRecorder(client)
        client.open()
        let chunks = F.chunks(F.toneBurst())
        try await Self.sendAll([.sessionStart(sessionId: "s-1", context: [:])]
            + chunks.map { .audioChunk(AudioChunk(sampleRate: 16_000, samples: $0)) }
            + [.textInput(text: "and a typed one"), .sessionEnd], to: client)
        let events = await recorder.wait { $0.closeReason != nil }
        #expect(await runtime.waitUntilFinished(timeout: .seconds(30)))
        var sent = AudioTally(), received = AudioTally()
        for chunk in chunks { sent.add(chunk) }
        for case .audioChunk(let chunk) in events?.messages ?? [] { received.add(chunk.samples) }
        let traffic = try #require(runtime.traffic.first)
        #expect(runtime.traffic.count == 1)
        #expect(traffic.audioReceived == sent)
        #expect(traffic.audioSent == received)
        #expect(traffic.audioSent.samples == F.burstTurnSamples * 3 / 2 + 10_800)
        #expect(traffic.interruptionsSent == 0)
        #expect(traffic.turns == 2)
        // A second session gets its own record; the first one's stays.
        let second = runtime.connect()
        second.open()
        try second.send(WireCodec.encode(.sessionStart(sessionId: "s-2", context: [:])))
        try second.send(WireCodec.encode(.audioChunk(AudioChunk(sampleRate: 16_000, samples: [1, 2, 3]))))
        second.close()
        #expect(await runtime.waitUntilFinished(timeout: .seconds(30)))
        #expect(runtime.traffic.count == 2)
        #expect(runtime.traffic.first == traffic)
    }

    /// Regression: the runtime took every client message into an unbounded inbox at once, so a
    /// client sending faster than the runtime answers (`--fast`) queued its input there: 12 MB
    /// more memory after 10 minutes of audio in the load run. Now the runtime stops taking them
    /// above a bound, they count against the client's backlog, and a full backlog refuses a send.
    @Test func aClientFasterThanTheRuntimeFillsItsOwnBacklogNotTheRuntimesMemory() async throws {
        let runtime = EmbeddedRuntime(options: EmbeddedRuntimeOptions(pacing: .unpaced))
        let client = runtime.connect(backlogLimit: 64 << 10)
        let recorder = ClientRecorder(client)
        client.open()
        try Self.send(.sessionStart(sessionId: "s-1", context: [:]), to: client)
        var random = SplitMix64(seed: 3)
        var sent = AudioTally()
        var refused = false
        // 40 000 chunks (about 60 MB of messages) sent without waiting: the runtime, which decodes,
        // measures and resamples each, cannot keep up with a loop that only queues them.
        for _ in 0..<40_000 {
            let samples = (0..<512).map { _ in Int16(truncatingIfNeeded: random.next() % 33) - 16 }
            if Self.offer(.audioChunk(AudioChunk(sampleRate: 16_000, samples: samples)), to: client) {
                sent.add(samples)
            } else {
                refused = true
                break
            }
        }
        #expect(refused, "every send was taken at once: the runtime queues the client's input without bound")
        try await Self.sendAll([.sessionEnd], to: client)
        _ = await recorder.wait { $0.closeReason != nil }
        #expect(await runtime.waitUntilFinished(timeout: .seconds(60)))
        // Nothing the client sent was lost on the way, refused sends aside.
        #expect(runtime.traffic.first?.audioReceived == sent)
    }

    @Test func aStalledRuntimeFillsTheClientsBacklogAndStopEndsIt() async throws {
        let runtime = EmbeddedRuntime(options: EmbeddedRuntimeOptions(misbehaviour: .stall))
        let client = runtime.connect(backlogLimit: 64 << 10)
        let recorder = ClientRecorder(client)
        client.open()
        try Self.send(.sessionStart(sessionId: "s-1", context: [:]), to: client)
        #expect(Self.json(await recorder.waitForMessages(1)) == [F.greeting])
        let chunk = WireCodec.encode(.audioChunk(AudioChunk(sampleRate: 16_000, samples: [Int16](repeating: 1_000, count: 512))))
        var refusal: TransportError?
        for _ in 0..<100_000 {
            do throws(TransportError) {
                try client.send(chunk)
            } catch {
                refusal = error
                break
            }
        }
        guard case .backlogFull(_, let limit)? = refusal else {
            Issue.record("the backlog never filled: \(String(describing: refusal))")
            return
        }
        #expect(limit == 64 << 10)
        #expect(!runtime.isFinished)
        runtime.stop()
        #expect(await runtime.waitUntilFinished(timeout: .seconds(30)))
        let events = await recorder.wait { $0.closeReason != nil }
        #expect(events?.closeReason == .closedByRuntime(nil))
        #expect(Self.json(events?.messages ?? []) == [F.greeting])
    }

    @Test func failSendsTheErrorThenClosesTheTransport() async throws {
        let runtime = EmbeddedRuntime(options: EmbeddedRuntimeOptions(misbehaviour: .fail))
        let client = runtime.connect()
        let recorder = ClientRecorder(client)
        client.open()
        try Self.send(.sessionStart(sessionId: "s-1", context: [:]), to: client)
        try Self.send(.textInput(text: "hello"), to: client)
        let events = await recorder.wait { $0.closeReason != nil }
        #expect(events?.messages.last == .error(message: "the embedded runtime failed on purpose (test switch)", code: "embedded.fail"))
        #expect(events?.closeReason == .closedByRuntime(nil))
        #expect(await runtime.waitUntilFinished(timeout: .seconds(30)))
    }

    @Test func theClientClosingMidReplyStopsTheRuntime() async throws {
        let runtime = EmbeddedRuntime()
        let client = runtime.connect()
        let recorder = ClientRecorder(client)
        client.open()
        try Self.send(.sessionStart(sessionId: "s-1", context: [:]), to: client)
        try Self.send(.textInput(text: "hello"), to: client)
        _ = await recorder.waitForMessages(8)   // greeting, six messages, the first chunk
        client.close()
        #expect(await runtime.waitUntilFinished(timeout: .seconds(30)))
        #expect(runtime.isFinished)
    }
}
