/// Joins the fragments of incoming WebSocket messages into whole text messages, under a size limit.
///
/// The pure half of receiving: the transport's service thread hands it each piece of payload
/// libwebsockets delivers, with whether the piece ends its message and whether the message is
/// binary; it returns what that piece completes. A message longer than the limit is not kept:
/// its bytes are only counted, so memory stays bounded by the limit whatever the server sends,
/// and the verdict names the full length.
///
/// ```
///  take("{\"ty", final: false) -> nil
///  take("pe\":…}", final: true) -> .message("{\"type\":…}")
/// ```
public struct WebSocketMessageAssembler {
    /// What a piece of payload completed.
    public enum Outcome: Sendable, Hashable {
        /// A whole text message, valid UTF-8.
        case message(String)
        /// A text message longer than the limit; its `bytes` were counted, not kept.
        case oversized(bytes: Int, limit: Int)
        /// A whole text message that is not valid UTF-8 (`bytes` long).
        case notUTF8(bytes: Int)
        /// A piece of a binary message: the protocol has text messages only.
        case binary
    }

    /// The most bytes one message may have.
    public let limit: Int
    /// The message being joined, while it fits within the limit.
    private var assembling: [UInt8] = []
    /// The bytes seen of a message that outgrew the limit, until its last piece.
    private var skippedBytes: Int?

    public init(limit: Int) {
        self.limit = limit
    }

    /// Takes the next piece of payload.
    /// - Parameters:
    ///   - bytes: the piece (may be empty).
    ///   - isFinal: whether it ends its message (last fragment, nothing of the frame left to come).
    ///   - isBinary: whether its message is binary; the message is then dropped.
    /// - Returns: the completed message's outcome, or nil while a message is still incomplete.
    public mutating func take(_ bytes: UnsafeRawBufferPointer, isFinal: Bool, isBinary: Bool) -> Outcome? {
        if isBinary {
            startNextMessage()
            return .binary
        }
        if let skipped = skippedBytes {
            skippedBytes = skipped + bytes.count
        } else if assembling.count + bytes.count > limit {
            skippedBytes = assembling.count + bytes.count
            assembling = []
        } else {
            assembling.append(contentsOf: bytes)
        }
        guard isFinal else { return nil }
        if let skipped = skippedBytes {
            startNextMessage()
            return .oversized(bytes: skipped, limit: limit)
        }
        let outcome: Outcome
        if let text = String(validating: assembling, as: UTF8.self) {
            outcome = .message(text)
        } else {
            outcome = .notUTF8(bytes: assembling.count)
        }
        startNextMessage()
        return outcome
    }

    /// Forgets any partial message (a large buffer is released, a small one kept for reuse).
    public mutating func startNextMessage() {
        skippedBytes = nil
        assembling.removeAll(keepingCapacity: assembling.capacity <= 1 << 16)
    }
}
