import Foundation
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// `--out-dir`, `--jobs`, `--repeat` and `--stagger`: `voicepipe session` over a corpus.
struct CorpusOptions: Sendable {
    static var outDirOption: OptionBinding<Self> {
        .option("out-dir", "dir", \.directory, .text,
                help: "Run every input as a session of its own, its reply and log written into this existing folder, and a report of them all (report.json, report.md, report-latency.svg).")
    }
    static var bindings: [OptionBinding<Self>] {
        let needsFolder = "works with '\(outDirOption.flag)' (a corpus of sessions)"
        return [
            outDirOption,
            .option("jobs", "n", \.jobs, .integer(in: 1...1_024),
                    help: "Sessions at once with --out-dir (default \(defaultWidth): sessions mostly wait on real time and the runtime, not on a core).")
                .requiring(outDirOption, needsFolder),
            .option("repeat", "k", \.repeats, .integer(in: 1...100_000), help: "Run the corpus this many times (files named NAME.r1, NAME.r2, ...).")
                .requiring(outDirOption, needsFolder),
            .option("stagger", "seconds", \.stagger, .decimal(in: 0...3_600), help: "Start each session this long after the one before (a ramp for load tests; default 0).")
                .requiring(outDirOption, needsFolder),
        ]
    }

    /// Enough sessions to keep a runtime busy without a thundering start.
    static let defaultWidth = 16

    var directory: String?
    var jobs: Int?
    var repeats: Int?
    var stagger: Double?
}

/// Many inputs through `voicepipe session`, each a whole session of its own (own connection,
/// own session id, the same runtime options and `--text` turns), a line or a JSON object per
/// session as it ends, the corpus report in the folder, and the worst exit status.
struct SessionCorpusCommand: Sendable {
    /// What one session left: its entry in the report, its exit status, and its `--json` object.
    struct Outcome: Sendable {
        var session: CorpusReport.Session
        var exitCode: ExitCode
        var json: JSONObject
    }

    let corpus: SessionCorpus
    let directory: String
    let options: SessionCommand.Options
    let runtime: SessionRuntimeChoice
    /// One in-process runtime serving every session, when the runtime is the embedded one.
    let embedded: EmbeddedRuntime?

    init(options: SessionCommand.Options, inputs: [String], directory: String) throws(CommandFailure) {
        typealias Options = SessionCommand.Options
        let command = SessionCommand.name
        let outDir = CorpusOptions.outDirOption.flag
        guard !inputs.isEmpty else { throw .usage("'\(outDir)' runs a corpus: give the input files", command: command) }
        if inputs.contains("-") { throw .usage("'-' (standard input) cannot be one of a corpus's inputs; run it as a session of its own", command: command) }
        let refused: [(given: Bool, flag: String, why: String)] = [
            (options.output != nil, Options.outOption.flag, "each reply is written into the folder as NAME.reply.wav"),
            (options.log != nil, "--log", "each session's log is written into the folder as NAME.log.jsonl"),
            (options.record != nil, "--record", "record one session at a time"),
            (options.microphone != nil || options.speaker != nil || options.room != nil || options.roomRecord != nil,
             "--mic, --speaker and --room", "a corpus is files; run live audio as one session"),
            (options.stdio, Options.stdioFlag.flag, "standard input and output carry one session's messages"),
            (options.sessionId != nil, "--session-id", "every session of a corpus has its own id"),
        ]
        for refusal in refused where refusal.given {
            throw .usage("'\(refusal.flag)' cannot be combined with '\(outDir)': \(refusal.why)", command: command)
        }
        try OutputFolder.requireExisting(directory)
        do {
            corpus = try SessionCorpus(inputs: inputs, repeats: options.corpus.repeats ?? 1, width: options.corpus.jobs ?? CorpusOptions.defaultWidth,
                                       stagger: .seconds(options.corpus.stagger ?? 0))
        } catch {
            throw .usage(error.description, command: command)
        }
        runtime = try SessionRuntimeChoice(options, command: command)
        try SessionArguments.check(input: inputs[0], texts: options.texts, microphone: nil, output: nil, speaker: nil, log: nil,
                                   transport: runtime, fast: options.fast, command: command)
        if case .embedded(let embeddedOptions) = runtime { embedded = EmbeddedRuntime(options: embeddedOptions) } else { embedded = nil }
        self.directory = directory
        self.options = options
    }

    func run() -> ExitCode {
        let summary = options.summary
        let progress = ProgressLine(label: "sessions", total: Double(corpus.jobs.count), unit: "ended", enabled: !summary.quiet)
        var ended = 0
        if !summary.quiet && !summary.json {
            Console.error("voicepipe session: \(Console.count(corpus.jobs.count, "session")) from \(Console.count(corpus.inputCount, "input")), \(corpus.width) at once, against \(runtime.description); replies and logs in '\(directory)'")
        }
        // The first Ctrl-C ends every running session cleanly (session.end, then the wait) and
        // starts no more; the second stops the waits; a third quits at once. The report is written either way.
        let signals = StopSignals(gentle: 2) { [corpus] in corpus.stop() }
        let outcomes = corpus.run({ job, stop in self.session(job, stop: stop) }, skipped: { job in
            Outcome(session: CorpusReport.Session(input: job.input, status: "stopped", failure: "not started: the corpus was stopped first"),
                    exitCode: .temporaryFailure, json: ["input": .string(job.input), "status": .string("stopped"), "exitStatus": .integer(Int(ExitCode.temporaryFailure.rawValue))])
        }, completed: { job, outcome in
            progress.finish()
            ended += 1
            summary.emit(line(job, outcome, position: ended), json: outcome.json, textToStandardError: false, standardOutputCarriesData: false)
            progress.update(Double(ended))
        })
        withExtendedLifetime(signals) {}
        progress.finish()
        let report = CorpusReport(sessions: outcomes.map(\.session))
        var worst = outcomes.map(\.exitCode).max { $0.rawValue < $1.rawValue } ?? .success
        do {
            try CorpusReportFiles.write(report, into: directory)
        } catch {
            Console.error("voicepipe session: \(error.message)")
            if error.exitCode.rawValue > worst.rawValue { worst = error.exitCode }
        }
        summary.note(totals(report))
        return worst
    }

    /// One session of the corpus: its input through the capture path to the runtime, the reply
    /// and the log into the folder. An input that cannot be opened is reported, not thrown.
    private func session(_ job: SessionCorpus.Job, stop: SessionCorpus.Stop) -> Outcome {
        var options = options
        options.sessionId = AgentCoreRuntime.makeSessionId()
        let replyPath = path(of: job, ".reply.wav"), logPath = path(of: job, ".log.jsonl")
        do throws(CommandFailure) {
            let runtime: SessionRuntimeChoice = embedded == nil ? try SessionRuntimeChoice(options, command: SessionCommand.name) : self.runtime
            let configuration = SessionArguments.configuration(options)
            var problems: [String] = []
            let capture = try SessionArguments.captureSource(input: job.input, raw: options.raw, capture: options.capture, microphone: nil, fast: options.fast,
                                                             texts: options.texts, problems: &problems, command: SessionCommand.name)
            let output = try SessionArguments.replyOutput(path: replyPath, speaker: nil, texts: options.texts, problems: &problems, command: SessionCommand.name)
            let log = try SessionArguments.log(logPath, sampleRate: configuration.captureSampleRate)
            // The corpus's one embedded runtime serves every session; any other runtime is connected to afresh.
            let connect = { @Sendable [embedded] () throws(CommandFailure) -> any SessionTransport in
                if let embedded { return embedded.connect() }
                return try runtime.makeTransport()
            }
            let needsConnect = configuration.rotateAfter != nil || configuration.reconnect.attempts > 0
            let driver = SessionDriver(options: SessionDriverOptions(session: configuration, initialTexts: options.texts), transport: try connect(),
                                       connect: needsConnect ? connect : nil, capture: capture, output: output.output) { event, instant in
                log?.record(event, at: instant)
            }
            stop.onStop { driver.requestEnd() }
            let report = driver.run()
            log?.finish()
            var exitCode = SessionArguments.exitCode(for: report)
            var json = SessionArguments.summaryObject(report, input: job.input, exitCode: exitCode)
            json["input"] = .string(job.input)
            json["log"] = .string(logPath)
            var session: CorpusReport.Session
            do {
                session = try CorpusReport.Session(input: job.input, summary: json)
            } catch {
                session = CorpusReport.Session(input: job.input, status: "software", failure: "its summary could not be read: \(error)")
                exitCode = .software
            }
            if session.isOK, exitCode == .ioError {
                session.status = "io"
                session.failure = report.playbackError.map { "the reply could not be written: \($0.message)" } ?? report.captureProblems.joined(separator: "; ")
            }
            if let failure = log?.failure {
                Console.warning(SessionCommand.name, "the log of '\(job.input)' is incomplete: \(failure.message)")
            }
            if stop.wasFired, session.isOK {
                session.status = "stopped"
                session.failure = "ended early: the corpus was stopped"
                exitCode = .temporaryFailure
            }
            json["status"] = .string(session.status)
            return Outcome(session: session, exitCode: exitCode, json: json)
        } catch {
            let status = error.exitCode == .noInput || error.exitCode == .dataError ? "unreadable" : "setup"
            return Outcome(session: CorpusReport.Session(input: job.input, status: status, failure: error.message), exitCode: error.exitCode,
                           json: ["input": .string(job.input), "status": .string(status), "failure": .string(error.message), "exitStatus": .integer(Int(error.exitCode.rawValue))])
        }
    }

    /// "[3/12] take.wav: ok, 3 turns, latency median 0.412 s, max 0.600 s -> out/take.reply.wav".
    private func line(_ job: SessionCorpus.Job, _ outcome: Outcome, position: Int) -> String {
        let session = outcome.session
        let prefix = "[\(position)/\(corpus.jobs.count)] \(job.input)\(corpus.repeats > 1 ? " (run \(job.repetition))" : "")"
        guard session.isOK else { return "\(prefix): \(session.status): \(session.failure ?? "failed")" }
        var text = "\(prefix): ok, \(Console.count(session.turns, "turn"))"
        if let spread = LatencyDistribution(session.turnLatencies.map { Duration.seconds($0) }) {
            text += ", latency median \(spread.median.formattedSeconds), max \(spread.max.formattedSeconds)"
        }
        return text + " -> \(path(of: job, ".reply.wav"))"
    }

    /// A file of `job` in the folder: its name and `suffix`.
    private func path(of job: SessionCorpus.Job, _ suffix: String) -> String {
        URL(fileURLWithPath: directory).appendingPathComponent(job.name + suffix).path
    }

    /// "12 sessions: 11 ok, 1 failed (unreadable 1); 33 answered turns, median 0.412 s, p95 0.6 s; report in out/report.md".
    private func totals(_ report: CorpusReport) -> String {
        var text = "\(Console.count(report.sessions.count, "session")): \(report.okCount) ok, \(report.sessions.count - report.okCount) failed"
        if !report.failures.isEmpty { text += " (" + report.failures.map { "\($0.status) \($0.count)" }.joined(separator: ", ") + ")" }
        if let spread = report.turnLatency {
            text += "; \(Console.count(spread.count, "answered turn")), latency median \(spread.median.formattedSeconds), p95 \(spread.p95.formattedSeconds), max \(spread.max.formattedSeconds)"
        }
        return text + "; report in '\(URL(fileURLWithPath: directory).appendingPathComponent(CorpusReportFiles.pageName).path)'"
    }
}
