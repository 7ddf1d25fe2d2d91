/// A finished session as one JSON object, for scripts and for reports over many sessions: the
/// same figures as the text summary, each turn's own kept raw so distributions can be
/// recomputed exactly from several sessions (averaging percentiles is wrong).
///
/// Shape (version 1): `version`, `sessionId`, `status` (`ok`, `failed` or `stopped`), `failure`
/// and `failureKind` (when not ok), `durationSeconds`, `connectToReadySeconds` (null when it never
/// became ready), `turns` (each `number`, `kind`,
/// `speechSeconds`, `latencySeconds`, `latencyToEarSeconds`, null where there is none),
/// `turnLatencies` (seconds, one per answered turn, in turn order: as handed to the output),
/// `turnLatency` (`count`, `median`, `p90`, `p95`, `p99`, `max`, or null), `turnLatencyToEar`
/// (the same over the turns a speaker reported hearing, or null), `audioSent`, `audioReceived`, `interruptions`, `toolCalls`, `reconnections`,
/// `audioLosses`, `typedTextsNeverSent`. Times are seconds to the millisecond.
public enum SessionSummary {
    /// The version of the shape above; a change that removes or renames a field raises it.
    public static let version = 1

    public static func json(of machine: SessionMachine, duration: Duration) -> JSONObject {
        var object = JSONObject()
        object["version"] = .number(Double(version))
        object["sessionId"] = .string(machine.configuration.sessionId)
        switch machine.state {
        case .disconnected:
            object["status"] = .string("ok")
        case .error(let failure):
            object["status"] = .string("failed")
            object["failure"] = .string(failure.description)
            object["failureKind"] = .string(failure.kind)
        case let state:
            object["status"] = .string("stopped")
            object["failure"] = .string("stopped \(state.name)")
            object["failureKind"] = .string("stopped")
        }
        object["durationSeconds"] = seconds(duration)
        object["connectToReadySeconds"] = machine.counters.connectToReady.map(seconds) ?? .null
        let turns = machine.turns.filter { !$0.wasWithdrawn }
        object["turns"] = .array(turns.map { turn in
            .object(["number": .number(Double(turn.number)), "kind": .string(turn.kind.rawValue),
                     "speechSeconds": turn.speechDuration.map(seconds) ?? .null, "latencySeconds": turn.latency.map(seconds) ?? .null,
                     "latencyToEarSeconds": turn.latencyToEar.map(seconds) ?? .null])
        })
        let latencies = turns.compactMap(\.latency)
        object["turnLatencies"] = .array(latencies.map(seconds))
        object["turnLatency"] = distribution(latencies)
        object["turnLatencyToEar"] = distribution(turns.compactMap(\.latencyToEar))
        let counters = machine.counters
        object["audioSent"] = .object([
            "seconds": seconds(.samples(counters.samplesSent, at: machine.configuration.captureSampleRate)),
            "frames": .number(Double(counters.framesSent)), "keepAlives": .number(Double(counters.keepAlivesSent)),
            "framesDropped": .number(Double(counters.framesDropped)),
        ])
        object["audioReceived"] = .object(["seconds": seconds(counters.replyAudio), "chunks": .number(Double(counters.replyChunks))])
        object["interruptions"] = .number(Double(counters.interruptions))
        let tools = machine.toolCalls
        object["toolCalls"] = .object(["count": .number(Double(tools.count)), "overBudget": .number(Double(tools.filter(\.isOverBudget).count)),
                                       "unpaired": .number(Double(tools.filter(\.isUnpaired).count))])
        object["reconnections"] = .object([
            "count": .number(Double(counters.reconnections)), "framesHeld": .number(Double(counters.framesHeldForReconnection)),
            "framesDroppedWhileAway": .number(Double(counters.framesDroppedWhileAway)), "repliesCut": .number(Double(counters.repliesCutByDrop)),
            "framesResent": .number(Double(counters.framesResent)), "textsResent": .number(Double(counters.textsResent)),
            "audioUnconfirmed": .number(Double(counters.audioUnconfirmed)),
        ])
        object["audioLosses"] = .number(Double(counters.audioLosses))
        object["typedTextsNeverSent"] = .number(Double(machine.pendingTexts.count))
        return object
    }

    /// `count`, `median`, `p90`, `p95`, `p99`, `max` of `values`, or null for none.
    private static func distribution(_ values: [Duration]) -> JSONValue {
        guard let spread = LatencyDistribution(values) else { return .null }
        return .object(["count": .number(Double(spread.count)), "median": seconds(spread.median), "p90": seconds(spread.p90),
                        "p95": seconds(spread.p95), "p99": seconds(spread.p99), "max": seconds(spread.max)])
    }

    private static func seconds(_ duration: Duration) -> JSONValue { .seconds(duration) }
}

extension JSONValue {
    /// A duration as JSON: seconds to the millisecond, as every summary writes times.
    public static func seconds(_ duration: Duration) -> JSONValue {
        .number((duration.seconds * 1000).rounded() / 1000)
    }
}

extension SessionFailure {
    /// A word for grouping failures by reason: `timeout`, `runtimeError`, `transport`, `runtimeStalled`.
    public var kind: String {
        switch self {
        case .timeout: "timeout"
        case .runtimeError: "runtimeError"
        case .transport: "transport"
        case .runtimeStalled: "runtimeStalled"
        }
    }
}
