import CWebSockets
import Glibc
import Synchronization
import VoicePipeCore

/// libwebsockets' log, kept off the terminal: lws writes its errors to standard error by default,
/// which would mix with a session's timeline. Its last error line is kept instead, for a failure
/// sentence when a callback gave no reason of its own. With `VOICEPIPE_LWS_LOG=1` in the
/// environment, lws logs everything down to its info level on standard error, for debugging.
enum WebSocketLog {
    private static let lastLine = Guarded<String?>(nil)
    private static let installed = Atomic<Bool>(false)

    /// Routes lws' errors and warnings here (process-wide, once).
    static func install() {
        guard installed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        if getenv("VOICEPIPE_LWS_LOG") != nil {
            lws_set_log_level(LLL_ERR | LLL_WARN | LLL_NOTICE | LLL_INFO, nil)
            return
        }
        lws_set_log_level(LLL_ERR | LLL_WARN) { level, line in
            guard let line, level & LLL_ERR != 0 else { return }
            WebSocketLog.record(String(cString: line))
        }
    }

    /// The last error lws logged, without its time stamp and level prefix; nil when none.
    static func lastError() -> String? {
        lastLine.withLock { $0 }
    }

    private static func record(_ line: String) {
        // Lines look like "[2026/11/30 19:40:01:1234] E: reason\n".
        var text = Substring(line)
        if let marker = text.range(of: "] E: ") { text = text[marker.upperBound...] }
        while let last = text.last, last == "\n" || last == " " { text = text.dropLast() }
        lastLine.withLock { $0 = String(text) }
    }
}
