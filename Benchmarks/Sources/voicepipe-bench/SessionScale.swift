import Foundation
import VoicePipeTestSupport

/// One row of the session-scale table: N real-time sessions in this process against one
/// in-process runtime (``SessionScaleRun``).
struct SessionScaleRow: Codable {
    var name: String
    var sessions: Int
    var input: String
    /// "thread per session" or "one session loop".
    var threading: String
    var audioSeconds: Double
    var framesSent: Int
    var framesLost: Int
    var failedSessions: Int
    /// Frame lateness against audio time, milliseconds.
    var latenessMedianMs: Double?
    var latenessP99Ms: Double?
    var latenessMaxMs: Double?
    /// Frames more than 5 ms late, and their share.
    var framesOver5Ms: Int
    /// CPU per second of one session's audio over the steady window, milliseconds: the
    /// client's driver threads, and the embedded runtime's threads apart.
    var clientCPUMsPerSessionSecond: Double?
    var runtimeCPUMsPerSessionSecond: Double?
    /// Resident memory per running session (runtime included), KiB; and that beyond the audio
    /// the sessions hold (clients' kept for resending, the runtime's turns in progress).
    var residentKiBPerSession: Double?
    var residentKiBPerSessionBeyondHeldAudio: Double?
    /// The audio held, per session, KiB.
    var heldAudioKiBPerSession: Double?
    var windowSeconds: Double?
}

/// Section 7: sessions at scale. Real time is the point (each frame is due at its audio time),
/// so a row takes its audio's length in wall time whatever the machine.
enum SessionScaleBenchmark {
    static let prefix = "sessions/"

    /// (sessions, input, threading) for each row: each load with a thread per session, then the
    /// same load on one ``SessionLoop`` (the client on one thread), side by side.
    static let cases: [(Int, SessionScaleRun.Input, SessionScaleRun.Threading)] = [
        (500, .idle, .threadPerSession), (500, .idle, .loops(1)),
        (50, .speech, .threadPerSession), (50, .speech, .loops(1)),
        (200, .speech, .threadPerSession), (200, .speech, .loops(1)),
        (500, .speech, .threadPerSession), (500, .speech, .loops(1)),
    ]

    static func name(_ sessions: Int, _ input: SessionScaleRun.Input, _ threading: SessionScaleRun.Threading) -> String {
        let suffix = switch threading {
        case .threadPerSession: ""
        case .loops(let count): count == 1 ? "-loop" : "-\(count)loops"
        }
        return "\(prefix)\(sessions)-\(input.rawValue)\(suffix)"
    }

    static func rows(seconds: Double, filter: (String) -> Bool, progress: Progress) -> [SessionScaleRow] {
        cases.filter { filter(name($0.0, $0.1, $0.2)) }.compactMap { sessions, input, threading in
            let name = name(sessions, input, threading)
            progress.say("sessions: \(sessions) \(input.rawValue) sessions of \(Format.fixed(seconds, 0)) s, real time, \(threading)")
            do {
                let report = try SessionScaleRun(sessions: sessions, seconds: seconds, stagger: .milliseconds(4), input: input, threading: threading).run()
                return row(report, name: name)
            } catch {
                fputs("voicepipe-bench: the session-scale row \(name) could not run: \(error)\n", stderr)
                return nil
            }
        }
    }

    static func row(_ report: SessionScaleReport, name: String) -> SessionScaleRow {
        func ms(_ duration: Duration?) -> Double? {
            duration.map { Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) * 1e-15 }
        }
        let lateness = report.allLateness
        return SessionScaleRow(
            name: name, sessions: report.sessions, input: report.input.rawValue, threading: report.threading.description, audioSeconds: report.seconds,
            framesSent: report.framesSent, framesLost: report.framesLost, failedSessions: report.failures.count,
            latenessMedianMs: ms(report.lateness(atQuantile: 0.5)), latenessP99Ms: ms(report.lateness(atQuantile: 0.99)),
            latenessMaxMs: ms(lateness.last), framesOver5Ms: lateness.filter { $0 > .milliseconds(5) }.count,
            clientCPUMsPerSessionSecond: report.clientCPUPerSessionSecond.map { $0 * 1000 },
            runtimeCPUMsPerSessionSecond: report.runtimeCPUPerSessionSecond.map { $0 * 1000 },
            residentKiBPerSession: report.residentPerSession.map { Double($0) / 1024 },
            residentKiBPerSessionBeyondHeldAudio: report.residentPerSessionBeyondHeldAudio.map { Double($0) / 1024 },
            heldAudioKiBPerSession: report.heldAudioInWindow.map { Double($0) / 1024 / Double(report.sessions) }, windowSeconds: report.windowSeconds)
    }

    static func table(_ rows: [SessionScaleRow], _ out: inout String) {
        func line(_ s: String = "") { out += s + "\n" }
        func figure(_ value: Double?, _ digits: Int = 2) -> String { value.map { Format.fixed($0, digits) } ?? "–" }
        line("## 7. Sessions at scale")
        line()
        line("N sessions in this process, each a `SessionDriver` on a thread of its own sending a 16 kHz file at real-time pace (a frame every 32 ms) to one `EmbeddedRuntime` (paced replies; a thread per session), replies decoded and discarded. **speech**: `LoadAudio` bursts (turns, replies, interruptions); **idle**: room noise (no turn). **late** = when the transport took a frame minus its audio time; **CPU** = the threads' own clocks over a window in which every session runs, per second of one session's audio, client and runtime apart; **memory** = resident set in that window minus before the first session, per session (runtime included), and that minus the audio the sessions hold at the window's end (each client's kept for resending after a drop, up to the 5 s hold limit; the runtime's turns in progress). **-loop** rows: the client's sessions on one `SessionLoop` thread and the runtime's on another, instead of a thread per session each.")
        line()
        line("| row | frames sent | lost | failed | late: median | p99 | max | > 5 ms | client CPU (ms per session-s) | runtime CPU (ms per session-s) | memory per session | audio held per session | beyond held audio |")
        line("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for row in rows {
            let over = row.framesSent > 0 ? " (\(Format.fixed(100 * Double(row.framesOver5Ms) / Double(row.framesSent), 2)) %)" : ""
            line("| \(row.name) | \(row.framesSent) | \(row.framesLost) | \(row.failedSessions) | \(figure(row.latenessMedianMs)) ms | \(figure(row.latenessP99Ms)) ms | "
                + "\(figure(row.latenessMaxMs)) ms | \(row.framesOver5Ms)\(over) | \(figure(row.clientCPUMsPerSessionSecond, 3)) | \(figure(row.runtimeCPUMsPerSessionSecond, 3)) | "
                + "\(figure(row.residentKiBPerSession, 0)) KiB | \(figure(row.heldAudioKiBPerSession, 0)) KiB | \(figure(row.residentKiBPerSessionBeyondHeldAudio, 0)) KiB |")
        }
        line()
    }
}
