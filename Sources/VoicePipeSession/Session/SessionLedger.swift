/// What a session has recorded, across every connection it had: the turns, the transcript, the
/// tool drawer, the info cards, the escalation and the counters. Records only; the rules that
/// decide when to record live in ``SessionMachine``.
public struct SessionLedger: Sendable {
    /// Every user turn, in order.
    public internal(set) var turns: [TurnRecord] = []
    /// The conversation, partial lines replaced by their later versions.
    public internal(set) var transcript: [TranscriptLine] = []
    /// Tool calls and results, classifications and session boundaries, in the order seen.
    public internal(set) var toolDrawer: [ToolDrawerEntry] = []
    /// Markdown cards from the runtime, in order.
    public internal(set) var infoCards: [InfoCard] = []
    /// The escalation, once requested or reported.
    public internal(set) var escalation: EscalationStatus?
    /// What the session counted.
    public internal(set) var counters = SessionCounters()

    /// The drawer entry of each tool id whose other half has not arrived yet.
    private var toolHalves: [String: Int] = [:]
    /// Message types this version does not know, each noted once.
    private var unknownTypesNoted: Set<String> = []
    /// The next turn to start gets the long-turn allowance.
    var nextTurnIsLongRunning = false

    init() {}

    /// Starts a turn and returns its index in ``turns``.
    mutating func beginTurn(_ kind: TurnRecord.Kind, at now: SessionInstant, endedAt: SessionInstant? = nil) -> Int {
        let longRunning = nextTurnIsLongRunning
        nextTurnIsLongRunning = false
        turns.append(TurnRecord(number: turns.count + 1, kind: kind, startedAt: now, speechEndedAt: now, endedAt: endedAt, isLongRunning: longRunning))
        return turns.count - 1
    }

    /// Puts a transcript line in its place: it replaces the role's unsettled line, if any.
    mutating func record(_ line: TranscriptLine) {
        if let unsettled = transcript.lastIndex(where: { $0.role == line.role && !$0.isFinal }) {
            transcript[unsettled] = line
        } else {
            transcript.append(line)
        }
    }

    /// One half of a tool call (the call or the result) paired by id with the other half, if
    /// that came first and is still alone; otherwise a new drawer entry. Returns the record as
    /// it stands.
    mutating func recordTool(id: String, name: String, budget: Duration, at now: SessionInstant,
                             completing apply: (inout ToolCallRecord) -> Void, isMissing: (ToolCallRecord) -> Bool) -> ToolCallRecord {
        if let index = toolHalves[id], case .tool(var record) = toolDrawer[index], isMissing(record) {
            apply(&record)
            toolDrawer[index] = .tool(record)
            toolHalves[id] = nil
            return record
        }
        var record = ToolCallRecord(id: id, name: name, input: nil, output: nil, callReceivedAt: nil, resultReceivedAt: nil, runtimeDuration: nil, budget: budget)
        apply(&record)
        toolDrawer.append(.tool(record))
        toolHalves[id] = toolDrawer.count - 1
        return record
    }

    /// Counts a message of an unknown type; true the first time this type is seen.
    mutating func noteUnknownType(_ type: String) -> Bool {
        counters.unknownMessages += 1
        return unknownTypesNoted.insert(type).inserted
    }

    /// Counts an event that did not fit the state it came in.
    mutating func countIgnored(_ event: String, in state: SessionState) {
        counters.ignoredEvents += 1
        counters.ignoredByKind["\(event) (\(state.name))", default: 0] += 1
    }
}
