import Foundation
import Glibc
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeSession
import VoicePipeTestSupport

/// JSON Lines on a pair of descriptors, the far end driven by the test: exact bytes out, every
/// line in, a bounded backlog that loses nothing, and one close reason that says what happened.
struct JSONLinesTransportTests {
    /// A transport on two fresh pipes, and the test's ends of them.
    struct Connected {
        let transport: JSONLinesTransport
        /// Where the test writes what the runtime says.
        let runtimeSays: Int32
        /// Where the test reads what the client sent.
        let runtimeHears: Int32
    }

    static func connected(maximumMessageLength: Int = JSONLinesTransport.defaultMaximumMessageLength,
                          backlogLimit: Int = JSONLinesTransport.defaultBacklogLimit, flushTimeout: Double = 2) -> Connected {
        let toClient = TransportTesting.pipe()
        let toRuntime = TransportTesting.pipe()
        let transport = JSONLinesTransport(readingFrom: toClient.read, writingTo: toRuntime.write, closesDescriptors: true,
                                           maximumMessageLength: maximumMessageLength, backlogLimit: backlogLimit, flushTimeout: flushTimeout)
        return Connected(transport: transport, runtimeSays: toClient.write, runtimeHears: toRuntime.read)
    }

    @Test func sendingBeforeOpenIsRefusedAsNotOpenAndAfterCloseAsClosed() async {
        let connected = Self.connected()
        let heard = TransportTesting.Drain(connected.runtimeHears)
        #expect(throws: TransportError.notOpen) { try connected.transport.send("{}") }
        connected.transport.open()
        connected.transport.close()
        #expect(throws: TransportError.closed(.closedByClient)) { try connected.transport.send("{}") }
        let events = await TransportTesting.events(of: connected.transport)
        #expect(events == [.opened, .closed(.closedByClient)])
        #expect(heard.result() == [])
        close(connected.runtimeSays)
    }

    @Test func closingAnUnopenedTransportReportsClosedByClientOnce() async {
        let connected = Self.connected()
        connected.transport.close()
        connected.transport.close()
        connected.transport.open()
        #expect(await TransportTesting.events(of: connected.transport) == [.closed(.closedByClient)])
        #expect(throws: TransportError.closed(.closedByClient)) { try connected.transport.send("{}") }
        close(connected.runtimeSays)
        close(connected.runtimeHears)
    }

    @Test func eachMessageGoesOutAsItsBytesAndOneLineFeedInOrder() async {
        let connected = Self.connected()
        let heard = TransportTesting.Drain(connected.runtimeHears)
        connected.transport.open()
        let messages = [#"{"type":"session.start","sessionId":"s1","context":{}}"#, #"{"type":"text.input","text":"café ☕"}"#, "{}"]
            + (0..<200).map { #"{"type":"text.input","text":"line \#($0)"}"# }
            + [String(repeating: "x", count: 200_000)]
        for message in messages { try? connected.transport.send(message) }
        connected.transport.close()
        let events = await TransportTesting.events(of: connected.transport)
        #expect(events == [.opened, .closed(.closedByClient)])
        #expect(heard.result() == Array(messages.map { $0 + "\n" }.joined().utf8))
        #expect(connected.transport.backlogBytes == 0)
        close(connected.runtimeSays)
    }

    @Test func aLineEndingInsideAMessageIsWrittenAsASpaceSoItStaysOneLine() async {
        let connected = Self.connected()
        let heard = TransportTesting.Drain(connected.runtimeHears)
        connected.transport.open()
        try? connected.transport.send("{\n  \"type\": \"session.end\"\r\n}")
        connected.transport.close()
        _ = await TransportTesting.events(of: connected.transport)
        #expect(heard.result() == Array("{   \"type\": \"session.end\"  }\n".utf8))
        close(connected.runtimeSays)
    }

    @Test func linesArriveInOrderWithLFOrCRLFThenTheRuntimesEndOfOutputClosesIt() async {
        let connected = Self.connected()
        connected.transport.open()
        // Blank lines carry no message; the last line needs no ending.
        TransportTesting.write(Array("{\"a\":1}\n{\"b\":2}\r\n\n \r\n{\"c\":\"é\"}\r\n{\"d\":4}".utf8), to: connected.runtimeSays)
        close(connected.runtimeSays)
        let events = await TransportTesting.events(of: connected.transport)
        #expect(events == [.opened, .message("{\"a\":1}"), .message("{\"b\":2}"), .message("{\"c\":\"é\"}"), .message("{\"d\":4}"),
                           .closed(.closedByRuntime(nil))])
        #expect(throws: TransportError.closed(.closedByRuntime(nil))) { try connected.transport.send("{}") }
        // The runtime saw the end of its input too.
        #expect(TransportTesting.Drain(connected.runtimeHears).result() == [])
    }

    @Test func aLineOverTheLimitIsReportedWithoutBeingBufferedAndTheNextLineStillArrives() async {
        let connected = Self.connected(maximumMessageLength: 1_000)
        connected.transport.open()
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 50_000)
        let exact = String(repeating: "y", count: 1_000)
        TransportTesting.write(Array("ok\n".utf8) + long + Array("\nafter\n\(exact)\n".utf8) + long, to: connected.runtimeSays)
        close(connected.runtimeSays)
        let events = await TransportTesting.events(of: connected.transport)
        #expect(events == [.opened, .message("ok"), .oversizedMessage(bytes: 50_000, limit: 1_000), .message("after"), .message(exact),
                           .oversizedMessage(bytes: 50_000, limit: 1_000), .closed(.closedByRuntime(nil))])
        close(connected.runtimeHears)
    }

    @Test func aRuntimeThatStopsReadingFillsTheBacklogAndLosesNothingOnceItReads() async throws {
        let limit = 64 << 10
        let connected = Self.connected(backlogLimit: limit)
        connected.transport.open()
        #expect(await TransportTesting.events(of: connected.transport, until: { $0 == .opened }) == [.opened])
        // Nobody reads: the pipe fills, then the backlog, then send refuses.
        var sent = [String]()
        var refusal: (error: TransportError, length: Int)?
        for index in 0..<10_000 {
            let message = #"{"type":"text.input","text":"\#(index) \#(String(repeating: "z", count: 1_000))"}"#
            do {
                try connected.transport.send(message)
                sent.append(message)
            } catch {
                refusal = (error, message.utf8.count)
                break
            }
            #expect(connected.transport.backlogBytes <= limit)
        }
        guard let refusal, case .backlogFull(let bytes, let reported) = refusal.error else {
            Issue.record("send never refused: \(String(describing: refusal))")
            return
        }
        // Refused only because this message would not fit.
        #expect(reported == limit)
        #expect(bytes <= limit && bytes + refusal.length > limit)
        #expect(connected.transport.backlogBytes <= limit)
        // The runtime starts reading: everything accepted arrives, in order, exactly once.
        let heard = TransportTesting.Drain(connected.runtimeHears)
        connected.transport.close()
        #expect(await TransportTesting.events(of: connected.transport) == [.closed(.closedByClient)])
        #expect(heard.result() == Array(sent.map { $0 + "\n" }.joined().utf8))
        #expect(connected.transport.backlogBytes == 0)
        close(connected.runtimeSays)
    }

    /// Waits (blocking, bounded) until the writer thread has written some of the backlog: the
    /// pipe then holds whole lines when the test closes. Closed before the writer first ran (a
    /// starved host can keep it waiting past the 0.2 s flush timeout), it would write nothing.
    static func waitForTheWriter(of transport: JSONLinesTransport, toGoBelow sent: Int) -> Bool {
        waitUntil(limit: .seconds(10)) { transport.backlogBytes < sent }
    }

    @Test func closingWhileTheRuntimeReadsNothingGivesUpAfterTheFlushTimeoutAndCountsWhatWasNotSent() async throws {
        let connected = Self.connected(backlogLimit: 1 << 20, flushTimeout: 0.2)
        connected.transport.open()
        let message = String(repeating: "q", count: 10_000)
        for _ in 0..<50 { try? connected.transport.send(message) }
        try #require(Self.waitForTheWriter(of: connected.transport, toGoBelow: 50 * message.utf8.count))
        // Timed on this thread, which only blocks (no task to resume): the runtime sees the end of
        // its input once the flush timeout has passed, and soon after (not the default 2 s).
        let started = ContinuousClock.now
        connected.transport.close()
        #expect(TransportTesting.waitForHangUp(connected.runtimeHears, within: 5))
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .seconds(0.2) && elapsed < .seconds(1.5), "\(elapsed)")
        #expect(await TransportTesting.events(of: connected.transport) == [.opened, .closed(.closedByClient)])
        // The pipe took what it could hold; every message not written whole is still counted, to
        // the byte. How many lines fit depends on how the kernel packed the writer's flushes into
        // pages, so the count comes from what the runtime can read, not from the pipe's size.
        let heard = try #require(TransportTesting.Drain(connected.runtimeHears).result())
        let lineLength = message.utf8.count + 1
        let wholeLines = heard.count / lineLength
        #expect(wholeLines > 0 && wholeLines < 50, "the pipe holds \(heard.count) bytes")
        #expect(connected.transport.backlogBytes == (50 - wholeLines) * message.utf8.count)
        close(connected.runtimeSays)
    }

    /// What the flush timeout left unwritten comes back, once: the pipe holds exactly the lines
    /// of the messages before it (and perhaps the start of the first unwritten one).
    @Test func theMessagesNotWrittenWholeWhenTheFlushGaveUpComeBackInOrder() async throws {
        let connected = Self.connected(backlogLimit: 1 << 20, flushTimeout: 0.2)
        connected.transport.open()
        var sent: [String] = []
        for number in 0..<50 {
            let message = "\(number) " + String(repeating: "q", count: 10_000)
            if (try? connected.transport.send(message, tag: number)) != nil { sent.append(message) }
        }
        #expect(sent.count == 50)
        try #require(Self.waitForTheWriter(of: connected.transport, toGoBelow: sent.reduce(0) { $0 + $1.utf8.count }))
        #expect(connected.transport.takeUnwrittenMessages().isEmpty, "nothing is taken while the transport lives")
        connected.transport.close()
        #expect(await TransportTesting.events(of: connected.transport) == [.opened, .closed(.closedByClient)])
        let unwrittenMessages = connected.transport.takeUnwrittenMessages()
        let unwritten = unwrittenMessages.map(\.text)
        let written = sent.count - unwritten.count
        #expect(written > 0 && written < sent.count, "\(written) of \(sent.count) written")
        #expect(unwritten == Array(sent[written...]))
        #expect(unwrittenMessages.map(\.tag) == Array(written..<sent.count), "each with the tag it was sent with")
        let heard = try #require(TransportTesting.Drain(connected.runtimeHears).result())
        let lines = Array(sent[..<written].map { $0 + "\n" }.joined().utf8)
        let next = Array((sent[written] + "\n").utf8)
        let wholeLinesThenPart = heard.count >= lines.count && heard.count < lines.count + next.count
            && heard.starts(with: lines) && heard[lines.count...].elementsEqual(next.prefix(heard.count - lines.count))
        #expect(wholeLinesThenPart, "the pipe holds \(heard.count) bytes; the \(written) messages written make \(lines.count)")
        #expect(connected.transport.takeUnwrittenMessages().isEmpty, "each is returned once")
        close(connected.runtimeSays)
    }

    @Test func aRuntimeThatClosedItsInputMakesWritingFailWithBrokenPipe() async {
        let connected = Self.connected()
        close(connected.runtimeHears)
        connected.transport.open()
        try? connected.transport.send("{}")
        let events = await TransportTesting.events(of: connected.transport)
        #expect(events == [.opened, .closed(.failed("writing to the runtime failed", code: .posix(EPIPE)))])
        #expect(TransportTesting.closeReason(events)?.description == "writing to the runtime failed: broken pipe")
        close(connected.runtimeSays)
    }

    @Test func oneSocketCanCarryBothDirections() async {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        let transport = JSONLinesTransport(readingFrom: ends[0], writingTo: ends[0], closesDescriptors: true)
        transport.open()
        try? transport.send(#"{"type":"session.end"}"#)
        transport.close()
        // The close shuts the socket down for writing: the runtime sees the end of its input.
        #expect(TransportTesting.Drain(ends[1]).result() == Array("{\"type\":\"session.end\"}\n".utf8))
        #expect(await TransportTesting.events(of: transport) == [.opened, .closed(.closedByClient)])
    }
}
