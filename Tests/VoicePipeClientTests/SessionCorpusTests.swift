import Foundation
import Synchronization
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession
import VoicePipeTestSupport

/// The corpus scheduler: one session per input and repetition, named after the input, at most
/// `width` at once, a stop that reaches every running session and starts no more; and the
/// embedded runtime serving many sessions at once without mixing their audio.
struct SessionCorpusTests {
    @Test func jobsAreEveryInputOfEachRepetitionNamedAfterTheInput() throws {
        let corpus = try SessionCorpus(inputs: ["calls/take 1.wav", "b.flac"], repeats: 2, width: 3)
        #expect(corpus.jobs.map(\.name) == ["take 1.r1", "b.r1", "take 1.r2", "b.r2"])
        #expect(corpus.jobs.map(\.input) == ["calls/take 1.wav", "b.flac", "calls/take 1.wav", "b.flac"])
        #expect(corpus.jobs.map(\.repetition) == [1, 1, 2, 2])
        #expect(corpus.jobs.map(\.index) == [0, 1, 2, 3])
        #expect(try SessionCorpus(inputs: ["a/x.wav"], width: 1).jobs.map(\.name) == ["x"])
    }

    @Test func badCorporaAreRefusedWithTheReason() {
        #expect(throws: SessionCorpusError.noInputs) { try SessionCorpus(inputs: [], width: 1) }
        #expect(throws: SessionCorpusError.badCount(0, of: "repeat")) { try SessionCorpus(inputs: ["a.wav"], repeats: 0, width: 1) }
        #expect(throws: SessionCorpusError.badCount(0, of: "jobs")) { try SessionCorpus(inputs: ["a.wav"], width: 0) }
        #expect(throws: SessionCorpusError.negativeStagger) { try SessionCorpus(inputs: ["a.wav"], width: 1, stagger: .seconds(-1)) }
        #expect(throws: SessionCorpusError.sameName("one/take.wav", "two/take.flac", name: "take")) {
            try SessionCorpus(inputs: ["one/take.wav", "two/take.flac"], width: 2)
        }
        #expect(SessionCorpusError.badCount(0, of: "jobs").description == "'--jobs' must be 1 or more, not 0")
        #expect(SessionCorpusError.sameName("one/take.wav", "two/take.flac", name: "take").description
                == "'one/take.wav' and 'two/take.flac' would both write files named 'take'; run them in separate corpora or rename one")
    }

    @Test func atMostWidthSessionsRunAtOnceAndEveryOutcomeComesBackInJobOrder() throws {
        let corpus = try SessionCorpus(inputs: (0..<9).map { "input-\($0).wav" }, width: 3)
        let running = Atomic<Int>(0), most = Atomic<Int>(0)
        let gate = DispatchSemaphore(value: 0)
        var completedOrder: [Int] = []
        let outcomes = corpus.run({ job, _ in
            let now = running.add(1, ordering: .sequentiallyConsistent).newValue
            most.max(now, ordering: .sequentiallyConsistent)
            // The first three wait for each other: proof that three do run at once.
            if job.index < 3 {
                if now == 3 { for _ in 0..<2 { gate.signal() } } else { _ = gate.wait(timeout: .now() + 10) }
            }
            running.subtract(1, ordering: .sequentiallyConsistent)
            return job.name
        }, skipped: { _ in "skipped" }, completed: { job, _ in completedOrder.append(job.index) })
        #expect(outcomes == (0..<9).map { "input-\($0)" })
        #expect(most.load(ordering: .sequentiallyConsistent) == 3)
        #expect(completedOrder.sorted() == Array(0..<9))
    }

    @Test func aStopEndsTheRunningSessionsAndStartsNoMore() throws {
        let corpus = try SessionCorpus(inputs: (0..<5).map { "input-\($0).wav" }, width: 2)
        let started = Atomic<Int>(0)
        let bothRunning = DispatchSemaphore(value: 0)
        let outcomes = corpus.run({ job, stop in
            // Each running session waits until the corpus stops it, as a session waits on its runtime.
            let ended = DispatchSemaphore(value: 0)
            stop.onStop { ended.signal() }
            if started.add(1, ordering: .sequentiallyConsistent).newValue == 2 { bothRunning.signal() }
            if job.index == 0 {
                _ = bothRunning.wait(timeout: .now() + 10)
                corpus.stop()
            }
            return ended.wait(timeout: .now() + 10) == .success && stop.wasFired ? "ended by the stop" : "ran out"
        }, skipped: { _ in "not started" }, completed: { _, _ in })
        #expect(outcomes == ["ended by the stop", "ended by the stop", "not started", "not started", "not started"])
        #expect(corpus.isStopped)
    }

    @Test func aStopCutsTheStaggerShort() throws {
        let corpus = try SessionCorpus(inputs: ["a.wav", "b.wav", "c.wav"], width: 3, stagger: .seconds(120))
        let start = ContinuousClock.now
        let outcomes = corpus.run({ job, _ in
            corpus.stop()
            return job.name
        }, skipped: { job in "skipped \(job.name)" }, completed: { _, _ in })
        #expect(outcomes == ["a", "skipped b", "skipped c"])
        // The waiting starts were woken, not left to sleep out their two and four minutes.
        #expect(ContinuousClock.now - start < .seconds(60))
    }

    @Test func staggeredSessionsStartInOrderNoSoonerThanTheirSpacing() throws {
        let corpus = try SessionCorpus(inputs: ["a.wav", "b.wav", "c.wav"], width: 3, stagger: .milliseconds(40))
        let start = ContinuousClock.now
        let outcomes = corpus.run({ _, _ in start.duration(to: .now) }, skipped: { _ in .zero }, completed: { _, _ in })
        #expect(outcomes.count == 3)
        for (index, startedAfter) in outcomes.enumerated() {
            #expect(startedAfter >= .milliseconds(40) * index, "session \(index) started after \(startedAfter)")
        }
    }

    /// Twelve sessions at once against one embedded runtime, each with audio of its own: the
    /// runtime's count of each session (found by its id) is that session's own audio, whole.
    @Test func oneEmbeddedRuntimeServesManySessionsAtOnceWithoutMixingThem() throws {
        let directory = try TemporaryDirectory()
        let count = 12
        var generated: [String: AudioTally] = [:]
        var inputs: [String] = []
        for index in 0..<count {
            let path = directory.path("session-\(index).wav")
            generated["corpus-\(index)"] = try LoadAudio.write(path: path, seconds: 4, seed: UInt64(100 + index)).tally
            inputs.append(path)
        }
        let runtime = EmbeddedRuntime(options: EmbeddedRuntimeOptions(pacing: .unpaced))
        let corpus = try SessionCorpus(inputs: inputs, width: count)
        let reports = corpus.run({ job, stop in
            do {
                let reader = try AudioFileReader(path: job.input)
                let capture = try FileCaptureSource(reader: reader, converter: CaptureConverter(input: reader.format))
                // Twelve unpaced sessions on a starved host (the sanitizer's run) leave the runtime
                // seconds behind: the waits for it only catch a hang here, as in the load test.
                let session = SessionConfiguration(sessionId: "corpus-\(job.index)", endTimeout: .seconds(60), stallLimit: .seconds(60))
                let driver = SessionDriver(options: SessionDriverOptions(session: session),
                                           transport: runtime.connect(), capture: .file(capture, pacing: .asFastAsTaken), output: DiscardedReplyOutput())
                stop.onStop { driver.requestEnd() }
                let report = driver.run()
                return report.endedCleanly ? "ok \(report.machine.counters.framesSent)" : "failed: \(report.machine.state)"
            } catch {
                return "setup failed: \(error)"
            }
        }, skipped: { _ in "skipped" }, completed: { _, _ in })
        #expect(reports.allSatisfy { $0.hasPrefix("ok ") }, "\(reports)")
        #expect(runtime.blockUntilFinished(timeout: .seconds(30)))
        let traffic = runtime.traffic
        #expect(traffic.count == count)
        #expect(Set(traffic.compactMap(\.sessionId)) == Set(generated.keys))
        for record in traffic {
            guard let id = record.sessionId else { continue }
            // The same samples in the same order (CRC-32); the chunking is the capture's frames, not the file's blocks.
            #expect(record.audioReceived.samples == generated[id]?.samples && record.audioReceived.crc32 == generated[id]?.crc32, "session \(id)")
        }
    }
}
