import VoicePipeCore

/// An Amazon Bedrock AgentCore runtime, named by its ARN
/// (`arn:aws:bedrock-agentcore:us-west-2:123456789012:runtime/my_agent-abc123`), and the
/// WebSocket URL its data plane serves it on, as AWS's `bedrock-agentcore` SDK builds it.
///
/// Pure: parsing, checking and building strings; signing is ``SigV4Signer``'s.
public struct AgentCoreRuntime: Sendable, Hashable {
    /// The ARN as given.
    public let arn: String
    /// `aws`, `aws-cn` or `aws-us-gov`.
    public let partition: String
    /// The region in the ARN, which is the region to sign for.
    public let region: String
    /// The 12-digit account id.
    public let account: String
    /// What follows `runtime/`.
    public let runtimeID: String
    /// The endpoint (`DEFAULT` or a name) sent as the `qualifier` query parameter, if any.
    public let qualifier: String?

    /// The header and query parameter that carry the session id.
    public static let sessionIdName = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id"
    /// The service the handshake is signed for.
    public static let service = "bedrock-agentcore"
    /// The longest a presigned URL may stay valid, in seconds (the SDK refuses more).
    public static let maximumExpires = 300
    /// The partitions AgentCore runtimes live in.
    public static let partitions = ["aws", "aws-cn", "aws-us-gov"]

    /// Parses `arn`; `region`, when given, must be the ARN's.
    /// - Throws: ``AgentCoreError/notARuntimeARN(_:)``, ``AgentCoreError/regionMismatch(given:arn:)``,
    ///   ``AgentCoreError/invalidQualifier(_:)``.
    public init(arn: String, qualifier: String? = nil, region: String? = nil) throws(AgentCoreError) {
        let parts = arn.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 6, parts[0] == "arn", Self.partitions.contains(parts[1]), parts[2] == Self.service,
              Self.isRegionName(parts[3]), parts[4].count == 12, parts[4].allSatisfy(\.isASCII), parts[4].allSatisfy(\.isNumber),
              parts[5].hasPrefix("runtime/") else {
            throw .notARuntimeARN(arn)
        }
        let runtimeID = String(parts[5].dropFirst("runtime/".count))
        guard !runtimeID.isEmpty, !runtimeID.contains("/"), runtimeID.utf8.allSatisfy(Self.isIdentifierByte) else {
            throw .notARuntimeARN(arn)
        }
        if let region, region != parts[3] { throw .regionMismatch(given: region, arn: parts[3]) }
        if let qualifier {
            guard !qualifier.isEmpty, qualifier.utf8.count <= 100, qualifier.utf8.allSatisfy(Self.isIdentifierByte) else {
                throw .invalidQualifier(qualifier)
            }
        }
        self.arn = arn
        self.partition = parts[1]
        self.region = parts[3]
        self.account = parts[4]
        self.runtimeID = runtimeID
        self.qualifier = qualifier
    }

    /// `bedrock-agentcore.us-west-2.amazonaws.com` (`amazonaws.com.cn` in China).
    public var host: String {
        "bedrock-agentcore." + region + (partition == "aws-cn" ? ".amazonaws.com.cn" : ".amazonaws.com")
    }

    /// `/runtimes/<ARN, every byte but the unreserved ones percent-encoded>/ws`.
    public var path: String { "/runtimes/" + SigV4Encoding.encode(arn) + "/ws" }

    /// The query pairs before signing: `qualifier`, then the session id when it goes in the query.
    public func query(sessionId: String?) -> [(name: String, value: String)] {
        var pairs = [(name: String, value: String)]()
        if let qualifier { pairs.append(("qualifier", qualifier)) }
        if let sessionId { pairs.append((Self.sessionIdName, sessionId)) }
        return pairs
    }

    /// The WebSocket URL without the session id or a signature:
    /// `wss://bedrock-agentcore.<region>.amazonaws.com/runtimes/<ARN>/ws[?qualifier=…]`, or the
    /// same path and query on `endpoint` (its `http`/`https` read as `ws`/`wss`, any path of its
    /// own kept before `/runtimes`).
    /// - Throws: ``AgentCoreError/invalidEndpoint(_:)`` for an endpoint that is not such a URL.
    public func webSocketURL(endpoint: String? = nil) throws(AgentCoreError) -> String {
        try url(endpoint: endpoint, query: query(sessionId: nil))
    }

    /// What a session's handshake needs: the URL to open and the headers to send besides the
    /// signature. Presigned, the session id is a query parameter (so the signature covers it);
    /// otherwise it is a header, sent unsigned after the signing headers, as AWS's SDK sends it.
    /// - Throws: ``AgentCoreError/invalidSessionId(_:reason:)``, ``AgentCoreError/invalidEndpoint(_:)``.
    public func handshake(sessionId: String, presigned: Bool, endpoint: String? = nil) throws(AgentCoreError)
        -> (url: String, headers: [(name: String, value: String)]) {
        try Self.validateSessionId(sessionId)
        if presigned { return (try url(endpoint: endpoint, query: query(sessionId: sessionId)), []) }
        return (try webSocketURL(endpoint: endpoint), [(Self.sessionIdName, sessionId)])
    }

    /// The presigned URL for `sessionId`, valid `expires` seconds from `time`, as the SDK's
    /// `generate_presigned_url` makes it: what a browser or phone can open without credentials.
    /// - Throws: ``AgentCoreError/invalidExpiry(seconds:)`` outside 1 to 300 s, and what
    ///   ``handshake(sessionId:presigned:endpoint:)`` throws.
    public func presignedURL(sessionId: String, endpoint: String? = nil, signer: SigV4Signer, credentials: AWSCredentials,
                             at time: SigV4Timestamp, expires: Int = SigV4Signer.defaultExpires) throws(AgentCoreError) -> String {
        try Self.checkExpires(expires)
        try Self.validateSessionId(sessionId)
        let base = try base(endpoint: endpoint)
        let request = SigV4Request(host: base.authority, path: base.basePath + path, query: query(sessionId: sessionId))
        do {
            return base.scheme + "://" + base.authority + (try signer.presign(request, credentials: credentials, at: time, expires: expires)).requestTarget
        } catch {
            throw .invalidExpiry(seconds: expires)
        }
    }

    /// Refuses a presigned lifetime the service does not take: 1 to 300 seconds.
    /// - Throws: ``AgentCoreError/invalidExpiry(seconds:)``.
    public static func checkExpires(_ seconds: Int) throws(AgentCoreError) {
        guard (1...maximumExpires).contains(seconds) else { throw .invalidExpiry(seconds: seconds) }
    }

    /// The scheme, `Host` and path prefix of `endpoint`, or of the service's own endpoint.
    private func base(endpoint: String?) throws(AgentCoreError) -> (scheme: String, authority: String, basePath: String) {
        guard let endpoint else { return ("wss", host, "") }
        return try Self.endpointParts(of: endpoint)
    }

    private func url(endpoint: String?, query: [(name: String, value: String)]) throws(AgentCoreError) -> String {
        let base = try base(endpoint: endpoint)
        return base.scheme + "://" + base.authority + SigV4Request(host: base.authority, path: base.basePath + path, query: query).requestTarget
    }

    /// The WebSocket scheme, the `Host` header (a default port dropped) and the path (without
    /// a trailing `/`) of an endpoint URL.
    static func endpointParts(of endpoint: String) throws(AgentCoreError) -> (scheme: String, authority: String, basePath: String) {
        let schemes = [("https://", "wss"), ("wss://", "wss"), ("http://", "ws"), ("ws://", "ws")]
        guard let (prefix, scheme) = schemes.first(where: { endpoint.lowercased().hasPrefix($0.0) }) else {
            throw .invalidEndpoint(endpoint)
        }
        let rest = endpoint.dropFirst(prefix.count)
        guard !rest.contains("?"), !rest.contains("#"), !rest.contains(where: \.isWhitespace) else { throw .invalidEndpoint(endpoint) }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = String(rest[..<slash]).lowercased()
        guard !authority.isEmpty, !authority.contains("@") else { throw .invalidEndpoint(endpoint) }
        let defaultPort = scheme == "wss" ? ":443" : ":80"
        if authority.hasSuffix(defaultPort) { authority.removeLast(defaultPort.count) }
        var basePath = String(rest[slash...])
        while basePath.hasSuffix("/") { basePath.removeLast() }
        return (scheme, authority, basePath)
    }

    // MARK: Session ids

    /// The shortest session id the service takes.
    public static let minimumSessionIdLength = 33
    /// The longest.
    public static let maximumSessionIdLength = 256

    /// Checks `sessionId` against the service's rule for `runtimeSessionId` (its API model's
    /// `SessionType`: 33 to 256 characters, no pattern) and what a header value can carry:
    /// visible ASCII only, no spaces or control characters.
    /// - Throws: ``AgentCoreError/invalidSessionId(_:reason:)``.
    public static func validateSessionId(_ sessionId: String) throws(AgentCoreError) {
        let count = sessionId.count
        guard count >= minimumSessionIdLength else {
            throw .invalidSessionId(sessionId, reason: "it has \(count) characters, fewer than \(minimumSessionIdLength)")
        }
        guard count <= maximumSessionIdLength else {
            throw .invalidSessionId(sessionId, reason: "it has \(count) characters, more than \(maximumSessionIdLength)")
        }
        guard sessionId.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .invalidSessionId(sessionId, reason: "it may hold only visible ASCII characters, without spaces")
        }
    }

    /// A fresh session id the service takes: `voicepipe-` and 32 random hex digits (42 characters).
    public static func makeSessionId(using generator: inout some RandomNumberGenerator) -> String {
        let digits = [generator.next(), generator.next()].map { (value: UInt64) -> String in
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return "voicepipe-" + digits.joined()
    }

    /// ``makeSessionId(using:)`` with the system's generator.
    public static func makeSessionId() -> String {
        var generator = SystemRandomNumberGenerator()
        return makeSessionId(using: &generator)
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        SigV4Encoding.isUnreserved(byte) && byte != UInt8(ascii: ".") && byte != UInt8(ascii: "~")
    }

    /// `us-west-2`, `cn-north-1`, `us-gov-west-1`: lower-case letters, digits and `-`.
    private static func isRegionName(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-") }
    }
}

/// Why an AgentCore runtime cannot be addressed: the ARN, region, qualifier, endpoint, session
/// id or expiry given is not one the service takes.
public enum AgentCoreError: SystemCodedError, Sendable, Hashable {
    /// The text is not `arn:<partition>:bedrock-agentcore:<region>:<account>:runtime/<id>`.
    case notARuntimeARN(String)
    /// A region was given that is not the ARN's.
    case regionMismatch(given: String, arn: String)
    /// The qualifier is not an endpoint name.
    case invalidQualifier(String)
    /// The endpoint override is not an http(s) or ws(s) URL with a host.
    case invalidEndpoint(String)
    /// The session id breaks the service's rule, for the reason given.
    case invalidSessionId(String, reason: String)
    /// A presigned lifetime outside 1 to 300 seconds.
    case invalidExpiry(seconds: Int)

    public var code: SystemErrorCode? { nil }

    public var message: String {
        switch self {
        case .notARuntimeARN(let arn):
            "'\(arn)' is not an AgentCore runtime ARN: expected arn:aws:bedrock-agentcore:<region>:<12-digit account>:runtime/<id> "
                + "(partition aws, aws-cn or aws-us-gov), as 'aws bedrock-agentcore-control list-agent-runtimes' prints it"
        case .regionMismatch(let given, let arn):
            "the region '\(given)' does not match the runtime ARN's region '\(arn)': the runtime is reached and signed in its own region; drop the region or give '\(arn)'"
        case .invalidQualifier(let qualifier):
            "the qualifier '\(qualifier)' is not an endpoint name: use 1 to 100 letters, digits, '-' and '_' (for example DEFAULT)"
        case .invalidEndpoint(let endpoint):
            "the endpoint URL '\(endpoint)' is not an http(s):// or ws(s):// URL with a host (and no query)"
        case .invalidSessionId(let sessionId, let reason):
            "the session id '\(sessionId)' is not one AgentCore takes: \(reason); use 33 to 256 visible ASCII characters, such as a UUID with a prefix"
        case .invalidExpiry(let seconds):
            "an AgentCore presigned URL cannot stay valid for \(seconds) s: AWS's SDK allows 1 to \(AgentCoreRuntime.maximumExpires) s; give at most \(AgentCoreRuntime.maximumExpires)"
        }
    }
}
