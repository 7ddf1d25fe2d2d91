import Testing
import VoicePipeSession

/// The strict JSON parser and the compact writer.
struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONParser.parse(#" { "a" : [1, -2.5, 3e2, true, false, null, "x"], "b": {}, "c": [] } "#)
        #expect(value == .object(["a": .array([.integer(1), .number(-2.5), .number(300), .bool(true), .bool(false), .null, .string("x")]), "b": .object(JSONObject()), "c": .array([])]))
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        #expect(try JSONParser.parse(#""a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00""#) == .string("a\"b\\c/d\u{08}\u{0C}\n\r\té😀"))
        #expect(try JSONParser.parse("\"café ☕\"") == .string("café ☕"))
    }

    @Test func keepsKeyOrderAndLastDuplicate() throws {
        guard case .object(let object) = try JSONParser.parse(#"{"z":1,"a":2,"z":3}"#) else {
            Issue.record("not an object")
            return
        }
        #expect(object.keys == ["z", "a"])
        #expect(object["z"] == .integer(3))
    }

    @Test func integersStayIntegers() throws {
        #expect(try JSONParser.parse("9007199254740993") == .integer(9_007_199_254_740_993))
        #expect(try JSONParser.parse("-0") == .integer(0))
        #expect(try JSONParser.parse("1.0") == .number(1))
        #expect(try JSONParser.parse("99999999999999999999") == .number(1e20))
    }

    @Test(arguments: [
        ("", 0), ("{", 1), ("[1,]", 3), ("{\"a\":1,}", 7), ("01", 1), ("1.", 2), ("-", 1), ("1e", 2), ("tru", 0),
        ("\"abc", 0), ("\"a\u{01}\"", 2), ("\"\\x\"", 1), ("\"\\u12\"", 5), ("\"\\ud83d\"", 7), ("{\"a\" 1}", 5),
        ("[1 2]", 3), ("nan", 0), ("1 2", 2), ("{'a':1}", 1), ("1e400", 0),
    ])
    func rejectsInvalidJSONWithTheOffset(text: String, offset: Int) {
        do {
            _ = try JSONParser.parse(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.offset == offset, "\(text): \(error)")
        }
    }

    @Test func rejectsInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]
        #expect(throws: JSONSyntaxError.self) { try bytes.withUnsafeBytes { try JSONParser.parse($0) } }
    }

    @Test func deepNestingIsRefusedNotAStackOverflow() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(deep) }
        #expect(throws: Never.self) { try JSONParser.parse(String(repeating: "[", count: 100) + String(repeating: "]", count: 100)) }
    }

    @Test func writerIsCompactAndRoundTrips() throws {
        let value: JSONValue = .object(["k": .string("line\nbreak \u{01} \"q\" / ☕"), "n": .number(0.1), "i": .integer(-5), "d": .number(12), "l": .array([.null, .bool(false)])])
        let text = JSONWriter.string(value)
        #expect(text == #"{"k":"line\nbreak \u0001 \"q\" / ☕","n":0.1,"i":-5,"d":12,"l":[null,false]}"#)
        let reparsed = try JSONParser.parse(text)
        #expect(JSONWriter.string(reparsed) == text)
        #expect(JSONWriter.numberText(.infinity) == "null")
    }
}
