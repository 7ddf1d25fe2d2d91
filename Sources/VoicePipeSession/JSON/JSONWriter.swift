/// Compact JSON text: no spaces, keys in the order given, '/' not escaped, non-ASCII as UTF-8.
public enum JSONWriter {
    /// The JSON text of a value.
    public static func string(_ value: JSONValue) -> String {
        var out = ""
        write(value, to: &out)
        return out
    }

    /// Appends the JSON text of a value.
    public static func write(_ value: JSONValue, to out: inout String) {
        switch value {
        case .null: out += "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .integer(let integer): out += String(integer)
        case .number(let number): out += numberText(number)
        case .string(let text): writeString(text, to: &out)
        case .array(let array):
            out += "["
            for (index, element) in array.enumerated() {
                if index > 0 { out += "," }
                write(element, to: &out)
            }
            out += "]"
        case .object(let object):
            out += "{"
            for (index, entry) in object.entries.enumerated() {
                if index > 0 { out += "," }
                writeString(entry.key, to: &out)
                out += ":"
                write(entry.value, to: &out)
            }
            out += "}"
        }
    }

    /// A number as JSON: integral values without a fraction, others in Swift's shortest round-trip
    /// form; non-finite numbers (which JSON cannot carry) as null.
    public static func numberText(_ number: Double) -> String {
        guard number.isFinite else { return "null" }
        if number == number.rounded(), abs(number) < 9_007_199_254_740_992 {
            return String(Int(number))
        }
        return String(number)
    }

    /// A string as JSON text for a message to a person: escaped, so it stays on one line, and cut
    /// after `limit` characters with "…" after the closing quote.
    static func quoted(_ text: String, limit: Int = 40) -> String {
        let shown = text.prefix(limit)
        return string(.string(String(shown))) + (shown.count < text.count ? "…" : "")
    }

    /// A string with the escapes JSON requires.
    public static func writeString(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
