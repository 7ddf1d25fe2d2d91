import Foundation
import Testing
import VoicePipeClient
import VoicePipeIO
import VoicePipeTestSupport

/// The scale harness the benchmark runs (`voicepipe-bench --filter sessions/`), small: what it
/// reports is each session's own account, and nothing is lost between sessions.
@Suite(.serialized) struct SessionScaleTests {
    @Test(arguments: [SessionScaleRun.Threading.threadPerSession, .loops(1)])
    func fourRealTimeSessionsSendEveryFrameOnceAndTheHarnessAccountsForEach(threading: SessionScaleRun.Threading) throws {
        let report = try SessionScaleRun(sessions: 4, seconds: 3, stagger: .milliseconds(20), threading: threading).run()
        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(report.framesLost == 0)
        // 3 s at 16 kHz in 512-sample frames: 94 frames (the last one short), for each session.
        #expect(report.records.map(\.framesSent) == [94, 94, 94, 94])
        #expect(report.records.allSatisfy { $0.lateness.count == 94 })
        #expect(report.allLateness.count == 376)
        // The window (all four running) is read from the threads' own CPU clocks, client and runtime apart.
        let window = try #require(report.windowSeconds)
        #expect(window > 1.5 && window < 2.5, "\(window)")
        #expect(try #require(report.clientCPUSeconds) > 0)
        #expect(try #require(report.runtimeCPUSeconds) > 0)
        #expect(report.residentInWindow != nil)
    }

    @Test func theThreadCPUReaderSeesAThreadUnderItsName() {
        let seen = Guarded<(sum: Double, cpu: Double)>((0, 0))
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            nameCurrentThread("vp-cpu-probe")
            var sum = 0.0
            for index in 0..<30_000_000 { sum += Double(index & 7) }
            let cpu = ThreadCPU.byName()["vp-cpu-probe"] ?? 0
            seen.withLock { $0 = (sum, cpu) }
            done.signal()
        }
        done.wait()
        let (sum, cpu) = seen.withLock { $0 }
        #expect(sum == 105_000_000)
        #expect(cpu > 0)
    }

    @Test func aRunWithNoSessionIsRefusedWithTheReason() {
        #expect(throws: SessionScaleError.self) { try SessionScaleRun(sessions: 0, seconds: 1).run() }
        #expect(throws: SessionScaleError.self) { try SessionScaleRun(sessions: 2, seconds: 1, threading: .loops(0)).run() }
        #expect(SessionScaleError.noLoop.description == "sessions shared among loops need at least one loop")
        #expect(SessionScaleError.nothingToRun(sessions: 0, seconds: 1).description
            == "a scale run needs at least one session, some audio and a stagger of zero or more (0 sessions of 1.0 s)")
    }
}
