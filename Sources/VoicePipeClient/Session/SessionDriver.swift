import Foundation
import Synchronization
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// Where a session's voice comes from.
public enum SessionCapture {
    /// No audio: a text conversation (typed turns only).
    case none
    /// An audio file through the capture converter, at real-time pace or as fast as the runtime
    /// takes it. After its last frame nothing more is captured.
    case file(FileCaptureSource, pacing: CapturePacing)
    /// A live device through the capture pump, until the session ends.
    case device(CapturePump)
    /// A live device that is opened again when it fails mid-session (unplugged, its stream
    /// lost): the session goes on as text meanwhile, and the device is tried again every
    /// ``CaptureReopening/interval`` until it is back (guarded anew, perhaps in a new format).
    case reopenableDevice(CapturePump, reopen: CaptureReopening)
}

/// How a live capture device is opened again after it failed.
public struct CaptureReopening: Sendable {
    /// What the device is, for the timeline ("microphone 'default'").
    public var name: String
    /// Time between attempts.
    public var interval: Duration
    /// Opens the device again: its format guarded before anything else, the converter built for
    /// the format it has now (a headset switching profile comes back at another rate). Throws
    /// while the device is not there.
    public var open: @Sendable () throws -> CapturePump

    public init(name: String, interval: Duration = .seconds(2), open: @escaping @Sendable () throws -> CapturePump) {
        self.name = name
        self.interval = interval
        self.open = open
    }
}

/// How fast a file is fed to the runtime.
public enum CapturePacing: Sendable, Hashable {
    /// Frame by frame at the pace a microphone would deliver them.
    case realTime
    /// As fast as the transport takes them (its backlog stays under a bound).
    case asFastAsTaken
}

/// What a session driver reports to whoever shows the session, in order, on the driver's thread.
public enum SessionEvent: Sendable {
    /// Something the session machine noted (state changes, transcripts, tools, …).
    case note(SessionNote)
    /// A message went to the runtime (captured frames are ``frameSent(sampleCount:level:)``).
    case sent(WireMessage)
    /// A captured frame went to the runtime as `audio.chunk`.
    case frameSent(sampleCount: Int, level: PeakLevel)
    /// A file paced in real time gave its next frame at the event's instant; it was due at
    /// `due` (its audio time), so the difference is how late the driver took it.
    case fileFrameTaken(due: SessionInstant)
    /// A message came from the runtime.
    case received(WireEnvelope)
    /// A message from the runtime could not be decoded (the session goes on).
    case malformed(String)
    /// A message carried a type or fields this version does not know (kept, reported once each).
    case unknownContent(String)
    /// The transport opened or closed.
    case transport(TransportEvent)
    /// Something the user asked for was refused, and why.
    case refused(SessionInputError)
    /// Reply audio could not be played (the session goes on; the output may be lost).
    case playbackFailed(ReplyPlayerError)
    /// Capture failed or ended early, in a sentence.
    case captureProblem(String)
}

/// Figures the driver runs by, beyond the session's own.
public struct SessionDriverOptions: Sendable {
    public var session: SessionConfiguration
    /// Texts typed before the session connects (queued like a user typing early).
    public var initialTexts: [String]
    /// Why audio is unavailable, when it is: the session runs as text and says why.
    public var audioUnavailable: String?
    /// With ``CapturePacing/asFastAsTaken``, the transport backlog above which the file waits.
    public var fastBacklogBytes: Int
    /// Live device frames waiting for the driver beyond this are dropped and counted.
    public var deviceFrameQueueLimit: Int
    /// After the session ends, how long to wait for the transport's closing report (a runtime
    /// process gets 2 s to exit, then SIGTERM, then SIGKILL a second later).
    public var closeWait: Duration
    /// Transport events waiting for the driver beyond this hold the transport's thread back.
    public var inboxLimit: Int

    public init(session: SessionConfiguration, initialTexts: [String] = [], audioUnavailable: String? = nil,
                fastBacklogBytes: Int = 256 << 10, deviceFrameQueueLimit: Int = 64, closeWait: Duration = .seconds(10),
                inboxLimit: Int = 256) {
        self.session = session
        self.initialTexts = initialTexts
        self.audioUnavailable = audioUnavailable
        self.fastBacklogBytes = fastBacklogBytes
        self.deviceFrameQueueLimit = deviceFrameQueueLimit
        self.closeWait = closeWait
        self.inboxLimit = inboxLimit
    }
}

/// What a finished session did.
public struct SessionReport: Sendable {
    /// The machine as the session left it: state, turns and latencies, transcript, tool drawer, counters.
    public let machine: SessionMachine
    /// When the session connected and when it finished, on the driver's clock.
    public let startedAt: SessionInstant
    public let finishedAt: SessionInstant
    /// How the transport closed, when it reported it.
    public let closeReason: TransportCloseReason?
    /// How reading the input file ended (file capture only).
    public let captureEnding: FileReadEnding?
    /// Capture failures, in sentences.
    public let captureProblems: [String]
    /// Live frames dropped because the driver fell behind.
    public let captureFramesDropped: Int
    /// Reply audio written or played, and where.
    public let outputName: String
    public let outputFrames: Int
    public let outputSampleRate: SampleRate
    /// A playback failure, if reply audio was lost.
    public let playbackError: ReplyPlayerError?
    /// The speaker's jitter buffer: underruns and pre-roll (nil for a file or no output).
    public let jitter: JitterBufferReport?

    /// True when the runtime confirmed the end (or closed in order after `session.end`).
    public var endedCleanly: Bool { machine.state == .disconnected }
}

/// Carries out one session: owns its state machine, transport, clock, capture source and reply
/// output, and runs them on the calling thread until the session ends.
///
/// ```
///  transport events ─┐                                ┌─▶ transport.send (never blocks)
///  device frames ────┼─▶ inbox ─▶ SessionMachine ─────┼─▶ reply output (file, speaker)
///  typed text, end ──┘     ▲        (pure rules)      └─▶ observer (timeline, log)
///  file frames, ticks ─────┘ when due on the clock
/// ```
///
/// Audio never waits on the transport: a frame the transport cannot take is counted and dropped
/// (the machine turns a long run of them into an error), and live device frames queue up to a
/// bound. With a manual clock (tests), nothing waits for real time.
public final class SessionDriver: @unchecked Sendable {
    // Safety: everything but `inbox`, `snapshots` and `deviceFrames` is used only on the
    // thread inside `run()`.
    private enum Input: Sendable {
        /// An event of the connection numbered `connection` (the first is 0; each rotation adds one).
        case transport(TransportEvent, connection: Int)
        case frame(AudioFrame)
        case captureEnded(String?)
        /// The running pump of this generation lost its device (a reopenable capture only).
        case captureLost(String, generation: Int)
        /// The speaker played the first sample of turn `turn`'s reply `delay` after it was handed over.
        case replyHeard(turn: Int, delay: Duration)
        case playbackDrained(chunks: Int)
        case type(String)
        case end
        case escalate(String)
        case markLongRunning
        /// A reader on another thread waits for a copy of the machine.
        case publishSnapshot
    }

    public let options: SessionDriverOptions
    /// The connection messages go to.
    private var transport: any SessionTransport
    private var connectionNumber = 0
    /// Makes a fresh connection for a rotation or a reconnection.
    private let connect: (@Sendable () throws -> any SessionTransport)?
    /// A rotation's fresh connection while it opens (the machine holds what waits for it).
    private var incoming: (any SessionTransport)?
    /// Connections a rotation or a reconnection replaced, by number, until their closing reports come.
    private var retiring: [Int: any SessionTransport] = [:]
    /// The current connection has reported its close (a drop the machine may reconnect after).
    private var currentClosed = false
    /// The clock its deadlines are on (a ``SessionLoop`` serving it runs by the same).
    let clock: any SessionClock
    private let capture: SessionCapture
    private let output: any ReplyOutput
    private let recorder: ConversationRecorder?
    private let observer: @Sendable (SessionEvent, SessionInstant) -> Void
    private let inbox: SessionInbox<Input>
    /// Copies of the machine for readers on other threads, made when one asks.
    private let snapshots: SnapshotExchange<SessionMachine>
    private let deviceFrames = DeviceFrameCounters()

    private var machine: SessionMachine
    /// The machine's status after the last event (read once per event, not at every look).
    private var status: SessionMachine.Status
    private var phase = Phase.notStarted
    private var startedAt = SessionInstant(sinceOrigin: .zero)
    private var tickAt: SessionInstant?
    private var pendingActions: [SessionAction] = []
    private var applying = false
    private var captureStartedAt: SessionInstant?
    private var captureDone = false
    /// The live device's pump, while it has one (none after a loss, until it is reopened).
    private var livePump: CapturePump?
    /// Counts the pumps started, so a late report of a replaced one is recognised.
    private var pumpGeneration = 0
    private var pumpRunning = false
    /// When to try the lost capture device again.
    private var reopenAt: SessionInstant?
    /// The lost device's format, to say whether it came back in another.
    private var lostFormat: ValidatedFormat?
    private var fileFramesTaken = 0
    /// When the next file frame is due, for the count of frames taken it was worked out at.
    private var nextFileFrameAt: (taken: Int, due: SessionInstant)?
    private var captureProblems: [String] = []
    private var closeReason: TransportCloseReason?
    private var playbackError: ReplyPlayerError?
    private var outputBroken = false
    private var unknownContent = UnknownContentNotes()

    /// - Parameters:
    ///   - transport: the first connection.
    ///   - connect: makes a fresh connection (signed anew) when the session rotates
    ///     (``SessionConfiguration/rotateAfter``) or reconnects after a drop
    ///     (``SessionConfiguration/reconnect``); without it, rotation fails and is noted, and a
    ///     drop ends the session.
    ///   - recorder: records both sides of the session (what was captured, what was played) on one timeline.
    ///   - observer: called on the driver's thread with every event and the instant it happened.
    public init(options: SessionDriverOptions, transport: any SessionTransport, connect: (@Sendable () throws -> any SessionTransport)? = nil,
                clock: any SessionClock = MonotonicSessionClock(),
                capture: SessionCapture, output: any ReplyOutput, recorder: ConversationRecorder? = nil,
                observer: @escaping @Sendable (SessionEvent, SessionInstant) -> Void = { _, _ in }) {
        self.recorder = recorder
        self.options = options
        self.transport = transport
        self.connect = connect
        self.clock = clock
        self.capture = capture
        switch capture {
        case .device(let pump), .reopenableDevice(let pump, _): livePump = pump
        case .none, .file: livePump = nil
        }
        self.output = output
        self.observer = observer
        var session = options.session
        // A file never hears the reply: its turns are the audio's alone, at any pace.
        if case .file = capture { session.captureHearsReplies = false }
        machine = SessionMachine(configuration: session)
        status = machine.status
        snapshots = SnapshotExchange(machine)
        inbox = SessionInbox(clock: clock)
    }

    // MARK: From any thread

    /// The machine as of the last event: the UI's source for derived views. While the session
    /// runs, a reader on another thread waits for the driver to finish the event in hand (the
    /// copy is made then, not after every event); on the driver's thread (an observer) it is
    /// the machine itself.
    public var snapshot: SessionMachine {
        if snapshots.isOwnerThread { return machine }
        return snapshots.read { inbox.post(.publishSnapshot) }
    }

    /// The user typed `text` (queued while connecting, sent in order).
    public func type(_ text: String) { inbox.post(.type(text)) }

    /// The user ends the session: `session.end`, then a bounded wait for `session.ended`.
    public func requestEnd() { inbox.post(.end) }

    /// The user asks for a person.
    public func requestEscalation(reason: String) { inbox.post(.escalate(reason)) }

    /// Marks the current (or next) turn as long-running.
    public func markTurnLongRunning() { inbox.post(.markLongRunning) }

    // MARK: The session

    /// Runs the session on this thread until it ends (cleanly, by error, or by timeout), then
    /// finishes the reply output and closes the transport.
    @available(*, noasync, message: "run() blocks its thread until the session ends; from async code use VoiceSession's run(), which runs it on a thread of its own")
    public func run() -> SessionReport {
        while true {
            switch step(inputLimit: .max) {
            case .finished(let report): return report
            case .waitUntil(let deadline): inbox.waitForInput(until: deadline)
            }
        }
    }

    /// Where a session stands between two steps.
    private enum Phase {
        case notStarted
        case running
        /// The session ended; the transport's closing report is awaited until then.
        case closing(until: SessionInstant)
        /// A second run returns the first one's report.
        case finished(SessionReport)
    }

    /// What is left after a ``step(inputLimit:)``.
    enum Step {
        /// Nothing until an input is posted to the inbox or the instant comes (nil: only an input).
        case waitUntil(SessionInstant?)
        case finished(SessionReport)
    }

    /// Calls `hook` after every input posted to this session from now on (nil: no longer): a
    /// loop serving many sessions (``SessionLoop``) learns which one to step.
    func tellInputs(_ hook: (@Sendable () -> Void)?) { inbox.tellPosts(hook) }

    /// Does what is due and what waits in the inbox, up to `inputLimit` inputs, without ever
    /// blocking; the caller waits as the result says, then steps again. One thread can so serve
    /// many sessions (``SessionLoop``); ``run()`` is this in a loop on a thread of its own.
    func step(inputLimit: Int) -> Step {
        switch phase {
        case .notStarted:
            start()
            return step(inputLimit: inputLimit)
        case .running:
            var handled = 0
            while !isFinished {
                // Whatever is due gets its turn before the next input, and one input after it: a
                // runtime flooding the inbox cannot hold timers, file frames or the user's end back.
                if let deadline = nextDeadline(), deadline <= clock.now {
                    handleDue()
                    guard let input = inbox.poll() else { continue }
                    handle(input)
                } else if let input = inbox.poll() {
                    handle(input)
                } else {
                    return .waitUntil(nextDeadline())
                }
                handled += 1
                if handled >= inputLimit { return .waitUntil(clock.now) }
            }
            finishOutput()
            stopCapture()
            recorder?.finish()
            transport.close()
            incoming?.close()
            for old in retiring.values { old.close() }
            phase = .closing(until: clock.now + options.closeWait)
            return step(inputLimit: inputLimit)
        case .closing(let limit):
            // The transport's closing report says how it closed; the rest is no longer the session's.
            while closeReason == nil, let input = inbox.poll() {
                switch input {
                case .publishSnapshot:
                    snapshots.publish(machine)
                case .transport(.closed(let reason), let connection) where connection == connectionNumber:
                    closeReason = reason
                    report(.transport(.closed(reason)), at: clock.now)
                    reclaimUnwritten(from: transport, at: clock.now)
                default:
                    break
                }
            }
            if closeReason == nil, clock.now < limit { return .waitUntil(limit) }
            snapshots.finish(machine)
            inbox.retire()
            let report = SessionReport(
                machine: machine, startedAt: startedAt, finishedAt: clock.now, closeReason: closeReason,
                captureEnding: fileSource?.ending, captureProblems: captureProblems,
                captureFramesDropped: deviceFrames.dropped.load(ordering: .relaxed),
                outputName: output.name, outputFrames: output.framesPlayed, outputSampleRate: output.sampleRate,
                playbackError: playbackError, jitter: output.jitterReport)
            phase = .finished(report)
            return .finished(report)
        case .finished(let report):
            return .finished(report)
        }
    }

    private func start() {
        phase = .running
        // A real-time output reports its drains into the inbox; holding the inbox, not the driver, makes no cycle.
        output.reportDrained { [inbox] chunks in inbox.post(.playbackDrained(chunks: chunks)) }
        output.reportHeard { [inbox] turn, delay in inbox.post(.replyHeard(turn: turn, delay: delay)) }
        snapshots.begin()
        listen(to: transport, as: 0)
        startedAt = clock.now
        if let reason = options.audioUnavailable { apply(machine.audioUnavailable(reason, at: startedAt)) }
        for text in options.initialTexts { typeNow(text) }
        if case .none = capture { endInput() }
        apply(machine.connect(at: clock.now))
    }

    private var isFinished: Bool {
        switch status.state {
        case .disconnected, .error: true
        default: false
        }
    }

    /// Capture runs while the session is live, and goes on while it reconnects (the machine holds the frames).
    private var isCapturing: Bool {
        guard !captureDone, !status.isEnding else { return false }
        switch status.state {
        case .ready, .talking, .thinking, .speaking: return true
        case .connecting: return status.isReconnecting && captureStartedAt != nil
        default: return false
        }
    }

    private var fileSource: FileCaptureSource? {
        if case .file(let source, _) = capture { return source }
        return nil
    }

    /// The earlier of the machine's tick and the next file frame.
    private func nextDeadline() -> SessionInstant? {
        var deadline = tickAt
        if let due = nextFileFrameDue() { deadline = min(deadline ?? due, due) }
        if let reopenAt { deadline = min(deadline ?? reopenAt, reopenAt) }
        return deadline
    }

    private func nextFileFrameDue() -> SessionInstant? {
        guard isCapturing, case .file(let source, let pacing) = capture else { return nil }
        switch pacing {
        case .realTime:
            guard let start = captureStartedAt else { return clock.now + source.frameDuration }
            // Worked out once per frame: the loop asks for it several times per step.
            if let cached = nextFileFrameAt, cached.taken == fileFramesTaken { return cached.due }
            let due = start + source.frameDuration * (fileFramesTaken + 1)
            nextFileFrameAt = (fileFramesTaken, due)
            return due
        case .asFastAsTaken:
            let now = clock.now
            return waitingBytes < options.fastBacklogBytes ? now : now + .milliseconds(2)
        }
    }

    private func handleDue() {
        let now = clock.now
        if let tickAt, tickAt <= now { apply(machine.tick(at: now)) }
        if let reopenAt, reopenAt <= now { reopenCapture(at: now) }
        guard isCapturing, case .file(_, let pacing) = capture else { return }
        switch pacing {
        case .realTime:
            if let due = nextFileFrameDue(), due <= now {
                report(.fileFrameTaken(due: due), at: now)
                takeFileFrame(at: now)
            }
        case .asFastAsTaken:
            if transportHasRoom {
                takeFileFrame(at: now)
            } else {
                apply(machine.audioWaiting(at: now))
            }
        }
    }

    private var transportHasRoom: Bool {
        if case .file(_, .asFastAsTaken) = capture { return waitingBytes < options.fastBacklogBytes }
        return true
    }

    /// Bytes sent and not yet written; while a rotation opens or the session reconnects, the file waits for it.
    private var waitingBytes: Int { incoming == nil && !status.isReconnecting ? transport.backlogBytes : Int.max }

    private func takeFileFrame(at now: SessionInstant) {
        guard let source = fileSource else { return }
        do {
            if let frame = try source.next() {
                fileFramesTaken += 1
                recorder?.captured(frame.samples)
                apply(machine.captured(frame, at: now))
                return
            }
        } catch {
            captureProblems.append("reading the input failed: \(error)")
            report(.captureProblem("reading the input failed: \(error)"), at: now)
        }
        endInput()
    }

    private func endInput() {
        captureDone = true
        apply(machine.inputEnded(at: clock.now))
    }

    private func handle(_ input: Input) {
        let now = clock.now
        switch input {
        case .transport(let event, let connection):
            if connection == connectionNumber {
                handle(event, at: now)
            } else if connection > connectionNumber {
                handleIncoming(event, at: now)
            } else {
                handleRetiring(event, connection: connection, at: now)
            }
        case .frame(let frame):
            deviceFrames.queued.subtract(1, ordering: .relaxed)
            recorder?.captured(frame.samples)
            apply(machine.captured(frame, at: now))
        case .captureEnded(let problem):
            if let problem {
                captureProblems.append(problem)
                report(.captureProblem(problem), at: now)
            }
            endInput()
        case .captureLost(let problem, let generation):
            guard generation == pumpGeneration, case .reopenableDevice(_, let reopen) = capture else { return }
            pumpRunning = false
            lostFormat = livePump?.device.format
            livePump = nil
            reopenAt = now + reopen.interval
            apply(machine.audioLost("\(reopen.name) failed: \(problem); trying it again every \(reopen.interval.formattedSeconds)", at: now))
        case .playbackDrained(let chunks):
            if chunks == output.chunksQueued { apply(machine.playbackDrained(at: now)) }
        case .replyHeard(let turn, let delay):
            apply(machine.replyHeard(turn: turn, after: delay, at: now))
        case .type(let text):
            typeNow(text)
        case .end:
            apply(machine.end(at: now))
        case .escalate(let reason):
            do {
                apply(try machine.requestEscalation(reason: reason, at: now))
            } catch {
                report(.refused(error), at: now)
            }
        case .markLongRunning:
            apply(machine.markTurnLongRunning(at: now))
        case .publishSnapshot:
            snapshots.publish(machine)
        }
    }

    private func handle(_ event: TransportEvent, at now: SessionInstant) {
        switch event {
        case .opened:
            report(.transport(event), at: now)
            apply(machine.transportOpened(at: now))
            if isCapturing { startCapture(at: now) }
        case .message(let text):
            do {
                let envelope = try WireCodec.decode(text)
                report(.received(envelope), at: now)
                if let note = unknownContent.note(for: envelope) { report(.unknownContent(note), at: now) }
                apply(machine.received(envelope, at: now))
            } catch {
                report(.malformed(error.description), at: now)
                apply(machine.receivedMalformed(error.description, at: now))
            }
        case .oversizedMessage(let bytes, let limit):
            let reason = "a message of \(bytes) bytes is over the \(limit)-byte limit; it was skipped"
            report(.malformed(reason), at: now)
            apply(machine.receivedMalformed(reason, at: now))
        case .closed(let reason):
            closeReason = reason
            report(.transport(event), at: now)
            currentClosed = true
            apply(machine.transportClosed(reason.description, orderly: reason.isOrderly, retryable: reason.isRetryable, at: now))
            reclaimUnwritten(from: transport, at: now)
        }
    }

    // MARK: Rotation

    private func listen(to connection: any SessionTransport, as number: Int) {
        let (inbox, bound) = (self.inbox, options.inboxLimit)
        connection.receive { inbox.post(.transport($0, connection: number), waitingWhileAbove: bound) }
    }

    private func rotate(at now: SessionInstant) {
        guard let connect else {
            apply(machine.rotationFailed("this session has no way to make a fresh connection", at: now))
            return
        }
        do {
            let fresh = try connect()
            incoming = fresh
            listen(to: fresh, as: connectionNumber + 1)
            fresh.open()
        } catch {
            apply(machine.rotationFailed("\(error)", at: now))
        }
    }

    /// An attempt to replace a dropped connection: a fresh one (signed anew) takes its number; an
    /// earlier attempt still closing retires, its late reports kept from the machine.
    private func reconnect(at now: SessionInstant) {
        guard let connect else {
            apply(machine.transportClosed("this session has no way to make a fresh connection", orderly: false, retryable: false, at: now))
            return
        }
        do {
            let fresh = try connect()
            if !currentClosed { retiring[connectionNumber] = transport }
            transport = fresh
            connectionNumber += 1
            currentClosed = false
            listen(to: fresh, as: connectionNumber)
            fresh.open()
        } catch {
            apply(machine.transportClosed("a fresh connection could not be made: \(error)", orderly: false, retryable: false, at: now))
        }
    }

    /// The fresh connection opened (it takes over: the machine's actions go on it, and it asks
    /// for the old one to be closed) or failed (the machine sends what it held on the current one).
    private func handleIncoming(_ event: TransportEvent, at now: SessionInstant) {
        guard let fresh = incoming else { return }
        switch event {
        case .opened:
            report(.transport(event), at: now)
            retiring[connectionNumber] = transport
            transport = fresh
            connectionNumber += 1
            currentClosed = false
            incoming = nil
            apply(machine.rotationOpened(at: now))
        case .closed(let reason):
            incoming = nil
            apply(machine.rotationFailed(reason.description, at: now))
        case .message, .oversizedMessage:
            handle(event, at: now)
        }
    }

    /// A closing old connection: its last messages still count; its close is expected.
    private func handleRetiring(_ event: TransportEvent, connection: Int, at now: SessionInstant) {
        switch event {
        case .closed:
            if let old = retiring.removeValue(forKey: connection) {
                reclaimUnwritten(from: old, at: now)
            }
        case .message, .oversizedMessage:
            handle(event, at: now)
        case .opened:
            break
        }
    }

    /// The tag of a captured frame handed to a transport (typed texts carry their positive numbers).
    static let capturedFrameTag = -1

    /// After `connection` closed: the texts it took and never wrote (by the numbers the machine
    /// tagged them with) go back to the machine's queue, and the captured frames it never wrote
    /// go back to the machine, which sends them on the next connection or counts them as dropped.
    private func reclaimUnwritten(from connection: any SessionTransport, at now: SessionInstant) {
        let unwritten = connection.takeUnwrittenMessages()
        let frames = unwritten.filter { $0.tag == Self.capturedFrameTag }.compactMap { message -> AudioFrame? in
            guard case .chunk(let chunk) = AudioChunkJSON.decode(message.text) else { return nil }
            let peak = chunk.samples.lazy.map { Int($0.magnitude) }.max() ?? 0
            return AudioFrame(samples: chunk.samples, level: PeakLevel(peak: peak, floatPeak: Float(peak) / 32_768))
        }
        if !frames.isEmpty { apply(machine.framesNotWritten(frames, at: now)) }
        let numbers = unwritten.compactMap(\.tag).filter { $0 > 0 }
        guard !numbers.isEmpty else { return }
        apply(machine.textsNotWritten(numbers, at: now))
    }

    private func typeNow(_ text: String) {
        let now = clock.now
        do {
            apply(try machine.typed(text, at: now))
        } catch {
            report(.refused(error), at: now)
        }
    }

    // MARK: Carrying out actions

    /// Carries out `actions` in order. Events that carrying one out reports back to the machine
    /// (a text sent, playback drained) queue their actions after the rest, so a later
    /// `scheduleTick` always wins over an earlier one, as the machine intends.
    private func apply(_ actions: [SessionAction]) {
        guard !applying else {
            pendingActions.append(contentsOf: actions)
            return
        }
        applying = true
        for action in actions { perform(action) }
        // What carrying those out queued, oldest first, and what that queues in turn (walked by
        // index: taking each from the front moved the rest, 184 bytes an action).
        var next = 0
        while next < pendingActions.count {
            let action = pendingActions[next]
            next += 1
            perform(action)
        }
        pendingActions.removeAll(keepingCapacity: true)
        applying = false
        status = machine.currentStatus()
    }

    private func perform(_ action: SessionAction) {
        let now = clock.now
        switch action {
        case .openTransport:
            if machine.isReconnecting {
                reconnect(at: now)
            } else {
                transport.open()
            }
        case .closeTransport:
            transport.close()
        case .send(let message):
            do {
                try transport.send(WireCodec.encode(message))
                report(.sent(message), at: now)
            } catch {
                // A transport that has closed reports how with its closing event, which comes
                // after every message the runtime sent before it: the machine hears of it then.
                if case .closed = error { return }
                apply(machine.sendFailed(message.type, reason: error.description, at: now))
            }
        case .sendText(let text):
            let message = WireMessage.textInput(text: text.text)
            do {
                try transport.send(WireCodec.encode(message), tag: text.number)
                report(.sent(message), at: now)
                apply(machine.textSent(text, at: now))
            } catch {
                apply(machine.textNotSent(text, reason: error.description, at: now))
            }
        case .sendCapturedFrame(let frame):
            let text = frame.samples.withUnsafeBufferPointer { AudioChunkJSON.encode($0, sampleRate: options.session.captureSampleRate) }
            do {
                try transport.send(text, tag: Self.capturedFrameTag)
                report(.frameSent(sampleCount: frame.samples.count, level: frame.level), at: now)
                apply(machine.frameSent(frame, at: now))
            } catch {
                if case .closed = error {
                    apply(machine.frameNotSent(frame, transportClosed: true, at: now))
                } else {
                    apply(machine.frameNotSent(at: now))
                }
            }
        case .playReply(let chunk):
            recorder?.reply(chunk)
            play(chunk, at: now)
        case .cutPlayback:
            recorder?.cut()
            withOutput(at: now) { output throws(ReplyPlayerError) in try output.cut() }
        case .endReply:
            recorder?.replyEnded()
            withOutput(at: now) { output throws(ReplyPlayerError) in try output.replyEnded() }
        case .scheduleTick(let at):
            tickAt = at
        case .rotateTransport:
            rotate(at: now)
        case .closeReplacedTransport:
            retiring[connectionNumber - 1]?.close()
        case .note(let note):
            // The reply about to play answers this turn: the speaker says when it is heard.
            if case .turnAnswered(let turn) = note, !outputBroken { output.markNextChunk(turn.number) }
            report(.note(note), at: now)
        }
    }

    private func play(_ chunk: AudioChunk, at now: SessionInstant) {
        guard !outputBroken else {
            apply(machine.playbackDrained(at: now))
            return
        }
        do {
            if try output.play(chunk) { apply(machine.playbackDrained(at: now)) }
        } catch {
            if case .unplayableChunk = error {
                report(.playbackFailed(error), at: now)
            } else {
                playbackFailed(error, at: now)
            }
            apply(machine.playbackDrained(at: now))
        }
    }

    /// Runs `body` on the output unless it already failed; a failure breaks it for the session.
    private func withOutput(at now: SessionInstant, _ body: (any ReplyOutput) throws(ReplyPlayerError) -> Void) {
        guard !outputBroken else { return }
        do {
            try body(output)
        } catch {
            playbackFailed(error, at: now)
        }
    }

    private func playbackFailed(_ error: ReplyPlayerError, at now: SessionInstant) {
        outputBroken = true
        playbackError = playbackError ?? error
        report(.playbackFailed(error), at: now)
    }

    private func report(_ event: SessionEvent, at instant: SessionInstant) {
        observer(event, instant)
    }

    // MARK: Capture and output

    private func startCapture(at now: SessionInstant) {
        captureStartedAt = captureStartedAt ?? now
        guard !pumpRunning, let pump = livePump else { return }
        launch(pump)
    }

    /// Runs `pump` on a thread of its own, its frames posted to the inbox.
    private func launch(_ pump: CapturePump) {
        pumpRunning = true
        pumpGeneration += 1
        let (inbox, counters, limit, generation) = (self.inbox, deviceFrames, options.deviceFrameQueueLimit, pumpGeneration)
        let reopenable: Bool
        if case .reopenableDevice = capture { reopenable = true } else { reopenable = false }
        let thread = Thread {
            do {
                _ = try pump.run { frame in
                    if counters.queued.load(ordering: .relaxed) >= limit {
                        counters.dropped.add(1, ordering: .relaxed)
                        return
                    }
                    counters.queued.add(1, ordering: .relaxed)
                    inbox.post(.frame(AudioFrame(copying: frame)))
                }
                inbox.post(.captureEnded(nil))
            } catch let error as CapturePumpError where reopenable {
                inbox.post(.captureLost(error.message, generation: generation))
            } catch {
                inbox.post(.captureEnded("capture stopped: \(error)"))
            }
        }
        thread.name = "voicepipe capture"
        thread.start()
    }

    /// Tries the lost capture device again: back, it is guarded and converted anew and voice
    /// resumes; still missing, it is tried again after the interval.
    private func reopenCapture(at now: SessionInstant) {
        reopenAt = nil
        guard case .reopenableDevice(_, let reopen) = capture, livePump == nil, !captureDone, !machine.isEnding else { return }
        do {
            let pump = try reopen.open()
            let before = lostFormat
            livePump = pump
            let format = pump.device.format
            let change = before.map { $0 == format ? "" : " (it was \($0))" } ?? ""
            apply(machine.audioRestored("\(reopen.name) is back at \(format)\(change)", at: now))
            if captureStartedAt != nil { launch(pump) }
        } catch {
            reopenAt = now + reopen.interval
        }
    }

    private func stopCapture() {
        if pumpRunning, let livePump { livePump.stop() }
    }

    private func finishOutput() {
        guard !outputBroken else { return }
        do {
            try output.finish()
        } catch {
            playbackFailed(error, at: clock.now)
        }
    }
}

/// Live device frames between the capture thread and the driver.
private final class DeviceFrameCounters: Sendable {
    /// Posted to the inbox and not yet taken.
    let queued = Atomic<Int>(0)
    /// Dropped because too many were waiting.
    let dropped = Atomic<Int>(0)
}
