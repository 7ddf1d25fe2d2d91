/// The two hashes SigV4 needs, passed into ``SigV4Signer`` so that building and signing requests
/// stays pure: `VoicePipeClient` gives libcrypto's, tests may give a stub that records its inputs.
///
/// A conformer must be a real SHA-256 and HMAC-SHA256 for signatures that AWS accepts; the signer
/// only chains the calls (signing key, string to sign, signature) and writes the digests in hex.
public protocol SigV4Hashing: Sendable {
    /// SHA-256 of `bytes`: 32 bytes.
    func sha256(_ bytes: [UInt8]) -> [UInt8]
    /// HMAC-SHA256 of `message` under `key`: 32 bytes.
    func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8]
}
