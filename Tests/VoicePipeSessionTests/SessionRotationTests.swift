import Testing
import VoicePipeCore
import VoicePipeSession

/// Rotation: once the connection is as old as `rotateAfter`, the first quiet ready moment asks for
/// a fresh one; its `session.start` continues the session; a failed attempt waits to retry.
struct SessionRotationTests {
    static func configuration(after seconds: Int = 60) -> SessionConfiguration {
        SessionConfiguration(sessionId: "s-1", context: ["persona": .string("Dana")], keepAliveInterval: .seconds(1_000), rotateAfter: .seconds(seconds))
    }

    static func rotations(_ actions: [SessionAction]) -> Int {
        actions.filter { $0 == .rotateTransport }.count
    }

    @Test func aQuietReadySessionRotatesExactlyWhenTheConnectionIsOldEnough() {
        var script = SessionScript(Self.configuration(after: 60))
        script.connectAndOpen(at: .origin)
        #expect(script.scheduled == .ms(60_000))
        script.runTimers(until: .ms(59_999))
        #expect(Self.rotations(script.log) == 0)
        script.runTimers(until: .ms(60_000))
        #expect(Self.rotations(script.log) == 1)
        #expect(script.machine.isRotating)
        #expect(script.log.contains(.note(.rotationStarted)))
        #expect(script.machine.state == .ready)
    }

    @Test func aRotationWaitsForTheTurnInProgressToBeAnswered() {
        var script = SessionScript(Self.configuration(after: 1))
        script.connectAndOpen(at: .origin)
        // Speech from 0.5 s to 1.5 s: the connection is due at 1 s, in the middle of the turn.
        let speechStart = script.frames(SessionScript.room, count: 15, from: .origin)
        let speechEnd = script.frames(SessionScript.voice, count: 32, from: speechStart)
        script.frames(SessionScript.room, count: 20, from: speechEnd)
        #expect(Self.rotations(script.log) == 0)
        script.receive(.audioChunk(SessionRuleTests.reply), at: .ms(2_500))
        #expect(Self.rotations(script.log) == 0, "not while the reply plays")
        script.run { $0.playbackDrained(at: .ms(2_520)) }
        script.runTimers(until: .ms(3_000))
        #expect(script.machine.state == .ready)
        #expect(Self.rotations(script.log) == 1)
    }

    @Test func theFreshConnectionContinuesTheSessionAndTheNextRotationCountsFromIt() {
        var script = SessionScript(Self.configuration(after: 60))
        script.connectAndOpen(at: .origin)
        script.runTimers(until: .ms(60_000))
        script.clearLog()
        let opened = script.run { $0.rotationOpened(at: .ms(60_050)) }
        #expect(opened.first == .send(.sessionStart(sessionId: "s-1", context: ["persona": .string("Dana")], continuesSessionId: "s-1")))
        #expect(opened.contains(.note(.rotated(gap: .milliseconds(50)))))
        #expect(!script.machine.isRotating)
        #expect(script.scheduled == .ms(120_050))
        #expect(script.transitions.isEmpty)
    }

    @Test func aFailedRotationIsNotedAndRetriedAfterTheDelay() {
        var configuration = Self.configuration(after: 60)
        configuration.rotationRetryDelay = .seconds(10)
        var script = SessionScript(configuration)
        script.connectAndOpen(at: .origin)
        script.runTimers(until: .ms(60_000))
        script.clearLog()
        script.run { $0.rotationFailed("connection refused", at: .ms(60_100)) }
        #expect(script.log.contains(.note(.rotationFailed("connection refused"))))
        #expect(script.machine.state == .ready)
        script.runTimers(until: .ms(70_099))
        #expect(Self.rotations(script.log) == 0)
        script.runTimers(until: .ms(70_100))
        #expect(Self.rotations(script.log) == 1)
    }

    @Test func anEndingSessionDoesNotRotate() {
        var script = SessionScript(Self.configuration(after: 1))
        script.connectAndOpen(at: .origin)
        script.run { $0.end(at: .ms(500)) }
        script.runTimers(until: .ms(3_000))
        #expect(Self.rotations(script.log) == 0)
    }

    @Test func withoutRotateAfterNothingRotates() {
        var script = SessionScript(SessionConfiguration(sessionId: "s-1", keepAliveInterval: .seconds(1_000)))
        script.connectAndOpen(at: .origin)
        script.runTimers(until: .ms(3_600_000))
        #expect(Self.rotations(script.log) == 0)
        #expect(script.run { $0.rotationOpened(at: .ms(10)) }.contains(.note(.ignored(event: "rotation opened", state: .ready))))
    }
}
