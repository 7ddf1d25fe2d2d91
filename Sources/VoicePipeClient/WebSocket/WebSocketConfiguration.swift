/// Everything a ``WebSocketTransport`` needs for one connection.
public struct WebSocketConfiguration: Sendable {
    /// The server, with the path and query the handshake asks for.
    public var url: WebSocketURL
    /// Header fields added to the opening request (authorization, SigV4's), in order.
    public var headers: [HTTPHeaderField]
    /// Subprotocols offered in `Sec-WebSocket-Protocol`, in order of preference; empty offers none.
    public var subprotocols: [String]
    /// A PEM file of CA certificates to trust instead of the system's, for a private CA.
    public var caFile: String?
    /// Seconds from ``WebSocketTransport/open()`` to a completed handshake (DNS, TCP, TLS, HTTP).
    public var connectTimeout: Double
    /// Seconds the server may stay silent before the connection counts as dead: after half of
    /// it with nothing received, a ping goes out, and without an answer the connection is closed.
    public var readTimeout: Int
    /// The longest message, in bytes, delivered (default 16 MiB); a longer one is skipped without
    /// being buffered and reported as ``TransportEvent/oversizedMessage(bytes:limit:)``.
    public var maximumMessageLength: Int
    /// The most bytes queued for sending (default 4 MiB).
    public var backlogLimit: Int
    /// Seconds ``WebSocketTransport/close()`` spends at most sending what is queued.
    public var flushTimeout: Double

    public init(url: WebSocketURL, headers: [HTTPHeaderField] = [], subprotocols: [String] = [], caFile: String? = nil,
                connectTimeout: Double = 10, readTimeout: Int = 30, maximumMessageLength: Int = 16 << 20,
                backlogLimit: Int = 4 << 20, flushTimeout: Double = 2) {
        self.url = url
        self.headers = headers
        self.subprotocols = subprotocols
        self.caFile = caFile
        self.connectTimeout = connectTimeout
        self.readTimeout = readTimeout
        self.maximumMessageLength = maximumMessageLength
        self.backlogLimit = backlogLimit
        self.flushTimeout = flushTimeout
    }
}

/// One HTTP header field of the opening request.
public struct HTTPHeaderField: Sendable, Hashable, CustomStringConvertible {
    public let name: String
    public let value: String

    /// - Throws: ``HTTPHeaderFieldError`` for a name that is not an HTTP token or a value with a
    ///   line break or another control character.
    public init(name: String, value: String) throws(HTTPHeaderFieldError) {
        let tokenPunctuation = Set("!#$%&'*+-.^_`|~".unicodeScalars)
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ $0.isASCIIAlphanumeric || tokenPunctuation.contains($0) }) else {
            throw .badName(name)
        }
        guard !value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) else {
            throw .controlCharacterInValue(name: name)
        }
        self.name = name
        self.value = value.trimmingSpaceAndTab()
    }

    /// A field whose name and value are known to be valid.
    init(validName name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses `Name: value`, the form `--header` takes.
    public init(parsing line: String) throws(HTTPHeaderFieldError) {
        guard let colon = line.firstIndex(of: ":") else { throw .missingColon }
        try self.init(name: String(line[..<colon]).trimmingSpaceAndTab(), value: String(line[line.index(after: colon)...]))
    }

    /// The name only: values often carry credentials.
    public var description: String { "\(name): …" }

    /// The fields of a header list, as `--header @file` and `--header-env` read it: one
    /// `Name: value` per line (LF or CRLF); blank lines and lines starting with `#` are skipped.
    /// - Throws: ``HTTPHeaderListError`` naming the first bad line (1-based), or an empty list.
    public static func parseList(_ text: String) throws(HTTPHeaderListError) -> [HTTPHeaderField] {
        var fields = [HTTPHeaderField]()
        var number = 0
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            number += 1
            let line = String(rawLine).trimmingSpaceAndTab()
            if line.isEmpty || line.hasPrefix("#") { continue }
            do {
                fields.append(try HTTPHeaderField(parsing: line))
            } catch {
                throw .badLine(number, error)
            }
        }
        guard !fields.isEmpty else { throw .empty }
        return fields
    }
}

/// Why a header list (a file or a variable of `Name: value` lines) cannot be used.
public enum HTTPHeaderListError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A line that is not a header field, numbered from 1.
    case badLine(Int, HTTPHeaderFieldError)
    /// No header at all: only blank lines and comments, or nothing.
    case empty

    public var description: String {
        switch self {
        case .badLine(let number, let error): "line \(number): \(error)"
        case .empty: "it holds no 'Name: value' line"
        }
    }
}

/// Why a text is not a usable header field.
public enum HTTPHeaderFieldError: Error, Sendable, Hashable, CustomStringConvertible {
    case missingColon
    case badName(String)
    case controlCharacterInValue(name: String)

    public var description: String {
        switch self {
        case .missingColon:
            "a header must be given as 'Name: value'"
        case .badName(let name):
            "'\(name)' is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)"
        case .controlCharacterInValue(let name):
            "the value of header '\(name)' contains a line break or another control character"
        }
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIIAlphanumeric: Bool {
        ("a"..."z").contains(self) || ("A"..."Z").contains(self) || ("0"..."9").contains(self)
    }
}

extension String {
    fileprivate func trimmingSpaceAndTab() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
              let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        return String(scalars[first...last])
    }
}
