import Testing
@testable import VoicePipeCore
import VoicePipeTestSupport

/// The audio.chunk fast path's JSON scanner: strings found exactly wherever their delimiters fall
/// (the 32-byte AVX2 skip, the 16-byte skip, the 8-byte pinpointing and the byte-by-byte tail),
/// escapes undone exactly.
struct JSONScannerTests {
    static func scanString(_ text: [UInt8]) -> (content: Range<Int>, escaped: Bool, end: Int)? {
        text.withUnsafeBytes { raw in
            var scanner = JSONScanner(raw)
            guard let (content, escaped) = scanner.scanString() else { return nil }
            return (content, escaped, scanner.position)
        }
    }

    @Test func delimiterFlagsAreExactForEveryByteInEveryPosition() {
        for filler: UInt8 in [0x41, 0xFF, 0x21, 0x80] {
            for byte in UInt8.min...UInt8.max {
                for position in 0..<8 {
                    var bytes = [UInt8](repeating: filler, count: 8)
                    bytes[position] = byte
                    let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                    let isDelimiter = byte == 0x22 || byte == 0x5C || byte < 0x20
                    #expect(JSONScanner.firstFlagged(JSONScanner.delimiterFlags(word)) == (isDelimiter ? position : 8))
                }
            }
        }
        // With several delimiters, the first one in memory order.
        let bytes: [UInt8] = [0x41, 0x41, 0x41, 0x5C, 0x22, 0x00, 0x41, 0x22]
        #expect(JSONScanner.firstFlagged(JSONScanner.delimiterFlags(bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) })) == 3)
    }

    @Test func closingQuoteFoundAtEveryOffset() {
        for length in 0..<80 {
            for trailing in [0, 1, 20] {
                let text = [UInt8(ascii: "\"")] + [UInt8](repeating: UInt8(ascii: "Q"), count: length) + [UInt8(ascii: "\"")]
                    + [UInt8](repeating: UInt8(ascii: "x"), count: trailing)
                let result = Self.scanString(text)
                #expect(result?.content == 1..<(1 + length))
                #expect(result?.escaped == false)
                #expect(result?.end == length + 2)
            }
        }
    }

    @Test func everyByteValueInsideAString() {
        for offset in [0, 5, 15, 16, 17, 31, 40, 47, 63, 64] {
            for byte in UInt8.min...UInt8.max {
                let text = [UInt8(ascii: "\"")] + [UInt8](repeating: UInt8(ascii: "w"), count: offset) + [byte]
                    + [UInt8](repeating: UInt8(ascii: "w"), count: 30) + [UInt8(ascii: "\"")]
                let result = Self.scanString(text)
                switch byte {
                case UInt8(ascii: "\""): #expect(result?.content == 1..<(1 + offset))
                case UInt8(ascii: "\\"): #expect(result == nil, "\\w is not an escape")
                case 0..<0x20: #expect(result == nil, "raw control byte \(byte)")
                default: #expect(result?.content == 1..<(text.count - 1), "byte \(byte) at \(offset)")
                }
            }
        }
    }

    @Test func escapesAreCheckedForForm() {
        for escape in [#"\""#, #"\\"#, #"\/"#, #"\b"#, #"\f"#, #"\n"#, #"\r"#, #"\t"#, #"\u0041"#, #"\uD83D"#, #"\uffFF"#] {
            for offset in [0, 3, 14, 15, 16, 30] {
                let text = Array(("\"" + String(repeating: "a", count: offset) + escape + "z\"").utf8)
                let result = Self.scanString(text)
                #expect(result?.content == 1..<(text.count - 1), "\(escape) at \(offset)")
                #expect(result?.escaped == true)
            }
        }
        for bad in [#"\x"#, #"\u12"#, #"\u12G4"#, #"\U0041"#, #"\'"#, "\\"] {
            #expect(Self.scanString(Array(("\"ab" + bad + "\"").utf8)) == nil, "\(bad)")
        }
        #expect(Self.scanString(Array(#""ab\"#.utf8)) == nil, "unterminated")
        #expect(Self.scanString(Array(#""ab"#.utf8)) == nil, "unterminated")
    }

    @Test func numbersFollowTheJSONGrammar() {
        let integers = ["0", "-0", "7", "-7", "16000", "9223372036854775808"]
        let fractions = ["0.5", "-1.25", "1e5", "1E+5", "2e-3", "16000.0", "1.5E10"]
        let malformed = ["-", "01", "+1", "1.", ".5", "1e", "1e+", "--1", "0x10"]
        for (texts, expected) in [(integers, true), (fractions, false)] {
            for text in texts {
                let bytes = Array((text + ",").utf8)
                let scalar = bytes.withUnsafeBytes { raw -> JSONScanner.Scalar? in
                    var scanner = JSONScanner(raw)
                    return scanner.scanScalar()
                }
                guard case .number(let token, let isInteger) = scalar else {
                    Issue.record("\(text) not scanned as a number")
                    continue
                }
                #expect(token == 0..<text.utf8.count)
                #expect(isInteger == expected, "\(text)")
            }
        }
        for text in malformed {
            // Either refused, or it stops early and leaves the rest for the object grammar to refuse.
            let bytes = Array(text.utf8)
            let end = bytes.withUnsafeBytes { raw -> Int? in
                var scanner = JSONScanner(raw)
                return scanner.scanScalar() == nil ? nil : scanner.position
            }
            #expect(end == nil || end! < bytes.count, "\(text)")
        }
    }

    @Test func backslashFoundAtEveryOffset() {
        for length in 0..<70 {
            for position in 0...length {
                var bytes = [UInt8](repeating: UInt8(ascii: "B"), count: length)
                if position < length { bytes[position] = UInt8(ascii: "\\") }
                let found = bytes.withUnsafeBytes { JSONStringContent(bytes: $0, content: 0..<length).backslash(from: 0) }
                #expect(found == position)
            }
        }
    }

    /// A plain unescaper to hold `measure` and `Reader` to.
    static func unescape(_ content: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < content.count {
            guard content[i] == UInt8(ascii: "\\") else { out.append(content[i]); i += 1; continue }
            let kind = content[i + 1]
            i += 2
            switch kind {
            case UInt8(ascii: "b"): out.append(8)
            case UInt8(ascii: "f"): out.append(12)
            case UInt8(ascii: "n"): out.append(10)
            case UInt8(ascii: "r"): out.append(13)
            case UInt8(ascii: "t"): out.append(9)
            case UInt8(ascii: "u"):
                let unit = UInt32(String(decoding: content[i..<(i + 4)], as: UTF8.self), radix: 16) ?? 0
                i += 4
                if unit < 0x80 {
                    out.append(UInt8(unit))
                } else if unit < 0x800 {
                    out += [UInt8(0xC0 | unit >> 6), UInt8(0x80 | unit & 0x3F)]
                } else {
                    out += [UInt8(0xE0 | unit >> 12), UInt8(0x80 | (unit >> 6) & 0x3F), UInt8(0x80 | unit & 0x3F)]
                }
            default: out.append(kind)
            }
        }
        return out
    }

    @Test func unescapingMatchesAPlainUnescaper() {
        var rng = SplitMix64(seed: 21)
        let pieces = ["A", "Q", "/", "=", "+", "z", "09", #"\/"#, #"\\"#, #"\""#, #"\n"#, #"\t"#, #"\u0041"#, #"\u003d"#,
                      #"\u00e9"#, #"\u20AC"#, #"\uD83D"#, String(repeating: "x", count: 40)]
        for round in 0..<3_000 {
            var text = ""
            for _ in 0..<Int.random(in: 0...(round % 10 == 0 ? 400 : 30), using: &rng) {
                text += pieces.randomElement(using: &rng) ?? ""
            }
            if Bool.random(using: &rng) { text += Bool.random(using: &rng) ? "==" : #"=\u003D"# }
            let content = Array(text.utf8)
            let expected = Self.unescape(content)
            content.withUnsafeBytes { raw in
                let string = JSONStringContent(bytes: raw, content: 0..<content.count)
                let measured = string.measure(trailing: UInt8(ascii: "="))
                #expect(measured.count == expected.count)
                #expect(measured.trailingRun == expected.reversed().prefix { $0 == UInt8(ascii: "=") }.count, "\(text)")
                var reader = JSONStringContent.Reader(string)
                var out: [UInt8] = []
                var piece = [UInt8](repeating: 0, count: Int.random(in: 1...64, using: &rng))
                while true {
                    let got = piece.withUnsafeMutableBytes { reader.fill($0) }
                    out += piece[..<got]
                    if got < piece.count { break }
                }
                #expect(out == expected, "\(text)")
            }
        }
    }
}
