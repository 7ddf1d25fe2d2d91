/// A wire message's `type`: an open set, so a type this version does not know is data, not a crash.
public struct MessageType: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    // Client → runtime.
    public static let sessionStart: MessageType = "session.start"
    public static let audioChunk: MessageType = "audio.chunk"
    public static let textInput: MessageType = "text.input"
    public static let escalationRequest: MessageType = "escalation.request"
    public static let sessionEnd: MessageType = "session.end"

    // Runtime → client.
    public static let transcript: MessageType = "transcript"
    public static let toolCall: MessageType = "tool.call"
    public static let toolResult: MessageType = "tool.result"
    public static let classification: MessageType = "classification"
    public static let escalation: MessageType = "escalation"
    public static let interruption: MessageType = "interruption"
    public static let infoMessage: MessageType = "info.message"
    public static let sessionEnded: MessageType = "session.ended"
    public static let error: MessageType = "error"
    public static let debug: MessageType = "debug"
    public static let sessionResumed: MessageType = "session.resumed"

    /// Every type this version knows, client → runtime first.
    public static let known: [MessageType] = [
        .sessionStart, .audioChunk, .textInput, .escalationRequest, .sessionEnd,
        .transcript, .toolCall, .toolResult, .classification, .escalation, .interruption,
        .infoMessage, .sessionEnded, .error, .debug, .sessionResumed,
    ]

    public var description: String { rawValue }
}
