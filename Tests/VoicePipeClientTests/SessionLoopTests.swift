import Foundation
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession
import VoicePipeTestSupport

/// Many sessions on one thread (``SessionLoop``): each session's audio reaches the runtime whole,
/// in order and unmixed, never before its audio time; a session on the loop is read and ended
/// from other threads as one on a thread of its own.
@Suite(.serialized) struct SessionLoopTests {
    /// Twelve real-time sessions, each with audio of its own, on one loop against one embedded
    /// runtime (a thread per session, or all its sessions on a loop of its own): the runtime's
    /// count of each session (found by its id) is that session's audio.
    @Test(arguments: [false, true])
    func twelveRealTimeSessionsOnOneLoopEachDeliverTheirOwnAudioWholeAndNeverEarly(runtimeOnALoop: Bool) throws {
        let directory = try TemporaryDirectory()
        let count = 12
        let loop = SessionLoop()
        let runtimeLoop = SessionLoop(threadName: "vp-test-runtime")
        defer { loop.close(); runtimeLoop.close() }
        let runtime = runtimeOnALoop ? EmbeddedRuntime(loop: runtimeLoop) : EmbeddedRuntime()
        var generated: [String: AudioTally] = [:]
        let reports = Guarded<[String: SessionReport]>([:])
        let timings = Guarded<[String: (taken: Int, early: Int)]>([:])
        let done = DispatchGroup()
        for index in 0..<count {
            let id = "loop-\(index)"
            let path = directory.path("\(id).wav")
            generated[id] = try LoadAudio.write(path: path, seconds: 2, seed: UInt64(300 + index)).tally
            let reader = try AudioFileReader(path: path)
            let capture = try FileCaptureSource(reader: reader, converter: CaptureConverter(input: reader.format))
            // Twelve sessions and their runtime on a starved host (the sanitizer's run) leave the
            // runtime seconds behind: the waits for it only catch a hang here, as in the corpus test.
            let session = SessionConfiguration(sessionId: id, endTimeout: .seconds(60), stallLimit: .seconds(60))
            let driver = SessionDriver(options: SessionDriverOptions(session: session), transport: runtime.connect(),
                                       clock: loop.clock, capture: .file(capture, pacing: .realTime), output: DiscardedReplyOutput()) { event, instant in
                guard case .fileFrameTaken(let due) = event else { return }
                timings.withLock { $0[id, default: (0, 0)].taken += 1; if instant < due { $0[id, default: (0, 0)].early += 1 } }
            }
            done.enter()
            try loop.add(driver) { report in
                reports.withLock { $0[id] = report }
                done.leave()
            }
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(runtime.blockUntilFinished(timeout: .seconds(30)))
        let finished = reports.withLock { $0 }
        #expect(finished.count == count)
        // 2 s at 16 kHz in 512-sample frames: 63 frames (the last one short) for each session,
        // each taken at or after its audio time, as was the read that found the file's end.
        for (id, report) in finished.sorted(by: { $0.key < $1.key }) {
            #expect(report.endedCleanly, "\(id): \(report.machine.state)")
            #expect(report.machine.counters.framesSent == 63, "\(id)")
        }
        let taken = timings.withLock { $0 }
        #expect(taken.values.map(\.taken) == Array(repeating: 64, count: count))
        #expect(taken.values.allSatisfy { $0.early == 0 }, "\(taken)")
        let traffic = runtime.traffic
        #expect(Set(traffic.compactMap(\.sessionId)) == Set(generated.keys))
        for record in traffic {
            guard let id = record.sessionId else { continue }
            #expect(record.audioReceived.samples == generated[id]?.samples && record.audioReceived.crc32 == generated[id]?.crc32, "session \(id)")
        }
    }

    /// A session on the loop is read, typed to and ended from another thread while it runs, as
    /// one on a thread of its own is.
    @Test func aSessionOnTheLoopIsReadTypedToAndEndedFromAnotherThread() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("voice.wav")
        _ = try LoadAudio.write(path: path, seconds: 6)
        let loop = SessionLoop()
        defer { loop.close() }
        let runtime = EmbeddedRuntime()
        let reader = try AudioFileReader(path: path)
        let capture = try FileCaptureSource(reader: reader, converter: CaptureConverter(input: reader.format))
        let driver = SessionDriver(options: SessionDriverOptions(session: SessionConfiguration(sessionId: "loop-typed")), transport: runtime.connect(),
                                   clock: loop.clock, capture: .file(capture, pacing: .realTime), output: DiscardedReplyOutput())
        let finished = Guarded<SessionReport?>(nil)
        try loop.add(driver) { report in finished.withLock { $0 = report } }
        // Mid-session: 10 of the file's 188 frames gone, read from this thread.
        #expect(waitUntil { driver.snapshot.counters.framesSent >= 10 })
        #expect(driver.snapshot.counters.framesSent < 188)
        driver.type("what time is it")
        #expect(waitUntil { driver.snapshot.counters.textsSent == 1 })
        driver.requestEnd()
        #expect(waitUntil { finished.withLock { $0 != nil } })
        let report = try #require(finished.withLock { $0 })
        #expect(report.endedCleanly, "\(report.machine.state)")
        #expect(report.machine.counters.textsSent == 1)
        #expect(report.machine.counters.framesSent < 188)
        // Once the session has ended, its snapshot is the machine it ended with.
        #expect(driver.snapshot.state == .disconnected)
        #expect(driver.snapshot.counters.framesSent == report.machine.counters.framesSent)
    }

    @Test func aSessionOnAnotherClockOrAClosedLoopIsRefusedWithTheReason() throws {
        let loop = SessionLoop()
        let runtime = EmbeddedRuntime()
        let foreign = SessionDriver(options: SessionDriverOptions(session: SessionConfiguration(sessionId: "other-clock")), transport: runtime.connect(),
                                    capture: .none, output: DiscardedReplyOutput())
        #expect(throws: SessionLoopError.otherClock) { try loop.add(foreign) { _ in } }
        loop.close()
        let late = SessionDriver(options: SessionDriverOptions(session: SessionConfiguration(sessionId: "late")), transport: runtime.connect(),
                                 clock: loop.clock, capture: .none, output: DiscardedReplyOutput())
        #expect(throws: SessionLoopError.closed) { try loop.add(late) { _ in } }
        #expect(SessionLoopError.otherClock.description
            == "a session on a loop must be made with the loop's clock (SessionDriver(clock: loop.clock, …))")
        #expect(SessionLoopError.closed.description == "the session loop was closed and takes no more sessions")
        runtime.stop()
    }
}
