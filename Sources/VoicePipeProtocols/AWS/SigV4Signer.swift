/// Signs requests with AWS Signature Version 4 (`AWS4-HMAC-SHA256`) for one region and service:
/// in the query string (``presign(_:credentials:at:expires:)``, as botocore's `SigV4QueryAuth`
/// does) or in headers (``signWithHeaders(_:credentials:at:)``, as botocore's `SigV4Auth` does).
///
/// Signing is a pure function of the request, the credentials and the time; SHA-256 and
/// HMAC-SHA256 come from the ``SigV4Hashing`` it is made with (`VoicePipeClient`'s
/// `SigV4Signer(region:service:)` uses libcrypto's). The steps are public so that tests can
/// compare each with published vectors:
///
/// ```
/// request ──canonicalRequest(of:)──▶ canonical request
///         ──stringToSign(canonicalRequest:at:)──▶ string to sign
///         ──signature(stringToSign:signingKey:)──▶ signature   ◀── signingKey(secretAccessKey:at:)
/// ```
///
/// Implementation notes: the canonical URI follows botocore for services other than S3 (S3 is
/// not supported): the path is normalized (empty segments and `.` dropped, `..` removes the
/// segment before it, a trailing `/` kept) and percent-encoded again with only `/` kept besides
/// the unreserved characters, so the `%3A` of a path on the wire is signed as `%253A`, which is
/// what AWS computes on its side.
public struct SigV4Signer: Sendable, Hashable {
    /// The region in the credential scope: `us-west-2`.
    public let region: String
    /// The service in the credential scope: `bedrock-agentcore`.
    public let service: String
    /// Where SHA-256 and HMAC-SHA256 come from.
    public let hashing: any SigV4Hashing

    /// The service Amazon Bedrock AgentCore runtimes are signed for.
    public static let defaultService = "bedrock-agentcore"
    /// How long a presigned request stays valid by default, in seconds.
    public static let defaultExpires = 300
    /// The longest SigV4 allows a presigned request to stay valid: 7 days, in seconds.
    public static let maximumExpires = 604_800

    /// A signer for `region` and `service` that hashes with `hashing`.
    /// - Throws: ``AWSConfigurationError/invalidScope(name:value:)`` when either is empty or has
    ///   characters other than letters, digits, `-`, `_` and `.` (a `/` would break the scope).
    public init(region: String, service: String = SigV4Signer.defaultService, hashing: any SigV4Hashing) throws(AWSConfigurationError) {
        for (name, value) in [("region", region), ("service", service)] {
            guard !value.isEmpty, value.utf8.allSatisfy(SigV4Encoding.isUnreserved), !value.contains("~") else {
                throw .invalidScope(name: name, value: value)
            }
        }
        self.region = region
        self.service = service
        self.hashing = hashing
    }

    /// Equal when they sign for the same region and service with the same kind of hashing.
    public static func == (left: SigV4Signer, right: SigV4Signer) -> Bool {
        left.region == right.region && left.service == right.service
            && ObjectIdentifier(type(of: left.hashing)) == ObjectIdentifier(type(of: right.hashing))
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(region)
        hasher.combine(service)
        hasher.combine(ObjectIdentifier(type(of: hashing)))
    }

    // MARK: Signing

    /// What signing produced: the signed request and the steps on the way to it.
    public struct Signing: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// The request to send.
        public let request: SigV4Request
        /// The canonical request that was signed (it holds the session token, so never log it).
        public let canonicalRequest: String
        /// The string to sign: algorithm, time, credential scope, hash of the canonical request.
        public let stringToSign: String
        /// 64 lower-case hex digits.
        public let signature: String

        /// The signed request's description, which redacts the token and signature.
        public var description: String { request.description }
        public var debugDescription: String { description }
        public var customMirror: Mirror { Mirror(self, children: ["request": request.description]) }
    }

    /// The request with its signature in the query string: the query keeps its pairs (any earlier
    /// `X-Amz-*` signing parameters removed), then gets `X-Amz-Algorithm`, `X-Amz-Credential`,
    /// `X-Amz-Date`, `X-Amz-Expires`, `X-Amz-SignedHeaders`, `X-Amz-Security-Token` (with a
    /// session token) and last `X-Amz-Signature`, in botocore's order. The signed headers are
    /// `host` and the request's own headers, which must then be sent as they are.
    /// - Parameter expires: seconds the request stays valid, 1 to 604 800.
    /// - Throws: ``AWSConfigurationError/invalidExpiry(seconds:)``.
    public func presign(_ request: SigV4Request, credentials: AWSCredentials, at time: SigV4Timestamp,
                        expires: Int = SigV4Signer.defaultExpires) throws(AWSConfigurationError) -> SigV4Request {
        try presigning(request, credentials: credentials, at: time, expires: expires).request
    }

    /// ``presign(_:credentials:at:expires:)`` with the steps.
    public func presigning(_ request: SigV4Request, credentials: AWSCredentials, at time: SigV4Timestamp,
                           expires: Int = SigV4Signer.defaultExpires) throws(AWSConfigurationError) -> Signing {
        guard expires >= 1, expires <= Self.maximumExpires else { throw .invalidExpiry(seconds: expires) }
        var signed = request
        signed.query.removeAll { Self.queryParameterNames.contains($0.name) }
        signed.query += [
            ("X-Amz-Algorithm", Self.algorithm),
            ("X-Amz-Credential", credentials.accessKeyID + "/" + credentialScope(at: time)),
            ("X-Amz-Date", time.dateTime),
            ("X-Amz-Expires", String(expires)),
            ("X-Amz-SignedHeaders", Self.signedHeaders(of: signed)),
        ]
        if let token = credentials.sessionToken { signed.query.append(("X-Amz-Security-Token", token)) }
        let steps = sign(signed, credentials: credentials, at: time)
        signed.query.append(("X-Amz-Signature", steps.signature))
        return Signing(request: signed, canonicalRequest: steps.canonicalRequest, stringToSign: steps.stringToSign, signature: steps.signature)
    }

    /// The request with its signature in headers: any `Authorization`, `X-Amz-Date` and
    /// `X-Amz-Security-Token` it had are replaced by `X-Amz-Date`, `X-Amz-Security-Token` (with a
    /// session token) and `Authorization`, added in that order after its own headers. The signed
    /// headers are `host`, the request's own headers, `x-amz-date` and `x-amz-security-token`.
    public func signWithHeaders(_ request: SigV4Request, credentials: AWSCredentials, at time: SigV4Timestamp) -> SigV4Request {
        headerSigning(request, credentials: credentials, at: time).request
    }

    /// ``signWithHeaders(_:credentials:at:)`` with the steps.
    public func headerSigning(_ request: SigV4Request, credentials: AWSCredentials, at time: SigV4Timestamp) -> Signing {
        var signed = request
        signed.headers.removeAll { Self.headerNames.contains($0.name.lowercased()) }
        signed.headers.append(("X-Amz-Date", time.dateTime))
        if let token = credentials.sessionToken { signed.headers.append(("X-Amz-Security-Token", token)) }
        let steps = sign(signed, credentials: credentials, at: time)
        let authorization = Self.algorithm + " Credential=" + credentials.accessKeyID + "/" + credentialScope(at: time)
            + ", SignedHeaders=" + Self.signedHeaders(of: signed) + ", Signature=" + steps.signature
        signed.headers.append(("Authorization", authorization))
        return Signing(request: signed, canonicalRequest: steps.canonicalRequest, stringToSign: steps.stringToSign, signature: steps.signature)
    }

    private func sign(_ request: SigV4Request, credentials: AWSCredentials, at time: SigV4Timestamp) -> (canonicalRequest: String, stringToSign: String, signature: String) {
        let canonical = canonicalRequest(of: request)
        let toSign = stringToSign(canonicalRequest: canonical, at: time)
        return (canonical, toSign, signature(stringToSign: toSign, signingKey: signingKey(secretAccessKey: credentials.secretAccessKey, at: time)))
    }

    // MARK: Steps

    /// The canonical request: method, canonical URI, canonical query, canonical headers, signed
    /// headers and the hash of the (empty) payload, one a line.
    ///
    /// The query pairs are encoded and sorted by encoded name, then value, leaving out
    /// `X-Amz-Signature`. The headers are `host` and the request's headers, leaving out
    /// `Authorization`: names lower-cased and sorted, values trimmed with inner runs of white
    /// space made one space, a repeated name's values joined with commas in order.
    /// A signed request therefore gives the canonical request that was signed.
    public func canonicalRequest(of request: SigV4Request) -> String {
        let query = request.query
            .filter { $0.name != "X-Amz-Signature" }
            .map { (SigV4Encoding.encode($0.name), SigV4Encoding.encode($0.value)) }
            .sorted { $0.0 != $1.0 ? Self.precedes($0.0, $1.0) : Self.precedes($0.1, $1.1) }
            .map { $0.0 + "=" + $0.1 }
            .joined(separator: "&")
        let headers = Self.canonicalHeaders(of: request)
        return [
            request.method.uppercased(),
            Self.canonicalURI(request.path),
            query,
            headers.map { $0.name + ":" + $0.value + "\n" }.joined(),
            headers.map(\.name).joined(separator: ";"),
            Self.emptyPayloadHash,
        ].joined(separator: "\n")
    }

    /// `20150830/us-east-1/service/aws4_request`.
    public func credentialScope(at time: SigV4Timestamp) -> String {
        time.date + "/" + region + "/" + service + "/aws4_request"
    }

    /// The string to sign: the algorithm, the time, the credential scope and the hex SHA-256 of
    /// the canonical request, one a line.
    public func stringToSign(canonicalRequest: String, at time: SigV4Timestamp) -> String {
        let hash = SigV4Encoding.hex(hashing.sha256(Array(canonicalRequest.utf8)))
        return Self.algorithm + "\n" + time.dateTime + "\n" + credentialScope(at: time) + "\n" + hash
    }

    /// The key for the time's day, region and service: HMAC-SHA256 chained from `AWS4` and the
    /// secret key through the date, the region, the service and `aws4_request`.
    public func signingKey(secretAccessKey: String, at time: SigV4Timestamp) -> [UInt8] {
        var key = Array(("AWS4" + secretAccessKey).utf8)
        for part in [time.date, region, service, "aws4_request"] {
            key = hashing.hmacSHA256(key: key, message: Array(part.utf8))
        }
        return key
    }

    /// The signature: HMAC-SHA256 of the string to sign under the signing key, in lower-case hex.
    public func signature(stringToSign: String, signingKey: [UInt8]) -> String {
        SigV4Encoding.hex(hashing.hmacSHA256(key: signingKey, message: Array(stringToSign.utf8)))
    }

    /// The canonical URI of a path on the wire, as botocore makes it for services other than S3.
    public static func canonicalURI(_ path: String) -> String {
        SigV4Encoding.encode(normalizedPath(path), keeping: UInt8(ascii: "/"))
    }

    // MARK: Internals

    static let algorithm = "AWS4-HMAC-SHA256"
    /// The SHA-256 of no bytes, the payload hash of a request without a body (a test checks it
    /// against libcrypto's).
    package static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    private static let queryParameterNames: Set<String> = [
        "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Security-Token", "X-Amz-Signature",
    ]
    private static let headerNames: Set<String> = ["authorization", "x-amz-date", "x-amz-security-token"]

    /// Byte order of the UTF-8, the order SigV4 sorts in.
    private static func precedes(_ left: String, _ right: String) -> Bool {
        left.utf8.lexicographicallyPrecedes(right.utf8)
    }

    private static func canonicalHeaders(of request: SigV4Request) -> [(name: String, value: String)] {
        var values: [String: [String]] = ["host": [trimmedAll(request.host)]]
        for header in request.headers {
            let name = trimmedAll(header.name).lowercased()
            guard name != "authorization" else { continue }
            values[name, default: []].append(trimmedAll(header.value))
        }
        return values.keys.sorted(by: precedes).map { ($0, values[$0, default: []].joined(separator: ",")) }
    }

    private static func signedHeaders(of request: SigV4Request) -> String {
        canonicalHeaders(of: request).map(\.name).joined(separator: ";")
    }

    /// `text` without white space at either end and with each inner run of it made one space.
    private static func trimmedAll(_ text: String) -> String {
        text.utf8.split(whereSeparator: isWhiteSpace).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
    }

    /// Space, tab, line feed, vertical tab, form feed, carriage return.
    private static func isWhiteSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    /// Dot segments resolved and empty segments dropped; a leading `/` kept, a trailing one kept
    /// unless nothing is left; an empty path is `/`.
    static func normalizedPath(_ path: String) -> String {
        guard !path.isEmpty else { return "/" }
        var segments = [Substring]()
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch segment {
            case ".": continue
            case "..": _ = segments.popLast()
            default: segments.append(segment)
            }
        }
        let leading = path.hasPrefix("/") ? "/" : ""
        let trailing = path.hasSuffix("/") && !segments.isEmpty ? "/" : ""
        return leading + segments.joined(separator: "/") + trailing
    }
}
