import Testing
import VoicePipeSession

/// Hostile messages for `WireCodec.decode` under the WebSocket transport's 16 MiB message limit:
/// each is decoded to exactly what it says, or refused with a typed error naming why. How the
/// time grows with the size is measured in the benchmark package (`--filter json-hostile`), which
/// times each shape at n and 10n; here a bound only catches a hang. (Nesting 100 000 deep and
/// 60 000 keys are in JSONParserTests and WireCodecTests.)
struct HostileJSONTests {
    /// What the WebSocket transport lets through: messages of up to 16 MiB.
    static let transportLimits = WireLimits(maxMessageBytes: 16 << 20)

    /// A `debug` message carrying `value` (JSON text) as an extra field `x`.
    static func debug(carrying value: String) -> String {
        #"{"type":"debug","message":"m","x":"# + value + "}"
    }

    static func decode(_ text: String) throws(WireError) -> WireEnvelope {
        try WireCodec.decode(text, limits: transportLimits)
    }

    /// The syntax error that decoding `text` ends with: its offset and reason; nil when it decodes
    /// or fails otherwise (recorded).
    static func syntaxError(of text: String, sourceLocation: SourceLocation = #_sourceLocation) -> (offset: Int, reason: String)? {
        do {
            _ = try decode(text)
            Issue.record("decoded", sourceLocation: sourceLocation)
        } catch {
            guard case .notJSON(let syntax) = error else {
                Issue.record("\(error)", sourceLocation: sourceLocation)
                return nil
            }
            return (syntax.offset, syntax.reason)
        }
        return nil
    }

    // MARK: Nesting

    /// The parser counts the message's own object as level 1: `x` may hold 127 more levels, and
    /// one more is refused at the offset of the bracket that goes too deep.
    @Test(arguments: [("[", "]"), (#"{"k":"#, "}")])
    func nestingUpToTheDepthLimitDecodesAndOneLevelMoreIsRefusedWhereItStarts(open: String, close: String) throws {
        let deepest = Self.debug(carrying: String(repeating: open, count: 127) + "0" + String(repeating: close, count: 127))
        let envelope = try Self.decode(deepest)
        var containers = 0
        var value = envelope.extras["x"]
        while true {
            switch value {
            case .array(let items)?: value = items.first
            case .object(let object)?: value = object["k"]
            default: break
            }
            if case .array? = value { containers += 1 } else if case .object? = value { containers += 1 } else { break }
        }
        // x itself and the 126 containers inside it, with the message's object: 128 levels.
        #expect(1 + containers + 1 == 128)
        #expect(value == .integer(0))

        let tooDeep = Self.debug(carrying: String(repeating: open, count: 128) + "0" + String(repeating: close, count: 128))
        let prefix = Self.debug(carrying: "").utf8.count - 1  // up to the value of x
        let refusal = Self.syntaxError(of: tooDeep)
        #expect(refusal?.offset == prefix + 127 * open.utf8.count)
        #expect(refusal?.reason == "nesting deeper than 128 levels")
    }

    @Test func nestingAMillionDeepIsRefusedAtLevel129WithoutReadingFurther() {
        let text = String(repeating: "[", count: 1_000_000)
        let refusal = Self.syntaxError(of: text)
        #expect(refusal?.offset == 128)
        #expect(refusal?.reason == "nesting deeper than 128 levels")
    }

    // MARK: Size

    @Test func aHundredThousandKeysAreAllKeptInOrder() throws {
        let keys = (0..<100_000).map { "k\($0)" }
        let text = #"{"type":"debug","message":"m","# + keys.enumerated().map { #""\#($1)":\#($0)"# }.joined(separator: ",") + "}"
        let envelope = try Self.decode(text)
        #expect(envelope.message == .debug(message: "m"))
        #expect(envelope.extras.keys == keys)
        #expect(envelope.extras["k99999"] == .integer(99_999))
    }

    @Test func aMillionElementArrayDecodesWithinTheTransportLimitAndIsRefusedUnderTheDefaultOne() throws {
        let elements = (0..<1_000_000).map { String($0 % 10) }
        let text = Self.debug(carrying: "[" + elements.joined(separator: ",") + "]")
        #expect(text.utf8.count < 16 << 20)
        guard case .array(let items)? = try Self.decode(text).extras["x"] else {
            Issue.record("x is not an array")
            return
        }
        #expect(items.count == 1_000_000)
        #expect(items.enumerated().allSatisfy { $1 == .integer($0 % 10) })
        // The codec's own default (audio-sized: 1 MiB of payload in base64) refuses it unread.
        #expect(throws: WireError.messageTooLarge(bytes: text.utf8.count, limit: WireLimits.default.maxMessageBytes)) {
            try WireCodec.decode(text)
        }
    }

    @Test func aMessageOverTheTransportLimitIsRefusedBeforeItIsParsed() {
        // Not even JSON: refused on its size alone.
        let text = String(repeating: "[", count: (16 << 20) + 1)
        #expect(throws: WireError.messageTooLarge(bytes: (16 << 20) + 1, limit: 16 << 20)) { try Self.decode(text) }
    }

    // MARK: Strings

    /// Half a million escapes of every kind in one string: each decoded to its character.
    @Test func longRunsOfEscapesDecodeToExactlyTheirCharacters() throws {
        let escapes = [#"\n"#, #"\""#, #"\\"#, #"\/"#, #"\u00e9"#, #"\ud83d\ude00"#, #"\t"#, #"\u0000"#]
        let meaning = ["\n", "\"", "\\", "/", "é", "😀", "\t", "\u{0}"]
        let count = 500_000
        let text = #"{"type":"debug","message":""# + (0..<count).map { escapes[$0 % escapes.count] }.joined() + #""}"#
        let envelope = try Self.decode(text)
        let expected = (0..<count).map { meaning[$0 % meaning.count] }.joined()
        #expect(envelope.message == .debug(message: expected))
        guard case .debug(let message) = envelope.message else { return }
        #expect(message.unicodeScalars.count == count)
    }

    @Test func aLoneSurrogateAtTheEndOfAMillionEscapesIsRefusedWhereItStands() {
        let body = String(repeating: #"\u0041"#, count: 1_000_000)
        let text = #"{"type":"debug","message":""# + body + #"\ud83d"}"#
        let refusal = Self.syntaxError(of: text)
        #expect((refusal?.offset ?? 0) >= 27 + body.utf8.count, "\(String(describing: refusal))")
    }

    // MARK: Numbers

    @Test func anIntegerOfAHundredThousandDigitsIsRefusedAsOutOfRange() {
        let digits = String(repeating: "7", count: 100_000)
        let text = Self.debug(carrying: digits)
        let refusal = Self.syntaxError(of: text)
        #expect(refusal?.offset == Self.debug(carrying: "").utf8.count - 1)
        #expect(refusal?.reason == "the number \(digits) is out of range")
    }

    static let longNumbers: [(String, Double)] = [
        ("0." + String(repeating: "3", count: 100_000), 1.0 / 3.0),
        ("1" + String(repeating: "0", count: 100_000) + "e-100000", 1.0),
        ("-0." + String(repeating: "0", count: 99_999) + "1e99999", -0.1),
    ]

    @Test(arguments: longNumbers)
    func aNumberOfAHundredThousandDigitsThatADoubleHoldsDecodesToTheNearestDouble(text: String, value: Double) throws {
        let envelope = try Self.decode(Self.debug(carrying: text))
        guard case .number(let number)? = envelope.extras["x"] else {
            Issue.record("\(String(describing: envelope.extras["x"]))")
            return
        }
        #expect(number == value)
    }
}
