import Foundation

/// A self-signed certificate and its key, made with the `openssl` command for a TLS test.
public struct TestCertificate: Sendable {
    /// The certificate (PEM); as a CA file it trusts itself.
    public let certificate: String
    public let key: String

    /// Makes one in `directory` for the given subject alternative names ("IP:127.0.0.1",
    /// "DNS:localhost"), valid for a day.
    public static func make(in directory: URL, name: String = "server", alternativeNames: [String]) throws -> TestCertificate {
        let certificate = directory.appendingPathComponent("\(name).pem").path
        let key = directory.appendingPathComponent("\(name)-key.pem").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
                             "-days", "1", "-subj", "/CN=voicepipe test", "-addext", "subjectAltName=" + alternativeNames.joined(separator: ",")]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let detail = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "openssl req failed (run scripts/bootstrap): \(detail)"])
        }
        return TestCertificate(certificate: certificate, key: key)
    }
}
