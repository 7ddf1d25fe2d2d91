/// Many sessions as one report: a corpus of recordings run through a runtime, which sessions
/// failed and why, and every turn's latency kept raw, so reports from several machines merge
/// exactly (``merged(_:)`` recomputes the percentiles from the raw values; averaging
/// percentiles is wrong).
///
/// JSON shape (version 1, ``json``): `version`; `sessions`, one object per input in input order
/// with `input`, `status` (`ok`, or why it failed: `timeout`, `transport`, `runtimeError`,
/// `runtimeStalled`, `stopped`, `unreadable`), `failure` (the sentence, when not ok),
/// `sessionId`, `turns`, `turnLatencies` (seconds, one per answered turn), `turnLatency` (its
/// distribution), `connectToReadySeconds`, `interruptions`, `toolCalls`, `toolCallsOverBudget`,
/// `reconnections`, `audioSentSeconds`, `audioReceivedSeconds`, `framesDropped`; and over every
/// session: `sessionCount`, `ok`, `failed`, `failures` (count by status), `turns`, `turnLatency`
/// (`count`, `median`, `p90`, `p95`, `p99`, `max`, or null), `connectToReady` (the same over
/// the sessions that became ready), `interruptions`, `toolCalls`, `toolCallsOverBudget`,
/// `reconnections`, `audioSentSeconds`, `audioReceivedSeconds`. Times are seconds to the
/// millisecond. A change that removes or renames a field raises ``version``.
public struct CorpusReport: Sendable, Hashable {
    /// The version of the shape above.
    public static let version = 1

    /// One input's session, as the report keeps it.
    public struct Session: Sendable, Hashable {
        /// The input as the user named it.
        public var input: String
        /// `ok`, or the kind of failure.
        public var status: String
        /// What went wrong, as a sentence; nil when ok.
        public var failure: String?
        public var sessionId: String?
        public var turns: Int
        /// Seconds, one per answered turn, in turn order.
        public var turnLatencies: [Double]
        public var connectToReadySeconds: Double?
        public var interruptions: Int
        public var toolCalls: Int
        public var toolCallsOverBudget: Int
        public var reconnections: Int
        public var audioSentSeconds: Double
        public var audioReceivedSeconds: Double
        public var framesDropped: Int

        public var isOK: Bool { status == "ok" }

        /// A session whose summary (``SessionSummary``, version 1) came back.
        public init(input: String, summary: JSONObject) throws(CorpusReportError) {
            let reader = ObjectReader(object: summary, context: "the summary of '\(input)'")
            guard try reader.integer("version") == SessionSummary.version else {
                throw .unsupportedVersion(try reader.integer("version"), of: "session summary", source: input)
            }
            self.input = input
            let status = try reader.string("status")
            self.status = status == "ok" ? "ok" : try reader.optionalString("failureKind") ?? status
            failure = status == "ok" ? nil : try reader.optionalString("failure")
            sessionId = try reader.optionalString("sessionId")
            turns = try reader.array("turns").count
            turnLatencies = try reader.numbers("turnLatencies")
            connectToReadySeconds = try reader.optionalNumber("connectToReadySeconds")
            interruptions = try reader.integer("interruptions")
            let tools = try reader.object("toolCalls")
            toolCalls = try tools.integer("count")
            toolCallsOverBudget = try tools.integer("overBudget")
            reconnections = try reader.object("reconnections").integer("count")
            let sent = try reader.object("audioSent")
            audioSentSeconds = try sent.number("seconds")
            framesDropped = try sent.integer("framesDropped")
            audioReceivedSeconds = try reader.object("audioReceived").number("seconds")
        }

        /// A session that never ran: its input could not be read, say.
        public init(input: String, status: String, failure: String) {
            self.input = input
            self.status = status
            self.failure = failure
            sessionId = nil
            turns = 0
            turnLatencies = []
            connectToReadySeconds = nil
            interruptions = 0
            toolCalls = 0
            toolCallsOverBudget = 0
            reconnections = 0
            audioSentSeconds = 0
            audioReceivedSeconds = 0
            framesDropped = 0
        }

        /// From a report's `sessions` entry.
        init(reportEntry object: JSONObject, source: String) throws(CorpusReportError) {
            let reader = ObjectReader(object: object, context: "a session of \(source)")
            input = try reader.string("input")
            status = try reader.string("status")
            failure = try reader.optionalString("failure")
            sessionId = try reader.optionalString("sessionId")
            turns = try reader.integer("turns")
            turnLatencies = try reader.numbers("turnLatencies")
            connectToReadySeconds = try reader.optionalNumber("connectToReadySeconds")
            interruptions = try reader.integer("interruptions")
            toolCalls = try reader.integer("toolCalls")
            toolCallsOverBudget = try reader.integer("toolCallsOverBudget")
            reconnections = try reader.integer("reconnections")
            audioSentSeconds = try reader.number("audioSentSeconds")
            audioReceivedSeconds = try reader.number("audioReceivedSeconds")
            framesDropped = try reader.integer("framesDropped")
        }

        var json: JSONObject {
            var object = JSONObject()
            object["input"] = .string(input)
            object["status"] = .string(status)
            if let failure { object["failure"] = .string(failure) }
            object["sessionId"] = sessionId.map(JSONValue.string) ?? .null
            object["turns"] = .integer(turns)
            object["turnLatencies"] = .array(turnLatencies.map(Self.seconds))
            object["turnLatency"] = CorpusReport.distribution(turnLatencies)
            object["connectToReadySeconds"] = connectToReadySeconds.map(Self.seconds) ?? .null
            object["interruptions"] = .integer(interruptions)
            object["toolCalls"] = .integer(toolCalls)
            object["toolCallsOverBudget"] = .integer(toolCallsOverBudget)
            object["reconnections"] = .integer(reconnections)
            object["audioSentSeconds"] = Self.seconds(audioSentSeconds)
            object["audioReceivedSeconds"] = Self.seconds(audioReceivedSeconds)
            object["framesDropped"] = .integer(framesDropped)
            return object
        }

        static func seconds(_ value: Double) -> JSONValue { .number((value * 1000).rounded() / 1000) }
    }

    /// Every session, in input order.
    public var sessions: [Session]

    public init(sessions: [Session]) {
        self.sessions = sessions
    }

    /// A report read back from its JSON (``json``), for merging.
    /// - Parameter source: names the report in errors (its file name).
    public init(json value: JSONValue, source: String) throws(CorpusReportError) {
        guard case .object(let object) = value else { throw .notAReport(source: source, reason: "it is a JSON \(value.kind), not an object") }
        let reader = ObjectReader(object: object, context: source)
        guard object["sessions"] != nil, object["version"] != nil else {
            throw .notAReport(source: source, reason: "it has no 'version' and 'sessions' (a session summary is not a report)")
        }
        let version = try reader.integer("version")
        guard version == Self.version else { throw .unsupportedVersion(version, of: "report", source: source) }
        var sessions: [Session] = []
        for entry in try reader.array("sessions") {
            guard case .object(let session) = entry else { throw .notAReport(source: source, reason: "a 'sessions' entry is a JSON \(entry.kind), not an object") }
            sessions.append(try Session(reportEntry: session, source: source))
        }
        self.sessions = sessions
    }

    /// One report of several: their sessions in order, every figure recomputed from the raw values.
    public static func merged(_ reports: [CorpusReport]) -> CorpusReport {
        CorpusReport(sessions: reports.flatMap(\.sessions))
    }

    public var okCount: Int { sessions.count { $0.isOK } }
    /// A count summed over every session (turns, interruptions, tool calls, ...).
    public func total(_ figure: KeyPath<Session, Int>) -> Int { sessions.reduce(0) { $0 + $1[keyPath: figure] } }
    /// Seconds summed over every session (audio sent or received).
    public func total(_ figure: KeyPath<Session, Double>) -> Double { sessions.reduce(0) { $0 + $1[keyPath: figure] } }
    /// Failed sessions by status, most frequent first (ties by name).
    public var failures: [(status: String, count: Int)] {
        var counts: [String: Int] = [:]
        for session in sessions where !session.isOK { counts[session.status, default: 0] += 1 }
        return counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { ($0.key, $0.value) }
    }
    /// Every answered turn's latency across the sessions, in seconds.
    public var turnLatencies: [Double] { sessions.flatMap(\.turnLatencies) }
    public var turnLatency: LatencyDistribution? { LatencyDistribution(turnLatencies.map { Duration.seconds($0) }) }
    public var connectToReady: LatencyDistribution? { LatencyDistribution(sessions.compactMap(\.connectToReadySeconds).map { Duration.seconds($0) }) }

    /// The report as JSON (the shape in the type's documentation).
    public var json: JSONObject {
        var object = JSONObject()
        object["version"] = .integer(Self.version)
        object["sessionCount"] = .integer(sessions.count)
        object["ok"] = .integer(okCount)
        object["failed"] = .integer(sessions.count - okCount)
        var failureCounts = JSONObject()
        for (status, count) in failures { failureCounts[status] = .integer(count) }
        object["failures"] = .object(failureCounts)
        object["turns"] = .integer(total(\.turns))
        object["turnLatency"] = Self.distribution(turnLatencies)
        object["connectToReady"] = Self.distribution(sessions.compactMap(\.connectToReadySeconds))
        object["interruptions"] = .integer(total(\.interruptions))
        object["toolCalls"] = .integer(total(\.toolCalls))
        object["toolCallsOverBudget"] = .integer(total(\.toolCallsOverBudget))
        object["reconnections"] = .integer(total(\.reconnections))
        object["audioSentSeconds"] = Session.seconds(total(\.audioSentSeconds))
        object["audioReceivedSeconds"] = Session.seconds(total(\.audioReceivedSeconds))
        object["sessions"] = .array(sessions.map { .object($0.json) })
        return object
    }

    /// `count`, `median`, `p90`, `p95`, `p99`, `max` of seconds, or null for none.
    static func distribution(_ values: [Double]) -> JSONValue {
        guard let spread = LatencyDistribution(values.map { Duration.seconds($0) }) else { return .null }
        return .object(["count": .integer(spread.count), "median": .seconds(spread.median), "p90": .seconds(spread.p90),
                        "p95": .seconds(spread.p95), "p99": .seconds(spread.p99), "max": .seconds(spread.max)])
    }
}

/// Why a report or a session summary could not be read.
public enum CorpusReportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file is JSON but not a report (or not a summary).
    case notAReport(source: String, reason: String)
    /// A field is missing or of the wrong type.
    case badField(String, context: String, expected: String)
    /// A version this build does not read.
    case unsupportedVersion(Int, of: String, source: String)

    public var description: String {
        switch self {
        case .notAReport(let source, let reason): "\(source) is not a VoicePipe report: \(reason)"
        case .badField(let field, let context, let expected): "\(context) needs '\(field)' as \(expected)"
        case .unsupportedVersion(let version, let kind, let source): "\(source) is a version \(version) \(kind); this voicepipe reads version \(kind == "report" ? CorpusReport.version : SessionSummary.version)"
        }
    }
}

/// Typed reads of a JSON object's fields, each failure naming the field.
private struct ObjectReader {
    let object: JSONObject
    let context: String

    private func fail(_ key: String, _ expected: String) -> CorpusReportError { .badField(key, context: context, expected: expected) }

    func string(_ key: String) throws(CorpusReportError) -> String {
        guard case .string(let value)? = object[key] else { throw fail(key, "a string") }
        return value
    }

    func optionalString(_ key: String) throws(CorpusReportError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw fail(key, "a string or null")
        }
    }

    func integer(_ key: String) throws(CorpusReportError) -> Int {
        switch object[key] {
        case .integer(let value)?: return value
        case .number(let value)? where value == value.rounded() && abs(value) < 1e15: return Int(value)
        default: throw fail(key, "a whole number")
        }
    }

    func number(_ key: String) throws(CorpusReportError) -> Double {
        switch object[key] {
        case .integer(let value)?: return Double(value)
        case .number(let value)?: return value
        default: throw fail(key, "a number")
        }
    }

    func optionalNumber(_ key: String) throws(CorpusReportError) -> Double? {
        if case nil = object[key] { return nil }
        if case .null? = object[key] { return nil }
        return try number(key)
    }

    func array(_ key: String) throws(CorpusReportError) -> [JSONValue] {
        guard case .array(let values)? = object[key] else { throw fail(key, "an array") }
        return values
    }

    func numbers(_ key: String) throws(CorpusReportError) -> [Double] {
        try array(key).map { value throws(CorpusReportError) -> Double in
            switch value {
            case .integer(let number): return Double(number)
            case .number(let number) where number.isFinite && number >= 0: return number
            default: throw fail(key, "an array of seconds")
            }
        }
    }

    func object(_ key: String) throws(CorpusReportError) -> ObjectReader {
        guard case .object(let value)? = object[key] else { throw fail(key, "an object") }
        return ObjectReader(object: value, context: "\(context)'s '\(key)'")
    }
}
