import Testing
import VoicePipeCore
import VoicePipeSession

/// Every wire message type, pinned byte for byte, and every way a message can be malformed.
struct WireCodecTests {
    /// Found by the audio-chunk fuzz target: the fast path counted an escaped surrogate pair in
    /// the data as two 3-byte characters, the JSON parser as one 4-byte character, so the two
    /// paths refused the same chunk with different errors (wrong length against bad character).
    @Test(arguments: [
        (#"{"type":"audio.chunk","data":"AAA\uD83D\uDE00","sampleRate":16000}"#, Base64Error.invalidLength(7)),
        (#"{"type":"audio.chunk","data":"mP3//v3+q/1AEL/8o+y/2ievO3luDDefal~\uDAfa\uDDefacExgCYLDbf8=","sampleRate":16000}"#,
         Base64Error.invalidCharacter(0x7E, offset: 34)),
        (#"{"type":"audio.chunk","data":"AAAA\ud83d\ude00AAA=","sampleRate":16000}"#, Base64Error.invalidCharacter(0xF0, offset: 4)),
    ])
    func anEscapedSurrogatePairInTheDataIsOneCharacterOnBothPaths(message: String, error: Base64Error) throws {
        #expect(AudioChunkJSON.decode(message) == .failure(.badBase64(error)))
        #expect(throws: WireError.audioChunk(.badBase64(error))) { try WireCodec.decode(message) }
        // With an extra field only the general path reads it.
        let extra = message.replacing(#""sampleRate""#, with: #""x":1,"sampleRate""#)
        #expect(throws: WireError.audioChunk(.badBase64(error))) { try WireCodec.decode(extra) }
    }

    /// Found by the audio-chunk fuzz target: `"sampleRate":-0` was named `-0` by the fast path
    /// and `0` by the general decoder (which reads it as the integer 0); both name it `0` now.
    @Test func aNegativeZeroRateIsRefusedInTheSameWordsOnBothPaths() throws {
        let message = #"{"type":"audio.chunk","data":"mP5//v3+q/8HAAMA+v8rf7w/1Intl3Q3","sampleRate":-0}"#
        #expect(AudioChunkJSON.decode(message) == .failure(.badSampleRate("0")))
        #expect(throws: WireError.audioChunk(.badSampleRate("0"))) { try WireCodec.decode(message) }
        let extra = message.replacing(#""sampleRate""#, with: #""x":1,"sampleRate""#)
        #expect(throws: WireError.audioChunk(.badSampleRate("0"))) { try WireCodec.decode(extra) }
    }

    /// One example of every type and its exact JSON.
    static let examples: [(WireMessage, String)] = [
        (.sessionStart(sessionId: "s-42", context: ["locale": .string("en-US"), "caller": .object(["tier": .integer(2)])]),
         #"{"type":"session.start","sessionId":"s-42","context":{"locale":"en-US","caller":{"tier":2}}}"#),
        (.audioChunk(AudioChunk(sampleRate: 16_000, samples: [0, 1, -1, 32767, -32768])),
         #"{"type":"audio.chunk","data":"AAABAP///38AgA==","sampleRate":16000}"#),
        (.textInput(text: "Where is my order? \"#123\"\n"),
         ##"{"type":"text.input","text":"Where is my order? \"#123\"\n"}"##),
        (.escalationRequest(reason: "customer asked for a human"),
         #"{"type":"escalation.request","reason":"customer asked for a human"}"#),
        (.sessionEnd, #"{"type":"session.end"}"#),
        (.transcript(role: .assistant, text: "Your order ships tomorrow.", isFinal: true),
         #"{"type":"transcript","role":"assistant","text":"Your order ships tomorrow.","final":true}"#),
        (.transcript(role: .user, text: "where is", isFinal: false),
         #"{"type":"transcript","role":"user","text":"where is","final":false}"#),
        (.toolCall(id: "call_1", name: "lookup_order", input: .object(["orderId": .string("123")])),
         #"{"type":"tool.call","id":"call_1","name":"lookup_order","input":{"orderId":"123"}}"#),
        (.toolResult(id: "call_1", name: "lookup_order", output: .object(["status": .string("shipped"), "eta": .array([.integer(1), .null])]), durationMilliseconds: 12),
         #"{"type":"tool.result","id":"call_1","name":"lookup_order","output":{"status":"shipped","eta":[1,null]},"durationMs":12}"#),
        (.classification(label: "billing", confidence: 0.93),
         #"{"type":"classification","label":"billing","confidence":0.93}"#),
        (.escalation(status: "requested"), #"{"type":"escalation","status":"requested"}"#),
        (.interruption, #"{"type":"interruption"}"#),
        (.infoMessage(markdown: "**Note:** café ☕ / 😀"), #"{"type":"info.message","markdown":"**Note:** café ☕ / 😀"}"#),
        (.sessionEnded(reason: "idle timeout"), #"{"type":"session.ended","reason":"idle timeout"}"#),
        (.error(message: "rate limited", code: "rate_limited"), #"{"type":"error","message":"rate limited","code":"rate_limited"}"#),
        (.debug(message: "vad: speech start"), #"{"type":"debug","message":"vad: speech start"}"#),
        (.sessionResumed(audioChunks: 88, texts: 2), #"{"type":"session.resumed","audioChunks":88,"texts":2}"#),
    ]

    @Test func everyTypeEncodesToItsExactJSON() {
        let covered = Set(Self.examples.map(\.0.type))
        #expect(covered == Set(MessageType.known), "one example of every known type")
        for (message, json) in Self.examples {
            #expect(WireCodec.encode(message) == json)
        }
    }

    @Test func everyTypeDecodesFromItsJSON() throws {
        for (message, json) in Self.examples {
            let envelope = try WireCodec.decode(json)
            #expect(envelope.message == message, "\(json)")
            #expect(envelope.extras.isEmpty)
        }
    }

    @Test func outgoingAudioChunkIsPinnedByteForByte() {
        let chunk = WireMessage.audioChunk(AudioChunk(sampleRate: 16_000, samples: [1000, -1000, 12345]))
        #expect(Array(WireCodec.encode(chunk).utf8) == Array(#"{"type":"audio.chunk","data":"6AMY/Dkw","sampleRate":16000}"#.utf8))
    }

    @Test func incomingAudioChunksDecodeInAnyKeyOrderAndSpacing() throws {
        let samples: [Int16] = [1000, -1000, 12345]
        for json in [
            #"{"type":"audio.chunk","data":"6AMY/Dkw","sampleRate":24000}"#,
            #"{ "sampleRate" : 24000 , "data" : "6AMY\/Dkw", "type" : "audio.chunk" }"#,
            "{\"data\":\"6AMY/Dkw\",\n\t\"type\":\"audio.chunk\",\"sampleRate\":24000}\r\n",
        ] {
            #expect(try WireCodec.decode(json).message == .audioChunk(AudioChunk(sampleRate: 24_000, samples: samples)), "\(json)")
        }
    }

    @Test func aRuntimeErrorCodeMayBeAStringOrAWholeNumber() throws {
        #expect(try WireCodec.decode(#"{"type":"error","message":"rate limited","code":429}"#).message == .error(message: "rate limited", code: "429"))
        #expect(try WireCodec.decode(#"{"type":"error","message":"x","code":"E503"}"#).message == .error(message: "x", code: "E503"))
        #expect(throws: WireError.wrongFieldType(type: "error", field: "code", expected: "string", found: "boolean")) {
            try WireCodec.decode(#"{"type":"error","message":"x","code":true}"#)
        }
    }

    @Test func wrongFieldTypesAreToldInGoodEnglish() {
        #expect(WireError.wrongFieldType(type: "audio.chunk", field: "sampleRate", expected: "integer", found: "number").description
            == #"audio.chunk field "sampleRate" must be an integer, not a number with a fraction or exponent"#)
        #expect(WireError.wrongFieldType(type: "session.start", field: "context", expected: "object", found: "array").description
            == #"session.start field "context" must be an object, not an array"#)
        #expect(WireError.wrongFieldType(type: "transcript", field: "final", expected: "boolean", found: "string").description
            == #"transcript field "final" must be a boolean, not a string"#)
    }

    @Test func unknownTypesAndExtraFieldsAreKept() throws {
        let unknown = try WireCodec.decode(#"{"type":"avatar.pose","yaw":0.5,"tags":["a"]}"#)
        #expect(unknown.message == .unknown(type: "avatar.pose", fields: ["yaw": .number(0.5), "tags": .array([.string("a")])]))
        #expect(WireCodec.encode(unknown) == #"{"type":"avatar.pose","yaw":0.5,"tags":["a"]}"#)

        let extra = try WireCodec.decode(#"{"type":"transcript","role":"user","text":"hi","final":true,"turnId":7,"lang":"en"}"#)
        #expect(extra.message == .transcript(role: .user, text: "hi", isFinal: true))
        #expect(extra.extras == ["turnId": .integer(7), "lang": .string("en")])
        #expect(WireCodec.encode(extra) == #"{"type":"transcript","role":"user","text":"hi","final":true,"turnId":7,"lang":"en"}"#)

        let chunkWithExtra = try WireCodec.decode(#"{"type":"audio.chunk","data":"AQI=","sampleRate":24000,"seq":3}"#)
        #expect(chunkWithExtra.message == .audioChunk(AudioChunk(sampleRate: 24_000, samples: [0x0201])))
        #expect(chunkWithExtra.extras == ["seq": .integer(3)])
    }

    /// The hostile line: 60 000 unknown fields, every one kept as an extra, in order, and written
    /// back as it came; the message's own fields may stand anywhere among them.
    @Test func sixtyThousandUnknownFieldsAreAllKeptInOrder() throws {
        let names = (0..<60_000).map { "f\($0)" }
        let unknown = names.map { #""\#($0)":0"# }
        let text = #"{"type":"transcript","role":"user","text":"hi","final":true,"# + unknown.joined(separator: ",") + "}"
        let envelope = try WireCodec.decode(text)
        #expect(envelope.message == .transcript(role: .user, text: "hi", isFinal: true))
        #expect(envelope.extras.keys == names)
        #expect(envelope.extras.entries.allSatisfy { $0.value == .integer(0) })
        #expect(envelope.extras.index(forKey: "f59999") == 59_999)
        #expect(WireCodec.encode(envelope) == text)

        let scattered = "{" + unknown[0..<20_000].joined(separator: ",") + #","text":"hi","# + unknown[20_000..<40_000].joined(separator: ",")
            + #","role":"assistant","# + unknown[40_000...].joined(separator: ",") + #","type":"transcript"}"#
        let other = try WireCodec.decode(scattered)
        #expect(other.message == .transcript(role: .assistant, text: "hi", isFinal: false))
        #expect(other.extras.keys == names)

        let chunk = try WireCodec.decode(#"{"type":"audio.chunk","data":"AQI=","sampleRate":24000,"# + unknown.joined(separator: ",") + "}")
        #expect(chunk.message == .audioChunk(AudioChunk(sampleRate: 24_000, samples: [0x0201])))
        #expect(chunk.extras.keys == names)

        let pose = try WireCodec.decode(#"{"# + unknown[..<30_000].joined(separator: ",") + #","type":"avatar.pose","# + unknown[30_000...].joined(separator: ",") + "}")
        guard case .unknown(let type, let fields) = pose.message else {
            Issue.record("not kept as an unknown type")
            return
        }
        #expect(type == "avatar.pose")
        #expect(fields.keys == names)
    }

    /// A repeated key is refused by the JSON parser, audio.chunk included (its fast path leaves
    /// repeats to the general path), with the key and the repeat's offset.
    @Test func repeatedKeysAreRefusedWithTheirOffset() {
        let cases = [
            (#"{"type":"audio.chunk","data":"AQI=","data":"AQI=","sampleRate":24000}"#, 36, "data"),
            (#"{"type":"audio.chunk","data":"AQI=","sampleRate":24000,"sampleRate":16000}"#, 55, "sampleRate"),
            (#"{"type":"transcript","role":"user","text":"a","text":"b"}"#, 46, "text"),
            (#"{"type":"transcript","type":"debug","message":"x"}"#, 21, "type"),
        ]
        for (text, offset, key) in cases {
            do {
                _ = try WireCodec.decode(text)
                Issue.record("accepted \(text)")
            } catch {
                guard case .notJSON(let syntax) = error else {
                    Issue.record("\(text): \(error)")
                    continue
                }
                #expect(syntax.offset == offset, "\(text)")
                #expect(error.description == "not JSON: the object repeats the key \"\(key)\" at byte \(offset)")
            }
        }
    }

    @Test func optionalFieldsMayBeAbsentOrNull() throws {
        #expect(try WireCodec.decode(#"{"type":"transcript","role":"assistant","text":"..."}"#).message == .transcript(role: .assistant, text: "...", isFinal: false))
        #expect(try WireCodec.decode(#"{"type":"session.ended"}"#).message == .sessionEnded(reason: nil))
        #expect(try WireCodec.decode(#"{"type":"error","message":"boom","code":null}"#).message == .error(message: "boom", code: nil))
        #expect(try WireCodec.decode(#"{"type":"session.start","sessionId":"x"}"#).message == .sessionStart(sessionId: "x", context: JSONObject()))
        #expect(try WireCodec.decode(#"{"type":"tool.result","id":"1","name":"n","output":"ok"}"#).message == .toolResult(id: "1", name: "n", output: .string("ok"), durationMilliseconds: nil))
    }

    @Test func malformedMessagesAreTypedErrorsNamingTheProblem() {
        func error(_ json: String, limits: WireLimits = .default) -> WireError? {
            do {
                _ = try WireCodec.decode(json, limits: limits)
                return nil
            } catch {
                return error
            }
        }
        guard case .notJSON(let syntax) = error(#"{"type":"transcript","#) else {
            Issue.record("truncated JSON was accepted")
            return
        }
        #expect(syntax.offset == 21)
        #expect(error("hello") != nil)
        #expect(error(#"["audio.chunk"]"#) == .notAnObject(found: "array"))
        #expect(error(#"{"data":"AQI="}"#) == .missingType)
        #expect(error(#"{"type":7}"#) == .typeNotAString(found: "number"))
        #expect(error(#"{"type":"text.input"}"#) == .missingField(type: "text.input", field: "text"))
        #expect(error(#"{"type":"text.input","text":42}"#) == .wrongFieldType(type: "text.input", field: "text", expected: "string", found: "number"))
        #expect(error(#"{"type":"transcript","role":"bot","text":"x"}"#) == .invalidValue(type: "transcript", field: "role", reason: "must be \"user\" or \"assistant\", not \"bot\""))
        #expect(error(#"{"type":"transcript","role":"user","text":"x","final":"yes"}"#) == .wrongFieldType(type: "transcript", field: "final", expected: "boolean", found: "string"))
        #expect(error(#"{"type":"classification","label":"x","confidence":"high"}"#) == .wrongFieldType(type: "classification", field: "confidence", expected: "number", found: "string"))
        #expect(error(#"{"type":"audio.chunk","data":"AQI=","sampleRate":"24000"}"#) == .wrongFieldType(type: "audio.chunk", field: "sampleRate", expected: "integer", found: "string"))
        #expect(error(#"{"type":"audio.chunk","data":"AQI=","sampleRate":-1}"#) == .audioChunk(.badSampleRate("-1")))
        #expect(error(#"{"type":"session.resumed","audioChunks":-1,"texts":0}"#) == .invalidValue(type: "session.resumed", field: "audioChunks", reason: "must be zero or more, not -1"))
        #expect(error(#"{"type":"session.resumed","audioChunks":3,"texts":1.5}"#) == .wrongFieldType(type: "session.resumed", field: "texts", expected: "integer", found: "number"))
        #expect(error(#"{"type":"session.resumed","audioChunks":3}"#) == .missingField(type: "session.resumed", field: "texts"))
        #expect(error(#"{"type":"audio.chunk","data":"AQ==","sampleRate":24000}"#) == .audioChunk(.oddByteCount(1)))
        #expect(error(#"{"type":"audio.chunk","data":"AQ=A","sampleRate":24000}"#) != nil)
        // Bad base64 is reported as such, with its offset; the byte count is judged first, as
        // Core's fast path does, so "AQ!D" (3 bytes) is an odd byte count.
        #expect(error(#"{"type":"audio.chunk","data":"AQ!DAQ==","sampleRate":24000}"#) == .audioChunk(.badBase64(.invalidCharacter(0x21, offset: 2))))
        #expect(error(#"{"type":"audio.chunk","data":"AQ!D","sampleRate":24000}"#) == .audioChunk(.oddByteCount(3)))
        let big = String(repeating: "A", count: 4 * 1_000)
        #expect(error(#"{"type":"audio.chunk","data":"\#(big)","sampleRate":24000}"#, limits: WireLimits(maxPayloadBytes: 2_000)) == .audioChunk(.payloadTooLarge(bytes: 3_000, limit: 2_000)))
        #expect(error(#"{"type":"audio.chunk","data":"\#(big)","sampleRate":24000,"x":1}"#, limits: WireLimits(maxPayloadBytes: 2_000)) == .audioChunk(.payloadTooLarge(bytes: 3_000, limit: 2_000)))
        #expect(error(#"{"type":"debug","message":"\#(big)"}"#, limits: WireLimits(maxPayloadBytes: 100, maxMessageBytes: 1_000)) == .messageTooLarge(bytes: 4_029, limit: 1_000))
        #expect(WireError.audioChunk(.oddByteCount(3)).description == "the audio.chunk data decodes to 3 bytes; 16-bit audio needs an even number")
    }

    /// One malformed chunk, one error: the message as the fast path reads it, the same message with
    /// an extra field (the general path), and Core's fast path on its own all name the same
    /// AudioChunkError with the same numbers.
    @Test(arguments: [
        (#""AAA""#, "24000"), (#""A===""#, "24000"), (#""AA==""#, "24000"), (#""AAAA""#, "24000"), (#""AA!A""#, "24000"),
        (#""AAAAAA!A""#, "24000"), (#""AAAAAA-_""#, "24000"), (#""AAAAQR==""#, "24000"), (#""AA==AAAA""#, "24000"),
        (#""AAAAAAé""#, "24000"), (#""AAAAAA\u00e9""#, "24000"), (#""\/\/\/\/AA!A""#, "24000"), (#""\/\/\/\/AA\nA""#, "24000"),
        (#""AAAA\u003d\u003d\u003d\u003d""#, "24000"), (#""AAA\u00e9""#, "24000"), (#""AAAAAAAA""#, "0"), (#""AAAAAAAA""#, "-16000"),
        (#""AAAA AA=""#, "16000"), (#""AAAAAAA=""#, "16000"), (#""A*A=""#, "16000"), (#""AAAAAAAA\/\/""#, "16000"),
    ])
    func aMalformedChunkGetsTheSameErrorOnEitherPath(data: String, rate: String) {
        let fast = #"{"type":"audio.chunk","data":\#(data),"sampleRate":\#(rate)}"#
        let general = #"{"type":"audio.chunk","seq":7,"data":\#(data),"sampleRate":\#(rate)}"#
        guard case .failure(let expected) = AudioChunkJSON.decode(fast) else {
            Issue.record("Core's fast path accepted \(fast)")
            return
        }
        for text in [fast, general] {
            do {
                _ = try WireCodec.decode(text)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error == .audioChunk(expected), "\(text)")
            }
        }
    }

    @Test func garbageNeverTraps() {
        var generator = SplitMixForTests(seed: 99)
        let fragments = [#"{"type":"audio.chunk","data":""#, "AQI=", #"","sampleRate":"#, "24000", "}", "\\", "\\u12", "\"", "[", "{", ",", ":", "1e999", "-", "\u{FF}", "null", "true"]
        for _ in 0..<20_000 {
            var text = ""
            for _ in 0..<Int(generator.next() % 8) { text += fragments[Int(generator.next() % UInt64(fragments.count))] }
            _ = try? WireCodec.decode(text)
        }
    }
}

struct SplitMixForTests {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
