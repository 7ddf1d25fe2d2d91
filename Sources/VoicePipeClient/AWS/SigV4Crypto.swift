import CCrypto
import VoicePipeProtocols

/// SHA-256 and HMAC-SHA256 through libcrypto's one-shot calls: the hashes every real
/// ``SigV4Signer`` signs with.
///
/// Implementation notes: both calls take a pointer and a length; an empty input still gets a
/// valid pointer (to a zero byte) so that no call ever sees a null buffer.
package struct SigV4Crypto: SigV4Hashing {
    /// The length of a SHA-256 digest in bytes.
    package static let digestLength = Int(SHA256_DIGEST_LENGTH)

    package init() {}

    /// SHA-256 of `bytes`.
    package func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Self.digestLength)
        Self.withNonNullBytes(bytes) { input, count in
            digest.withUnsafeMutableBufferPointer { output in
                _ = SHA256(input, count, output.baseAddress)
            }
        }
        return digest
    }

    /// HMAC-SHA256 of `message` under `key`.
    package func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Self.digestLength)
        var length: UInt32 = 0
        Self.withNonNullBytes(key) { keyBytes, keyCount in
            Self.withNonNullBytes(message) { messageBytes, messageCount in
                digest.withUnsafeMutableBufferPointer { output in
                    _ = HMAC(EVP_sha256(), keyBytes, Int32(clamping: keyCount), messageBytes, messageCount, output.baseAddress, &length)
                }
            }
        }
        return digest
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

extension SigV4Signer {
    /// A signer for `region` and `service` that hashes with libcrypto.
    /// - Throws: ``AWSConfigurationError/invalidScope(name:value:)`` when either is empty or has
    ///   characters other than letters, digits, `-`, `_` and `.` (a `/` would break the scope).
    public init(region: String, service: String = SigV4Signer.defaultService) throws(AWSConfigurationError) {
        try self.init(region: region, service: service, hashing: SigV4Crypto())
    }
}
