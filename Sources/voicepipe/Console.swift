import Foundation

/// Writing to the terminal: results on stdout, diagnostics and progress on stderr.
enum Console {
    /// Whether stderr is a terminal (progress and meters are shown only then).
    static let stderrIsTerminal = isatty(STDERR_FILENO) != 0

    /// Writes a line to stderr.
    static func error(_ line: String) {
        write(line + "\n", to: STDERR_FILENO)
    }

    /// Writes `text` to a descriptor, unbuffered, with write(2): a reader that went away (EPIPE,
    /// once SIGPIPE is ignored) ends the writing quietly instead of trapping as FileHandle does.
    /// - Returns: false when the descriptor no longer takes output.
    @discardableResult
    static func write(_ text: String, to descriptor: Int32) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.write(descriptor, base + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// A warning: something was done, but not all of it as asked (a file cut short). One line.
    static func warning(_ command: String, _ text: String) {
        error("voicepipe \(command): warning: \(text)")
    }

    /// "1 chunk", "2 chunks".
    static func count(_ value: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(value) \(value == 1 ? singular : plural ?? singular + "s")"
    }

    /// Writes text to stderr without a newline (for progress lines).
    static func errorRaw(_ text: String) {
        write(text, to: STDERR_FILENO)
    }
}

/// A one-line progress display on stderr for long work, shown only when stderr is a terminal.
///
/// Nothing appears for work that finishes within half a second; after that the line updates at
/// most ten times a second and is erased when the work ends.
final class ProgressLine {
    private let label: String
    private let total: Double?
    private let unit: String
    private let enabled: Bool
    private let start = Date()
    private var lastDraw: Date?
    private var drawn = false

    /// - Parameters:
    ///   - label: what is happening ("converting").
    ///   - total: the amount at the end, in `unit`s, when known.
    ///   - enabled: false to show nothing (`--quiet`).
    init(label: String, total: Double?, unit: String, enabled: Bool = true) {
        self.label = label
        self.total = total
        self.unit = unit
        self.enabled = enabled
    }

    /// Reports the amount done so far.
    func update(_ done: Double) {
        guard enabled, Console.stderrIsTerminal else { return }
        let now = Date()
        guard now.timeIntervalSince(start) >= 0.5 else { return }
        if let lastDraw, now.timeIntervalSince(lastDraw) < 0.1 { return }
        lastDraw = now
        var text = "\r\(label): \(Self.format(done)) \(unit)"
        if let total, total > 0 {
            let percent = Int((done / total * 100).rounded(.down))
            text += " of \(Self.format(total)) \(unit) (\(min(percent, 100))%)"
        }
        Console.errorRaw(text + "\u{1B}[K")
        drawn = true
    }

    /// Erases the line if it was drawn (once; later calls do nothing).
    func finish() {
        if drawn {
            Console.errorRaw("\r\u{1B}[K")
            drawn = false
        }
    }

    private static func format(_ value: Double) -> String {
        String(format: "%.1f", value)
    }
}
