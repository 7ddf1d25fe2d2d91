import Dispatch
import Foundation
import Glibc
import Synchronization
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// A session transport over JSON Lines: one message per line on a pair of descriptors (pipes, a
/// socket, standard input and output) or on a runtime subprocess's standard streams.
///
/// ```
///  send ─▶ backlog (bounded) ─▶ writer thread ─▶ write descriptor   message + LF
///  events ◀─ TransportEventQueue ◀─ reader thread ◀─ read descriptor   lines ending LF or CRLF
/// ```
///
/// Each message goes out as its UTF-8 bytes and one LF; a line ending inside a message (JSON
/// allows one only as whitespace between tokens) is written as a space, so a message is always
/// one line. Lines read end at LF or CRLF, and the last needs no ending; blank lines carry no
/// message and are skipped; a line longer than ``maximumMessageLength`` is skipped without being
/// buffered and reported as ``TransportEvent/oversizedMessage(bytes:limit:)``; bytes that are not
/// UTF-8 arrive as U+FFFD.
///
/// ``send(_:)`` never blocks: messages wait in a backlog of at most ``backlogLimit`` bytes that the
/// writer thread drains, and a runtime that stops reading fills it until ``send(_:)`` throws
/// ``TransportError/backlogFull(bytes:limit:)``. The writer never blocks in `write` either (it
/// waits in `poll`), so ``close()`` can bound how long it flushes.
///
/// The transport ends once, with one ``TransportEvent/closed(_:)``:
/// - ``close()``: the backlog is written for at most ``flushTimeout`` seconds, the write side is
///   closed (when the transport owns it) so the runtime sees the end of its input, then
///   ``TransportCloseReason/closedByClient``.
/// - the end of the runtime's output: ``TransportCloseReason/closedByRuntime(_:)``, saying how a
///   runtime process ended.
/// - a failed read or write: ``TransportCloseReason/failed(_:code:)`` with the system's code.
///
/// Sends are refused with that reason at once; the event itself comes when the transport has
/// finished: for a runtime process, once the process has been stopped (see ``RuntimeProcess``)
/// and reaped, after every line it wrote.
///
/// Opening the first transport sets SIGPIPE to be ignored in this process (unless the program
/// installed a handler of its own), so that writing to a runtime that has gone away fails with
/// EPIPE, a close reason, instead of killing the client. A runtime process gets SIGPIPE's default
/// back. Releasing an open transport closes it; its threads finish on their own afterwards.
public final class JSONLinesTransport: SessionTransport {
    /// The longest line accepted as a message unless told otherwise: 16 MiB.
    public static let defaultMaximumMessageLength = 16 << 20
    /// The backlog's size unless told otherwise: 4 MiB.
    public static let defaultBacklogLimit = 4 << 20

    public let backlogLimit: Int
    /// The longest line, in bytes, delivered as a message.
    public let maximumMessageLength: Int
    /// Seconds ``close()`` spends at most writing what is queued.
    public let flushTimeout: Double
    /// The runtime process, for a transport made by ``launching(_:standardError:exitGrace:terminationGrace:maximumMessageLength:backlogLimit:flushTimeout:)``.
    public var process: RuntimeProcess? {
        if case .process(let process) = link.source { return process }
        return nil
    }
    private let link: Link

    /// A transport over descriptors that are already open.
    /// - Parameters:
    ///   - readDescriptor: where the runtime's messages come from.
    ///   - writeDescriptor: where messages to the runtime go; may be `readDescriptor` (a socket).
    ///   - closesDescriptors: whether the transport closes them when done: the write side as soon
    ///     as the backlog is flushed (a socket shared for both is shut down for writing), so the
    ///     runtime sees the end of its input. Without ownership the runtime sees no end until this
    ///     process closes them.
    ///   - maximumMessageLength: the longest line delivered as a message (default 16 MiB).
    ///   - backlogLimit: the most bytes queued for writing (default 4 MiB).
    ///   - flushTimeout: seconds ``close()`` spends at most writing what is queued (default 2).
    public init(readingFrom readDescriptor: Int32, writingTo writeDescriptor: Int32, closesDescriptors: Bool,
                maximumMessageLength: Int = defaultMaximumMessageLength, backlogLimit: Int = defaultBacklogLimit,
                flushTimeout: Double = 2) {
        self.maximumMessageLength = max(maximumMessageLength, 1)
        self.backlogLimit = max(backlogLimit, 0)
        self.flushTimeout = flushTimeout.isFinite ? max(flushTimeout, 0) : 2
        link = Link(source: .descriptors(read: readDescriptor, write: writeDescriptor, owned: closesDescriptors),
                    maximumMessageLength: self.maximumMessageLength, backlogLimit: self.backlogLimit, flushTimeout: self.flushTimeout)
    }

    private init(process: RuntimeProcess, maximumMessageLength: Int, backlogLimit: Int, flushTimeout: Double) {
        self.maximumMessageLength = max(maximumMessageLength, 1)
        self.backlogLimit = max(backlogLimit, 0)
        self.flushTimeout = flushTimeout.isFinite ? max(flushTimeout, 0) : 2
        link = Link(source: .process(process), maximumMessageLength: self.maximumMessageLength,
                    backlogLimit: self.backlogLimit, flushTimeout: self.flushTimeout)
    }

    deinit { close() }

    /// This process's standard input and output, for a client that is itself started by a
    /// runtime. They are never closed (other code may print or read later), so the runtime sees
    /// the end of its input only when this process exits.
    public static func standardStreams(maximumMessageLength: Int = defaultMaximumMessageLength, backlogLimit: Int = defaultBacklogLimit,
                                       flushTimeout: Double = 2) -> JSONLinesTransport {
        JSONLinesTransport(readingFrom: STDIN_FILENO, writingTo: STDOUT_FILENO, closesDescriptors: false,
                           maximumMessageLength: maximumMessageLength, backlogLimit: backlogLimit, flushTimeout: flushTimeout)
    }

    /// A transport to a runtime started by ``open()`` as `/bin/sh -c command`, talking on its
    /// standard input and output (see ``RuntimeProcess``).
    /// - Parameters:
    ///   - command: a shell command line ("python3 runtime.py --voice x").
    ///   - standardError: where the runtime's standard error goes (default: ours).
    ///   - exitGrace: seconds the runtime has to exit once its input is closed (default 2).
    ///   - terminationGrace: seconds between SIGTERM and SIGKILL (default 1).
    public static func launching(_ command: String, standardError: RuntimeProcess.StandardError = .inherit,
                                 exitGrace: Double = 2, terminationGrace: Double = 1,
                                 maximumMessageLength: Int = defaultMaximumMessageLength, backlogLimit: Int = defaultBacklogLimit,
                                 flushTimeout: Double = 2) -> JSONLinesTransport {
        let process = RuntimeProcess(command: command, standardError: standardError, exitGrace: exitGrace, terminationGrace: terminationGrace)
        return JSONLinesTransport(process: process, maximumMessageLength: maximumMessageLength, backlogLimit: backlogLimit, flushTimeout: flushTimeout)
    }

    public var events: AsyncStream<TransportEvent> { link.incoming.stream }

    public func receive(_ handler: @escaping @Sendable (TransportEvent) -> Void) {
        link.incoming.setHandler(handler)
    }

    /// Bytes of messages queued by ``send(_:)`` and not yet written (line endings not counted).
    /// Once the transport has closed, the bytes that never reached the runtime.
    public var backlogBytes: Int { link.state.withLock { $0.backlogBytes } }

    /// Starts the reader and writer threads (and first the runtime process, for a launching
    /// transport), then ``TransportEvent/opened``; or ``TransportEvent/closed(_:)`` saying why it
    /// could not start. Calling it again does nothing.
    public func open() {
        link.open()
    }

    public func send(_ message: String, tag: Int?) throws(TransportError) {
        try link.enqueue(OutboundMessage(text: message, tag: tag))
    }

    /// Writes what is queued for at most ``flushTimeout`` seconds, closes the write side and stops
    /// a runtime process, on the transport's own thread: returns at once, and
    /// ``TransportCloseReason/closedByClient`` arrives once all that is done. Lines a runtime
    /// process wrote before it exited are delivered before it; on descriptors, reading stops
    /// once the write side is closed.
    public func close() {
        link.close()
    }

    /// The messages the writer had not written whole, line ending included, when the transport
    /// ended: those still in the backlog and the rest of the batch a failed write stopped.
    public func takeUnwrittenMessages() -> [OutboundMessage] {
        link.state.withLock { state in
            guard case .ended = state.phase else { return [] }
            defer { state.unwritten = [] }
            return state.unwritten
        }
    }
}

/// What the transport and its two threads share.
private final class Link: Sendable {
    enum Source: Sendable {
        case descriptors(read: Int32, write: Int32, owned: Bool)
        case process(RuntimeProcess)
    }

    enum Phase: Sendable {
        case idle
        /// Inside ``open()``: sends are refused, a close is remembered.
        case opening
        case open
        /// ``close()`` was called: the writer flushes until `flushDeadline`, then finishes.
        case closing
        case ended(TransportCloseReason)
    }

    /// The descriptors in use once open.
    struct Channels: Sendable {
        let read: Int32
        let write: Int32
        /// Whether the transport closes `read` and `write`.
        let owned: Bool
        /// A byte here wakes the writer (new messages while it sleeps, a close, the end).
        let wakeWriter: (read: Int32, write: Int32)
        /// A byte here ends the reader.
        let stopReader: (read: Int32, write: Int32)
    }

    struct State {
        var phase = Phase.idle
        var pending: [OutboundMessage] = []
        var backlogBytes = 0
        /// Once ended: what was never written whole (see ``JSONLinesTransport/takeUnwrittenMessages()``).
        var unwritten: [OutboundMessage] = []
        var writerSleeping = false
        var flushDeadline: ContinuousClock.Instant?
        var channels: Channels?
        var threadsRunning = 0
    }

    let source: Source
    let maximumMessageLength: Int
    let backlogLimit: Int
    let flushTimeout: Double
    let state = Guarded(State())
    let incoming = TransportEventQueue()
    /// Set once any line came from the runtime.
    let heardFromRuntime = Atomic<Bool>(false)
    /// Left when the reader thread has finished (entered before it starts).
    let readerRunning = DispatchGroup()

    init(source: Source, maximumMessageLength: Int, backlogLimit: Int, flushTimeout: Double) {
        self.source = source
        self.maximumMessageLength = maximumMessageLength
        self.backlogLimit = backlogLimit
        self.flushTimeout = flushTimeout
    }

    // MARK: Caller's side

    func open() {
        let claimed = state.withLock { state -> Bool in
            guard case .idle = state.phase else { return false }
            state.phase = .opening
            return true
        }
        guard claimed else { return }
        _ = DescriptorSupport.brokenPipesIgnored
        let channels: Channels
        do {
            channels = try makeChannels()
        } catch {
            let reason = startFailure(error)
            state.withLock { $0.phase = .ended(reason) }
            incoming.push(.closed(reason))
            return
        }
        state.withLock { state in
            state.channels = channels
            state.threadsRunning = 2
            if case .opening = state.phase {
                state.phase = .open
                // Pushed before the threads start, so it comes first.
                incoming.push(.opened)
            }
        }
        readerRunning.enter()
        let reader = Thread { [self] in runReader(channels) }
        reader.name = "voicepipe transport reader"
        reader.start()
        let writer = Thread { [self] in runWriter(channels) }
        writer.name = "voicepipe transport writer"
        writer.start()
    }

    func enqueue(_ message: OutboundMessage) throws(TransportError) {
        let length = message.text.utf8.count
        try state.withLock { state throws(TransportError) in
            switch state.phase {
            case .idle, .opening: throw .notOpen
            case .closing: throw .closed(.closedByClient)
            case .ended(let reason): throw .closed(reason)
            case .open: break
            }
            guard state.backlogBytes + length <= backlogLimit else {
                throw .backlogFull(bytes: state.backlogBytes, limit: backlogLimit)
            }
            state.pending.append(message)
            state.backlogBytes += length
            if state.writerSleeping, let channels = state.channels {
                state.writerSleeping = false
                DescriptorSupport.wake(channels.wakeWriter.write)
            }
        }
    }

    func close() {
        let unopened = state.withLock { state -> Bool in
            switch state.phase {
            case .idle:
                state.phase = .ended(.closedByClient)
                return true
            case .opening, .open:
                state.phase = .closing
                state.flushDeadline = .now + .seconds(flushTimeout)
                if let channels = state.channels {
                    state.writerSleeping = false
                    DescriptorSupport.wake(channels.wakeWriter.write)
                }
                return false
            case .closing, .ended:
                return false
            }
        }
        guard unopened else { return }
        if case .descriptors(let read, let write, true) = source {
            _ = Glibc.close(read)
            if write != read { _ = Glibc.close(write) }
        }
        incoming.push(.closed(.closedByClient))
    }

    // MARK: Opening

    private func makeChannels() throws(SystemCallFailure) -> Channels {
        let wakeWriter = try DescriptorSupport.makePipe()
        let stopReader: (read: Int32, write: Int32)
        do {
            stopReader = try DescriptorSupport.makePipe()
        } catch {
            _ = Glibc.close(wakeWriter.read)
            _ = Glibc.close(wakeWriter.write)
            throw error
        }
        for end in [wakeWriter.read, wakeWriter.write, stopReader.write] { DescriptorSupport.setNonBlocking(end) }
        switch source {
        case .descriptors(let read, let write, let owned):
            return Channels(read: read, write: write, owned: owned, wakeWriter: wakeWriter, stopReader: stopReader)
        case .process(let process):
            do {
                let pipes = try process.start()
                return Channels(read: pipes.output, write: pipes.input, owned: true, wakeWriter: wakeWriter, stopReader: stopReader)
            } catch {
                [wakeWriter.read, wakeWriter.write, stopReader.read, stopReader.write].forEach { _ = Glibc.close($0) }
                throw error
            }
        }
    }

    private func startFailure(_ failure: SystemCallFailure) -> TransportCloseReason {
        switch source {
        case .descriptors(let read, let write, let owned):
            if owned {
                _ = Glibc.close(read)
                if write != read { _ = Glibc.close(write) }
            }
            return .failed("could not start the transport's threads", code: failure.code)
        case .process(let process):
            return .failed("could not start the runtime '\(process.command)'", code: failure.code)
        }
    }

    // MARK: Ending

    /// Why the runtime's side ended.
    enum Ending {
        case endOfOutput
        case readFailed(SystemErrorCode)
        case writeFailed(SystemErrorCode)
    }

    /// Ends an open transport because of the runtime's side: works out the reason (for a process,
    /// how it ended, if it ends within a second) and wakes the writer, which finishes and reports
    /// it. Does nothing once ``close()`` was called or the transport ended.
    func runtimeEnded(_ ending: Ending) {
        guard case .open = state.withLock({ $0.phase }) else { return }
        let plain: TransportCloseReason
        switch ending {
        case .endOfOutput:
            if case .process = source { plain = .closedByRuntime("the runtime closed its output") } else { plain = .closedByRuntime(nil) }
        case .readFailed(let code):
            plain = .failed("reading from the runtime failed", code: code)
        case .writeFailed(let code):
            plain = .failed("writing to the runtime failed", code: code)
        }
        let reason: TransportCloseReason
        if case .process(let process) = source {
            reason = process.closeReason(otherwise: plain, heardFromRuntime: heardFromRuntime.load(ordering: .relaxed))
        } else {
            reason = plain
        }
        state.withLock { state in
            guard case .open = state.phase else { return }
            state.phase = .ended(reason)
            if let channels = state.channels {
                state.writerSleeping = false
                DescriptorSupport.wake(channels.wakeWriter.write)
            }
        }
    }

    /// Called by each thread as it finishes: the last one closes the wake-up pipes and a shared
    /// owned descriptor.
    private func threadFinished() {
        state.withLock { state in
            state.threadsRunning -= 1
            guard state.threadsRunning == 0, let channels = state.channels else { return }
            state.channels = nil
            for end in [channels.wakeWriter.read, channels.wakeWriter.write, channels.stopReader.read, channels.stopReader.write] {
                _ = Glibc.close(end)
            }
            if channels.owned && channels.read == channels.write { _ = Glibc.close(channels.read) }
        }
    }

    // MARK: Reader thread

    private func runReader(_ channels: Channels) {
        let reader = JSONLinesReader(descriptor: channels.read, name: "the runtime's output", maximumLength: maximumMessageLength,
                                     ownsDescriptor: false, stopDescriptor: channels.stopReader.read)
        var ending: Ending?
        while true {
            let line: JSONLinesReader.Line
            do {
                guard let next = try reader.next() else {
                    if !reader.wasStopped { ending = .endOfOutput }
                    break
                }
                line = next
            } catch {
                ending = .readFailed(error.code ?? .posix(EIO))
                break
            }
            heardFromRuntime.store(true, ordering: .relaxed)
            switch line {
            case .text(let bytes):
                // A blank line carries no message.
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                incoming.push(.message(String(decoding: bytes, as: UTF8.self)))
            case .tooLong(let bytes):
                incoming.push(.oversizedMessage(bytes: bytes, limit: maximumMessageLength))
            }
        }
        if let ending { runtimeEnded(ending) }
        if channels.owned && channels.read != channels.write { _ = Glibc.close(channels.read) }
        readerRunning.leave()
        threadFinished()
    }

    // MARK: Writer thread

    /// What the writer does next.
    private enum Work {
        case write([OutboundMessage])
        case sleep
        case finish
    }

    private func nextWork() -> Work {
        state.withLock { state in
            switch state.phase {
            case .ended:
                return .finish
            case .closing where state.pending.isEmpty:
                return .finish
            case .open where state.pending.isEmpty, .idle, .opening:
                state.writerSleeping = true
                return .sleep
            case .open, .closing:
                defer { state.pending = [] }
                return .write(state.pending)
            }
        }
    }

    private func runWriter(_ channels: Channels) {
        let output = LineOutput(link: self, channels: channels)
        defer { output.deallocate() }
        writing: while true {
            switch nextWork() {
            case .finish:
                break writing
            case .sleep:
                DescriptorSupport.waitUntilReadable(channels.wakeWriter.read)
                DescriptorSupport.drain(channels.wakeWriter.read)
            case .write(let messages):
                let (outcome, written) = output.write(messages)
                switch outcome {
                case .written:
                    continue
                case .stopped:
                    keepUnwritten(messages[written...])
                    break writing
                case .failed(let code):
                    keepUnwritten(messages[written...])
                    runtimeEnded(.writeFailed(code))
                    break writing
                }
            }
        }
        // The runtime's input ends here: it sees the end of its input.
        if channels.owned {
            if channels.write != channels.read { _ = Glibc.close(channels.write) } else { _ = shutdown(channels.write, Int32(SHUT_WR)) }
        }
        if case .process(let process) = source {
            // The reader ends with the runtime's output, so the lines it wrote before exiting
            // are delivered before the close.
            process.stop { [readerRunning] seconds in readerRunning.wait(timeout: .now() + seconds) == .success }
        }
        let reason = state.withLock { state -> TransportCloseReason in
            state.unwritten += state.pending
            state.pending = []
            if let channels = state.channels { DescriptorSupport.wake(channels.stopReader.write) }
            if case .ended(let reason) = state.phase { return reason }
            state.phase = .ended(.closedByClient)
            return .closedByClient
        }
        incoming.push(.closed(reason))
        threadFinished()
    }

    /// Called by the writer when a write stopped before `messages` were written whole.
    private func keepUnwritten(_ messages: ArraySlice<OutboundMessage>) {
        state.withLock { $0.unwritten += messages }
    }

    /// Called by the writer after writing `bytes` of queued messages.
    fileprivate func wrote(_ bytes: Int) {
        state.withLock { $0.backlogBytes -= bytes }
    }

    /// The writer's limit while it waits for room: nil while open (it waits for as long as it
    /// takes, woken by a close), the flush deadline while closing; `stop` once the transport ended.
    fileprivate func writeDeadline() -> (stop: Bool, deadline: ContinuousClock.Instant?) {
        state.withLock { state in
            switch state.phase {
            case .ended: (true, nil)
            case .closing: (false, state.flushDeadline ?? .now)
            case .idle, .opening, .open: (false, nil)
            }
        }
    }
}

/// The writer thread's output: lines gathered into a 64 KiB buffer and written without ever
/// blocking in `write`, so that a close or the end of the transport can stop it.
private struct LineOutput {
    enum Outcome {
        case written
        /// The transport ended, or the flush deadline passed, before everything was written.
        case stopped
        case failed(SystemErrorCode)
    }

    private let link: Link
    private let channels: Channels
    private let buffer: UnsafeMutableRawBufferPointer
    /// At most this much per `write` on a blocking descriptor: a pipe that `poll` calls writable
    /// takes PIPE_BUF bytes without blocking.
    private let chunkLimit: Int
    typealias Channels = Link.Channels

    init(link: Link, channels: Channels) {
        self.link = link
        self.channels = channels
        buffer = .allocate(byteCount: 1 << 16, alignment: 1)
        chunkLimit = DescriptorSupport.isNonBlocking(channels.write) ? Int.max : Int(PIPE_BUF)
    }

    func deallocate() { buffer.deallocate() }

    /// Writes each message and a line feed, in order; counts each message's bytes off the backlog
    /// once all of it has been written. Returns how it went and how many of the messages (from
    /// the first) were written whole, line ending included.
    func write(_ messages: [OutboundMessage]) -> (Outcome, written: Int) {
        var filled = 0
        var written = 0
        /// The messages whose line ends in the buffer: where it ends, and the message's bytes.
        var completed: [(end: Int, bytes: Int)] = []
        /// Counts the messages a flush of `bytes` wrote whole; the rest of the buffer's are not.
        func credit(_ bytes: Int) {
            let whole = completed.prefix { $0.end <= bytes }
            link.wrote(whole.reduce(0) { $0 + $1.bytes })
            written += whole.count
            completed.removeAll()
        }
        for outbound in messages {
            var message = outbound.text
            let outcome = message.withUTF8 { text -> Outcome in
                var offset = 0
                while offset <= text.count {
                    if filled == buffer.count {
                        let (flushed, bytes) = flush(filled)
                        credit(bytes)
                        guard isWritten(flushed) else { return flushed }
                        filled = 0
                    }
                    let piece = min(text.count - offset, buffer.count - filled)
                    if piece > 0, let source = text.baseAddress {
                        let target = UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<(filled + piece)])
                        target.copyMemory(from: UnsafeRawBufferPointer(start: source + offset, count: piece))
                        DescriptorSupport.replaceLineEndings(in: target)
                        filled += piece
                        offset += piece
                    }
                    if offset == text.count && filled < buffer.count {
                        buffer[filled] = 0x0A
                        filled += 1
                        offset += 1
                        completed.append((filled, text.count))
                    }
                }
                return .written
            }
            if !isWritten(outcome) { return (outcome, written) }
        }
        let (outcome, bytes) = flush(filled)
        credit(bytes)
        return (outcome, written)
    }

    private func isWritten(_ outcome: Outcome) -> Bool {
        if case .written = outcome { return true }
        return false
    }

    /// Writes the first `count` bytes of the buffer; returns how it went and the bytes written.
    private func flush(_ count: Int) -> (Outcome, Int) {
        guard let base = buffer.baseAddress else { return (.written, count) }
        var offset = 0
        var mustWait = chunkLimit != Int.max
        while offset < count {
            if mustWait, !waitUntilWritable() { return (.stopped, offset) }
            let written = Glibc.write(channels.write, base + offset, min(count - offset, chunkLimit))
            if written >= 0 {
                offset += written
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: mustWait = true
            default: return (.failed(.posix(errno)), offset)
            }
        }
        return (.written, offset)
    }

    /// Waits for room to write, waking for a close (whose deadline then bounds the wait) or the
    /// end of the transport.
    /// - Returns: false when the writer must stop instead.
    private func waitUntilWritable() -> Bool {
        while true {
            let (stop, deadline) = link.writeDeadline()
            if stop { return false }
            let timeout = deadline.map { DescriptorSupport.pollTimeout(until: $0) } ?? -1
            if timeout == 0 { return false }
            var watched = [pollfd(fd: channels.write, events: Int16(POLLOUT), revents: 0),
                           pollfd(fd: channels.wakeWriter.read, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&watched, nfds_t(watched.count), timeout)
            if ready < 0 && errno != EINTR { return true }  // let write report the error
            if watched[1].revents != 0 { DescriptorSupport.drain(channels.wakeWriter.read) }
            // Writable, or an error or hang-up that the write will report.
            if watched[0].revents != 0 { return true }
        }
    }
}
