import Foundation
import Glibc
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeSession
import VoicePipeTestSupport

/// A runtime started as `/bin/sh -c COMMAND`: messages both ways through its standard streams,
/// a close reason that says how it ended, and no process left behind, reaped or not.
///
/// A runtime that must be stopped runs `sleep 600`: long enough that it cannot end by itself while
/// a test waits for a thread. On two cores the whole suite's synchronous CLI tests can hold both
/// of Swift's cooperative threads for about 100 s, and a `sleep 100` then ended on its own before
/// the test got to close it (three tests failed that way under load).
struct RuntimeProcessTests {
    /// True when nothing is left of the runtime: the shell reaped (no zombie of ours) and no
    /// process of its group (what the shell started) running. A grandchild that has just exited
    /// is init's to reap, so the group is given up to 2 s to reach that state.
    static func isGone(_ pid: pid_t?) -> Bool {
        guard let pid else { return false }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == -1 && errno == ECHILD else { return false }
        let deadline = ContinuousClock.now + .seconds(2)
        while !runningMembers(ofGroup: pid).isEmpty {
            guard ContinuousClock.now < deadline else { return false }
            usleep(5_000)
        }
        return true
    }

    /// Processes of group `group` that are not zombies, from /proc.
    static func runningMembers(ofGroup group: pid_t) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { $0.allSatisfy(\.isNumber) }.compactMap { entry in
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let nameEnd = stat.lastIndex(of: ")") else { return nil }
            // After "pid (name) ": state, ppid, pgrp.
            let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
            guard fields.count > 2, fields[2] == "\(group)", fields[0] != "Z" else { return nil }
            return stat
        }
    }

    @Test func catEchoesEveryMessageBackInOrderAndCloseEndsItByEndOfInput() async {
        let transport = JSONLinesTransport.launching("cat", standardError: .keepTail(bytes: 4_096))
        transport.open()
        #expect(transport.process?.pid != nil)
        let messages = (0..<100).map { #"{"type":"text.input","text":"\#($0) ☕"}"# }
        for message in messages { try? transport.send(message) }
        let echoed = await TransportTesting.events(of: transport, until: { $0 == .message(messages[99]) })
        #expect(echoed == [.opened] + messages.map { .message($0) })
        transport.close()
        #expect(await TransportTesting.events(of: transport) == [.closed(.closedByClient)])
        // cat exits on the end of its input, well within the grace.
        #expect(transport.process?.termination == .exited(status: 0))
        #expect(Self.isGone(transport.process?.pid))
    }

    @Test func aScriptedRuntimeReceivesExactlyTheBytesSentAndItsLinesArriveInOrder() async throws {
        let directory = try TemporaryDirectory()
        let script = try directory.file("runtime.py", Array("""
            import sys
            received = b""
            while True:
                line = sys.stdin.buffer.readline()
                if not line:
                    break
                received += line
                if line.startswith(b'{"type":"session.end"'):
                    break
            with open(sys.argv[1], "wb") as record:
                record.write(received)
            out = sys.stdout.buffer
            out.write(b'{"type":"transcript","role":"assistant","text":"one","final":true}\\n')
            out.write(b'{"type":"transcript","role":"assistant","text":"two","final":true}\\r\\n')
            out.write(b'\\n')
            out.write('{"type":"info.message","markdown":"caf\\u00e9"}'.encode("utf-8"))

            """.utf8))
        let record = directory.path("received.bin")
        let transport = JSONLinesTransport.launching("python3 '\(script)' '\(record)'", standardError: .keepTail(bytes: 4_096))
        transport.open()
        let sent = [#"{"type":"session.start","sessionId":"s","context":{}}"#, #"{"type":"text.input","text":"héllo"}"#,
                    #"{"type":"session.end"}"#]
        for message in sent { try? transport.send(message) }
        let events = await TransportTesting.events(of: transport)
        #expect(events == [.opened,
                           .message(#"{"type":"transcript","role":"assistant","text":"one","final":true}"#),
                           .message(#"{"type":"transcript","role":"assistant","text":"two","final":true}"#),
                           .message(#"{"type":"info.message","markdown":"café"}"#),
                           .closed(.closedByRuntime("the runtime exited with status 0"))])
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: record))) == Array(sent.map { $0 + "\n" }.joined().utf8))
        #expect(Self.isGone(transport.process?.pid))
    }

    @Test func aRuntimeThatExitsSaysWithWhichStatusAndWhatItLastSaid() async {
        let transport = JSONLinesTransport.launching("echo 'warming up' >&2; echo 'no model loaded' >&2; exit 3",
                                                     standardError: .keepTail(bytes: 4_096))
        transport.open()
        let events = await TransportTesting.events(of: transport)
        #expect(events == [.opened, .closed(.failed("the runtime exited with status 3; it said: no model loaded", code: nil))])
        #expect(transport.process?.termination == .exited(status: 3))
        #expect(transport.process?.standardErrorTail == "warming up\nno model loaded\n")
        #expect(throws: TransportError.closed(.failed("the runtime exited with status 3; it said: no model loaded", code: nil))) {
            try transport.send("{}")
        }
        #expect(Self.isGone(transport.process?.pid))
    }

    @Test func aRuntimeKilledByASignalSaysWhichSignal() async {
        let transport = JSONLinesTransport.launching("kill -9 $$", standardError: .keepTail(bytes: 4_096))
        transport.open()
        let events = await TransportTesting.events(of: transport)
        #expect(events == [.opened, .closed(.failed("the runtime was killed by signal 9", code: nil))])
        #expect(transport.process?.termination == .killed(signal: 9))
        #expect(Self.isGone(transport.process?.pid))
    }

    @Test func aCommandThatCannotBeFoundFailsNamingTheCommand() async {
        let transport = JSONLinesTransport.launching("voicepipe-no-such-runtime --flag", standardError: .keepTail(bytes: 4_096))
        transport.open()
        let events = await TransportTesting.events(of: transport)
        // Refused, not failed: starting it again would not find it either, so a session does not reconnect.
        let reason = TransportCloseReason.refused(
            "could not start the runtime 'voicepipe-no-such-runtime --flag': command not found (status 127); it said: sh: 1: voicepipe-no-such-runtime: not found")
        #expect(events == [.opened, .closed(reason)])
        #expect(!reason.isRetryable)
        #expect(Self.isGone(transport.process?.pid))
    }

    @Test func closeStopsARuntimeThatIgnoresTheEndOfItsInputWithSIGTERMAfterTheGrace() async {
        let transport = JSONLinesTransport.launching("sleep 600", standardError: .keepTail(bytes: 4_096), exitGrace: 0.2, terminationGrace: 2)
        transport.open()
        #expect(await TransportTesting.events(of: transport, until: { $0 == .opened }) == [.opened])
        // The grace, then SIGTERM to the shell and its sleep: the termination says SIGTERM, not the
        // SIGKILL that would follow 2 s later. Timed on this thread, from before the close: no
        // sooner than the grace; the upper bound only catches a hang (a busy host delays threads).
        let started = ContinuousClock.now
        transport.close()
        #expect(transport.process?.waitForTermination(seconds: 5) == .killed(signal: SIGTERM))
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .seconds(0.2) && elapsed < .seconds(5), "\(elapsed)")
        #expect(await TransportTesting.events(of: transport) == [.closed(.closedByClient)])
        #expect(Self.isGone(transport.process?.pid))
    }

    /// A signal ignored here would stay ignored in the runtime across exec; the runtime starts
    /// with the default action for SIGTERM whatever this process does with it.
    @Test func aRuntimeStartedWhileThisProcessIgnoresSIGTERMStillStopsOnIt() async {
        let transport = JSONLinesTransport.launching("sleep 600", standardError: .keepTail(bytes: 4_096), exitGrace: 0.2, terminationGrace: 2)
        let previous = signal(SIGTERM, SIG_IGN)
        transport.open()
        signal(SIGTERM, previous)
        #expect(await TransportTesting.events(of: transport, until: { $0 == .opened }) == [.opened])
        transport.close()
        #expect(transport.process?.waitForTermination(seconds: 5) == .killed(signal: SIGTERM))
        #expect(await TransportTesting.events(of: transport) == [.closed(.closedByClient)])
    }

    @Test func closeKillsARuntimeThatIgnoresSIGTERM() async {
        let transport = JSONLinesTransport.launching("trap '' TERM; echo '{\"ready\":true}'; sleep 600", standardError: .keepTail(bytes: 4_096),
                                                     exitGrace: 0.1, terminationGrace: 0.2)
        transport.open()
        // Closed once the trap is set, so SIGTERM cannot come before it.
        #expect(await TransportTesting.events(of: transport, until: { $0 == .message(#"{"ready":true}"#) }) == [.opened, .message(#"{"ready":true}"#)])
        transport.close()
        #expect(await TransportTesting.events(of: transport) == [.closed(.closedByClient)])
        #expect(transport.process?.termination == .killed(signal: SIGKILL))
        #expect(Self.isGone(transport.process?.pid))
    }

    @Test func aRuntimeThatClosesItsOutputButRunsOnIsReportedSoAndThenStopped() async {
        let transport = JSONLinesTransport.launching("exec >&-; sleep 600", standardError: .keepTail(bytes: 4_096),
                                                     exitGrace: 0.1, terminationGrace: 1)
        transport.open()
        #expect(await TransportTesting.events(of: transport) == [.opened, .closed(.closedByRuntime("the runtime closed its output"))])
        // Stopped in the background once the connection is over.
        #expect(transport.process?.waitForTermination(seconds: 5) == .killed(signal: SIGTERM))
        #expect(Self.isGone(transport.process?.pid))
    }

    @Test func repliesWrittenJustBeforeExitingOnEndOfInputArriveBeforeTheClose() async {
        // A runtime that answers session.end and then exits when its input ends.
        let transport = JSONLinesTransport.launching(#"cat >/dev/null; echo '{"type":"session.ended","reason":"bye"}'"#,
                                                     standardError: .keepTail(bytes: 4_096))
        transport.open()
        try? transport.send(#"{"type":"session.end"}"#)
        transport.close()
        #expect(await TransportTesting.events(of: transport) == [.opened, .message(#"{"type":"session.ended","reason":"bye"}"#),
                                                                 .closed(.closedByClient)])
        #expect(transport.process?.termination == .exited(status: 0))
    }

    @Test func releasingAnOpenTransportStopsItsRuntime() async {
        var transport: JSONLinesTransport? = JSONLinesTransport.launching("cat", standardError: .keepTail(bytes: 4_096))
        transport?.open()
        guard let events = transport?.events, let process = transport?.process else { return }
        transport = nil
        var received = [TransportEvent]()
        for await event in events { received.append(event) }
        #expect(received == [.opened, .closed(.closedByClient)])
        #expect(process.termination == .exited(status: 0))
        #expect(Self.isGone(process.pid))
    }

    @Test func theRuntimesOwnChildIsStoppedWhenTheShellDiesOfSIGTERMButItDoesNot() async {
        // The shell dies of SIGTERM at once; its child ignores it and keeps the output open.
        let transport = JSONLinesTransport.launching("sh -c 'trap \"\" TERM; echo {}; sleep 600'", standardError: .keepTail(bytes: 4_096),
                                                     exitGrace: 0.1, terminationGrace: 0.3)
        transport.open()
        #expect(await TransportTesting.events(of: transport, until: { $0 == .message("{}") }) == [.opened, .message("{}")])
        transport.close()
        #expect(await TransportTesting.events(of: transport) == [.closed(.closedByClient)])
        #expect(transport.process?.termination == .killed(signal: SIGTERM))
        #expect(Self.isGone(transport.process?.pid))
    }
}
