import VoicePipeCore
import VoicePipeSession

/// Every text the embedded runtime sends, in one place so the tests and PROTOCOL.md can pin them.
///
/// Numbers are written with a point and a real minus sign (U+2212), as a person reads them;
/// Markdown texts escape what the client sent, so a session id or a persona cannot break them.
enum RuntimeWording {
    static let sessionEndedReason = "the client ended the session"
    static let failMessage = "the embedded runtime failed on purpose (test switch)"
    static let failCode = "embedded.fail"
    static let escalationRequested = "requested"
    static let escalationJoining = "an agent will join shortly"
    static let toolName = "audio_stats"

    /// The `info.message` that answers `session.start`: who answers, and how.
    ///
    /// ```
    /// Hello from the **embedded runtime** (session `s-1`), speaking as **Dana** about your **2022 Model Y**.
    /// Speak or type: each turn is answered with its audio statistics and played back at 24 kHz.
    /// ```
    static func greeting(sessionId: String, context: JSONObject) -> String {
        var first = "Hello from the **embedded runtime** (" + (sessionId.isEmpty ? "a session without an id)" : "session \(markdownCode(sessionId)))")
        let persona = contextString(context, "persona")
        let vehicle = contextString(context, "vehicle")
        if let persona { first += ", speaking as **\(markdownEscaped(persona))**" }
        if let vehicle { first += persona == nil ? ", about your **\(markdownEscaped(vehicle))**" : " about your **\(markdownEscaped(vehicle))**" }
        return first + ".\nSpeak or type: each turn is answered with its audio statistics and played back at 24 kHz."
    }

    /// The user's transcript of a voice turn: "2.4 s of speech, peak −8.1 dBFS".
    static func speechTranscript(speech: Duration, peakDBFS: Double) -> String {
        "\(seconds(speech, decimals: 1)) of speech, peak \(decibels(peakDBFS))"
    }

    /// The assistant's transcript of a voice turn.
    static func voiceReply(speech: Duration, unplayableRate: Int?) -> String {
        guard let rate = unplayableRate else {
            return "Here is what I heard: \(seconds(speech, decimals: 1)) of your speech, played back at 24 kHz."
        }
        return "Here is what I heard: \(seconds(speech, decimals: 1)) of your speech. Audio at \(rate) Hz cannot be resampled, so there is no reply audio."
    }

    /// The assistant's transcript of a typed turn.
    static func typedReply(_ text: String) -> String {
        "You typed “\(text)”. Here is a short tone for it."
    }

    /// The `debug` message for a rate the resampler refused.
    static func unplayableRate(_ rate: Int) -> String {
        "audio at \(rate) Hz cannot be resampled to 24 kHz (the resampler takes 1000 to 768000 Hz): this turn's reply has no audio"
    }

    /// The `info.message` table of one turn's statistics: a header and one row.
    ///
    /// ```
    /// | turn | audio | speech | peak | RMS |
    /// |---:|---:|---:|---:|---:|
    /// | 1 | 2.016 s | 1.0 s | −6.0 dBFS | −10.1 dBFS |
    /// ```
    static func statisticsTable(turn: Int, audio: Duration, speech: String, peakDBFS: Double?, rmsDBFS: Double?) -> String {
        let peak = peakDBFS.map(decibels) ?? "—"
        let rms = rmsDBFS.map(decibels) ?? "—"
        return "| turn | audio | speech | peak | RMS |\n|---:|---:|---:|---:|---:|\n| \(turn) | \(seconds(audio, decimals: 3)) | \(speech) | \(peak) | \(rms) |"
    }

    /// "1.0 s" with the given number of decimals.
    static func seconds(_ duration: Duration, decimals: Int) -> String {
        fixed(duration.seconds, decimals: decimals) + " s"
    }

    /// "−8.1 dBFS"; "−∞ dBFS" for silence.
    static func decibels(_ dB: Double) -> String {
        fixed(dB, decimals: 1) + " dBFS"
    }

    /// A number with a fixed count of decimals and a real minus sign; "−∞"/"∞" when not finite.
    static func fixed(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return value < 0 ? "−∞" : (value > 0 ? "∞" : "—") }
        var scale = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (value * Double(scale)).rounded()
        guard let units = Int(exactly: scaled.magnitude) else { return value < 0 ? "−∞" : "∞" }
        let sign = scaled < 0 ? "−" : ""
        let fraction = String(units % scale)
        let whole = "\(sign)\(units / scale)"
        guard decimals > 0 else { return whole }
        return whole + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    /// `value` rounded to `decimals` places, as a JSON number.
    static func rounded(_ value: Double, decimals: Int) -> Double {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        return (value * scale).rounded() / scale
    }

    /// A string value of the session context without white space or line breaks at either end;
    /// nil when absent, empty or not a string.
    static func contextString(_ context: JSONObject, _ key: String) -> String? {
        guard case .string(let text)? = context[key] else { return nil }
        guard let first = text.firstIndex(where: { !$0.isWhitespace }),
              let last = text.lastIndex(where: { !$0.isWhitespace }) else { return nil }
        return String(text[first...last])
    }

    /// Text shown as written inside Markdown: the characters that could start markup escaped,
    /// line breaks turned into spaces (so a greeting stays on its lines).
    static func markdownEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if character.isNewline {
                out += " "
            } else {
                if "\\`*_[]<>|~&#!".contains(character) { out += "\\" }
                out.append(character)
            }
        }
        return out
    }

    /// `text` as a Markdown code span: fenced by one more backtick than its longest run of
    /// backticks, padded when it starts or ends with one (CommonMark's rule), line breaks as spaces.
    static func markdownCode(_ text: String) -> String {
        let flat = String(text.map { $0.isNewline ? " " : $0 })
        var longest = 0
        var run = 0
        for character in flat {
            run = character == "`" ? run + 1 : 0
            longest = max(longest, run)
        }
        let fence = String(repeating: "`", count: longest + 1)
        let padded = flat.hasPrefix("`") || flat.hasSuffix("`") ? " \(flat) " : flat
        return fence + padded + fence
    }
}

/// The reply to a typed turn: three short tones (440, 554 and 659 Hz, an A major triad rising),
/// each 150 ms at −12 dBFS with 5 ms raised-cosine ramps, at 24 kHz.
enum TypedTurnTone {
    static let frequencies: [Double] = [440, 554, 659]
    static let toneDuration: Duration = .milliseconds(150)
    static let rampDuration: Duration = .milliseconds(5)
    static let levelDBFS = -12.0

    /// The whole sequence at 24 kHz, made once.
    static let samples: [Int16] = make(sampleRate: TurnRecorder.replyRate)

    static func make(sampleRate: Int) -> [Int16] {
        let toneFrames = Int((toneDuration.seconds * Double(sampleRate)).rounded())
        let rampFrames = Int((rampDuration.seconds * Double(sampleRate)).rounded())
        let amplitude = Elementary.exp(levelDBFS / 20 * Elementary.log(10))
        var out: [Int16] = []
        out.reserveCapacity(toneFrames * frequencies.count)
        for frequency in frequencies {
            let omega = 2 * Double.pi * frequency / Double(sampleRate)
            for n in 0..<toneFrames {
                let edge = min(n, toneFrames - 1 - n)
                let gain = edge < rampFrames ? 0.5 - 0.5 * Elementary.cos(Double.pi * Double(edge) / Double(rampFrames)) : 1
                out.append(SampleConversion.int16(Float(amplitude * gain * Elementary.sin(omega * Double(n)))))
            }
        }
        return out
    }
}
