import VoicePipeCore
import VoicePipeSession

/// `--quiet` and `--json`, declared once for every command that prints a summary.
struct SummaryOptions: Sendable {
    static var quietFlag: OptionBinding<Self> { .flag("quiet", \.quiet, help: "Print no summary, progress or notes; errors and warnings still go to stderr.") }
    static var jsonFlag: OptionBinding<Self> { .flag("json", \.json, help: "Print each summary as one JSON object on a line of its own, for scripts.") }

    /// Print nothing but errors and warnings.
    var quiet = false
    /// Summaries as JSON objects instead of text.
    var json = false

    /// Writes one summary (nothing when quiet): the text line where the command prints its text,
    /// or the object as one line of JSON on stdout — on stderr only when stdout carries the
    /// command's data (audio or messages written to '-').
    func emit(_ text: @autoclosure () -> String, json object: @autoclosure () -> JSONObject, textToStandardError: Bool, standardOutputCarriesData: Bool) {
        guard !quiet else { return }
        if json {
            let line = JSONWriter.string(.object(object()))
            if standardOutputCarriesData { Console.error(line) } else { print(line) }
        } else if textToStandardError {
            Console.error(text())
        } else {
            print(text())
        }
    }

    /// Writes a note (nothing when quiet or when the summaries are JSON, so a script reads only objects).
    func note(_ text: String) {
        guard !quiet, !json else { return }
        Console.error(text)
    }
}

extension JSONValue {
    /// A level in dBFS as JSON: a number to 0.1 dB, or null for no level (−∞).
    static func decibels(_ dB: Double?) -> JSONValue {
        guard let dB, dB.isFinite else { return .null }
        return .number((dB * 10).rounded() / 10)
    }

    /// Seconds to the millisecond.
    static func seconds(_ frames: Int, rate: SampleRate) -> JSONValue {
        .number((Double(frames) / rate.hertz * 1000).rounded() / 1000)
    }
}
