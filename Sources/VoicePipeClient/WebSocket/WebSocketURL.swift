/// A `ws://` or `wss://` URL taken apart for the handshake: where to connect, the `Host` header,
/// and the request target, kept exactly as given (already percent-encoded).
///
/// Its ``description`` is safe to print: it leaves out user information and the query, where
/// credentials travel (`?token=…`, a presigned `X-Amz-Signature`), and shows `?…` instead.
public struct WebSocketURL: Sendable, Hashable, CustomStringConvertible {
    /// True for `wss://`: the connection is TLS, its certificate verified.
    public let isSecure: Bool
    /// The host name or address, without the brackets of an IPv6 literal.
    public let host: String
    public let port: Int
    /// The path, starting with `/`, percent-encoded as given.
    public let path: String
    /// The query after `?`, as given, or nil when there is none.
    public let query: String?
    /// A `user:password@` part, which goes out as HTTP Basic authorization.
    public let userInfo: String?

    /// Parses `ws(s)://host[:port][/path][?query]`.
    /// - Throws: ``WebSocketURLError`` saying what is wrong with it.
    public init(parsing text: String) throws(WebSocketURLError) {
        let schemeEnd = text.range(of: "://")
        guard let schemeEnd else { throw .notWebSocket(scheme: nil) }
        let scheme = String(text[..<schemeEnd.lowerBound])
        switch scheme.lowercased() {
        case "ws": isSecure = false
        case "wss": isSecure = true
        default: throw .notWebSocket(scheme: scheme)
        }
        if let bad = text.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value >= 0x7F }) {
            throw .characterNotAllowed(scalar: bad)
        }
        var rest = Substring(text[schemeEnd.upperBound...])
        if rest.contains("#") { throw .fragment }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        rest = rest[authorityEnd...]
        if let at = authority.lastIndex(of: "@") {
            userInfo = String(authority[..<at])
            authority = authority[authority.index(after: at)...]
        } else {
            userInfo = nil
        }
        (host, port) = try Self.hostAndPort(authority, isSecure: isSecure)
        if let questionMark = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: questionMark)...])
            rest = rest[..<questionMark]
        } else {
            query = nil
        }
        path = rest.isEmpty ? "/" : String(rest)
    }

    /// The port `ws` and `wss` use when none is given.
    public var defaultPort: Int { isSecure ? 443 : 80 }

    /// The `Host` header: the host, with `:port` when the port is not the scheme's default
    /// (SigV4 signs exactly this).
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == defaultPort ? name : "\(name):\(port)"
    }

    /// What follows `GET` in the request line: the path and the query.
    public var requestTarget: String {
        query.map { "\(path)?\($0)" } ?? path
    }

    /// The same endpoint with another query (a presigned one), or none.
    public func replacingQuery(_ newQuery: String?) -> WebSocketURL {
        WebSocketURL(isSecure: isSecure, host: host, port: port, path: path, query: newQuery, userInfo: userInfo)
    }

    public var description: String {
        "\(isSecure ? "wss" : "ws")://\(hostHeader)\(path)\(query == nil ? "" : "?…")"
    }

    private init(isSecure: Bool, host: String, port: Int, path: String, query: String?, userInfo: String?) {
        self.isSecure = isSecure
        self.host = host
        self.port = port
        self.path = path
        self.query = query
        self.userInfo = userInfo
    }

    private static func hostAndPort(_ authority: Substring, isSecure: Bool) throws(WebSocketURLError) -> (String, Int) {
        var hostPart = authority
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .missingHost }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { throw .missingHost }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !hostPart.isEmpty else { throw .missingHost }
        guard let portText else { return (String(hostPart), isSecure ? 443 : 80) }
        guard let port = Int(portText), (1...65_535).contains(port) else { throw .badPort(String(portText)) }
        return (String(hostPart), port)
    }
}

/// Why a text is not a usable WebSocket URL.
public enum WebSocketURLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The URL does not start with `ws://` or `wss://` (the scheme it has, if any; never the
    /// rest, which may hold credentials).
    case notWebSocket(scheme: String?)
    case missingHost
    case badPort(String)
    case characterNotAllowed(scalar: Unicode.Scalar)
    case fragment

    public var description: String {
        switch self {
        case .notWebSocket(let scheme):
            "the URL \(scheme.map { "starts with '\($0)://'" } ?? "has no scheme"); give ws://host[:port]/path or wss://host[:port]/path"
        case .missingHost:
            "the URL names no host: give ws://host[:port]/path or wss://host[:port]/path"
        case .badPort(let text):
            "the URL's port '\(text)' is not a number from 1 to 65535"
        case .characterNotAllowed(let scalar):
            "the URL contains U+\(String(scalar.value, radix: 16, uppercase: true)), which must be percent-encoded (a space is %20)"
        case .fragment:
            "the URL has a '#' fragment, which a WebSocket request cannot carry: leave it out or percent-encode it (%23)"
        }
    }
}
