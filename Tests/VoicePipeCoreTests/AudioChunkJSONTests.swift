import AllocationCounting
import Foundation
import Testing
@testable import VoicePipeCore
import VoicePipeTestSupport

/// The audio.chunk fast path: the exact bytes it writes, what it reads, what it hands to the
/// general decoder, and every way the audio in a chunk can be wrong.
struct AudioChunkJSONTests {
    // MARK: Helpers

    static func encode(_ samples: [Int16], sampleRate: Int) -> String {
        samples.withUnsafeBufferPointer { AudioChunkJSON.encode($0, sampleRate: SampleRate(hertz: Double(sampleRate))) }
    }

    static func decode(_ message: String, maxPayloadBytes: Int = AudioChunkJSON.defaultMaxPayloadBytes) -> AudioChunkParse<AudioChunk> {
        AudioChunkJSON.decode(message, maxPayloadBytes: maxPayloadBytes)
    }

    static func parse(_ message: [UInt8], maxPayloadBytes: Int = AudioChunkJSON.defaultMaxPayloadBytes) -> AudioChunkParse<AudioChunkHeader> {
        message.withUnsafeBytes { AudioChunkJSON.parse($0, maxPayloadBytes: maxPayloadBytes) }
    }

    static func chunk(_ samples: [Int16], _ sampleRate: Int) -> AudioChunkParse<AudioChunk> {
        .chunk(AudioChunk(sampleRate: SampleRate(hertz: Double(sampleRate)), samples: samples))
    }

    static func message(data: String, sampleRate: String = "16000") -> String {
        #"{"type":"audio.chunk","data":"\#(data)","sampleRate":\#(sampleRate)}"#
    }

    static func randomSamples(_ count: Int, _ rng: inout SplitMix64) -> [Int16] {
        (0..<count).map { _ in Int16(truncatingIfNeeded: rng.next()) }
    }

    /// What Foundation's JSONSerialization writes for a chunk (it escapes "/" as "\/").
    static func foundationMessage(_ fields: [String: Any]) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: fields)
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: Writing

    @Test func exactBytesForKnownSamples() {
        // Little-endian bytes: 00 00 | 01 00 | FF FF | FF 7F | 00 80.
        // In threes: (00 00 01) → AAAB, (00 FF FF) → AP//, (FF 7F 00) → /38A, (80) → gA==.
        let samples: [Int16] = [0, 1, -1, 32767, -32768]
        let expected = #"{"type":"audio.chunk","data":"AAABAP///38AgA==","sampleRate":16000}"#
        #expect(Self.encode(samples, sampleRate: 16_000) == expected)
        #expect(AudioChunkJSON.encodedCount(sampleCount: 5, sampleRate: 16_000) == expected.utf8.count)
        #expect(Data([0, 0, 1, 0, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x80]).base64EncodedString() == "AAABAP///38AgA==")
        #expect(Self.encode([], sampleRate: 24_000) == #"{"type":"audio.chunk","data":"","sampleRate":24000}"#)
        #expect(Self.encode([0x0102], sampleRate: 8) == #"{"type":"audio.chunk","data":"AgE=","sampleRate":8}"#)
    }

    @Test func bufferEncodeWritesExactlyTheCountAndAllocatesNothing() {
        var rng = SplitMix64(seed: 1)
        _ = Self.encode([1, 2, 3], sampleRate: 16_000)   // warm-up: the tables are built on first use
        for count in [0, 1, 2, 3, 160, 320, 4_799] {
            let samples = Self.randomSamples(count, &rng)
            for rate in [1, 9, 10, 16_000, 24_000, 192_000, Int.max] {
                let needed = AudioChunkJSON.encodedCount(sampleCount: count, sampleRate: SampleRate(hertz: Double(rate)))
                var output = [UInt8](repeating: 0xEE, count: needed + 8)
                var written = 0
                let allocations = countAllocations {
                    written = samples.withUnsafeBufferPointer { s in output.withUnsafeMutableBytes { AudioChunkJSON.encode(s, sampleRate: SampleRate(hertz: Double(rate)), into: $0) } }
                }
                #expect(written == needed)
                #expect(output[needed...].allSatisfy { $0 == 0xEE })
                #expect(String(decoding: output[..<needed], as: UTF8.self) == Self.encode(samples, sampleRate: rate))
                #expect(allocations == 0)
            }
        }
    }

    @Test func foundationReadsWhatWeWrite() throws {
        var rng = SplitMix64(seed: 2)
        let samples = Self.randomSamples(1_000, &rng)
        let text = Self.encode(samples, sampleRate: 24_000)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object.count == 3)
        #expect(object["type"] as? String == "audio.chunk")
        #expect(object["sampleRate"] as? Int == 24_000)
        let base64 = try #require(object["data"] as? String)
        let bytes = try #require(Data(base64Encoded: base64))
        let decoded = stride(from: 0, to: bytes.count, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
        #expect(decoded == samples)
    }

    /// The big-endian path (swap through a stack buffer in pieces), run here on a little-endian host.
    @Test func byteSwappedEncodingMatchesEncodingSwappedSamples() {
        var rng = SplitMix64(seed: 3)
        for count in [1, 383, 384, 385, 768, 1_000] {
            let samples = Self.randomSamples(count, &rng)
            var output = [UInt8](repeating: 0, count: Base64.encodedCount(forByteCount: 2 * count))
            let written = samples.withUnsafeBufferPointer { s in output.withUnsafeMutableBytes { AudioChunkJSON.encodeByteSwapped(s, into: $0) } }
            #expect(written == output.count)
            #expect(output == Array(Base64.encode(samples.flatMap { [UInt8($0.byteSwapped & 0xFF), UInt8(UInt16(bitPattern: $0.byteSwapped) >> 8)] }).utf8))
        }
    }

    // MARK: Reading

    @Test func roundTripsAtBothWireRates() {
        var rng = SplitMix64(seed: 4)
        for count in [0, 1, 2, 3, 4, 160, 161, 480, 4_800, 24_000] {
            for rate in [16_000, 24_000] {
                let samples = Self.randomSamples(count, &rng)
                #expect(Self.decode(Self.encode(samples, sampleRate: rate)) == Self.chunk(samples, rate))
            }
        }
        let extremes: [Int16] = [.min, -1, 0, 1, .max]
        #expect(Self.decode(Self.encode(extremes, sampleRate: 16_000)) == Self.chunk(extremes, 16_000))
    }

    @Test func anyKeyOrder() {
        let fields = [#""type":"audio.chunk""#, #""data":"AAABAP///38AgA==""#, #""sampleRate":24000"#]
        let expected = Self.chunk([0, 1, -1, 32767, -32768], 24_000)
        for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            let message = "{" + order.map { fields[$0] }.joined(separator: ",") + "}"
            #expect(Self.decode(message) == expected, "\(message)")
        }
    }

    @Test func anyJSONWhitespace() {
        let expected = Self.chunk([0, 1, -1, 32767, -32768], 16_000)
        let messages = [
            " {\"type\" : \"audio.chunk\" , \"data\" : \"AAABAP///38AgA==\" , \"sampleRate\" : 16000 } ",
            "\n{\n\t\"type\":\t\"audio.chunk\",\r\n\t\"data\": \"AAABAP///38AgA==\",\r\n\t\"sampleRate\": 16000\r\n}\n",
            "{\"sampleRate\":16000\n,\"data\":\"AAABAP///38AgA==\"\t,\"type\":\"audio.chunk\"}",
        ]
        for message in messages {
            #expect(Self.decode(message) == expected, "\(message)")
        }
        // Whitespace inside the data string is part of the data, which base64 refuses.
        #expect(Self.decode(Self.message(data: "AAAAA AA")) == .failure(.badBase64(.invalidCharacter(0x20, offset: 5))))
    }

    @Test func escapedDataAsFoundationWritesIt() throws {
        var rng = SplitMix64(seed: 5)
        for count in [1, 5, 100, 3_000, 40_000] {
            let samples = Self.randomSamples(count, &rng)
            let base64 = Data(samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }).base64EncodedString()
            let message = try Self.foundationMessage(["type": "audio.chunk", "data": base64, "sampleRate": 24_000])
            if base64.contains("/") { #expect(message.contains(#"\/"#)) }
            #expect(Self.decode(message) == Self.chunk(samples, 24_000))
            if case .chunk(let header) = Self.parse(Array(message.utf8)) {
                #expect(header.dataIsEscaped == base64.contains("/"))
                #expect(header.sampleCount == count)
            } else {
                Issue.record("not parsed: \(message.prefix(80))")
            }
        }
        // Every escape that stands for a base64 character, and padding written as \u003D.
        let samples: [Int16] = [0, 1, -1, 32767, -32768]
        #expect(Self.decode(Self.message(data: #"AAABAP\/\/\/38AgA=="#)) == Self.chunk(samples, 16_000))
        #expect(Self.decode(Self.message(data: #"\u0041AAB\u0041P\u002f//38AgA\u003d\u003D"#)) == Self.chunk(samples, 16_000))
    }

    @Test func escapesSpanningThePieceBoundary() {
        // The escaped path decodes in 1024-character pieces (384 samples); put escapes and padding
        // across their boundaries.
        var rng = SplitMix64(seed: 6)
        for count in [383, 384, 385, 767, 768, 769, 1_536, 4_001] {
            let samples = Self.randomSamples(count, &rng)
            let plain = Base64.encode(samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] })
            let escaped = plain.replacingOccurrences(of: "/", with: #"\/"#).replacingOccurrences(of: "A", with: #"\u0041"#)
            #expect(Self.decode(Self.message(data: escaped, sampleRate: "24000")) == Self.chunk(samples, 24_000), "count \(count)")
        }
    }

    @Test func decodesIntoTheCallersBufferWithoutAllocating() throws {
        var rng = SplitMix64(seed: 7)
        let samples = Self.randomSamples(4_800, &rng)
        let plain = Array(Self.encode(samples, sampleRate: 24_000).utf8)
        let base64 = Base64.encode(samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] })
        let escaped = Array(try Self.foundationMessage(["type": "audio.chunk", "data": base64, "sampleRate": 24_000]).utf8)
        #expect(escaped.count > plain.count, "Foundation escapes '/'")
        var buffer = [Int16](repeating: 0, count: 8_000)
        for message in [plain, escaped] {
            var count = 0
            var rate: SampleRate = 0
            let run = {
                message.withUnsafeBytes { raw in
                    guard case .chunk(let header) = AudioChunkJSON.parse(raw) else { return }
                    rate = header.sampleRate
                    count = (try? buffer.withUnsafeMutableBufferPointer { try AudioChunkJSON.decodeSamples(of: header, in: raw, into: $0) }) ?? -1
                }
            }
            run()   // warm-up: tables and metadata
            #expect(countAllocations(run) == 0)
            #expect(count == 4_800)
            #expect(rate == 24_000)
            #expect(Array(buffer[..<4_800]) == samples)
        }
    }

    @Test func aSampleBufferThatIsTooSmallIsATypedError() {
        let message = Array(Self.encode([1, 2, 3, 4], sampleRate: 16_000).utf8)
        var buffer = [Int16](repeating: 7, count: 3)
        message.withUnsafeBytes { raw in
            guard case .chunk(let header) = AudioChunkJSON.parse(raw) else { Issue.record("not parsed"); return }
            let result = buffer.withUnsafeMutableBufferPointer { out in
                Result { () throws(AudioChunkError) in try AudioChunkJSON.decodeSamples(of: header, in: raw, into: out) }
            }
            #expect(result == .failure(.sampleBufferTooSmall(needed: 4, available: 3)))
        }
        #expect(buffer == [7, 7, 7], "nothing written")
        // A header used with another message is caught, not trusted.
        let long = Array(Self.encode(Array(repeating: 5, count: 40), sampleRate: 16_000).utf8)
        let short = Array(Self.encode([1, 2], sampleRate: 16_000).utf8)
        var big = [Int16](repeating: 0, count: 40)
        let result = long.withUnsafeBytes { raw in
            short.withUnsafeBytes { shortRaw in
                big.withUnsafeMutableBufferPointer { out in
                    Result { () throws(AudioChunkError) in
                        guard case .chunk(let header) = AudioChunkJSON.parse(raw) else { return -1 }
                        return try AudioChunkJSON.decodeSamples(of: header, in: shortRaw, into: out)
                    }
                }
            }
        }
        #expect(result == .failure(.headerDoesNotMatchMessage))
    }

    // MARK: Not for the fast path

    @Test func otherMessageTypesAreNotAudioChunks() {
        let messages = [
            #"{"type":"transcript","role":"assistant","text":"hi","final":true}"#,
            #"{"type":"session.start","sessionId":"abc","context":{}}"#,
            #"{"type":"audio.chunks","data":"AAAA","sampleRate":16000}"#,
            #"{"type":"AUDIO.CHUNK","data":"AAAA","sampleRate":16000}"#,
            #"{"type":"interruption"}"#,
            #"{"data":"AAAA","sampleRate":16000}"#,
            #"{"type":5,"data":"AAAA","sampleRate":16000}"#,
            #"{"type":null,"data":"AAAA","sampleRate":16000}"#,
            "{}",
            "[]",
            #"[{"type":"audio.chunk","data":"AAAA","sampleRate":16000}]"#,
        ]
        for message in messages {
            #expect(Self.decode(message) == .notAudioChunk, "\(message)")
        }
    }

    @Test func extraRepeatedOrEscapedKeysGoToTheGeneralDecoder() {
        let messages = [
            #"{"type":"audio.chunk","data":"AAAA","sampleRate":16000,"seq":7}"#,
            #"{"seq":7,"type":"audio.chunk","data":"AAAA","sampleRate":16000}"#,
            #"{"type":"audio.chunk","data":"AAAA","sampleRate":16000,"sampleRate":24000}"#,
            #"{"type":"audio.chunk","type":"audio.chunk","data":"AAAA","sampleRate":16000}"#,
            #"{"type":"audio.chunk","data":"AAAA","data":"AAAA","sampleRate":16000}"#,
            #"{"\u0074ype":"audio.chunk","data":"AAAA","sampleRate":16000}"#,
            #"{"type":"audio\u002echunk","data":"AAAA","sampleRate":16000}"#,
            #"{"type":"audio.chunk","data":["AAAA"],"sampleRate":16000}"#,
            #"{"type":"audio.chunk","data":"AAAA","sampleRate":{"hz":16000}}"#,
            #"{"Type":"audio.chunk","data":"AAAA","sampleRate":16000}"#,
        ]
        for message in messages {
            #expect(Self.decode(message) == .notAudioChunk, "\(message)")
        }
    }

    @Test func malformedJSONGoesToTheGeneralDecoder() {
        let valid = Self.message(data: "AAABAP///38AgA==")
        var messages = [
            "", " ", "null", "audio.chunk", "{", "}", "{\"type\"", "{\"type\":", "{\"type\":\"audio.chunk\"",
            valid + "x", valid + ",", valid + "}", "x" + valid,
            valid.replacingOccurrences(of: ",", with: ""),
            valid.replacingOccurrences(of: ":", with: "="),
            valid.replacingOccurrences(of: "}", with: ",}"),
            valid.replacingOccurrences(of: "\"data\"", with: "data"),
            valid.replacingOccurrences(of: "\"type\"", with: "'type'"),
            valid.replacingOccurrences(of: "16000", with: "016000"),
            valid.replacingOccurrences(of: "16000", with: "+16000"),
            valid.replacingOccurrences(of: "16000", with: "16000."),
            valid.replacingOccurrences(of: "16000", with: "1e"),
            valid.replacingOccurrences(of: "16000", with: "tru"),
            valid.replacingOccurrences(of: "16000", with: "NaN"),
            valid.replacingOccurrences(of: "AAAB", with: "AA\\qB"),        // not an escape
            valid.replacingOccurrences(of: "AAAB", with: "AA\\u00G1"),     // bad \u
            valid.replacingOccurrences(of: "AAAB", with: "AA\nB"),          // raw control byte
        ]
        // Every truncation of a valid message.
        for length in 0..<valid.utf8.count { messages.append(String(decoding: valid.utf8.prefix(length), as: UTF8.self)) }
        for message in messages {
            #expect(Self.decode(message) == .notAudioChunk, "\(message)")
        }
    }

    // MARK: Bad audio in an audio.chunk

    @Test func oddByteCount() {
        #expect(Self.decode(Self.message(data: "AA==")) == .failure(.oddByteCount(1)))
        #expect(Self.decode(Self.message(data: "AAAA")) == .failure(.oddByteCount(3)))
        #expect(Self.decode(Self.message(data: "AAAAAA==")) == Self.chunk([0, 0], 16_000))
        #expect(Self.decode(Self.message(data: "AAAAAAA=")) == .failure(.oddByteCount(5)))
    }

    @Test func badBase64SaysWhere() throws {
        // Length, padding shape, size and parity come from parse; characters from decoding, after.
        #expect(Self.decode(Self.message(data: "AAA")) == .failure(.badBase64(.invalidLength(3))))
        #expect(Self.decode(Self.message(data: "A===")) == .failure(.badBase64(.invalidPadding(offset: 1))))
        #expect(Self.decode(Self.message(data: "AA!A")) == .failure(.oddByteCount(3)))
        #expect(Self.decode(Self.message(data: "AAAAAA!A")) == .failure(.badBase64(.invalidCharacter(0x21, offset: 6))))
        #expect(Self.decode(Self.message(data: "AAAAAA-_")) == .failure(.badBase64(.invalidCharacter(0x2D, offset: 6))))
        #expect(Self.decode(Self.message(data: "AAAAQR==")) == .failure(.badBase64(.nonCanonicalTrailingBits(offset: 5))))
        #expect(Self.decode(Self.message(data: "AA==AAAA")) == .failure(.badBase64(.invalidPadding(offset: 2))))
        #expect(Self.decode(Self.message(data: "AAAAAAé")) == .failure(.badBase64(.invalidCharacter(0xC3, offset: 6))))
        // Offsets count unescaped characters: "\/" is one character.
        #expect(Self.decode(Self.message(data: #"\/\/\/\/AA!A"#)) == .failure(.badBase64(.invalidCharacter(0x21, offset: 6))))
        #expect(Self.decode(Self.message(data: #"\/\/\/\/AA\nA"#)) == .failure(.badBase64(.invalidCharacter(0x0A, offset: 6))))
        #expect(Self.decode(Self.message(data: #"\/\/\/"#)) == .failure(.badBase64(.invalidLength(3))))
        #expect(Self.decode(Self.message(data: #"AAAA\u003d\u003d\u003d\u003d"#)) == .failure(.badBase64(.invalidPadding(offset: 4))))
        #expect(Self.decode(Self.message(data: #"AAA\u00e9"#)) == .failure(.badBase64(.invalidLength(5))))
        #expect(Self.decode(Self.message(data: #"AAAAAA\u00e9"#)) == .failure(.badBase64(.invalidCharacter(0xC3, offset: 6))))
        // A bad character deep in a long escaped text, past the first 1024-character pieces.
        var rng = SplitMix64(seed: 8)
        let samples = Self.randomSamples(9_000, &rng)
        var text = Array(Base64.encode(samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }).utf8)
        text[9_999] = UInt8(ascii: "*")
        let plain = String(decoding: text, as: UTF8.self)
        #expect(Self.decode(Self.message(data: plain)) == .failure(.badBase64(.invalidCharacter(0x2A, offset: 9_999))))
        let escaped = plain.replacingOccurrences(of: "/", with: #"\/"#)
        #expect(escaped != plain)
        #expect(Self.decode(Self.message(data: escaped)) == .failure(.badBase64(.invalidCharacter(0x2A, offset: 9_999))))
        text[9_999] = UInt8(ascii: "=")
        #expect(Self.decode(Self.message(data: String(decoding: text, as: UTF8.self).replacingOccurrences(of: "/", with: #"\/"#))) == .failure(.badBase64(.invalidPadding(offset: 9_999))))
    }

    @Test func oversizePayloadIsRefusedBeforeDecoding() {
        // 1 MiB + 2 bytes of payload; the bad character at the end is never reached.
        let count = (1 << 20) + 2
        var text = [UInt8](repeating: UInt8(ascii: "A"), count: Base64.encodedCount(forByteCount: count))
        text[text.count - 2] = UInt8(ascii: "=")
        text[text.count - 3] = UInt8(ascii: "*")
        let data = String(decoding: text, as: UTF8.self)
        #expect(Self.decode(Self.message(data: data)) == .failure(.payloadTooLarge(bytes: count, limit: 1 << 20)))
        #expect(Self.decode(Self.message(data: data.replacingOccurrences(of: "*", with: #"\/"#))) == .failure(.payloadTooLarge(bytes: count, limit: 1 << 20)))
        // The limit is the caller's; the limit itself is allowed.
        #expect(Self.decode(Self.encode([1, 2, 3], sampleRate: 16_000), maxPayloadBytes: 4) == .failure(.payloadTooLarge(bytes: 6, limit: 4)))
        #expect(Self.decode(Self.encode([1, 2, 3], sampleRate: 16_000), maxPayloadBytes: 6) == Self.chunk([1, 2, 3], 16_000))
    }

    @Test func sampleRateMustBeAPositiveInteger() {
        let data = #""data":"AAAA""#.replacingOccurrences(of: "AAAA", with: "AAABAP///38AgA==")
        #expect(Self.decode(#"{"type":"audio.chunk",\#(data)}"#) == .failure(.missingSampleRate))
        // A negative zero is named as the general decoder names it, in decimal.
        #expect(Self.decode(#"{"type":"audio.chunk",\#(data),"sampleRate":-0}"#) == .failure(.badSampleRate("0")))
        let bad = ["-16000", "0", "16000.0", "16000.5", "1.6e4", "1E4", "\"16000\"", "null", "true", "false",
                   "99999999999999999999", "9223372036854775808"]
        for value in bad {
            #expect(Self.decode(#"{"type":"audio.chunk",\#(data),"sampleRate":\#(value)}"#) == .failure(.badSampleRate(value)), "\(value)")
        }
        #expect(Self.decode(#"{"type":"audio.chunk",\#(data),"sampleRate":9223372036854775807}"#) == Self.chunk([0, 1, -1, 32767, -32768], .max))
        #expect(Self.decode(#"{"type":"audio.chunk",\#(data),"sampleRate":1}"#) == Self.chunk([0, 1, -1, 32767, -32768], 1))
        #expect(Self.decode(#"{"type":"audio.chunk",\#(data),"sampleRate":-1}"#) == .failure(.badSampleRate("-1")))
    }

    @Test func dataMustBeAString() {
        #expect(Self.decode(#"{"type":"audio.chunk","sampleRate":16000}"#) == .failure(.missingData))
        for value in ["null", "42", "true", "-1.5"] {
            #expect(Self.decode(#"{"type":"audio.chunk","data":\#(value),"sampleRate":16000}"#) == .failure(.dataNotAString(value)))
        }
        // Long values are cut short in the error.
        let long = String(repeating: "7", count: 100)
        #expect(Self.decode(#"{"type":"audio.chunk","data":\#(long),"sampleRate":16000}"#) == .failure(.dataNotAString(String(repeating: "7", count: 40) + "…")))
    }

    @Test func errorsDescribeThemselves() {
        #expect(AudioChunkError.oddByteCount(3).description == "the audio.chunk data decodes to 3 bytes; 16-bit audio needs an even number")
        #expect(AudioChunkError.badBase64(.invalidCharacter(0x21, offset: 2)).description.contains("offset 2"))
        #expect(AudioChunkError.payloadTooLarge(bytes: 5, limit: 4).description.contains("over the 4-byte limit"))
        #expect(AudioChunkError.badSampleRate("-1").description.contains("is -1"))
    }

    // MARK: The general path's primitives

    @Test func encodeDataIsTheDataTheFastPathWrites() {
        var rng = SplitMix64(seed: 11)
        for count in [0, 1, 2, 3, 383, 384, 385, 4_800] {
            let samples = Self.randomSamples(count, &rng)
            let data = samples.withUnsafeBufferPointer { AudioChunkJSON.encodeData($0) }
            #expect(Self.encode(samples, sampleRate: 24_000) == Self.message(data: data, sampleRate: "24000"), "count \(count)")
        }
        #expect([0, 1, -1, 32767, -32768].withUnsafeBufferPointer { AudioChunkJSON.encodeData($0) } == "AAABAP///38AgA==")
    }

    @Test func decodeDataReadsWhatTheFastPathReads() throws {
        var rng = SplitMix64(seed: 12)
        for count in [0, 1, 2, 160, 480, 4_800] {
            let samples = Self.randomSamples(count, &rng)
            let data = samples.withUnsafeBufferPointer { AudioChunkJSON.encodeData($0) }
            #expect(try AudioChunkJSON.decodeData(data, sampleRate: 24_000) == AudioChunk(sampleRate: 24_000, samples: samples))
            #expect(Self.decode(Self.message(data: data, sampleRate: "24000")) == Self.chunk(samples, 24_000))
        }
    }

    /// A malformed chunk read by the fast path, and its data string (escapes undone) and rate given
    /// to decodeData as a general JSON decoder would: the same AudioChunkError, numbers and offsets
    /// included.
    @Test(arguments: [
        // (data as written in the message, the same once unescaped, sampleRate)
        ("AAA", "AAA", 16_000), ("A===", "A===", 16_000), ("AA==", "AA==", 16_000), ("AAAA", "AAAA", 16_000),
        ("AA!A", "AA!A", 16_000), ("AAAAAAA=", "AAAAAAA=", 16_000), ("AAAAAA!A", "AAAAAA!A", 16_000),
        ("AAAAAA-_", "AAAAAA-_", 16_000), ("AAAAQR==", "AAAAQR==", 16_000), ("AAAAAQ=A", "AAAAAQ=A", 16_000),
        ("AA==AAAA", "AA==AAAA", 16_000), ("AAAAAAé", "AAAAAAé", 16_000), ("AAAAA AA", "AAAAA AA", 16_000),
        (#"\/\/\/\/AA!A"#, "////AA!A", 16_000), (#"\/\/\/\/AA\nA"#, "////AA\nA", 16_000), (#"\/\/\/"#, "///", 16_000),
        (#"AAAA\u003d\u003d\u003d\u003d"#, "AAAA====", 16_000), (#"AAA\u00e9"#, "AAAé", 16_000),
        (#"AAAAAA\u00e9"#, "AAAAAAé", 16_000), (#"AAAAAA\u0041\t"#, "AAAAAAA\t", 16_000),
        ("AAAAAAAA", "AAAAAAAA", 0), ("AAAAAAAA", "AAAAAAAA", -1), ("AAA", "AAA", -16_000),
    ])
    func decodeDataFailsAsTheFastPathDoes(written: String, unescaped: String, sampleRate: Int) {
        guard case .failure(let expected) = Self.decode(Self.message(data: written, sampleRate: String(sampleRate))) else {
            Issue.record("the fast path accepted \(written)")
            return
        }
        let result = Result { () throws(AudioChunkError) in try AudioChunkJSON.decodeData(unescaped, sampleRate: sampleRate) }
        #expect(result == .failure(expected), "\(written)")
    }

    @Test func decodeDataChecksSizeBeforeCharacters() throws {
        // Oversize is found from the length alone, before the bad character; then the limit itself.
        let count = (1 << 20) + 2
        var text = [UInt8](repeating: UInt8(ascii: "A"), count: Base64.encodedCount(forByteCount: count))
        text[text.count - 2] = UInt8(ascii: "=")
        text[text.count - 3] = UInt8(ascii: "*")
        let data = String(decoding: text, as: UTF8.self)
        let big = Result { () throws(AudioChunkError) in try AudioChunkJSON.decodeData(data, sampleRate: 16_000) }
        #expect(big == .failure(.payloadTooLarge(bytes: count, limit: 1 << 20)))
        let small = Result { () throws(AudioChunkError) in try AudioChunkJSON.decodeData("AQACAAMA", sampleRate: 16_000, maxPayloadBytes: 4) }
        #expect(small == .failure(.payloadTooLarge(bytes: 6, limit: 4)))
        #expect(try AudioChunkJSON.decodeData("AQACAAMA", sampleRate: 16_000, maxPayloadBytes: 6) == AudioChunk(sampleRate: 16_000, samples: [1, 2, 3]))
    }

    // MARK: Never traps

    /// Damaged messages: whatever the fast path says must agree with Foundation's JSON parser.
    /// A chunk or a failure only for a JSON object whose type is audio.chunk; a decoded chunk
    /// equals what Foundation decodes from the same data; JSON that Foundation refuses is never
    /// taken for a chunk.
    @Test func damagedMessagesNeverTrapAndAgreeWithFoundation() throws {
        var rng = SplitMix64(seed: 9)
        let seeds: [String] = [
            Self.encode([0, 1, -1, 32767, -32768], sampleRate: 16_000),
            Self.encode(Self.randomSamples(40, &rng), sampleRate: 24_000),
            try Self.foundationMessage(["type": "audio.chunk", "data": "/+/+/+//", "sampleRate": 24_000]),
            " {\"sampleRate\" : 16000, \"data\" : \"AAABAP\\/\\/\\/38AgA==\", \"type\" : \"audio.chunk\"} ",
            #"{"type":"transcript","text":"hi"}"#,
        ]
        let interesting: [UInt8] = Array(#"{}[]":,\/ =-.0123456789eEtrnuAQ"#.utf8) + [0x00, 0x0A, 0x80, 0xFF]
        var outcomes = [0, 0, 0]
        for round in 0..<30_000 {
            var bytes = Array(seeds[round % seeds.count].utf8)
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let replacement = Bool.random(using: &rng) ? interesting.randomElement(using: &rng) ?? 0 : UInt8.random(in: 0...255, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0 where !bytes.isEmpty: bytes.remove(at: Int.random(in: 0..<bytes.count, using: &rng))
                case 1: bytes.insert(replacement, at: Int.random(in: 0...bytes.count, using: &rng))
                case 2: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &rng)))
                default: if !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &rng)] = replacement }
                }
            }
            let ours = bytes.withUnsafeBytes { AudioChunkJSON.decode($0) }
            let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
            switch ours {
            case .notAudioChunk:
                outcomes[0] += 1
            case .failure(let error):
                outcomes[1] += 1
                // Foundation refuses invalid UTF-8 and lone surrogates in the data string; the
                // fast path leaves those to base64, which refuses every non-ASCII byte.
                let foundationMayRefuse = bytes.contains { $0 >= 0x80 } || bytes.contains(UInt8(ascii: "u"))
                #expect(object?["type"] as? String == "audio.chunk" || (object == nil && foundationMayRefuse),
                        "\(error): \(String(decoding: bytes, as: UTF8.self))")
            case .chunk(let chunk):
                outcomes[2] += 1
                let message = String(decoding: bytes, as: UTF8.self)
                #expect(object?.count == 3 && object?["type"] as? String == "audio.chunk", "\(message)")
                #expect((object?["sampleRate"] as? Int).map { SampleRate(hertz: Double($0)) } == chunk.sampleRate, "\(message)")
                let data = (object?["data"] as? String).flatMap { Data(base64Encoded: $0) }
                #expect(data.map { [UInt8]($0) } == chunk.samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }, "\(message)")
            }
        }
        #expect(outcomes.allSatisfy { $0 > 500 }, "\(outcomes)")
    }

    @Test func randomBytesNeverTrap() {
        var rng = SplitMix64(seed: 10)
        let alphabet = Array(#"{"type":"audio.chunk","data":"AAAA\/=","sampleRate":16000} "#.utf8)
        for _ in 0..<100_000 {
            let length = Int.random(in: 0...60, using: &rng)
            let bytes: [UInt8] = (0..<length).map { _ in
                Bool.random(using: &rng) ? UInt8.random(in: 0...255, using: &rng) : alphabet[Int.random(in: 0..<alphabet.count, using: &rng)]
            }
            let result = bytes.withUnsafeBytes { AudioChunkJSON.decode($0) }
            if case .chunk(let chunk) = result {
                #expect(chunk.sampleRate > 0)
            }
        }
    }
}
