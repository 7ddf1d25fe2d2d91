import VoicePipeProtocols

/// Makes the WebSocket transport for each connection of a session: the first, and a fresh one
/// for every rotation, with its handshake signed anew at the moment it connects.
public struct WebSocketConnector: Sendable {
    /// The connection as configured, before signing.
    public var configuration: WebSocketConfiguration
    /// Signs each handshake (SigV4), or nil to send it as configured.
    public var signing: HandshakeSigning?

    public init(_ configuration: WebSocketConfiguration, signing: HandshakeSigning? = nil) {
        self.configuration = configuration
        self.signing = signing
    }

    /// A transport for a new connection, not yet open, its handshake signed for `unixTime`.
    /// - Throws: ``AWSConfigurationError`` when the handshake cannot be signed (a time out of range).
    public func makeTransport(at unixTime: Int) throws(AWSConfigurationError) -> WebSocketTransport {
        guard let signing else { return WebSocketTransport(configuration) }
        return WebSocketTransport(try signing.sign(configuration, at: unixTime))
    }
}
