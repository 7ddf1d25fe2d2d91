/// An HTTP request as SigV4 signs it: what the opening GET of a WebSocket carries, before and
/// after signing.
///
/// Only requests without a body are signed (the payload hash is that of no bytes), which is what
/// a WebSocket handshake is. Printing redacts the session token, the signature and the
/// `Authorization` header: ``requestTarget`` and ``headers`` hold the real values for the wire.
public struct SigV4Request: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// "GET" for a WebSocket handshake; signed upper-cased.
    public var method: String
    /// Exactly the `Host` header's value: `example.com`, or `127.0.0.1:8443` when the port is not
    /// the scheme's default.
    public var host: String
    /// The path as it goes on the wire, already percent-encoded:
    /// `/runtimes/arn%3Aaws%3Abedrock-agentcore%3A...%2Fagent-1/ws`. Empty means `/`.
    public var path: String
    /// The query's name-value pairs, decoded (``decodeQuery(_:)`` turns a raw query into them),
    /// in the order they go on the wire.
    public var query: [(name: String, value: String)]
    /// Headers besides `Host` to send and to sign, in order; a repeated name is signed as one
    /// header whose values are joined with commas.
    public var headers: [(name: String, value: String)]

    /// A request for `host` and `path`; see the properties for what each holds.
    public init(method: String = "GET", host: String, path: String = "/",
                query: [(name: String, value: String)] = [], headers: [(name: String, value: String)] = []) {
        self.method = method
        self.host = host
        self.path = path
        self.query = query
        self.headers = headers
    }

    /// The request target for the request line: the path, then `?` and the query pairs encoded
    /// as SigV4 encodes them (RFC 3986 unreserved characters kept, everything else `%XX`), in
    /// order; just the path when there is no query.
    public var requestTarget: String {
        let wirePath = path.isEmpty ? "/" : path
        guard !query.isEmpty else { return wirePath }
        return wirePath + "?" + query.map { SigV4Encoding.encode($0.name) + "=" + SigV4Encoding.encode($0.value) }.joined(separator: "&")
    }

    /// The first value of the header named `name` (any case), if the request has one.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// The pairs of a raw query string (what follows `?`, without a `#fragment`), decoded as
    /// botocore decodes a URL's query: split at `&`, then at the first `=` (a pair without one has
    /// an empty value), `+` read as a space, `%XX` decoded, a malformed `%` kept as it is, and
    /// bytes that are not UTF-8 replaced with U+FFFD. Empty pieces (`a=1&&b=2`) are skipped.
    public static func decodeQuery(_ rawQuery: some StringProtocol) -> [(name: String, value: String)] {
        rawQuery.split(separator: "&").map { piece in
            guard let equals = piece.firstIndex(of: "=") else { return (SigV4Encoding.decode(piece), "") }
            return (SigV4Encoding.decode(piece[..<equals]), SigV4Encoding.decode(piece[piece.index(after: equals)...]))
        }
    }

    /// Query parameters and headers whose values are credentials or signatures, never printed.
    static let redactedQueryNames: Set<String> = ["X-Amz-Security-Token", "X-Amz-Signature"]
    static let redactedHeaderNames: Set<String> = ["authorization", "x-amz-security-token"]

    /// "GET example.com /ws?X-Amz-Signature=<redacted> [X-Amz-Date: 20150830T123600Z]".
    public var description: String {
        var text = method + " " + host + " " + (path.isEmpty ? "/" : path)
        if !query.isEmpty {
            text += "?" + query.map { pair in
                SigV4Encoding.encode(pair.name) + "=" + (Self.redactedQueryNames.contains(pair.name) ? "<redacted>" : SigV4Encoding.encode(pair.value))
            }.joined(separator: "&")
        }
        if !headers.isEmpty {
            text += " [" + headers.map { header in
                header.name + ": " + (Self.redactedHeaderNames.contains(header.name.lowercased()) ? "<redacted>" : header.value)
            }.joined(separator: ", ") + "]"
        }
        return text
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror { Mirror(self, children: ["request": description]) }
}

/// SigV4's percent-encoding: RFC 3986's unreserved characters (`A-Z a-z 0-9 - _ . ~`) stay,
/// every other byte of the UTF-8 becomes `%XX` in upper-case hex (a space is `%20`); and the
/// lower-case hex that digests are written in.
package enum SigV4Encoding {
    /// `text` encoded, each byte in `kept` left alone besides the unreserved ones.
    package static func encode(_ text: some StringProtocol, keeping kept: UInt8? = nil) -> String {
        let hexDigits = Array("0123456789ABCDEF".utf8)
        var bytes = [UInt8]()
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || byte == kept {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    package static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// A query component decoded: `+` is a space, `%XX` its byte, a `%` without two hex digits kept.
    package static func decode(_ text: some StringProtocol) -> String {
        String(decoding: percentDecoded(text, plusIsSpace: true), as: UTF8.self)
    }

    /// The bytes of a percent-encoded text (`%41` → `A`); a `%` not followed by two hex digits
    /// stays, and `+` becomes a space when `plusIsSpace` (a query, not a URL's user information).
    package static func percentDecoded(_ text: some StringProtocol, plusIsSpace: Bool) -> [UInt8] {
        let input = Array(text.utf8)
        var bytes = [UInt8]()
        bytes.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "%"), index + 2 < input.count, let high = hexValue(input[index + 1]), let low = hexValue(input[index + 2]) {
                bytes.append(high << 4 | low)
                index += 3
                continue
            }
            bytes.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index += 1
        }
        return bytes
    }

    /// `bytes` as lower-case hexadecimal, two digits a byte.
    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
