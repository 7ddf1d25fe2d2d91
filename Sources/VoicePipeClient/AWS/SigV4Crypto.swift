import CCrypto

/// SHA-256 and HMAC-SHA256 through libcrypto's one-shot calls, and lower-case hex: all that
/// SigV4 needs from cryptography.
///
/// Implementation notes: both calls take a pointer and a length; an empty input still gets a
/// valid pointer (to a zero byte) so that no call ever sees a null buffer.
enum SigV4Crypto {
    /// The length of a SHA-256 digest in bytes.
    static let digestLength = Int(SHA256_DIGEST_LENGTH)

    /// SHA-256 of `bytes`.
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: digestLength)
        withNonNullBytes(bytes) { input, count in
            digest.withUnsafeMutableBufferPointer { output in
                _ = SHA256(input, count, output.baseAddress)
            }
        }
        return digest
    }

    /// HMAC-SHA256 of `message` under `key`.
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: digestLength)
        var length: UInt32 = 0
        withNonNullBytes(key) { keyBytes, keyCount in
            withNonNullBytes(message) { messageBytes, messageCount in
                digest.withUnsafeMutableBufferPointer { output in
                    _ = HMAC(EVP_sha256(), keyBytes, Int32(clamping: keyCount), messageBytes, messageCount, output.baseAddress, &length)
                }
            }
        }
        return digest
    }

    /// `bytes` as lower-case hexadecimal, two digits a byte.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func withNonNullBytes(_ bytes: [UInt8], _ body: (UnsafePointer<UInt8>, Int) -> Void) {
        bytes.withUnsafeBufferPointer { buffer in
            if let base = buffer.baseAddress, !buffer.isEmpty {
                body(base, buffer.count)
            } else {
                withUnsafePointer(to: UInt8(0)) { body($0, 0) }
            }
        }
    }
}
