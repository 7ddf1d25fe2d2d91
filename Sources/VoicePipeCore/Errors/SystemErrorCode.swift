/// The error code that the operating system or a C library below VoicePipe returned, kept beside
/// VoicePipe's own sentence so that a report can be matched with that library's documentation.
///
/// Core never calls those libraries; it only carries their codes, which VoicePipeIO and
/// VoicePipeClient fill in where a call fails.
public struct SystemErrorCode: Sendable, Hashable, CustomStringConvertible {
    /// Which numbering the code belongs to.
    public enum Domain: String, Sendable, Hashable {
        /// A POSIX `errno` value (file and socket calls).
        case posix = "errno"
        /// A libsndfile error number (`sf_error`).
        case libsndfile = "libsndfile error"
        /// An ALSA result: a negative errno value (`snd_strerror` explains it).
        case alsa = "ALSA error"
        /// A libsamplerate error number (`src_strerror` explains it).
        case libsamplerate = "libsamplerate error"
    }

    public let domain: Domain
    /// The code exactly as the library returned it (ALSA's and errno's sign kept as given).
    public let value: Int32
    /// The library's own text for the code (`strerror`, `sf_error_number`, `snd_strerror`, …).
    public let message: String

    public init(_ domain: Domain, _ value: Int32, message: String) {
        self.domain = domain
        self.value = value
        self.message = message
    }

    /// "errno 13", "libsndfile error 1", "ALSA error -16": short enough to close a sentence in parentheses.
    public var description: String { "\(domain.rawValue) \(value)" }

    /// "ALSA error -16: Device or resource busy": the code with the library's own words.
    public var detailedDescription: String { message.isEmpty ? description : "\(description): \(message)" }

    /// The library's words fitted inside a sentence: lower case first ("no space left on device"),
    /// no closing full stop, and "System error : " dropped from libsndfile's system errors.
    public var messageInSentence: String {
        var text = Substring(message)
        if text.hasPrefix("System error : ") { text = text.dropFirst("System error : ".count) }
        while let last = text.last, last == "." || last == " " || last == "\n" { text = text.dropLast() }
        guard let first = text.first else { return "" }
        // Lower-case a leading capital only when the next letter is lower case: keep "ALSA", "FLAC".
        let second = text.dropFirst().first
        if first.isUppercase, second?.isLowercase ?? true { return first.lowercased() + text.dropFirst() }
        return String(text)
    }
}

/// An error told in one sentence for people (``message``) that may also carry the code of the
/// system or library call that failed (``code``). Its ``description`` is the sentence with the
/// code in parentheses; a command-line tool shows ``message`` alone, since the library's own
/// words are already in it and the number helps only someone reading the library's sources.
public protocol SystemCodedError: Error, CustomStringConvertible {
    /// The sentence, without the code.
    var message: String { get }
    /// The failing call's code, when one failed.
    var code: SystemErrorCode? { get }
}

extension SystemCodedError {
    public var description: String {
        code.map { "\(message) (\($0))" } ?? message
    }
}
