import VoicePipeCore

/// Who spoke a transcript line.
public enum TranscriptRole: String, Sendable, Hashable {
    case user
    case assistant
}

/// One message of the voice protocol, client → runtime or runtime → client (see PROTOCOL.md).
///
/// Field names on the wire are camelCase; ``WireCodec`` writes them in the order given here,
/// after `type`. A message of a type this version does not know decodes to ``unknown(type:fields:)``.
public enum WireMessage: Sendable, Hashable {
    // Client → runtime.
    /// `session.start` with `sessionId`, a free-form `context` object and, on a fresh connection
    /// that continues a session (a rotation), `continuesSessionId`.
    case sessionStart(sessionId: String, context: JSONObject, continuesSessionId: String? = nil)
    /// `audio.chunk`: base64 Int16 little-endian `data` at `sampleRate` (16 kHz out, 24 kHz back).
    /// (``AudioChunk`` is Core's, shared with the allocation-free fast path.)
    case audioChunk(AudioChunk)
    /// `text.input`: text typed by the user.
    case textInput(text: String)
    /// `escalation.request` with a `reason`.
    case escalationRequest(reason: String)
    /// `session.end`.
    case sessionEnd

    // Runtime → client.
    /// `transcript`: `role`, `text`, and `final` (false for a partial line).
    case transcript(role: TranscriptRole, text: String, isFinal: Bool)
    /// `tool.call`: `id`, `name`, `input` (any JSON).
    case toolCall(id: String, name: String, input: JSONValue)
    /// `tool.result`: `id`, `name`, `output` (any JSON), `durationMs`.
    case toolResult(id: String, name: String, output: JSONValue, durationMilliseconds: Double?)
    /// `classification`: `label` and `confidence`.
    case classification(label: String, confidence: Double)
    /// `escalation`: its `status`.
    case escalation(status: String)
    /// `interruption`: the user spoke over the reply; playback stops at once.
    case interruption
    /// `info.message`: Markdown text for the user.
    case infoMessage(markdown: String)
    /// `session.ended` with an optional `reason`.
    case sessionEnded(reason: String?)
    /// `error`: `message` and an optional `code`.
    case error(message: String, code: String?)
    /// `debug`: a `message` for developers.
    case debug(message: String)
    /// `session.resumed`: the answer to a `session.start` that continues a session: how many
    /// `audio.chunk` and `text.input` messages of the session the runtime has read, over all its
    /// connections, so the client sends again what a dropped connection lost on the way.
    case sessionResumed(audioChunks: Int, texts: Int)

    /// A type this version does not know, with all its other fields.
    case unknown(type: String, fields: JSONObject)

    /// The message's `type`.
    public var type: MessageType {
        switch self {
        case .sessionStart: .sessionStart
        case .audioChunk: .audioChunk
        case .textInput: .textInput
        case .escalationRequest: .escalationRequest
        case .sessionEnd: .sessionEnd
        case .transcript: .transcript
        case .toolCall: .toolCall
        case .toolResult: .toolResult
        case .classification: .classification
        case .escalation: .escalation
        case .interruption: .interruption
        case .infoMessage: .infoMessage
        case .sessionEnded: .sessionEnded
        case .error: .error
        case .debug: .debug
        case .sessionResumed: .sessionResumed
        case .unknown(let type, _): MessageType(rawValue: type)
        }
    }
}

/// A decoded message and the fields it carried that its type does not define (kept, never dropped).
public struct WireEnvelope: Sendable, Hashable {
    public var message: WireMessage
    /// Fields beyond those of the message's type, in the order they arrived.
    public var extras: JSONObject

    public init(message: WireMessage, extras: JSONObject = JSONObject()) {
        self.message = message
        self.extras = extras
    }
}
