import CWebSockets
import Glibc
import Synchronization
import VoicePipeCore
import VoicePipeIO

/// libwebsockets' log, kept off the terminal: lws writes its errors to standard error by default,
/// which would mix with a session's timeline. Its last error line is kept instead, for a failure
/// sentence when a callback gave no reason of its own, and so is the last error or warning of each
/// service thread (lws logs on the thread that services the context), for a connection lws itself
/// ended without telling the callback why (a control frame over 125 bytes is only a warning). With `VOICEPIPE_LWS_LOG=1` in the
/// environment, lws logs everything down to its info level on standard error, for debugging.
enum WebSocketLog {
    private static let lastLine = Guarded<String?>(nil)
    private static let lastLineOfThread = Guarded<[UInt: String]>([:])
    private static let installed = Atomic<Bool>(false)

    /// Routes lws' errors and warnings here (process-wide, once).
    static func install() {
        guard installed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        if getenv("VOICEPIPE_LWS_LOG") != nil {
            lws_set_log_level(LLL_ERR | LLL_WARN | LLL_NOTICE | LLL_INFO, nil)
            return
        }
        lws_set_log_level(LLL_ERR | LLL_WARN) { level, line in
            guard let line else { return }
            WebSocketLog.record(String(cString: line), isError: level & LLL_ERR != 0)
        }
    }

    /// The last error lws logged, without its time stamp and level prefix; nil when none.
    static func lastError() -> String? {
        lastLine.withLock { $0 }
    }

    /// The last error or warning lws logged on this thread since ``forgetThisThread()``, taken
    /// (the next call returns nil until lws logs again).
    static func takeLastOfThisThread() -> String? {
        let thread = UInt(pthread_self())
        return lastLineOfThread.withLock { $0.removeValue(forKey: thread) }
    }

    /// Forgets what lws logged on this thread so far.
    static func forgetThisThread() {
        let thread = UInt(pthread_self())
        lastLineOfThread.withLock { _ = $0.removeValue(forKey: thread) }
    }

    private static func record(_ line: String, isError: Bool) {
        // Lines look like "[2026/11/30 19:40:01:1234] E: reason\n" ("W: " for a warning).
        var text = Substring(line)
        if let marker = text.range(of: isError ? "] E: " : "] W: ") { text = text[marker.upperBound...] }
        while let last = text.last, last == "\n" || last == " " { text = text.dropLast() }
        let thread = UInt(pthread_self())
        lastLineOfThread.withLock { $0[thread] = String(text) }
        if isError { lastLine.withLock { $0 = String(text) } }
    }
}
