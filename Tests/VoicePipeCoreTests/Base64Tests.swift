import AllocationCounting
import Foundation
import Testing
@testable import VoicePipeCore
import VoicePipeTestSupport

/// Base64: RFC 4648 vectors, agreement with Foundation and with the scalar reference, and every
/// way a text can be malformed, each with its exact error and offset.
struct Base64Tests {
    // MARK: Helpers

    /// Decodes into a buffer of exactly the decoded size: through the buffer API, or with `vector`
    /// through the internal entry point with or without the AVX2 block decoder.
    static func decode(_ text: [UInt8], vector: Bool? = nil) -> Result<[UInt8], Base64Error> {
        text.withUnsafeBytes { raw in
            let count: Int
            do throws(Base64Error) { count = try Base64.decodedCount(forEncoded: raw) } catch { return .failure(error) }
            var output = [UInt8](repeating: 0, count: count)
            let written = output.withUnsafeMutableBytes { out in
                Result { () throws(Base64Error) in
                    guard let vector else { return try Base64.decode(raw, into: out) }
                    return try Base64.decode(raw, padding: raw.count / 4 * 3 - count, into: out, vector: vector)
                }
            }
            return written.map { written in
                #expect(written == count)
                return output
            }
        }
    }

    /// Decodes through the buffer API into `output`.
    static func decode(_ text: [UInt8], into output: inout [UInt8]) -> Result<Int, Base64Error> {
        text.withUnsafeBytes { raw in
            output.withUnsafeMutableBytes { out in Result { () throws(Base64Error) in try Base64.decode(raw, into: out) } }
        }
    }

    static func decode(_ text: String) -> Result<[UInt8], Base64Error> {
        Result { () throws(Base64Error) in try Base64.decode(text) }
    }

    static func reference(_ text: [UInt8]) -> Result<[UInt8], Base64Error> {
        Result { () throws(Base64Error) in try Base64Reference.decode(text) }
    }

    /// Encodes into a buffer with guard bytes after the encoding: through the buffer API, or with
    /// `vector` through the internal entry point with or without the AVX2 block encoder.
    static func encode(_ bytes: [UInt8], vector: Bool? = nil) -> [UInt8] {
        let count = Base64.encodedCount(forByteCount: bytes.count)
        var output = [UInt8](repeating: 0xEE, count: count + 16)
        let written = bytes.withUnsafeBytes { raw in
            output.withUnsafeMutableBytes { out in vector.map { Base64.encode(raw, into: out, vector: $0) } ?? Base64.encode(raw, into: out) }
        }
        #expect(written == count)
        #expect(output[count...].allSatisfy { $0 == 0xEE }, "encode wrote past its count")
        return Array(output[..<count])
    }

    static func randomBytes(_ count: Int, _ rng: inout SplitMix64) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    // MARK: Known answers

    static let rfcVectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ]

    @Test func rfc4648TestVectorsBothWays() throws {
        for (plain, encoded) in Self.rfcVectors {
            let data = Self.bytes(plain)
            #expect(Base64.encode(data) == encoded)
            #expect(Self.encode(data) == Self.bytes(encoded))
            #expect(Base64.encodedCount(forByteCount: data.count) == encoded.utf8.count)
            #expect(try Base64.decode(encoded) == data)
            #expect(Self.decode(Self.bytes(encoded)) == .success(data))
            let count = Self.bytes(encoded).withUnsafeBytes { raw in
                Result { () throws(Base64Error) in try Base64.decodedCount(forEncoded: raw) }
            }
            #expect(count == .success(data.count))
        }
    }

    @Test func everyByteValueAndTheWholeAlphabet() throws {
        let all = (0...255).map { UInt8($0) }
        let text = Base64.encode(all)
        #expect(text.hasPrefix("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZH"))
        #expect(text.hasSuffix("8PHy8/T19vf4+fr7/P3+/w=="))
        #expect(try Base64.decode(text) == all)
        // Every character, in every position of a quad.
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        #expect(try Base64.encode(Base64.decode(alphabet)) == alphabet)
        #expect(try Base64.encode(Base64.decode(String(alphabet.dropFirst(1)) + "A")) == String(alphabet.dropFirst(1)) + "A")
    }

    @Test func encodeAcceptsAnyByteCollection() {
        let bytes: [UInt8] = Array("any carnal pleasure.".utf8)
        let expected = "YW55IGNhcm5hbCBwbGVhc3VyZS4="
        #expect(Base64.encode(bytes) == expected)
        #expect(Base64.encode(bytes[...]) == expected)
        #expect(Base64.encode(Data(bytes)) == expected)
        #expect(Base64.encode(Set([UInt8(0x41)])) == "QQ==")   // not contiguous: copied first
        #expect(Base64.encode("any carnal pleasure.".utf8) == expected)
    }

    // MARK: Round trips and agreement

    @Test func randomRoundTripsOfLengthsUpTo10000() throws {
        var rng = SplitMix64(seed: 0xB64)
        var lengths = Array(0...40)
        for _ in 0..<200 { lengths.append(Int.random(in: 0...10_000, using: &rng)) }
        for length in lengths {
            let data = Self.randomBytes(length, &rng)
            let text = Base64.encode(data)
            #expect(text.utf8.count == Base64.encodedCount(forByteCount: length))
            #expect(try Base64.decode(text) == data, "length \(length)")
            #expect(Self.decode(Self.encode(data)) == .success(data), "length \(length)")
        }
    }

    @Test func agreesWithFoundation() throws {
        var rng = SplitMix64(seed: 42)
        var lengths = Array(0...100)
        for _ in 0..<100 { lengths.append(Int.random(in: 0...5_000, using: &rng)) }
        lengths.append(1 << 20)
        for length in lengths {
            let data = Self.randomBytes(length, &rng)
            let foundationText = Data(data).base64EncodedString()
            #expect(Base64.encode(data) == foundationText, "length \(length)")
            #expect(try Base64.decode(foundationText) == [UInt8](try #require(Data(base64Encoded: foundationText))))
        }
    }

    @Test func fastPathEqualsReferenceOnEveryLengthUpTo100() {
        var rng = SplitMix64(seed: 7)
        for length in 0...100 {
            for _ in 0..<8 {
                let data = Self.randomBytes(length, &rng)
                let text = Base64Reference.encode(data)
                #expect(Self.encode(data) == text, "length \(length)")
                #expect(Self.decode(text) == Self.reference(text), "length \(length)")
                #expect(Self.decode(text) == .success(data))
            }
        }
    }

    @Test func fastPathEqualsReferenceOnRandomLongData() {
        var rng = SplitMix64(seed: 8)
        for _ in 0..<100 {
            let data = Self.randomBytes(Int.random(in: 100...20_000, using: &rng), &rng)
            let text = Base64Reference.encode(data)
            #expect(Self.encode(data) == text)
            #expect(Self.decode(text) == .success(data))
        }
    }

    /// Valid encodings with a few bytes changed, inserted or removed: the fast path must give the
    /// reference's answer, the same bytes or the same error at the same offset.
    @Test func fastPathEqualsReferenceOnDamagedText() {
        var rng = SplitMix64(seed: 9)
        let interesting: [UInt8] = Array("=  \n\r\t-_.!\"\\A/+z09".utf8) + [0x00, 0x7F, 0x80, 0xC3, 0xFF]
        var failures = 0
        for round in 0..<20_000 {
            let data = Self.randomBytes(Int.random(in: 0...(round % 10 == 0 ? 600 : 60), using: &rng), &rng)
            var text = Base64Reference.encode(data)
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let choice = Int.random(in: 0..<10, using: &rng)
                let replacement = Bool.random(using: &rng) ? interesting.randomElement(using: &rng) ?? 0 : UInt8.random(in: 0...255, using: &rng)
                if text.isEmpty || choice == 0 {
                    text.insert(replacement, at: Int.random(in: 0...text.count, using: &rng))
                } else if choice == 1 {
                    text.remove(at: Int.random(in: 0..<text.count, using: &rng))
                } else {
                    text[Int.random(in: 0..<text.count, using: &rng)] = replacement
                }
            }
            let expected = Self.reference(text)
            if case .failure = expected { failures += 1 }
            #expect(Self.decode(text) == expected, "\(text)")
        }
        #expect(failures > 10_000)
    }

    /// The AVX2 block encoder (on a CPU with AVX2) and the portable path write the reference's
    /// text and nothing past it: every length to 200 (the vector path starts at 28 bytes), and
    /// every byte value in every position of the first two 24-byte blocks.
    @Test func vectorAndPortableEncodersAgree() {
        var rng = SplitMix64(seed: 12)
        for length in 0...200 {
            let data = Self.randomBytes(length, &rng)
            let expected = Base64Reference.encode(data)
            #expect(Self.encode(data, vector: Base64.hasVectorKernels) == expected, "length \(length)")
            #expect(Self.encode(data, vector: false) == expected, "length \(length), portable")
        }
        let base = Self.randomBytes(60, &rng)
        for position in 0..<48 {
            for byte in UInt8.min...UInt8.max {
                var data = base
                data[position] = byte
                #expect(Self.encode(data, vector: Base64.hasVectorKernels) == Base64Reference.encode(data), "byte \(byte) at \(position)")
            }
        }
    }

    /// Every byte value in every lane of the first two 32-character blocks: the AVX2 block decoder
    /// (on a CPU with AVX2) and the portable path give the reference's bytes or its error.
    @Test func vectorAndPortableDecodersAgreeOnEveryByteInEveryLane() {
        var rng = SplitMix64(seed: 10)
        let valid = Base64Reference.encode(Self.randomBytes(75, &rng))   // 100 characters, no padding
        for position in 0..<64 {
            for byte in UInt8.min...UInt8.max {
                var text = valid
                text[position] = byte
                let expected = Self.reference(text)
                #expect(Self.decode(text, vector: Base64.hasVectorKernels) == expected, "byte \(byte) at \(position)")
                #expect(Self.decode(text, vector: false) == expected, "byte \(byte) at \(position), portable")
            }
        }
    }

    /// The damaged-text comparison, through the portable path alone (the default path takes the
    /// AVX2 block decoder wherever the CPU has it).
    @Test func portablePathEqualsReferenceOnDamagedLongText() {
        var rng = SplitMix64(seed: 11)
        for _ in 0..<2_000 {
            let data = Self.randomBytes(Int.random(in: 0...600, using: &rng), &rng)
            var text = Base64Reference.encode(data)
            if !text.isEmpty, Bool.random(using: &rng) {
                text[Int.random(in: 0..<text.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            #expect(Self.decode(text, vector: false) == Self.reference(text))
            #expect(Self.decode(text, vector: Base64.hasVectorKernels) == Self.reference(text))
        }
    }

    // MARK: Malformed input: exact errors

    @Test func badCharacterInEachPositionOfAQuad() {
        for position in 0..<4 {
            var text = Self.bytes("QUJD")
            text[position] = UInt8(ascii: "!")
            #expect(Self.decode(text) == .failure(.invalidCharacter(0x21, offset: position)))
        }
        // The same in every position of a long text (the 16-character fast path and the tail).
        let valid = Self.bytes(Base64.encode(Array(repeating: UInt8(0x5A), count: 300)))
        for position in valid.indices where valid[position] != UInt8(ascii: "=") {
            var text = valid
            text[position] = UInt8(ascii: "*")
            #expect(Self.decode(text) == .failure(.invalidCharacter(0x2A, offset: position)))
        }
        // The first of several bad bytes is the one reported.
        var text = valid
        text[100] = 0x00
        text[37] = UInt8(ascii: "#")
        #expect(Self.decode(text) == .failure(.invalidCharacter(0x23, offset: 37)))
    }

    @Test func whitespaceIsRefused() {
        #expect(Self.decode(Self.bytes("QU D")) == .failure(.invalidCharacter(0x20, offset: 2)))
        #expect(Self.decode(Self.bytes("QUJD\r\nQU")) == .failure(.invalidCharacter(0x0D, offset: 4)))
        #expect(Self.decode(Self.bytes("\tQUJ")) == .failure(.invalidCharacter(0x09, offset: 0)))
        #expect(Self.decode("Zm9v\n") == .failure(.invalidLength(5)))
        #expect(Self.decode("Zm9vYmFy\nZm9v") == .failure(.invalidLength(13)))
        #expect(Self.decode(" Zm9vYmFyZm9") == .failure(.invalidCharacter(0x20, offset: 0)))
    }

    @Test func urlSafeAlphabetIsRefused() {
        #expect(Self.decode(Self.bytes("-_-_")) == .failure(.invalidCharacter(UInt8(ascii: "-"), offset: 0)))
        #expect(Self.decode(Self.bytes("ab_c")) == .failure(.invalidCharacter(UInt8(ascii: "_"), offset: 2)))
        // Foundation's output for these bytes uses '+' and '/'; the URL-safe spelling is refused.
        let data: [UInt8] = [0xFB, 0xFF, 0xBF]
        #expect(Base64.encode(data) == "+/+/")
        #expect(Self.decode(Self.bytes("-_-_")) != .success(data))
    }

    @Test func nonASCIIBytesAreRefused() {
        #expect(Self.decode(Self.bytes("QéQ")) == .failure(.invalidCharacter(0xC3, offset: 1)))
        #expect(Self.decode([0x51, 0x51, 0x51, 0x80]) == .failure(.invalidCharacter(0x80, offset: 3)))
        #expect(Self.decode([0xFF, 0x51, 0x51, 0x51]) == .failure(.invalidCharacter(0xFF, offset: 0)))
        #expect(Self.decode([0x51, 0x00, 0x51, 0x51]) == .failure(.invalidCharacter(0x00, offset: 1)))
    }

    @Test func paddingInTheMiddleIsRefused() {
        #expect(Self.decode(Self.bytes("QU=D")) == .failure(.invalidPadding(offset: 2)))
        #expect(Self.decode(Self.bytes("Q=QU")) == .failure(.invalidPadding(offset: 1)))
        #expect(Self.decode(Self.bytes("=QUJ")) == .failure(.invalidPadding(offset: 0)))
        #expect(Self.decode(Self.bytes("Q=Q=")) == .failure(.invalidPadding(offset: 1)))
        #expect(Self.decode(Self.bytes("QUJDQU=DQUJD")) == .failure(.invalidPadding(offset: 6)))
    }

    @Test func paddingNotAtTheEndIsRefused() {
        #expect(Self.decode(Self.bytes("QQ==QUJD")) == .failure(.invalidPadding(offset: 2)))
        #expect(Self.decode(Self.bytes("QUI=QUJD")) == .failure(.invalidPadding(offset: 3)))
        #expect(Self.decode(Self.bytes("QQ==QQ==")) == .failure(.invalidPadding(offset: 2)))
        // Two valid encodings glued together are not one.
        #expect(Self.decode(Self.bytes(Base64.encode(Self.bytes("fo")) + Base64.encode(Self.bytes("o")))) == .failure(.invalidPadding(offset: 3)))
    }

    @Test func tooMuchPaddingIsRefused() {
        #expect(Self.decode(Self.bytes("Q===")) == .failure(.invalidPadding(offset: 1)))
        #expect(Self.decode(Self.bytes("====")) == .failure(.invalidPadding(offset: 0)))
        #expect(Self.decode(Self.bytes("QUJD====")) == .failure(.invalidPadding(offset: 4)))
        #expect(Self.decode(Self.bytes("QUJDQ===")) == .failure(.invalidPadding(offset: 5)))
        #expect(Self.decode(Self.bytes("QQ======")) == .failure(.invalidPadding(offset: 2)))
        // The shape is checked before the characters.
        #expect(Self.decode(Self.bytes("!===")) == .failure(.invalidPadding(offset: 1)))
        let count = Self.bytes("QUJD====").withUnsafeBytes { raw in
            Result { () throws(Base64Error) in try Base64.decodedCount(forEncoded: raw) }
        }
        #expect(count == .failure(.invalidPadding(offset: 4)))
    }

    @Test func lengthNotAMultipleOfFourIsRefused() {
        for text in ["Q", "QU", "QUJ", "QUJDQ", "QQ=", "QUJDQUJDQ", "Zm9vYmFy="] {
            #expect(Self.decode(Self.bytes(text)) == .failure(.invalidLength(text.utf8.count)), "\(text)")
        }
        // The length is checked first, whatever else is wrong.
        #expect(Self.decode(Self.bytes("!!!!!")) == .failure(.invalidLength(5)))
    }

    @Test func nonCanonicalTrailingBitsAreRefused() {
        #expect(Self.decode(Self.bytes("QQ==")) == .success([0x41]))
        #expect(Self.decode(Self.bytes("QR==")) == .failure(.nonCanonicalTrailingBits(offset: 1)))
        #expect(Self.decode(Self.bytes("QZ==")) == .failure(.nonCanonicalTrailingBits(offset: 1)))
        #expect(Self.decode(Self.bytes("QUI=")) == .success([0x41, 0x42]))
        #expect(Self.decode(Self.bytes("QUJ=")) == .failure(.nonCanonicalTrailingBits(offset: 2)))
        #expect(Self.decode(Self.bytes("QUL=")) == .failure(.nonCanonicalTrailingBits(offset: 2)))
        #expect(Self.decode(Self.bytes("QUJDQR==")) == .failure(.nonCanonicalTrailingBits(offset: 5)))
        // Every non-canonical last character, both padding lengths.
        for (value, character) in Base64Tables.alphabet.enumerated() {
            let one = Self.decode([UInt8(ascii: "Q"), UInt8(ascii: "U"), character, UInt8(ascii: "=")])
            #expect(one == (value & 3 == 0 ? .success([0x41, 0x40 | UInt8(value >> 2)]) : .failure(.nonCanonicalTrailingBits(offset: 2))))
            let two = Self.decode([UInt8(ascii: "Q"), character, UInt8(ascii: "="), UInt8(ascii: "=")])
            #expect(two == (value & 15 == 0 ? .success([0x40 | UInt8(value >> 4)]) : .failure(.nonCanonicalTrailingBits(offset: 1))))
        }
    }

    @Test func anOutputBufferThatIsTooSmallIsATypedError() {
        let text = Self.bytes("Zm9vYmFy")
        var output = [UInt8](repeating: 0xEE, count: 5)
        #expect(Self.decode(text, into: &output) == .failure(.outputTooSmall(required: 6, available: 5)))
        #expect(output == [UInt8](repeating: 0xEE, count: 5), "nothing written")
    }

    @Test func decodeWritesNothingPastTheDecodedCount() {
        var rng = SplitMix64(seed: 11)
        for length in 0...200 {
            let data = Self.randomBytes(length, &rng)
            let text = Self.encode(data)
            var output = [UInt8](repeating: 0xEE, count: length + 32)
            #expect(Self.decode(text, into: &output) == .success(length))
            #expect(Array(output[..<length]) == data)
            #expect(output[length...].allSatisfy { $0 == 0xEE }, "length \(length)")
        }
    }

    @Test func errorsDescribeThemselves() {
        #expect(Base64Error.invalidLength(5).description == "base64 text is 5 bytes long; a padded encoding is a multiple of 4")
        #expect(Base64Error.invalidCharacter(0x21, offset: 3).description.contains("byte 0x21 ('!') at offset 3"))
        #expect(Base64Error.invalidCharacter(0x0A, offset: 0).description.contains("byte 0x0A at offset 0"))
        #expect(Base64Error.invalidPadding(offset: 2).description.contains("offset 2"))
        #expect(Base64Error.nonCanonicalTrailingBits(offset: 1).description.contains("offset 1"))
    }

    // MARK: Robustness and allocation

    /// Random byte strings, biased towards almost-base64: every result is a value that encodes
    /// back to the same text, or a typed error that agrees with the reference.
    @Test func decodingNeverTrapsOnRandomInput() {
        var rng = SplitMix64(seed: 0xDEC0DE)
        let alphabet = Base64Tables.alphabet
        var decoded = 0
        for _ in 0..<100_000 {
            let length = Int.random(in: 0...24, using: &rng)
            let mode = Int.random(in: 0..<4, using: &rng)
            var text: [UInt8] = (0..<length).map { _ in
                switch mode {
                case 0: UInt8.random(in: 0...255, using: &rng)
                case 1: Int.random(in: 0..<50, using: &rng) == 0 ? UInt8.random(in: 0...255, using: &rng) : alphabet[Int.random(in: 0..<64, using: &rng)]
                default: alphabet[Int.random(in: 0..<64, using: &rng)]
                }
            }
            if mode == 3 && !text.isEmpty {
                for k in 0..<min(Int.random(in: 0...3, using: &rng), text.count) { text[text.count - 1 - k] = UInt8(ascii: "=") }
            }
            let result = Self.decode(text)
            switch result {
            case .success(let bytes):
                decoded += 1
                #expect(Self.encode(bytes) == text)
            case .failure:
                break
            }
            #expect(result == Self.reference(text))
        }
        #expect(decoded > 10_000)
    }

    @Test func bufferAPIsAllocateNothingAndArraysAllocateOnce() throws {
        var rng = SplitMix64(seed: 12)
        let data = Self.randomBytes(3_000, &rng)
        let text = Base64.encode(data)
        let textBytes = Self.bytes(text)
        var decodedBuffer = [UInt8](repeating: 0, count: 3_000)
        var encodedBuffer = [UInt8](repeating: 0, count: 4_000)
        _ = Self.decode(textBytes)   // builds the tables
        _ = Self.encode(data)
        let bufferAllocations = try countAllocations {
            try textBytes.withUnsafeBytes { raw in
                try decodedBuffer.withUnsafeMutableBytes { out in _ = try Base64.decode(raw, into: out) }
            }
            data.withUnsafeBytes { raw in
                encodedBuffer.withUnsafeMutableBytes { out in _ = Base64.encode(raw, into: out) }
            }
        }
        #expect(bufferAllocations == 0)
        #expect(decodedBuffer == data)
        #expect(encodedBuffer == textBytes)
        var decoded: [UInt8] = []
        #expect(try countAllocations { decoded = try Base64.decode(text) } == 1)
        #expect(decoded == data)
        // Small results are decoded on the stack and copied: still one allocation, exact size.
        for count in [1, 640, Base64.stackDecodeLimit, Base64.stackDecodeLimit + 1] {
            let small = Base64.encode(Array(data.prefix(count)))
            _ = try Base64.decode(small)   // warm-up: first use of the copying path
            #expect(try countAllocations { decoded = try Base64.decode(small) } == 1)
            #expect(decoded == Array(data.prefix(count)))
        }
        var encoded = ""
        #expect(countAllocations { encoded = Base64.encode(data) } == 1)
        #expect(encoded == text)
    }
}
