import VoicePipeProtocols

/// SigV4 for a WebSocket's opening request: AWS runtimes (Bedrock AgentCore) accept a handshake
/// signed either in its query string or in its headers.
public struct HandshakeSigning: Sendable {
    /// Where the signature goes.
    public enum Placement: String, Sendable, CaseIterable {
        /// In the query string (`X-Amz-Signature` and friends), as AgentCore's samples do.
        case presign
        /// In `Authorization`, `X-Amz-Date` and `X-Amz-Security-Token` headers.
        case header
    }

    public let placement: Placement
    public let signer: SigV4Signer
    /// Gives the credentials for each handshake: fixed ones, or temporary ones fetched again
    /// before they expire.
    public let credentials: AWSCredentialsProvider
    /// Seconds a presigned request stays valid.
    public let expires: Int

    public init(placement: Placement, signer: SigV4Signer, credentials: AWSCredentialsProvider, expires: Int = SigV4Signer.defaultExpires) {
        self.placement = placement
        self.signer = signer
        self.credentials = credentials
        self.expires = expires
    }

    /// Signing with credentials that never change.
    public init(placement: Placement, signer: SigV4Signer, credentials: AWSCredentials, expires: Int = SigV4Signer.defaultExpires) {
        self.init(placement: placement, signer: signer, credentials: AWSCredentialsProvider(credentials), expires: expires)
    }

    /// `configuration` with its handshake signed for `unixTime`: the URL's query replaced by the
    /// presigned one, or the signing headers added after the configured ones (which are not signed).
    public func sign(_ configuration: WebSocketConfiguration, at unixTime: Int) throws(AWSConfigurationError) -> WebSocketConfiguration {
        let url = configuration.url
        let request = SigV4Request(host: url.hostHeader, path: url.path, query: SigV4Request.decodeQuery(url.query ?? ""))
        let time = try SigV4Timestamp(unixSeconds: Int64(unixTime))
        let credentials = try self.credentials.credentials(at: unixTime)
        var signed = configuration
        switch placement {
        case .presign:
            let target = try signer.presign(request, credentials: credentials, at: time, expires: expires).requestTarget
            let query = target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) }
            signed.url = url.replacingQuery(query)
        case .header:
            for (name, value) in signer.signWithHeaders(request, credentials: credentials, at: time).headers {
                signed.headers.append(HTTPHeaderField(validName: name, value: value))
            }
        }
        return signed
    }
}
