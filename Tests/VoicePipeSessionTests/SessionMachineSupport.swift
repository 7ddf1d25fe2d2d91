import VoicePipeCore
import VoicePipeSession

/// Drives a ``SessionMachine`` with explicit instants, as a driver would, and keeps what it asked for.
struct SessionScript {
    var machine: SessionMachine
    /// Every action so far, in order.
    private(set) var log: [SessionAction] = []
    /// The instant of the last tick the machine asked for.
    private(set) var scheduled: SessionInstant?

    /// A frame the gate hears as voice (−6 dBFS) and one it hears as a quiet room (−80 dBFS).
    static let voice = PeakLevel(peak: 16_384, floatPeak: 0.5)
    static let room = PeakLevel(peak: 3, floatPeak: 0.0001)
    static let digitalSilence = PeakLevel(peak: 0, floatPeak: 0)
    /// 512 samples at 16 kHz: 32 ms.
    static let frameSamples = 512
    static let frame = Duration.milliseconds(32)

    init(_ configuration: SessionConfiguration = SessionConfiguration(sessionId: "s-1")) {
        machine = SessionMachine(configuration: configuration)
    }

    /// Runs one event, records its actions and returns them.
    @discardableResult
    mutating func run(_ event: (inout SessionMachine) -> [SessionAction]) -> [SessionAction] {
        let actions = event(&machine)
        for action in actions {
            if case .scheduleTick(let at) = action { scheduled = at }
        }
        log += actions
        return actions
    }

    /// Runs a text event that may throw.
    @discardableResult
    mutating func type(_ text: String, at instant: SessionInstant) throws(SessionInputError) -> [SessionAction] {
        let actions = try machine.typed(text, at: instant)
        for action in actions {
            if case .scheduleTick(let at) = action { scheduled = at }
        }
        log += actions
        confirmTexts(in: actions, at: instant)
        return actions
    }

    /// Connects and opens the transport at `instant`: the session is ready.
    mutating func connectAndOpen(at instant: SessionInstant = .origin) {
        run { $0.connect(at: instant) }
        let opened = run { $0.transportOpened(at: instant) }
        confirmTexts(in: opened, at: instant)
    }

    /// Reports each `sendText` action as taken by the transport, the way a driver does.
    mutating func confirmTexts(in actions: [SessionAction], at instant: SessionInstant) {
        for action in actions {
            if case .sendText(let text) = action {
                let more = run { $0.textSent(text, at: instant) }
                confirmTexts(in: more, at: instant)
            }
        }
    }

    /// Feeds `count` frames of `level`, one every 32 ms from `start`; returns the instant after the last.
    @discardableResult
    mutating func frames(_ level: PeakLevel, count: Int, from start: SessionInstant) -> SessionInstant {
        var instant = start
        for _ in 0..<count {
            instant = instant + Self.frame
            capture(level, at: instant)
        }
        return instant
    }

    /// One captured frame of `level` at `instant`, reported back as the transport took it (or,
    /// when `refused`, as it could not), the way a driver does.
    @discardableResult
    mutating func capture(_ level: PeakLevel, sampleCount: Int = frameSamples, at instant: SessionInstant, refused: Bool = false) -> [SessionAction] {
        let actions = run { $0.captured(AudioFrame(samples: [Int16](repeating: 0, count: sampleCount), level: level), at: instant) }
        for case .sendCapturedFrame(let frame) in actions {
            if refused {
                run { $0.frameNotSent(at: instant) }
            } else {
                run { $0.frameSent(frame, at: instant) }
            }
        }
        return actions
    }

    /// Delivers a runtime message.
    @discardableResult
    mutating func receive(_ message: WireMessage, at instant: SessionInstant) -> [SessionAction] {
        run { $0.received(WireEnvelope(message: message), at: instant) }
    }

    /// Ticks at every instant the machine schedules up to `end`; returns how many ticks ran.
    @discardableResult
    mutating func runTimers(until end: SessionInstant) -> Int {
        var ticks = 0
        while let next = scheduled, next <= end {
            let before = scheduled
            run { $0.tick(at: next) }
            ticks += 1
            if scheduled == before { break }
        }
        return ticks
    }

    /// The actions of the log that send something, as wire messages (captured frames as a marker).
    var sent: [String] {
        log.compactMap { action in
            switch action {
            case .send(let message): "\(message.type)"
            case .sendText(let text): "text.input \(text.text)"
            case .sendCapturedFrame: "frame"
            default: nil
            }
        }
    }

    /// The state changes in the log.
    var transitions: [String] {
        log.compactMap { action in
            if case .note(.stateChanged(let from, let to)) = action { "\(from.name)→\(to.name)" } else { nil }
        }
    }

    /// Forgets the log (the machine is kept).
    mutating func clearLog() { log.removeAll() }
}

extension SessionInstant {
    static func ms(_ milliseconds: Int) -> SessionInstant { SessionInstant(sinceOrigin: .milliseconds(milliseconds)) }
}

extension Array where Element == SessionAction {
    /// The audio chunks sent with `.send`.
    var sentAudio: [AudioChunk] {
        compactMap { if case .send(.audioChunk(let chunk)) = $0 { chunk } else { nil } }
    }

    /// True when the actions contain one matching `predicate`.
    func has(_ predicate: (SessionAction) -> Bool) -> Bool { contains(where: predicate) }
}

extension [SessionAction] {
    /// The texts these actions send, in order.
    var sentTexts: [PendingText] {
        compactMap { if case .sendText(let text) = $0 { text } else { nil } }
    }
}
