import CVoicePipeKernels

/// Why a base64 text was refused, with the offset of the first offending byte.
///
/// Offsets count bytes from the start of the text. ``Base64/decode(_:into:)`` checks in this
/// order and reports the first problem it meets: the length, the shape of the trailing padding,
/// then every byte from left to right, then the bits after the last byte of data.
public enum Base64Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text's length (given) is not a multiple of 4.
    case invalidLength(Int)
    /// A byte that is neither in the alphabet (A–Z, a–z, 0–9, `+`, `/`) nor `=`: whitespace, the
    /// URL-safe `-` and `_`, control bytes and every non-ASCII byte land here.
    case invalidCharacter(UInt8, offset: Int)
    /// A misplaced `=`: one before the end of the text (`"QQ==QUJD"`, `"QU=D"`), or a trailing run
    /// of three or more (`"Q==="`, `"===="`); the offset is that of the first misplaced `=`.
    case invalidPadding(offset: Int)
    /// The last character before the padding carries bits past the end of the data, which a
    /// canonical encoder always leaves zero (`"QR=="`, `"QUJ="`); the offset is that character's.
    case nonCanonicalTrailingBits(offset: Int)
    /// The output buffer holds `available` bytes but the text decodes to `required`.
    case outputTooSmall(required: Int, available: Int)

    public var description: String {
        switch self {
        case .invalidLength(let length):
            "base64 text is \(length) bytes long; a padded encoding is a multiple of 4"
        case .invalidCharacter(let byte, let offset):
            "\(Self.describe(byte)) at offset \(offset) is not a base64 character (A–Z, a–z, 0–9, +, /)"
        case .invalidPadding(let offset):
            "misplaced '=' at offset \(offset): padding is at most two '=' and only at the very end"
        case .nonCanonicalTrailingBits(let offset):
            "the character at offset \(offset) sets bits past the end of the data; a canonical encoding leaves them zero"
        case .outputTooSmall(let required, let available):
            "the output buffer holds \(available) bytes but the text decodes to \(required)"
        }
    }

    private static func describe(_ byte: UInt8) -> String {
        let hex = "0x" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        return (0x21...0x7E).contains(byte) ? "byte \(hex) ('\(Character(Unicode.Scalar(byte)))')" : "byte \(hex)"
    }
}

/// Standard base64 with padding (RFC 4648 §4), strict both ways, without Foundation.
///
/// The encoder writes the canonical text; the decoder accepts exactly what a canonical encoder
/// writes and refuses anything else with a ``Base64Error`` (no whitespace, no URL-safe alphabet,
/// no missing or extra padding, no stray bits). Neither traps on any input nor allocates beyond
/// its result.
///
/// Implementation notes: the encoder reads six bytes with one big-endian 8-byte load, looks up
/// two characters per 12 bits in a 4096-entry table and writes eight characters with one store.
/// The decoder reads characters in pairs: one 16-bit load indexes a 65 536-entry table holding the
/// 12 bits the pair stands for, or −1 when either character is not in the alphabet, so one sign
/// test of the OR of a 32-character block checks the whole block. Any block with a bad byte is
/// handed to the plain per-character loop, which finds the first offender. That table is
/// 128 KiB, built on first use; the entries real base64 touches (both characters in the alphabet)
/// span about 12 KiB, which stays in L1. Halving the lookups per quad this way measured about
/// 1.3× faster than four lookups in a 256-entry table. On a CPU with AVX2, whole blocks go first
/// through vector kernels in C: the encoder turns 24 bytes into 32 characters a step, the decoder
/// checks and translates 32 characters a step with nibble tables (2.4–4.5× faster than the pair
/// tables on 1 280 characters); the decoder stops at the first block with a byte outside the
/// alphabet, and the paths above take over from there.
///
/// ```
/// text   Q  U  J  D  R  A  = =      4 characters → 24 bits → 3 bytes; '=' pads the last quad
/// bytes  0x41 0x42 0x43 0x44
/// ```
public enum Base64 {
    /// The length of the padded encoding of `count` bytes: 4·⌈count/3⌉.
    ///
    /// - Precondition: `0 <= count <= Int.max / 4 * 3` (any buffer that fits in memory).
    @inlinable
    public static func encodedCount(forByteCount count: Int) -> Int {
        precondition(count >= 0 && count <= Int.max / 4 * 3, "byte count out of range")
        return (count / 3 + (count % 3 == 0 ? 0 : 1)) * 4
    }

    /// Encodes `bytes` into `output`.
    ///
    /// Writes exactly ``encodedCount(forByteCount:)`` ASCII bytes at the start of `output` and
    /// nothing past them.
    /// - Parameters:
    ///   - bytes: the data to encode.
    ///   - output: where the text goes; must hold at least `encodedCount(forByteCount: bytes.count)`
    ///     bytes (a shorter buffer is a programming error and stops the program).
    /// - Returns: the number of bytes written.
    public static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int {
        encode(bytes, into: output, vector: hasVectorKernels)
    }

    /// ``encode(_:into:)``; `vector`: whether the AVX2 block encoder runs first (tests pass
    /// `false` to check the portable path on any CPU).
    static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, vector: Bool) -> Int {
        let count = encodedCount(forByteCount: bytes.count)
        precondition(output.count >= count, "base64 output buffer holds \(output.count) bytes, the encoding needs \(count)")
        guard count > 0, let source = bytes.baseAddress, let destination = output.baseAddress else { return 0 }
        // With AVX2, blocks of 24 bytes to 32 characters first; each block's loads reach 4 bytes
        // past it, so the last 4 bytes are never the end of a block.
        let blocks = vector && bytes.count >= 28 ? (bytes.count - 4) / 24 : 0
        if blocks > 0 {
            vp_base64_encode_blocks_avx2(source.assumingMemoryBound(to: UInt8.self), blocks, destination.assumingMemoryBound(to: UInt8.self))
        }
        Base64Tables.encodePairs.withUnsafeBufferPointer { pairs in
            guard let pairs = pairs.baseAddress else { return }
            encodeKernel(source + 24 * blocks, count: bytes.count - 24 * blocks, into: destination + 32 * blocks, pairs: pairs)
        }
        return count
    }

    /// Encodes a collection of bytes as a `String`.
    ///
    /// Contiguous collections (`[UInt8]`, `ArraySlice`, `Data`, buffers) are read in place; any
    /// other collection is first copied into an array.
    /// - Returns: the padded base64 text; its storage is allocated once, at its exact size.
    @inlinable
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        if let text = bytes.withContiguousStorageIfAvailable({ encodeToString(UnsafeRawBufferPointer($0)) }) {
            return text
        }
        return Array(bytes).withUnsafeBytes { encodeToString($0) }
    }

    @usableFromInline
    static func encodeToString(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: encodedCount(forByteCount: bytes.count)) { buffer in
            encode(bytes, into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// The exact number of bytes `text` decodes to, from its length and padding alone.
    ///
    /// Checks only the shape: the length is a multiple of 4 and the trailing run of `=` is at
    /// most two long. The characters themselves are checked by ``decode(_:into:)``.
    /// - Returns: 3·(length/4) minus the number of `=`.
    /// - Throws: ``Base64Error/invalidLength(_:)`` or ``Base64Error/invalidPadding(offset:)``.
    public static func decodedCount(forEncoded text: UnsafeRawBufferPointer) throws(Base64Error) -> Int {
        let length = text.count
        guard length % 4 == 0 else { throw .invalidLength(length) }
        var padding = 0
        while padding < length && text[length - 1 - padding] == Base64Tables.pad {
            padding += 1
        }
        guard padding <= 2 else { throw .invalidPadding(offset: length - padding) }
        return length / 4 * 3 - padding
    }

    /// Decodes `text` strictly into `output`.
    ///
    /// Writes exactly ``decodedCount(forEncoded:)`` bytes at the start of `output` and nothing
    /// past them. When it throws, the contents of `output` are unspecified (partly written).
    /// - Parameters:
    ///   - text: padded base64, nothing else (no whitespace or line breaks).
    ///   - output: at least `decodedCount(forEncoded: text)` bytes.
    /// - Returns: the number of bytes written.
    /// - Throws: ``Base64Error`` for the first problem in the order described there, or
    ///   ``Base64Error/outputTooSmall(required:available:)`` before writing anything.
    public static func decode(_ text: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(Base64Error) -> Int {
        let count = try decodedCount(forEncoded: text)
        return try decode(text, padding: text.count / 4 * 3 - count, into: output)
    }

    /// Decodes base64 text into a new array of exactly the decoded size.
    ///
    /// The array is the only allocation. Results up to 1 KiB are decoded on the stack first and
    /// the array is made only if the whole text is valid; larger ones are decoded in place once
    /// the length and padding are known to be right.
    /// - Throws: ``Base64Error``.
    public static func decode(_ text: String) throws(Base64Error) -> [UInt8] {
        var text = text
        let result = text.withUTF8 { utf8 in
            Result { () throws(Base64Error) in try decodeToArray(UnsafeRawBufferPointer(utf8)) }
        }
        return try result.get()
    }

    /// Results up to this size are decoded on the stack and copied into the array.
    ///
    /// `Array(unsafeUninitializedCapacity:)` reaches the allocator through a generic, non-inlinable
    /// standard-library entry point that looks up type metadata on every call (about 20 ns here);
    /// copying a buffer into a new array takes a specialised path. For a 640-byte result the copy
    /// is cheaper than the lookup (measured ~7% faster overall). 1 KiB is where
    /// `withUnsafeTemporaryAllocation` stops using the stack.
    static let stackDecodeLimit = 1_024

    static func decodeToArray(_ text: UnsafeRawBufferPointer) throws(Base64Error) -> [UInt8] {
        let count = try decodedCount(forEncoded: text)
        let padding = text.count / 4 * 3 - count
        if count <= stackDecodeLimit {
            let result = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: stackDecodeLimit) { scratch in
                Result { () throws(Base64Error) -> [UInt8] in
                    let written = try decode(text, padding: padding, into: UnsafeMutableRawBufferPointer(scratch))
                    return Array(UnsafeBufferPointer(rebasing: scratch[..<written]))
                }
            }
            return try result.get()
        }
        var failure: Base64Error?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(Base64Error) {
                initialized = try decode(text, padding: padding, into: UnsafeMutableRawBufferPointer(buffer))
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// Whether this CPU runs the AVX2 block encoder and decoder (`vp_base64_encode_blocks_avx2`,
    /// `vp_base64_decode_blocks_avx2`): whenever it runs the AVX2 kernel set.
    static let hasVectorKernels = DSPKernels.avx2 != nil

    /// Decodes `text`, whose length is a multiple of 4 and which ends in exactly `padding` `=`
    /// (0…2; checked by the caller). With `padding == 0` every `=` is misplaced, which is how a
    /// text decoded in pieces refuses padding before its last piece. `vector`: whether the AVX2
    /// block decoder runs first (tests pass `false` to check the portable path on any CPU).
    static func decode(_ text: UnsafeRawBufferPointer, padding: Int, into output: UnsafeMutableRawBufferPointer,
                       vector: Bool = hasVectorKernels) throws(Base64Error) -> Int {
        let length = text.count
        let count = length / 4 * 3 - padding
        guard output.count >= count else { throw .outputTooSmall(required: count, available: output.count) }
        guard length > 0, let source = text.baseAddress, let destination = output.baseAddress else { return 0 }
        let fullQuadsEnd = padding == 0 ? length : length - 4

        // With AVX2, whole 32-character blocks of the full quads first (24 bytes each, written
        // exactly), up to the first block with a byte outside the alphabet.
        var i = 0
        var o = 0
        if vector {
            let decoded = vp_base64_decode_blocks_avx2(source.assumingMemoryBound(to: UInt8.self), fullQuadsEnd / 32,
                                                       destination.assumingMemoryBound(to: UInt8.self))
            i = 32 * decoded
            o = 24 * decoded
        }

        // Fast path: 32 characters → 24 bytes per step, written as four 8-byte stores of which
        // the last 2 bytes are overwritten by the next store; the block count keeps every store
        // inside the first `count` bytes of the output. Then whole quads, two lookups each.
        // An invalid pair is −1, which sign-extends through the shifts and ORs, so one sign test
        // covers a block; a block or quad with a bad byte stops the fast path where it stands.
        var blocks = min((fullQuadsEnd - i) / 32, (count - o - 2) / 24)
        Base64Tables.decodePairs.withUnsafeBufferPointer { pairs in
            guard let pairs = pairs.baseAddress else { return }
            @inline(__always) func pair(_ offset: Int) -> Int64 {
                Int64(pairs[Int(UInt16(littleEndian: source.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))])
            }
            @inline(__always) func eight(_ offset: Int) -> Int64 {
                pair(offset) &<< 36 | pair(offset &+ 2) &<< 24 | pair(offset &+ 4) &<< 12 | pair(offset &+ 6)
            }
            @inline(__always) func store(_ bits: Int64, _ offset: Int) {
                destination.storeBytes(of: (UInt64(truncatingIfNeeded: bits) &<< 16).bigEndian, toByteOffset: offset, as: UInt64.self)
            }
            while blocks > 0 {
                let a = eight(i), b = eight(i &+ 8), c = eight(i &+ 16), d = eight(i &+ 24)
                if (a | b) | (c | d) < 0 { break }
                store(a, o)
                store(b, o &+ 6)
                store(c, o &+ 12)
                store(d, o &+ 18)
                i &+= 32
                o &+= 24
                blocks &-= 1
            }
            while i < fullQuadsEnd {
                let bits = pair(i) &<< 12 | pair(i &+ 2)
                if bits < 0 { break }
                destination.storeBytes(of: UInt8(truncatingIfNeeded: bits &>> 16), toByteOffset: o, as: UInt8.self)
                destination.storeBytes(of: UInt16(truncatingIfNeeded: bits).bigEndian, toByteOffset: o &+ 1, as: UInt16.self)
                i &+= 4
                o &+= 3
            }
        }

        // Whatever the fast path refused: one character at a time, so the first bad byte is the
        // one reported. Then the padded last quad.
        let values = Base64Tables.decodeValues
        @inline(__always) func value(_ offset: Int) throws(Base64Error) -> UInt32 {
            let byte = source.load(fromByteOffset: offset, as: UInt8.self)
            let value = values[Int(byte)]
            guard value < 64 else { throw characterError(byte, at: offset) }
            return UInt32(value)
        }
        while i < fullQuadsEnd {
            let bits = try value(i) &<< 18 | value(i &+ 1) &<< 12 | value(i &+ 2) &<< 6 | value(i &+ 3)
            destination.storeBytes(of: UInt8(truncatingIfNeeded: bits &>> 16), toByteOffset: o, as: UInt8.self)
            destination.storeBytes(of: UInt8(truncatingIfNeeded: bits &>> 8), toByteOffset: o &+ 1, as: UInt8.self)
            destination.storeBytes(of: UInt8(truncatingIfNeeded: bits), toByteOffset: o &+ 2, as: UInt8.self)
            i &+= 4
            o &+= 3
        }
        if padding == 2 {
            let first = try value(i), last = try value(i + 1)
            guard last & 0x0F == 0 else { throw .nonCanonicalTrailingBits(offset: i + 1) }
            destination.storeBytes(of: UInt8(truncatingIfNeeded: first &<< 2 | last &>> 4), toByteOffset: o, as: UInt8.self)
            o += 1
        } else if padding == 1 {
            let bits = try value(i) &<< 12 | value(i + 1) &<< 6
            let last = try value(i + 2)
            guard last & 0x03 == 0 else { throw .nonCanonicalTrailingBits(offset: i + 2) }
            let all = bits | last
            destination.storeBytes(of: UInt8(truncatingIfNeeded: all &>> 10), toByteOffset: o, as: UInt8.self)
            destination.storeBytes(of: UInt8(truncatingIfNeeded: all &>> 2), toByteOffset: o + 1, as: UInt8.self)
            o += 2
        }
        return o
    }

    /// The error for a byte that is not in the alphabet: `=` is misplaced padding, anything else
    /// a bad character.
    static func characterError(_ byte: UInt8, at offset: Int) -> Base64Error {
        byte == Base64Tables.pad ? .invalidPadding(offset: offset) : .invalidCharacter(byte, offset: offset)
    }

    /// Encodes `count` (> 0) bytes at `source`; `destination` holds the whole encoding.
    private static func encodeKernel(_ source: UnsafeRawPointer, count: Int, into destination: UnsafeMutableRawPointer, pairs: UnsafePointer<UInt16>) {
        var i = 0
        var o = 0
        // Six bytes → eight characters: an 8-byte load (the last two bytes unused), four 12-bit
        // lookups, one 8-byte store. Each table entry holds its two characters first-in-low-byte.
        @inline(__always) func six(_ i: Int, _ o: Int) {
            let x = UInt64(bigEndian: source.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let a = UInt64(pairs[Int(truncatingIfNeeded: x &>> 52)])
            let b = UInt64(pairs[Int(truncatingIfNeeded: (x &>> 40) & 0xFFF)])
            let c = UInt64(pairs[Int(truncatingIfNeeded: (x &>> 28) & 0xFFF)])
            let d = UInt64(pairs[Int(truncatingIfNeeded: (x &>> 16) & 0xFFF)])
            destination.storeBytes(of: (a | b &<< 16 | c &<< 32 | d &<< 48).littleEndian, toByteOffset: o, as: UInt64.self)
        }
        while count &- i >= 26 {
            six(i, o)
            six(i &+ 6, o &+ 8)
            six(i &+ 12, o &+ 16)
            six(i &+ 18, o &+ 24)
            i &+= 24
            o &+= 32
        }
        while count &- i >= 8 {
            six(i, o)
            i &+= 6
            o &+= 8
        }
        @inline(__always) func byte(_ offset: Int) -> UInt32 {
            UInt32(source.load(fromByteOffset: offset, as: UInt8.self))
        }
        while count &- i >= 3 {
            let bits = byte(i) &<< 16 | byte(i &+ 1) &<< 8 | byte(i &+ 2)
            let quad = UInt32(pairs[Int(bits &>> 12)]) | UInt32(pairs[Int(bits & 0xFFF)]) &<< 16
            destination.storeBytes(of: quad.littleEndian, toByteOffset: o, as: UInt32.self)
            i &+= 3
            o &+= 4
        }
        let alphabet = Base64Tables.alphabet
        let rest = count - i
        if rest > 0 {
            let bits = byte(i) &<< 16 | (rest == 2 ? byte(i + 1) &<< 8 : 0)
            destination.storeBytes(of: alphabet[Int(bits &>> 18)], toByteOffset: o, as: UInt8.self)
            destination.storeBytes(of: alphabet[Int((bits &>> 12) & 63)], toByteOffset: o + 1, as: UInt8.self)
            destination.storeBytes(of: rest == 2 ? alphabet[Int((bits &>> 6) & 63)] : Base64Tables.pad, toByteOffset: o + 2, as: UInt8.self)
            destination.storeBytes(of: Base64Tables.pad, toByteOffset: o + 3, as: UInt8.self)
        }
    }
}

/// The lookup tables, built once on first use.
enum Base64Tables {
    static let pad = UInt8(ascii: "=")

    /// The 64 characters, in value order.
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 12 bits → their two characters, the first in the low byte (so a little-endian store writes
    /// them in order).
    static let encodePairs: [UInt16] = (0..<4096).map { bits in
        UInt16(alphabet[bits >> 6]) | UInt16(alphabet[bits & 63]) << 8
    }

    /// Byte → its 6-bit value, or 0xFF for bytes outside the alphabet (`=` included).
    static let decodeValues: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() {
            values[Int(character)] = UInt8(value)
        }
        return values
    }()

    /// Two characters (first in the low byte) → the 12 bits they encode, or −1 if either is
    /// outside the alphabet.
    static let decodePairs: [Int16] = {
        var pairs = [Int16](repeating: -1, count: 65_536)
        for (high, first) in alphabet.enumerated() {
            for (low, second) in alphabet.enumerated() {
                pairs[Int(first) | Int(second) << 8] = Int16(high << 6 | low)
            }
        }
        return pairs
    }()
}
