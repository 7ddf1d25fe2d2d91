/// What a UI or a summary reads off a session: each view is computed from the state and the
/// ledger on every read, never stored beside them.
extension SessionMachine {
    /// The state as a user sees it.
    public var state: SessionState {
        switch current {
        case .disconnected, .modifying: .disconnected
        case .connecting: .connecting
        case .live(_, let phase): phase.state
        case .error(let failure, _): .error(failure)
        }
    }

    /// What a driver asks after every event, read in one pass: the state, whether `session.end`
    /// went out, whether the session is reconnecting. (`state`, `isEnding` and `isReconnecting`
    /// each copy the live connection to look into it; three copies per look were a large part
    /// of a session's CPU.)
    public struct Status: Sendable, Hashable {
        public let state: SessionState
        public let isEnding: Bool
        public let isReconnecting: Bool
    }

    /// Samples of captured audio kept to be sent again should the connection drop unread (at
    /// most ``ReconnectPolicy/holdLimit``'s worth): the audio a session holds.
    public var samplesKeptForResending: Int { deliveries.recentSamples }

    /// ``status``, read in place: an owner that keeps the machine in a class property (a driver)
    /// reads a getter from a copy of the whole machine, a retain and a release of each of its
    /// arrays, after every event; a mutating call borrows the property instead.
    package mutating func currentStatus() -> Status { status }

    /// ``Status`` as of now.
    public var status: Status {
        switch current {
        case .disconnected, .modifying: Status(state: .disconnected, isEnding: false, isReconnecting: false)
        case .connecting(_, let reconnection): Status(state: .connecting, isEnding: false, isReconnecting: reconnection != nil)
        case .live(let live, let phase): Status(state: phase.state, isEnding: live.isEnding, isReconnecting: false)
        case .error(let failure, _): Status(state: .error(failure), isEnding: false, isReconnecting: false)
        }
    }

    /// True while waiting for the reply to the user's turn.
    public var isThinking: Bool { state == .thinking }

    /// True while the user's voice reaches the runtime and nobody else is speaking.
    public var isListening: Bool {
        guard audioUnavailableReason == nil else { return false }
        return state == .ready || state == .talking
    }

    /// True once `session.end` went out on the live connection.
    public var isEnding: Bool {
        if case .live(let live, _) = current { return live.isEnding }
        return false
    }

    /// True while a fresh connection is being opened to replace the current one.
    public var isRotating: Bool {
        if case .live(let live, _) = current { return live.rotation != nil }
        return false
    }

    /// Why audio is unavailable, when it is.
    public var audioUnavailability: String? { audioUnavailableReason }

    /// "Dana · 2022 Model Y", from the `persona` and `vehicle` of the `session.start` context.
    public var sessionTitle: String? {
        let parts = [Self.contextText(configuration.context["persona"], keys: ["name"]),
                     Self.contextText(configuration.context["vehicle"], keys: ["year", "make", "model"])].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }

    /// The status line: "Ready — Dana · 2022 Model Y", and when audio is unavailable
    /// "… — audio unavailable: the device reports 0 Hz; text only".
    public var stateLine: String {
        var line = state.title
        if let title = sessionTitle { line += " — \(title)" }
        if let reason = audioUnavailableReason { line += " — audio unavailable: \(reason); text only" }
        return line
    }

    /// Texts typed and not yet taken by the transport, in the order typed.
    public var pendingTexts: [PendingText] { texts.pending }

    /// Every user turn, in order.
    public var turns: [TurnRecord] { ledger.turns }
    /// The conversation, partial lines replaced by their later versions.
    public var transcript: [TranscriptLine] { ledger.transcript }
    /// Tool calls and results, classifications and session boundaries, in the order seen.
    public var toolDrawer: [ToolDrawerEntry] { ledger.toolDrawer }
    /// Markdown cards from the runtime, in order.
    public var infoCards: [InfoCard] { ledger.infoCards }
    /// The escalation, once requested or reported.
    public var escalation: EscalationStatus? { ledger.escalation }
    /// What the session counted.
    public var counters: SessionCounters { ledger.counters }

    /// The escalation banner, once there is an escalation.
    public var escalationBanner: String? { ledger.escalation?.banner }

    /// Latencies of the turns answered so far, in turn order.
    public var latencies: [Duration] { ledger.turns.compactMap(\.latency) }

    /// The median turn latency (the lower middle of an even count), nil before any answer.
    public var medianLatency: Duration? { latencyDistribution?.median }

    /// The 95th-percentile turn latency by the nearest-rank method (the ⌈0.95·n⌉-th smallest).
    public var p95Latency: Duration? { latencyDistribution?.p95 }

    /// Latencies to the ear of the turns whose first reply sample a speaker reported, in turn order.
    public var latenciesToEar: [Duration] { ledger.turns.compactMap(\.latencyToEar) }

    /// Median, p90, p95, p99 and maximum of the answered turns' latencies; nil before any answer.
    public var latencyDistribution: LatencyDistribution? { LatencyDistribution(latencies) }

    /// The tool records, in the order their first half arrived.
    public var toolCalls: [ToolCallRecord] {
        ledger.toolDrawer.compactMap { if case .tool(let record) = $0 { record } else { nil } }
    }

    /// A readable name from a context value: a string, or an object's `keys` joined with spaces.
    private static func contextText(_ value: JSONValue?, keys: [String]) -> String? {
        switch value {
        case .string(let text)?:
            return text.isEmpty ? nil : text
        case .object(let object)?:
            let parts = keys.compactMap { key -> String? in
                switch object[key] {
                case .string(let text)?: text
                case .integer(let number)?: String(number)
                default: nil
                }
            }
            return parts.isEmpty ? nil : parts.joined(separator: " ")
        default:
            return nil
        }
    }
}
