/// Why text is not JSON: what was wrong and the byte offset where it was found.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    public let offset: Int
    public let reason: String
    public var description: String { "\(reason) at byte \(offset)" }
}

/// A strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// Strict: one value surrounded only by JSON whitespace; no comments, trailing commas, NaN or
/// single quotes; strings must be valid UTF-8 with valid escapes. A key appears at most once in
/// an object: RFC 8259 leaves repeated keys to each implementation, and taking the first or the
/// last silently would let two readers of one message disagree, so a repeat is a
/// ``JSONSyntaxError`` naming the key, at the offset of the repeated key's opening quote
/// (`{"z":1,"a":2,"z":3}` fails with "the object repeats the key "z" at byte 13"); the repeat is
/// noticed once its value is read, so an error inside that value is the one reported. Keys are
/// compared unescaped, so `"\u007a"` repeats `"z"`. Nesting is limited (default 128) so hostile
/// input cannot exhaust the stack. Time is linear in the length of the text, however many keys an
/// object has. Never traps.
public struct JSONParser {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0
    private let maximumDepth: Int

    /// Parses one JSON text.
    public static func parse(_ text: String, maximumDepth: Int = 128) throws(JSONSyntaxError) -> JSONValue {
        var copy = text
        return try copy.withUTF8 { buffer in
            Result { () throws(JSONSyntaxError) in try parse(UnsafeRawBufferPointer(buffer), maximumDepth: maximumDepth) }
        }.get()
    }

    /// Parses one JSON text from UTF-8 bytes.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maximumDepth: Int = 128) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.position == bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    private init(bytes: UnsafeRawBufferPointer, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    private func error(_ reason: String, at offset: Int? = nil) -> JSONSyntaxError {
        JSONSyntaxError(offset: offset ?? position, reason: reason)
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            position += 1
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard let byte = current else { throw error("the text ends where a value should be") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character '\(Self.printable(byte))' where a value should be")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let start = position
        for expected in UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount) {
            guard current == expected else { throw error("invalid literal (expected \(literal))", at: start) }
            position += 1
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= maximumDepth else { throw error("nesting deeper than \(maximumDepth) levels") }
        position += 1
        var object = JSONObject()
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            position += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a string key in the object") }
            let keyOffset = position
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':' after the key \(JSONWriter.quoted(key))") }
            position += 1
            skipWhitespace()
            guard object.insertNew(key, try parseValue(depth: depth)) else {
                throw error("the object repeats the key \(JSONWriter.quoted(key))", at: keyOffset)
            }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return .object(object)
            case nil: throw error("the text ends inside an object")
            default: throw error("expected ',' or '}' in the object")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= maximumDepth else { throw error("nesting deeper than \(maximumDepth) levels") }
        position += 1
        var array = [JSONValue]()
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
            return .array(array)
        }
        while true {
            skipWhitespace()
            array.append(try parseValue(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return .array(array)
            case nil: throw error("the text ends inside an array")
            default: throw error("expected ',' or ']' in the array")
            }
        }
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = position
        var isInteger = true
        if current == UInt8(ascii: "-") { position += 1 }
        guard let first = current, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
            throw error("a number needs a digit after '-'")
        }
        if first == UInt8(ascii: "0") {
            position += 1
            if let next = current, next >= UInt8(ascii: "0"), next <= UInt8(ascii: "9") {
                throw error("a number cannot have a leading zero")
            }
        } else {
            skipDigits()
        }
        if current == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard skipDigits() > 0 else { throw error("a number needs digits after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard skipDigits() > 0 else { throw error("a number needs digits in its exponent") }
        }
        // Up to 18 digits always fit in Int: summed here without making a String.
        let digits = bytes[start] == UInt8(ascii: "-") ? position - start - 1 : position - start
        if isInteger && digits <= 18 {
            var magnitude = 0
            for offset in (position - digits)..<position { magnitude = magnitude * 10 + Int(bytes[offset] - UInt8(ascii: "0")) }
            return .integer(bytes[start] == UInt8(ascii: "-") ? -magnitude : magnitude)
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if isInteger, let integer = Int(text) {
            return .integer(integer)
        }
        guard let double = Double(text), double.isFinite else { throw error("the number \(text) is out of range", at: start) }
        return .number(double)
    }

    @discardableResult
    private mutating func skipDigits() -> Int {
        let start = position
        while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { position += 1 }
        return position - start
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        let start = position
        position += 1
        var scalars = String.UnicodeScalarView()
        var runStart = position
        var isASCII = true
        func flushRun(_ end: Int) throws(JSONSyntaxError) {
            guard end > runStart else { return }
            let run = UnsafeRawBufferPointer(rebasing: bytes[runStart..<end])
            guard let text = String(validating: run, as: UTF8.self) else {
                throw JSONSyntaxError(offset: runStart, reason: "a string is not valid UTF-8")
            }
            scalars.append(contentsOf: text.unicodeScalars)
        }
        while true {
            guard let byte = current else { throw error("the text ends inside a string that starts", at: start) }
            switch byte {
            case UInt8(ascii: "\"") where runStart == start + 1:
                // No escapes (most strings, every key of a wire message): one copy, validated
                // unless every byte was ASCII (which is valid UTF-8 as it stands).
                let run = UnsafeRawBufferPointer(rebasing: bytes[runStart..<position])
                let text: String
                if isASCII {
                    text = String(decoding: run, as: UTF8.self)
                } else if let valid = String(validating: run, as: UTF8.self) {
                    text = valid
                } else {
                    throw JSONSyntaxError(offset: runStart, reason: "a string is not valid UTF-8")
                }
                position += 1
                return text
            case UInt8(ascii: "\""):
                try flushRun(position)
                position += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flushRun(position)
                position += 1
                scalars.append(try parseEscape())
                runStart = position
            case 0..<0x20:
                throw error("a control character must be escaped inside a string")
            case 0x80...:
                isASCII = false
                position += 1
            default:
                position += 1
            }
        }
    }

    private mutating func parseEscape() throws(JSONSyntaxError) -> Unicode.Scalar {
        guard let byte = current else { throw error("the text ends inside an escape") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try parseHex4()
            if (0xD800..<0xDC00).contains(unit) {
                guard current == UInt8(ascii: "\\"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u") else {
                    throw error("a high surrogate escape must be followed by a low surrogate escape")
                }
                position += 2
                let low = try parseHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("invalid low surrogate escape") }
                let value = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                guard let scalar = Unicode.Scalar(value) else { throw error("invalid surrogate pair") }
                return scalar
            }
            guard let scalar = Unicode.Scalar(unit) else { throw error("a lone low surrogate escape") }
            return scalar
        default:
            throw error("invalid escape '\\\(Self.printable(byte))'", at: position - 2)
        }
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw error("the text ends inside a \\u escape") }
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("a \\u escape needs four hex digits")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    private static func printable(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? String(UnicodeScalar(byte)) : "0x" + String(byte, radix: 16, uppercase: true)
    }
}
