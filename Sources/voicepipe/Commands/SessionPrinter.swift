import Foundation
import Synchronization
import VoicePipeClient
import VoicePipeCore
import VoicePipeSession

/// Prints a session for a person: a header, the timeline as it happens, and the summary.
/// Everything goes to stdout, or to stderr when stdout carries messages or audio.
final class SessionPrinter: Sendable {
    private let toStandardError: Bool
    private let quiet: Bool
    /// Set when standard output stopped taking lines (a closed pipe): the session goes on.
    private let outputClosed = Atomic<Bool>(false)

    /// True when the session's lines go to stderr, standard output carrying its data.
    var writesToStandardError: Bool { toStandardError }

    init(toStandardError: Bool, quiet: Bool) {
        self.toStandardError = toStandardError
        self.quiet = quiet
    }

    /// What runs against what.
    func header(configuration: SessionConfiguration, runtime: String, input: String, output: String, note: String?) {
        let title = SessionMachine(configuration: configuration).sessionTitle.map { " — \($0)" } ?? ""
        emit("session \(configuration.sessionId) with \(runtime)\(title)")
        emit("input: \(input); reply audio: \(output)")
        if let note { emit("note: \(note)") }
    }

    /// One driver event.
    func show(_ event: SessionEvent, at instant: SessionInstant) {
        switch event {
        case .note(let note):
            for line in SessionTimeline.lines(for: note, at: instant) { emit(line) }
        case .refused(let error):
            Console.error("voicepipe session: refused: \(error)")
        case .playbackFailed(let error):
            Console.warning(SessionCommand.name, "reply audio: \(error.message)")
        case .captureProblem(let problem):
            Console.warning(SessionCommand.name, problem)
        case .unknownContent(let note):
            emit(SessionTimeline.pad(instant) + "  " + note)
        case .sent, .frameSent, .received, .malformed, .transport, .fileFrameTaken:
            break
        }
    }

    /// The summary, and the reason on stderr when the session failed.
    func summary(_ report: SessionReport, fast: Bool) {
        if case .error(let failure) = report.machine.state {
            Console.error("voicepipe session: \(failure)")
        }
        guard !quiet else { return }
        emit("")
        for line in SessionTimeline.summary(of: report.machine, duration: report.finishedAt - report.startedAt) { emit(line) }
        if fast && !report.machine.latencies.isEmpty {
            emit("(with --fast the input was sent faster than real time: the latency measures the runtime, not a conversation)")
        }
        let seconds = Duration.seconds(Double(report.outputFrames) / report.outputSampleRate.hertz)
        emit("reply audio: \(SessionTimeline.seconds(seconds)) to \(report.outputName)")
        if let jitter = report.jitter, report.machine.counters.replyChunks > 0 {
            let holes = jitter.underruns == 0 ? "no underrun" : "\(jitter.underruns) underrun\(jitter.underruns == 1 ? "" : "s") (a reply ran dry and resumed)"
            emit("jitter buffer: \(Self.milliseconds(jitter.preRoll)) at the end, \(Self.milliseconds(jitter.largestPreRoll)) at most; \(holes)")
        }
        if report.captureFramesDropped > 0 { emit("microphone frames dropped (the session fell behind): \(report.captureFramesDropped)") }
        if case .truncated = report.captureEnding { emit("the input file ended early (truncated); everything in it was sent") }
    }

    /// "120 ms".
    static func milliseconds(_ duration: Duration) -> String {
        "\(Int((duration.seconds * 1000).rounded())) ms"
    }

    /// Prints more summary lines (nothing with --quiet).
    func lines(_ lines: [String]) {
        for line in lines { emit(line) }
    }

    private func emit(_ line: String) {
        guard !quiet else { return }
        if toStandardError {
            Console.error(line)
        } else {
            // Unbuffered, so each line shows as it happens even when stdout is a pipe.
            guard !outputClosed.load(ordering: .relaxed) else { return }
            if !Console.write(line + "\n", to: STDOUT_FILENO) { outputClosed.store(true, ordering: .relaxed) }
        }
    }
}
