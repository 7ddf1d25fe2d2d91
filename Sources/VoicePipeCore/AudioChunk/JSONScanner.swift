import CVoicePipeKernels

/// A cursor over one JSON text (RFC 8259) that recognises just what the `audio.chunk` fast path
/// needs: whitespace, punctuation, strings, numbers and the three literals.
///
/// Every scan either returns the token's byte ranges and leaves the cursor after it, or returns nil
/// for text that is not well-formed JSON (the caller then hands the message to a general decoder).
/// It never reads outside `bytes`.
struct JSONScanner {
    /// A scalar value as written in the text.
    enum Scalar {
        /// `content` is between the quotes, still escaped; `token` includes the quotes.
        case string(content: Range<Int>, token: Range<Int>, escaped: Bool)
        case number(token: Range<Int>, isInteger: Bool)
        case literal(token: Range<Int>)

        var token: Range<Int> {
            switch self {
            case .string(_, let token, _), .number(let token, _), .literal(let token): token
            }
        }
    }

    let bytes: UnsafeRawBufferPointer
    private(set) var position = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { position >= bytes.count }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    /// Consumes `byte` if it is next.
    mutating func consume(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// Scans a string, number or literal; nil for anything else (objects and arrays included).
    mutating func scanScalar() -> Scalar? {
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "\""):
            let start = position
            guard let (content, escaped) = scanString() else { return nil }
            return .string(content: content, token: start..<position, escaped: escaped)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return scanNumber()
        case UInt8(ascii: "t"): return scanLiteral("true")
        case UInt8(ascii: "f"): return scanLiteral("false")
        case UInt8(ascii: "n"): return scanLiteral("null")
        default: return nil
        }
    }

    /// Whether this CPU runs the AVX2 scan of string content (`vp_json_string_run_avx2`), 32
    /// bytes a step, before the 16-byte loop: whenever it runs the AVX2 kernel set.
    static let hasVectorScan = DSPKernels.avx2 != nil

    /// Scans a string whose opening quote is next.
    ///
    /// Runs of ordinary bytes are skipped 32 at a time with AVX2 and sixteen at a time otherwise
    /// (and for the last few), and the delimiter that stops a 16-byte run is pinpointed eight at
    /// a time; escapes are checked for form (`\"` `\\` `\/` `\b` `\f` `\n`
    /// `\r` `\t` `\uXXXX`) and raw control bytes are refused.
    /// - Returns: the content range (between the quotes) and whether it contains escapes.
    mutating func scanString() -> (content: Range<Int>, escaped: Bool)? {
        guard consume(UInt8(ascii: "\"")), let base = bytes.baseAddress else { return nil }
        let start = position
        let end = bytes.count
        var i = start
        var escaped = false
        // (Written with named vectors: an inline `SIMD16(repeating:)` in the condition has
        // lowered `any` to a slow out-of-line reduction.)
        let quotes = SIMD16<UInt8>(repeating: UInt8(ascii: "\""))
        let backslashes = SIMD16<UInt8>(repeating: UInt8(ascii: "\\"))
        let spaces = SIMD16<UInt8>(repeating: 0x20)
        while true {
            if Self.hasVectorScan, end &- i >= 32 {
                i &+= vp_json_string_run_avx2(base.assumingMemoryBound(to: UInt8.self) + i, end &- i)
            }
            while end &- i >= 16 {
                let chunk = base.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
                if any((chunk .== quotes) .| (chunk .== backslashes) .| (chunk .< spaces)) {
                    let low = Self.delimiterFlags(base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                    let high = Self.delimiterFlags(base.loadUnaligned(fromByteOffset: i &+ 8, as: UInt64.self))
                    i &+= low != 0 ? Self.firstFlagged(low) : 8 &+ Self.firstFlagged(high)
                    break
                }
                i &+= 16
            }
            guard i < end else { return nil }
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                position = i + 1
                return (start..<i, escaped)
            } else if byte == UInt8(ascii: "\\") {
                guard let length = Self.escapeLength(in: bytes, at: i) else { return nil }
                escaped = true
                i += length
            } else if byte < 0x20 {
                return nil
            } else {
                i += 1
            }
        }
    }

    /// 0x80 in each byte of `word` (as loaded from memory) that is zero, exactly.
    @inline(__always)
    static func zeroBytes(_ word: UInt64) -> UInt64 {
        let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        return ~(((word & low7) &+ low7) | word) & ~low7
    }

    /// 0x80 in each byte of `word` that is `"`, `\` or a control byte (< 0x20), exactly.
    @inline(__always)
    static func delimiterFlags(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let word = UInt64(littleEndian: word)
        return zeroBytes(word ^ (ones &* 0x22)) | zeroBytes(word ^ (ones &* 0x5C)) | zeroBytes(word & (ones &* 0xE0))
    }

    /// The memory index (0…8) of the first flagged byte of a `UInt64(littleEndian:)` word; 8 if none.
    @inline(__always)
    static func firstFlagged(_ flags: UInt64) -> Int {
        flags.trailingZeroBitCount &>> 3
    }

    /// The length of the well-formed escape starting with the backslash at `offset`, or nil.
    static func escapeLength(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Int? {
        guard offset + 1 < bytes.count else { return nil }
        switch bytes[offset + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
             UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return 2
        case UInt8(ascii: "u"):
            guard offset + 6 <= bytes.count else { return nil }
            for k in (offset + 2)..<(offset + 6) where hexValue(bytes[k]) == nil { return nil }
            return 6
        default:
            return nil
        }
    }

    static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func scanNumber() -> Scalar? {
        let start = position
        _ = consume(UInt8(ascii: "-"))
        if consume(UInt8(ascii: "0")) {
            // A leading zero stands alone.
        } else if scanDigits() == 0 {
            return nil
        }
        var isInteger = true
        if consume(UInt8(ascii: ".")) {
            isInteger = false
            guard scanDigits() > 0 else { return nil }
        }
        if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
            isInteger = false
            if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
            guard scanDigits() > 0 else { return nil }
        }
        return .number(token: start..<position, isInteger: isInteger)
    }

    private mutating func scanDigits() -> Int {
        let start = position
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            position += 1
        }
        return position - start
    }

    private mutating func scanLiteral(_ word: StaticString) -> Scalar? {
        let start = position
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count else { return nil }
        for k in 0..<count where bytes[position + k] != word.utf8Start[k] { return nil }
        position += count
        return .literal(token: start..<position)
    }
}

/// The content of a JSON string that passed ``JSONScanner/scanString()``, read as the bytes it
/// stands for once unescaped.
///
/// Escapes become the byte they stand for; a `\uXXXX` above U+007F becomes the UTF-8 of that code
/// unit, a surrogate pair the UTF-8 of its character (a surrogate on its own, as written). Runs
/// between escapes are found sixteen bytes at a time and copied in bulk.
struct JSONStringContent {
    let bytes: UnsafeRawBufferPointer
    let content: Range<Int>

    /// The offset of the first backslash in `from..<content.upperBound`, or `content.upperBound`.
    func backslash(from start: Int) -> Int {
        let end = content.upperBound
        var i = start
        if let base = bytes.baseAddress {
            let backslashes = SIMD16<UInt8>(repeating: UInt8(ascii: "\\"))
            let pattern: UInt64 = 0x5C5C_5C5C_5C5C_5C5C
            while end &- i >= 16 {
                if any(base.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self) .== backslashes) {
                    let low = JSONScanner.zeroBytes(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ pattern)
                    let high = JSONScanner.zeroBytes(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i &+ 8, as: UInt64.self)) ^ pattern)
                    return i &+ (low != 0 ? JSONScanner.firstFlagged(low) : 8 &+ JSONScanner.firstFlagged(high))
                }
                i &+= 16
            }
        }
        while i < end && bytes[i] != UInt8(ascii: "\\") { i += 1 }
        return i
    }

    /// The escape whose backslash is at `offset`: how many raw bytes it spans, and the 1–4 bytes
    /// it stands for (first byte in the highest position of `value`).
    func escape(at offset: Int) -> (length: Int, value: UInt32, count: Int) {
        let end = content.upperBound
        guard offset + 1 < end else { return (1, UInt32(UInt8(ascii: "\\")), 1) }
        switch bytes[offset + 1] {
        case UInt8(ascii: "b"): return (2, 0x08, 1)
        case UInt8(ascii: "f"): return (2, 0x0C, 1)
        case UInt8(ascii: "n"): return (2, 0x0A, 1)
        case UInt8(ascii: "r"): return (2, 0x0D, 1)
        case UInt8(ascii: "t"): return (2, 0x09, 1)
        case UInt8(ascii: "u"):
            var unit: UInt32 = 0
            var i = offset + 2
            while i < min(offset + 6, end) {
                unit = unit << 4 | (JSONScanner.hexValue(bytes[i]) ?? 0)
                i += 1
            }
            // A surrogate pair stands for one character: its four UTF-8 bytes, as a JSON parser
            // reads it (so a chunk's length is judged the same on both paths).
            if (0xD800..<0xDC00).contains(unit), i == offset + 6, offset + 12 <= end,
               bytes[offset + 6] == UInt8(ascii: "\\"), bytes[offset + 7] == UInt8(ascii: "u") {
                var low: UInt32 = 0
                for k in (offset + 8)..<(offset + 12) { low = low << 4 | (JSONScanner.hexValue(bytes[k]) ?? 0) }
                if (0xDC00..<0xE000).contains(low) {
                    let scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    return (12, (0xF0 | scalar >> 18) << 24 | (0x80 | (scalar >> 12) & 0x3F) << 16 | (0x80 | (scalar >> 6) & 0x3F) << 8 | (0x80 | scalar & 0x3F), 4)
                }
            }
            if unit < 0x80 { return (i - offset, unit, 1) }
            if unit < 0x800 { return (i - offset, (0xC0 | unit >> 6) << 8 | (0x80 | unit & 0x3F), 2) }
            return (i - offset, (0xE0 | unit >> 12) << 16 | (0x80 | (unit >> 6) & 0x3F) << 8 | (0x80 | unit & 0x3F), 3)
        default:
            return (2, UInt32(bytes[offset + 1]), 1)   // \" \\ \/
        }
    }

    /// The unescaped length, and the length of the run of `byte` it ends with.
    func measure(trailing byte: UInt8) -> (count: Int, trailingRun: Int) {
        var count = 0
        var run = 0
        var i = content.lowerBound
        while i < content.upperBound {
            let escapeAt = backslash(from: i)
            if escapeAt > i {
                count += escapeAt - i
                var k = escapeAt
                while k > i && bytes[k - 1] == byte { k -= 1 }
                run = k == i ? run + (escapeAt - i) : escapeAt - k
            }
            guard escapeAt < content.upperBound else { break }
            let escape = escape(at: escapeAt)
            count += escape.count
            run = escape.count == 1 && escape.value == UInt32(byte) ? run + 1 : 0
            i = escapeAt + escape.length
        }
        return (count, run)
    }

    /// Reads the unescaped bytes in order, into buffers.
    struct Reader {
        let string: JSONStringContent
        private var position: Int
        /// The next backslash at or after `position` (found once per run, not once per fill).
        private var nextEscape: Int
        private var pending: UInt32 = 0
        private var pendingCount = 0

        init(_ string: JSONStringContent) {
            self.string = string
            position = string.content.lowerBound
            nextEscape = string.backslash(from: position)
        }

        /// Fills `output` from the start with the next unescaped bytes.
        /// - Returns: how many were written; fewer than `output.count` only at the end.
        mutating func fill(_ output: UnsafeMutableRawBufferPointer) -> Int {
            guard let destination = output.baseAddress, let source = string.bytes.baseAddress else { return 0 }
            var written = 0
            while written < output.count {
                if pendingCount > 0 {
                    pendingCount -= 1
                    output[written] = UInt8(truncatingIfNeeded: pending >> (8 * UInt32(pendingCount)))
                    written += 1
                    continue
                }
                guard position < string.content.upperBound else { break }
                if nextEscape > position {
                    let take = min(nextEscape - position, output.count - written)
                    (destination + written).copyMemory(from: source + position, byteCount: take)
                    written += take
                    position += take
                    continue
                }
                let escape = string.escape(at: position)
                position += escape.length
                nextEscape = string.backslash(from: position)
                pending = escape.value
                pendingCount = escape.count
            }
            return written
        }
    }
}
