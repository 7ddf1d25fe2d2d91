/// The plain scalar base64 that ``Base64`` must agree with, byte for byte and error for error.
///
/// Written for obviousness, not speed: one character and one bit group at a time, no tables
/// beyond the alphabet, the rules of ``Base64Error`` spelled out in the order they are checked.
enum Base64Reference {
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let pad = UInt8(ascii: "=")

    /// The 6-bit value of an alphabet character, or nil.
    static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }

    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var text: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let group = Array(bytes[index..<min(index + 3, bytes.count)])
            let bits = (UInt32(group[0]) << 16)
                | (group.count > 1 ? UInt32(group[1]) << 8 : 0)
                | (group.count > 2 ? UInt32(group[2]) : 0)
            text.append(alphabet[Int((bits >> 18) & 63)])
            text.append(alphabet[Int((bits >> 12) & 63)])
            text.append(group.count > 1 ? alphabet[Int((bits >> 6) & 63)] : pad)
            text.append(group.count > 2 ? alphabet[Int(bits & 63)] : pad)
            index += 3
        }
        return text
    }

    static func decode(_ text: [UInt8]) throws(Base64Error) -> [UInt8] {
        // 1. Length.
        guard text.count % 4 == 0 else { throw .invalidLength(text.count) }
        // 2. Padding shape: the trailing run of '=' is at most two long.
        var padding = 0
        while padding < text.count && text[text.count - 1 - padding] == pad { padding += 1 }
        guard padding <= 2 else { throw .invalidPadding(offset: text.count - padding) }
        // 3. Every other byte, left to right, is in the alphabet; an '=' among them is misplaced.
        let dataEnd = text.count - padding
        var values: [UInt32] = []
        for offset in 0..<dataEnd {
            guard let value = value(of: text[offset]) else {
                throw text[offset] == pad ? .invalidPadding(offset: offset) : .invalidCharacter(text[offset], offset: offset)
            }
            values.append(UInt32(value))
        }
        // 4. Bits past the last whole byte are zero.
        if padding == 2, values[dataEnd - 1] & 0x0F != 0 { throw .nonCanonicalTrailingBits(offset: dataEnd - 1) }
        if padding == 1, values[dataEnd - 1] & 0x03 != 0 { throw .nonCanonicalTrailingBits(offset: dataEnd - 1) }
        // Decode: 6 bits per character, most significant first; keep whole bytes only.
        var bytes: [UInt8] = []
        var accumulator: UInt32 = 0
        var bitCount = 0
        for value in values {
            accumulator = (accumulator << 6) | value
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                bytes.append(UInt8((accumulator >> UInt32(bitCount)) & 0xFF))
            }
        }
        return bytes
    }
}
