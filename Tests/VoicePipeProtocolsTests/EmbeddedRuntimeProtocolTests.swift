import Testing
import VoicePipeCore
import VoicePipeProtocols
import VoicePipeSession
import VoicePipeTestSupport

/// The pure core's timing and protocol rules: pacing, interruption, session end, escalation,
/// malformed input, a full backlog, and the test switches.
struct EmbeddedRuntimeProtocolTests {
    typealias F = RuntimeFixtures
    static let sessionEnded = #"{"type":"session.ended","reason":"the client ended the session"}"#

    static func started(_ options: EmbeddedRuntimeOptions = EmbeddedRuntimeOptions()) -> EmbeddedRuntimeCore {
        var core = EmbeddedRuntimeCore(options: options)
        core.receive(F.start, at: .origin)
        #expect(F.texts(core.drain(at: .origin)) == [F.greeting])
        return core
    }

    // MARK: Greeting

    @Test(arguments: [
        (["persona": .string("Dana"), "vehicle": .string("2022 Model Y")] as JSONObject, "s-1",
         "Hello from the **embedded runtime** (session `s-1`), speaking as **Dana** about your **2022 Model Y**."),
        (["persona": .string("Dana")] as JSONObject, "s-1",
         "Hello from the **embedded runtime** (session `s-1`), speaking as **Dana**."),
        (["vehicle": .string(" 2022 Model Y\n")] as JSONObject, "s-1",
         "Hello from the **embedded runtime** (session `s-1`), about your **2022 Model Y**."),
        (["persona": .integer(7), "vehicle": .null] as JSONObject, "s-1",
         "Hello from the **embedded runtime** (session `s-1`)."),
        (["persona": .string("*Dana*_[x](y)")] as JSONObject, "a`b",
         "Hello from the **embedded runtime** (session ``a`b``), speaking as **\\*Dana\\*\\_\\[x\\](y)**."),
        ([:] as JSONObject, "",
         "Hello from the **embedded runtime** (a session without an id)."),
    ])
    func theGreetingNamesTheSessionAndWhatTheContextSays(context: JSONObject, sessionId: String, firstLine: String) {
        var core = EmbeddedRuntimeCore()
        core.receive(F.message(.sessionStart(sessionId: sessionId, context: context)), at: .origin)
        let actions = core.drain(at: .origin)
        #expect(actions == [.send(.infoMessage(markdown: firstLine + "\nSpeak or type: each turn is answered with its audio statistics and played back at 24 kHz."))])
    }

    // MARK: Pacing

    @Test func realTimeReplyChunkKGoesOutAtTheReplyStartPlusKTimes20ms() {
        var core = Self.started()
        let t0 = SessionInstant.seconds(3)
        core.receive(F.chunks(F.toneBurst()).map { F.audio($0) }, at: t0)
        var chunks = F.replyChunks(core.drain(at: t0))
        for k in 1..<172 {
            let due = t0 + .milliseconds(20) * k
            #expect(core.nextDeadline == due)
            #expect(core.drain(at: due - .nanoseconds(1)).isEmpty)
            let actions = core.drain(at: due)
            #expect(actions.count == 1, "chunk \(k)")
            chunks += F.replyChunks(actions)
        }
        #expect(chunks.count == 172)
        #expect(chunks.flatMap { $0 }.count == 82_176)
        #expect(core.nextDeadline == nil)
    }

    @Test func aLateWakeUpSendsTheOverdueChunksAtOnceAndKeepsTheSchedule() {
        var core = Self.started()
        core.receive(F.chunks(F.toneBurst()).map { F.audio($0) }, at: .origin)
        #expect(F.replyChunks(core.drain(at: .origin)).count == 1)
        // 105 ms late for chunk 1: chunks 1 … 5 are due; chunk 6 stays at 120 ms.
        #expect(F.replyChunks(core.drain(at: .milliseconds(105))).count == 5)
        #expect(core.nextDeadline == .milliseconds(120))
    }

    @Test func unpacedRepliesGoOutAllAtOnce() {
        var core = Self.started(EmbeddedRuntimeOptions(pacing: .unpaced))
        core.receive(F.chunks(F.toneBurst()).map { F.audio($0) }, at: .origin)
        let actions = core.drain(at: .origin)
        #expect(F.replyChunks(actions).count == 172)
        #expect(core.nextDeadline == nil)
    }

    @Test func aTurnThatEndsDuringAReplyIsQueuedAfterItAndItsAudioFollowsOn() {
        var core = Self.started()
        core.receive(F.message(.textInput(text: "one")), at: .origin)
        core.receive(F.message(.textInput(text: "two")), at: .origin)
        let timed = core.run(from: .origin, until: .seconds(5))
        let firstAnswer = timed.prefix(7).map(\.1)
        #expect(F.texts(Array(firstAnswer.prefix(6))).first == #"{"type":"transcript","role":"user","text":"one","final":true}"#)
        // Reply 1 is 23 chunks (450 ms); its last goes at 440 ms, then turn 2's messages, and
        // turn 2's first chunk when reply 1's audio ends, at 450 ms.
        let turnTwo = timed.firstIndex { F.texts([$0.1]) == [#"{"type":"transcript","role":"user","text":"two","final":true}"#] }
        #expect(turnTwo == 6 + 23)
        if let turnTwo {
            #expect(timed[turnTwo].0 == .milliseconds(440))
            #expect(timed[turnTwo + 6].0 == .milliseconds(450))
            #expect(timed.last?.0 == .milliseconds(450 + 22 * 20))
        }
        #expect(F.replyChunks(timed.map(\.1)).count == 46)
    }

    // MARK: Interruption

    @Test func theGateOpeningDuringAReplySendsOneInterruptionAndDropsTheRest() {
        var core = Self.started()
        let chunks = F.chunks(F.toneBurst())
        core.receive(chunks.prefix(F.burstTurnChunks).map { F.audio($0) }, at: .origin)
        var sent = F.replyChunks(core.drain(at: .origin)).count
        for k in 1..<10 { sent += F.replyChunks(core.drain(at: .milliseconds(20 * k))).count }
        #expect(sent == 10)
        // The user speaks again at 190 ms: one interruption, at once, and no more of reply 1.
        let loud = chunks[40]
        core.receive(F.audio(loud), at: .milliseconds(190))
        #expect(F.texts(core.drain(at: .milliseconds(190))) == [#"{"type":"interruption"}"#])
        core.receive(Array(repeating: F.audio(loud), count: 20), at: .milliseconds(195))
        #expect(core.drain(at: .milliseconds(195)).isEmpty)
        #expect(core.drain(at: .seconds(0.3)).isEmpty)
        // Turn 2 ends by timeout 500 ms after its last audio and is answered in full.
        #expect(core.nextDeadline == .milliseconds(695))
        let turnTwo = core.run(from: .milliseconds(695), until: .seconds(60)).map(\.1)
        #expect(F.texts(turnTwo).filter { $0 == #"{"type":"interruption"}"# }.isEmpty)
        #expect(F.nonAudioTexts(turnTwo)[2].contains(#""id":"audio_stats-2""#))
        // 21 chunks of 512 at 16 kHz = 0.672 s → 16 128 samples at 24 kHz.
        #expect(F.replyChunks(turnTwo).flatMap { $0 }.count == 16_128)
    }

    @Test func theGateOpeningWithNoReplyGoingOutSendsNoInterruption() {
        var core = Self.started(EmbeddedRuntimeOptions(pacing: .unpaced))
        core.receive(F.chunks(F.toneBurst()).map { F.audio($0) }, at: .origin)
        _ = core.drain(at: .origin)
        core.receive(F.chunks(F.toneBurst()).map { F.audio($0) }, at: .seconds(5))
        #expect(!F.texts(core.drain(at: .seconds(5))).contains(#"{"type":"interruption"}"#))
    }

    // MARK: Session end

    @Test func sessionEndAnswersTheOpenTurnThenEndsTheSessionAndCloses() {
        var core = Self.started()
        let chunks = F.chunks(F.toneBurst())
        core.receive(chunks.prefix(60).map { F.audio($0) }, at: .origin)
        core.receive(F.message(.sessionEnd), at: .milliseconds(100))
        let timed = core.run(from: .milliseconds(100), until: .seconds(60))
        let texts = F.texts(timed.map(\.1))
        // The turn (60 chunks, 1.92 s → 46 080 samples, 96 chunks), paced, then the end.
        #expect(texts.first?.contains("1.4 s of speech") == true)
        #expect(F.replyChunks(timed.map(\.1)).count == 96)
        #expect(texts.suffix(2) == [Self.sessionEnded, "close"])
        #expect(timed.suffix(3).map(\.0) == Array(repeating: .milliseconds(100 + 95 * 20), count: 3))
        #expect(core.isFinished == true)
        #expect(core.nextDeadline == nil)
        // Nothing more after the close.
        core.receive(F.message(.textInput(text: "late")), at: .seconds(70))
        #expect(core.drain(at: .seconds(70)).isEmpty)
    }

    @Test func sessionEndWithTheGateShutDropsTheHeldAudioAndEndsAtOnce() {
        var core = Self.started()
        core.receive(Array(repeating: F.audio([Int16](repeating: 0, count: 512)), count: 10), at: .origin)
        core.receive(F.message(.sessionEnd), at: .origin)
        #expect(F.texts(core.drain(at: .origin)) == [Self.sessionEnded, "close"])
        #expect(core.isFinished == true)
    }

    @Test func messagesAfterSessionEndAreReportedAndIgnored() {
        var core = Self.started()
        core.receive(F.message(.textInput(text: "busy")), at: .origin)
        core.receive(F.message(.sessionEnd), at: .origin)
        core.receive(F.message(.textInput(text: "late")), at: .origin)
        core.receive(F.message(.textInput(text: "later")), at: .origin)
        core.receive(Array(repeating: F.audio([Int16](repeating: 9_000, count: 512)), count: 5), at: .origin)
        let texts = F.nonAudioTexts(core.run(from: .origin, until: .seconds(5)).map(\.1))
        // Each type once, however many came.
        #expect(texts.prefix(2) == [
            #"{"type":"debug","message":"text.input after session.end was ignored"}"#,
            #"{"type":"debug","message":"audio.chunk after session.end was ignored"}"#,
        ])
        #expect(texts.filter { $0.contains("after session.end") }.count == 2)
        #expect(texts.filter { $0.contains(#""role":"user""#) } == [#"{"type":"transcript","role":"user","text":"busy","final":true}"#])
        #expect(texts.suffix(2) == [Self.sessionEnded, "close"])
    }

    @Test func theClientClosingStopsEverything() {
        var core = Self.started()
        core.receive(F.message(.textInput(text: "hello")), at: .origin)
        core.receive(F.message(.escalationRequest(reason: "human")), at: .origin)
        core.receive(.closed(.closedByClient), at: .origin)
        #expect(core.isFinished == true)
        #expect(core.drain(at: .seconds(10)).isEmpty)
        #expect(core.nextDeadline == nil)
    }

    // MARK: Escalation

    @Test func anEscalationRequestIsAcknowledgedThenAnAgentIsAnnouncedASecondLater() {
        var core = Self.started()
        core.receive(F.message(.escalationRequest(reason: "customer asked for a human")), at: .seconds(2))
        #expect(F.texts(core.drain(at: .seconds(2))) == [#"{"type":"escalation","status":"requested"}"#])
        #expect(core.nextDeadline == .seconds(3))
        #expect(core.drain(at: .seconds(3) - .nanoseconds(1)).isEmpty)
        #expect(F.texts(core.drain(at: .seconds(3))) == [#"{"type":"escalation","status":"an agent will join shortly"}"#])
        #expect(core.nextDeadline == nil)
    }

    @Test func sessionEndCancelsAPendingAgentAnnouncement() {
        var core = Self.started()
        core.receive(F.message(.escalationRequest(reason: "human")), at: .origin)
        core.receive(F.message(.sessionEnd), at: .milliseconds(100))
        #expect(F.texts(core.run(from: .milliseconds(100), until: .seconds(10)).map(\.1)) == [
            #"{"type":"escalation","status":"requested"}"#, Self.sessionEnded, "close",
        ])
    }

    @Test func escalationStatusesGoOutBetweenReplyChunks() {
        var core = Self.started()
        core.receive(F.message(.textInput(text: "hi")), at: .origin)
        _ = core.drain(at: .origin)
        core.receive(F.message(.escalationRequest(reason: "now")), at: .milliseconds(30))
        #expect(core.drain(at: .milliseconds(30)).map(\.description) == [#"send {"type":"escalation","status":"requested"}"#, "send audio.chunk (480 samples at 24000 Hz)"])
    }

    // MARK: Malformed and unexpected input

    static func decodeError(_ text: String) -> String {
        do {
            _ = try WireCodec.decode(text)
            return "decoded"
        } catch {
            return error.description
        }
    }

    @Test(arguments: [
        "not json",
        #"{"type":"audio.chunk","data":"A","sampleRate":16000}"#,
        #"{"type":"audio.chunk","data":"AA==","sampleRate":16000}"#,
        #"{"type":"audio.chunk","data":"AAAA","sampleRate":0}"#,
        #"{"type":"text.input"}"#,
        #"{"type":"text.input","text":5}"#,
        #"[1,2]"#,
        #"{"text":"no type"}"#,
    ])
    func somethingMalformedIsADebugMessageSayingWhatWasWrong(text: String) {
        var core = Self.started()
        core.receive(.message(text), at: .origin)
        let expected = "could not read the client's message: " + Self.decodeError(text)
        #expect(core.drain(at: .origin) == [.send(.debug(message: expected))])
        // The session goes on.
        core.receive(F.message(.textInput(text: "still here")), at: .origin)
        #expect(F.texts(core.drain(at: .origin)).first == #"{"type":"transcript","role":"user","text":"still here","final":true}"#)
    }

    @Test func unknownTypesAndFieldsAndRuntimeMessagesAreReportedAsDebug() {
        var core = Self.started()
        core.receive(.message(#"{"type":"avatar.pose","yaw":0.5}"#), at: .origin)
        core.receive(.message(#"{"type":"avatar.pose","yaw":0.6}"#), at: .origin)
        core.receive(.message(#"{"type":"escalation.request","reason":"x","urgency":"high"}"#), at: .origin)
        core.receive(.message(#"{"type":"transcript","role":"user","text":"hi","final":true}"#), at: .origin)
        core.receive(.message(#"{"type":"error","message":"client trouble"}"#), at: .origin)
        core.receive(.oversizedMessage(bytes: 3_000_000, limit: 2_000_000), at: .origin)
        #expect(F.texts(core.drain(at: .origin)) == [
            #"{"type":"debug","message":"message type \"avatar.pose\" is not known to this version (kept, ignored)"}"#,
            #"{"type":"debug","message":"escalation.request carries a field \"urgency\" this version does not know (kept, ignored)"}"#,
            #"{"type":"escalation","status":"requested"}"#,
            #"{"type":"debug","message":"transcript is a message a runtime sends, not one it takes (ignored)"}"#,
            #"{"type":"debug","message":"error is a message a runtime sends, not one it takes (ignored)"}"#,
            #"{"type":"debug","message":"a message of 3000000 bytes was skipped: over the 2000000-byte limit"}"#,
        ])
    }

    @Test func messagesBeforeSessionStartAreAnsweredAndNotedOnce() {
        var core = EmbeddedRuntimeCore(options: EmbeddedRuntimeOptions(pacing: .unpaced))
        core.receive(F.message(.textInput(text: "early")), at: .origin)
        core.receive(F.message(.escalationRequest(reason: "early")), at: .origin)
        core.receive(F.start, at: .origin)
        core.receive(F.start, at: .origin)
        let texts = F.nonAudioTexts(core.drain(at: .origin))
        #expect(texts.prefix(3) == [
            #"{"type":"debug","message":"text.input arrived before session.start; the runtime answers anyway"}"#,
            #"{"type":"escalation","status":"requested"}"#,
            F.greeting,
        ])
        #expect(texts[3] == #"{"type":"debug","message":"a second session.start (session \"s-1\") was ignored"}"#)
        #expect(texts[4] == #"{"type":"transcript","role":"user","text":"early","final":true}"#)
    }

    @Test func aSampleRateChangeIsNotedAndTimedByEachRate() {
        var core = Self.started(EmbeddedRuntimeOptions(pacing: .unpaced))
        let tone = F.toneBurst(lead: 0, tone: 0.5, tail: 0)
        core.receive(F.chunks(tone, size: 320).map { F.audio($0) }, at: .origin)
        let tone8k = F.toneBurst(lead: 0, tone: 0.5, tail: 0.5, rate: 8_000)
        core.receive(F.chunks(tone8k, size: 160).map { F.audio($0, rate: 8_000) }, at: .origin)
        let actions = core.drain(at: .origin)
        let texts = F.nonAudioTexts(actions)
        #expect(texts.first == #"{"type":"debug","message":"the audio sample rate changed from 16000 Hz to 8000 Hz"}"#)
        // 0.5 s at 16 kHz and 1.0 s at 8 kHz (the gate closes as the file ends).
        #expect(texts.contains(#"{"type":"tool.call","id":"audio_stats-1","name":"audio_stats","input":{"durationSeconds":1.5,"sampleRate":8000}}"#))
        #expect(F.replyChunks(actions).flatMap { $0 }.count == 12_000 + 24_000)
    }

    // MARK: A full backlog

    @Test func aRefusedSendIsOfferedAgainLaterAndNothingIsLost() throws {
        var core = Self.started(EmbeddedRuntimeOptions(pacing: .unpaced))
        let burst = F.toneBurst()
        core.receive(F.chunks(burst).map { F.audio($0) }, at: .origin)
        var now = SessionInstant.origin
        var delivered: [EmbeddedRuntimeCore.Action] = []
        var refusals = 0
        // The transport refuses every fifth send, as a backlog that fills and drains would.
        var attempt = 0
        while true {
            var next = core.nextAction(at: now)
            if next == nil, let deadline = core.nextDeadline {
                now = deadline
                next = core.nextAction(at: now)
            }
            guard let action = next else { break }
            attempt += 1
            if attempt % 5 == 0 {
                core.sendRefused(at: now)
                refusals += 1
                #expect(core.nextAction(at: now) == nil)
                #expect(core.nextDeadline == now + .milliseconds(5))
            } else {
                delivered.append(action)
            }
        }
        #expect(refusals > 30)
        // Every message once, in order; the tool's time spans the refused sends between call and result.
        let withoutToolTime = { (text: String) in text.replacing(#/"durationMs":[0-9.]+/#, with: "") }
        #expect(F.texts(Array(delivered.prefix(6))).map(withoutToolTime) == F.burstTurnMessages.map(withoutToolTime))
        let reply = F.replyChunks(delivered).flatMap { $0 }
        #expect(reply == (try F.resampledReference(Array(burst.prefix(F.burstTurnSamples)))))
    }

    // MARK: Test switches

    @Test func failSendsAnErrorOnTheFirstTurnInsteadOfAnsweringThenCloses() {
        var core = Self.started(EmbeddedRuntimeOptions(misbehaviour: .fail))
        core.receive(F.message(.escalationRequest(reason: "x")), at: .origin)
        core.receive(F.chunks(F.toneBurst()).map { F.audio($0) }, at: .origin)
        #expect(F.texts(core.drain(at: .origin)) == [
            #"{"type":"escalation","status":"requested"}"#,
            #"{"type":"error","message":"the embedded runtime failed on purpose (test switch)","code":"embedded.fail"}"#,
            "close",
        ])
        #expect(core.isFinished == true)
        #expect(core.drain(at: .seconds(2)).isEmpty)
    }

    @Test func failOnATypedTurnToo() {
        var core = Self.started(EmbeddedRuntimeOptions(misbehaviour: .fail))
        core.receive(F.message(.textInput(text: "hello")), at: .origin)
        #expect(F.texts(core.drain(at: .origin)) == [
            #"{"type":"error","message":"the embedded runtime failed on purpose (test switch)","code":"embedded.fail"}"#,
            "close",
        ])
    }

    @Test func silentReadsEverythingAndSendsNothingEver() {
        var core = EmbeddedRuntimeCore(options: EmbeddedRuntimeOptions(misbehaviour: .silent))
        core.receive(F.start, at: .origin)
        core.receive(F.chunks(F.toneBurst()).map { F.audio($0) }, at: .origin)
        core.receive(F.message(.textInput(text: "anyone?")), at: .origin)
        core.receive(F.message(.escalationRequest(reason: "x")), at: .origin)
        core.receive(.message("not json"), at: .origin)
        core.receive(F.message(.sessionEnd), at: .origin)
        #expect(core.drain(at: .seconds(60)).isEmpty)
        #expect(core.nextDeadline == nil)
        #expect(core.isFinished == false)
        core.receive(.closed(.closedByClient), at: .seconds(61))
        #expect(core.isFinished == true)
    }

    @Test func stallGreetsThenStopsReading() {
        var core = EmbeddedRuntimeCore(options: EmbeddedRuntimeOptions(misbehaviour: .stall))
        core.receive(F.start, at: .origin)
        #expect(F.texts(core.drain(at: .origin)) == [F.greeting, "stop reading"])
        core.receive(F.message(.textInput(text: "hello")), at: .origin)
        core.receive(F.message(.sessionEnd), at: .origin)
        #expect(core.drain(at: .seconds(10)).isEmpty)
        #expect(core.nextDeadline == nil)
    }
}
