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

    @Test func keepsKeyOrder() throws {
        guard case .object(let object) = try JSONParser.parse(#"{"z":1,"a":2,"m":{"y":3,"b":4}}"#) else {
            Issue.record("not an object")
            return
        }
        #expect(object.keys == ["z", "a", "m"])
        #expect(object["m"] == .object(["y": .integer(3), "b": .integer(4)]))
    }

    /// A repeated key is an error naming the key, at the offset of its second opening quote.
    @Test(arguments: [
        (#"{"z":1,"a":2,"z":3}"#, 13, #"the object repeats the key "z" at byte 13"#),
        (#"{"z":1,"\u007a":2}"#, 7, #"the object repeats the key "z" at byte 7"#),
        (#"{ "a" : 1 , "a" : 1 }"#, 12, #"the object repeats the key "a" at byte 12"#),
        (#"[{"a":{"b":1,"b":2}}]"#, 13, #"the object repeats the key "b" at byte 13"#),
        (#"{"line\nbreak":1,"line\nbreak":2}"#, 17, #"the object repeats the key "line\nbreak" at byte 17"#),
    ])
    func refusesARepeatedKeyNamingItAndItsOffset(text: String, offset: Int, description: String) {
        do {
            _ = try JSONParser.parse(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.offset == offset, "\(text)")
            #expect(error.description == description)
        }
    }

    @Test func theSameKeyInDifferentObjectsIsNoRepeat() throws {
        let value = try JSONParser.parse(#"{"a":{"a":1},"b":[{"a":2},{"a":3}]}"#)
        #expect(value == .object(["a": .object(["a": .integer(1)]), "b": .array([.object(["a": .integer(2)]), .object(["a": .integer(3)])])]))
    }

    /// Past the size where objects get an index: every key kept in order, a late repeat of an early
    /// key found at its offset, and a long key cut short in the message.
    @Test func largeObjectsKeepOrderAndRefuseRepeats() throws {
        let fields = (0..<60_000).map { #""f\#($0)":\#($0)"# }
        let text = "{" + fields.joined(separator: ",") + "}"
        guard case .object(let object) = try JSONParser.parse(text) else {
            Issue.record("not an object")
            return
        }
        #expect(object.keys == (0..<60_000).map { "f\($0)" })
        #expect(object["f59999"] == .integer(59_999))
        #expect(object.index(forKey: "f12345") == 12_345)

        let repeated = "{" + fields.joined(separator: ",") + #","f17":0}"#
        do {
            _ = try JSONParser.parse(repeated)
            Issue.record("accepted a repeat")
        } catch {
            #expect(error.offset == text.utf8.count)
            #expect(error.reason == #"the object repeats the key "f17""#)
        }

        let long = String(repeating: "k", count: 100)
        do {
            _ = try JSONParser.parse(#"{"\#(long)":1,"\#(long)":2}"#)
            Issue.record("accepted a repeat")
        } catch {
            #expect(error.description == #"the object repeats the key ""# + String(repeating: "k", count: 40) + #""… at byte 106"#)
        }
    }

    @Test func integersStayIntegers() throws {
        #expect(try JSONParser.parse("9007199254740993") == .integer(9_007_199_254_740_993))
        #expect(try JSONParser.parse("-0") == .integer(0))
        #expect(try JSONParser.parse("1.0") == .number(1))
        #expect(try JSONParser.parse("99999999999999999999") == .number(1e20))
        #expect(try JSONParser.parse("-999999999999999999") == .integer(-999_999_999_999_999_999))
        #expect(try JSONParser.parse("9223372036854775807") == .integer(.max))
        #expect(try JSONParser.parse("-9223372036854775808") == .integer(.min))
        #expect(try JSONParser.parse("9223372036854775808") == .number(9_223_372_036_854_775_808))
        #expect(try JSONParser.parse("[0,-0,7,-12,1e2]") == .array([.integer(0), .integer(0), .integer(7), .integer(-12), .number(100)]))
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
        // The offset is where the run of text holding the bad byte starts, with or without escapes.
        for (bytes, offset) in [([0x5B, 0x22, 0x61, 0x80, 0x22, 0x5D], 2), ([0x22, 0x5C, 0x6E, 0x61, 0xFF, 0x22], 3)] as [([UInt8], Int)] {
            let result = bytes.withUnsafeBytes { raw in Result { () throws(JSONSyntaxError) in try JSONParser.parse(raw) } }
            guard case .failure(let error) = result else {
                Issue.record("accepted \(bytes)")
                continue
            }
            #expect(error.offset == offset)
            #expect(error.reason == "a string is not valid UTF-8")
        }
    }

    @Test func stringsWithAndWithoutEscapesReadTheSame() throws {
        for text in ["", "plain ascii", "café ☕ 😀", String(repeating: "long ", count: 10_000)] {
            let escaped = text.split(separator: "a", omittingEmptySubsequences: false).joined(separator: #"\u0061"#)
            #expect(try JSONParser.parse("\"\(text)\"") == .string(text))
            #expect(try JSONParser.parse("\"\(escaped)\"") == .string(text))
        }
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
