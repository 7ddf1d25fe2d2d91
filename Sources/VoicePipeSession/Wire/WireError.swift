import VoicePipeCore

/// Why a wire message was refused. The session reports it and keeps running.
public enum WireError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not JSON.
    case notJSON(JSONSyntaxError)
    /// The JSON is not an object.
    case notAnObject(found: String)
    /// The object has no `type` field.
    case missingType
    /// `type` is not a string.
    case typeNotAString(found: String)
    /// A required field is missing.
    case missingField(type: String, field: String)
    /// A field has the wrong JSON type.
    case wrongFieldType(type: String, field: String, expected: String, found: String)
    /// A field has a value outside what the protocol allows.
    case invalidValue(type: String, field: String, reason: String)
    /// The message text exceeds the limit.
    case messageTooLarge(bytes: Int, limit: Int)
    /// An `audio.chunk` whose audio Core refused (bad base64, an odd byte count, a payload over
    /// the limit, a sample rate that is not positive): the same error whichever path read it.
    case audioChunk(AudioChunkError)

    public var description: String {
        switch self {
        case .notJSON(let error):
            "not JSON: \(error)"
        case .notAnObject(let found):
            "a message must be a JSON object, not \(found)"
        case .missingType:
            "the message has no \"type\" field"
        case .typeNotAString(let found):
            "\"type\" must be a string, not \(found)"
        case .missingField(let type, let field):
            "\(type) needs a \"\(field)\" field"
        case .wrongFieldType(let type, let field, let expected, let found):
            "\(type) field \"\(field)\" must be \(Self.article(expected)) \(expected), not \(found == "number" && expected == "integer" ? "a number with a fraction or exponent" : Self.article(found) + " " + found)"
        case .invalidValue(let type, let field, let reason):
            "\(type) field \"\(field)\" \(reason)"
        case .messageTooLarge(let bytes, let limit):
            "the message is \(bytes) bytes, over the \(limit)-byte limit"
        case .audioChunk(let error):
            error.description
        }
    }
}

extension WireError {
    /// "a" or "an" before a JSON type's name.
    static func article(_ word: String) -> String {
        word.first.map { "aeiou".contains($0) } == true ? "an" : "a"
    }
}

/// Size limits applied before a message is parsed or its audio decoded.
public struct WireLimits: Sendable, Hashable {
    /// Most decoded audio bytes in one `audio.chunk` (default 1 MiB).
    public var maxPayloadBytes: Int
    /// Most bytes of message text (default: room for a full payload in base64 plus 64 KiB).
    public var maxMessageBytes: Int

    public init(maxPayloadBytes: Int = 1 << 20, maxMessageBytes: Int? = nil) {
        self.maxPayloadBytes = maxPayloadBytes
        self.maxMessageBytes = maxMessageBytes ?? ((maxPayloadBytes + 2) / 3 * 4 + 65_536)
    }

    public static let `default` = WireLimits()
}
