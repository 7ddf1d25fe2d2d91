import Glibc
import Synchronization
import Testing
import VoicePipeProtocols

/// SigV4's pure half, with a stand-in for the hashes: the timestamp, the encodings, the canonical
/// request, the string to sign, the chain of HMACs, the parameters and headers signing adds, and
/// printing without secrets. (The AWS test suite's vectors, which need the real SHA-256 and
/// HMAC-SHA256, run in VoicePipeClientTests against libcrypto.)
struct SigV4RequestBuildingTests {
    static let suiteCredentials = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    /// 20150830T123600Z.
    static let suiteUnixSeconds: Int64 = 1_440_938_160

    /// A stand-in for SHA-256 and HMAC-SHA256: not cryptographic, but 32 bytes that differ with
    /// every input, and a record of each call, so a test sees exactly what the signer hashed.
    final class RecordingHashing: SigV4Hashing {
        enum Call: Equatable {
            case sha256(String)
            case hmac(key: [UInt8], message: String)
        }

        private let recorded = Mutex<[Call]>([])

        var calls: [Call] { recorded.withLock { $0 } }

        func sha256(_ bytes: [UInt8]) -> [UInt8] {
            recorded.withLock { $0.append(.sha256(String(decoding: bytes, as: UTF8.self))) }
            return Self.digest([0x01] + bytes)
        }

        func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
            recorded.withLock { $0.append(.hmac(key: key, message: String(decoding: message, as: UTF8.self))) }
            return Self.digest([0x02] + key + [0xFF] + message)
        }

        /// Four 64-bit FNV-1a hashes of `bytes` with different offsets, big-endian.
        static func digest(_ bytes: [UInt8]) -> [UInt8] {
            (0..<4).flatMap { lane -> [UInt8] in
                var hash: UInt64 = 0xcbf2_9ce4_8422_2325 &+ UInt64(lane) &* 0x9E37_79B9_7F4A_7C15
                for byte in bytes {
                    hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
                }
                return (0..<8).map { UInt8(truncatingIfNeeded: hash >> (56 - 8 * $0)) }
            }
        }

        static func hex(_ bytes: [UInt8]) -> String {
            let digits = Array("0123456789abcdef")
            return bytes.map { String([digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]]) }.joined()
        }
    }

    /// Another stand-in, only to tell signers apart by their kind of hashing.
    struct OtherHashing: SigV4Hashing {
        func sha256(_ bytes: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: 32) }
        func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: 32) }
    }

    static func signer(region: String = "us-west-2", service: String = SigV4Signer.defaultService,
                       hashing: RecordingHashing = RecordingHashing()) throws -> SigV4Signer {
        try SigV4Signer(region: region, service: service, hashing: hashing)
    }

    // MARK: Timestamps

    @Test(arguments: [
        (Int64(0), "19700101T000000Z"),
        (1_440_938_160, "20150830T123600Z"),
        (951_782_400, "20000229T000000Z"),        // 2000 is a leap year (divisible by 400)
        (951_868_800, "20000301T000000Z"),
        (4_107_542_399, "21000228T235959Z"),      // 2100 is not (divisible by 100)
        (4_107_542_400, "21000301T000000Z"),
        (1_709_251_199, "20240229T235959Z"),
        (1_735_646_400, "20241231T120000Z"),      // day 366 of a leap year
        (1_735_689_600, "20250101T000000Z"),
        (253_402_300_799, "99991231T235959Z"),
    ])
    func timestampsAreUTCDigits(unixSeconds: Int64, expected: String) throws {
        let time = try SigV4Timestamp(unixSeconds: unixSeconds)
        #expect(time.dateTime == expected)
        #expect(time.date == String(expected.prefix(8)))
    }

    @Test func timestampsAgreeWithTheCLibraryOverTheWholeRange() throws {
        // Every day from 1970 to 2200 (each at another second of the day), then every 61st day to 9999.
        let until2200: Int64 = 7_258_118_400
        let times = Array(stride(from: Int64(0), to: until2200, by: 86_400 + 7))
            + Array(stride(from: until2200, through: SigV4Timestamp.latestUnixSeconds, by: 86_400 * 61 + 3_607))
        var checked = 0
        for unixSeconds in times {
            var seconds = time_t(unixSeconds)
            var parts = tm()
            var buffer = [CChar](repeating: 0, count: 32)
            #expect(gmtime_r(&seconds, &parts) != nil)
            let count = strftime(&buffer, buffer.count, "%Y%m%dT%H%M%SZ", &parts)
            let expected = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let actual = try SigV4Timestamp(unixSeconds: unixSeconds).dateTime
            if actual != expected {
                Issue.record("\(unixSeconds): \(actual), C library: \(expected)")
                return
            }
            checked += 1
        }
        #expect(checked > 120_000)
    }

    @Test func timesSigV4CannotWriteAreRefused() {
        #expect(throws: AWSConfigurationError.timeOutOfRange(unixSeconds: -1)) { try SigV4Timestamp(unixSeconds: -1) }
        #expect(throws: AWSConfigurationError.timeOutOfRange(unixSeconds: 253_402_300_800)) { try SigV4Timestamp(unixSeconds: 253_402_300_800) }
    }

    // MARK: Encodings

    @Test func theCanonicalURIEncodesAnEncodedPathAgainAsBotocoreDoes() {
        let path = "/runtimes/arn%3Aaws%3Abedrock-agentcore%3Aus-west-2%3A123456789012%3Aruntime%2Fagent-1/ws"
        #expect(SigV4Signer.canonicalURI(path) == "/runtimes/arn%253Aaws%253Abedrock-agentcore%253Aus-west-2%253A123456789012%253Aruntime%252Fagent-1/ws")
        #expect(SigV4Signer.canonicalURI("") == "/")
        #expect(SigV4Signer.canonicalURI("/a/./b/../../..//c/") == "/c/")
        #expect(SigV4Signer.canonicalURI("/~user/a b+c") == "/~user/a%20b%2Bc")
    }

    @Test func rawQueriesDecodeAsBotocoreDecodesThem() {
        let pairs = SigV4Request.decodeQuery("a=1&&b=x+y%20z&flag&=v&c=%zz%4&d=%E1%88%B4&e=a=b")
        #expect(pairs.map(\.name) == ["a", "b", "flag", "", "c", "d", "e"])
        #expect(pairs.map(\.value) == ["1", "x y z", "", "v", "%zz%4", "ሴ", "a=b"])
        #expect(SigV4Request.decodeQuery("").isEmpty)
    }

    @Test func theRequestTargetEncodesTheQueryTheSigV4Way() {
        let request = SigV4Request(host: "example.com", path: "/ws", query: [("b", "x y/z"), ("a", "~-._ሴ+")])
        #expect(request.requestTarget == "/ws?b=x%20y%2Fz&a=~-._%E1%88%B4%2B")
        #expect(SigV4Request(host: "example.com", path: "").requestTarget == "/")
    }

    // MARK: Steps

    @Test func theCanonicalRequestOfTheSuitesVanillaGETIsItsPublishedOne() throws {
        // get-vanilla.creq of the AWS test suite: no hash is involved before the string to sign.
        let signer = try Self.signer(region: "us-east-1", service: "service")
        let request = SigV4Request(host: "example.amazonaws.com", path: "/", headers: [("X-Amz-Date", "20150830T123600Z")])
        #expect(signer.canonicalRequest(of: request) == """
            GET
            /

            host:example.amazonaws.com
            x-amz-date:20150830T123600Z

            host;x-amz-date
            e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
            """)
    }

    @Test func theStringToSignIsTheScopeAndTheHexHashOfTheCanonicalRequest() throws {
        let hashing = RecordingHashing()
        let signer = try Self.signer(region: "us-east-1", service: "service", hashing: hashing)
        let time = try SigV4Timestamp(unixSeconds: Self.suiteUnixSeconds)
        #expect(signer.credentialScope(at: time) == "20150830/us-east-1/service/aws4_request")
        let toSign = signer.stringToSign(canonicalRequest: "GET\n/\n", at: time)
        #expect(hashing.calls == [.sha256("GET\n/\n")])
        let hash = RecordingHashing.hex(RecordingHashing.digest([0x01] + Array("GET\n/\n".utf8)))
        #expect(toSign == "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n" + hash)
    }

    @Test func theSigningKeyChainsHMACsFromAWS4AndTheSecretThroughTheScope() throws {
        let hashing = RecordingHashing()
        let signer = try Self.signer(region: "us-east-1", service: "iam", hashing: hashing)
        let time = try SigV4Timestamp(unixSeconds: 1_329_264_000)   // 20120215
        let key = signer.signingKey(secretAccessKey: "SECRET", at: time)
        var expectedKey = Array("AWS4SECRET".utf8)
        var expectedCalls: [RecordingHashing.Call] = []
        for part in ["20120215", "us-east-1", "iam", "aws4_request"] {
            expectedCalls.append(.hmac(key: expectedKey, message: part))
            expectedKey = RecordingHashing.digest([0x02] + expectedKey + [0xFF] + Array(part.utf8))
        }
        #expect(hashing.calls == expectedCalls)
        #expect(key == expectedKey)
        let signature = signer.signature(stringToSign: "to sign", signingKey: key)
        #expect(signature == RecordingHashing.hex(RecordingHashing.digest([0x02] + key + [0xFF] + Array("to sign".utf8))))
        #expect(hashing.calls.last == .hmac(key: key, message: "to sign"))
    }

    // MARK: Signing modes

    @Test func headerSigningAddsTheDateTokenAndAuthorizationInThatOrder() throws {
        let signer = try Self.signer(region: "us-east-1", service: "service")
        var credentials = Self.suiteCredentials
        credentials.sessionToken = "TOKEN"
        let request = SigV4Request(host: "example.amazonaws.com", path: "/", headers: [("Authorization", "stale"), ("X-Custom", " a   b ")])
        let signing = signer.headerSigning(request, credentials: credentials, at: try SigV4Timestamp(unixSeconds: Self.suiteUnixSeconds))
        #expect(signing.request.headers.map(\.name) == ["X-Custom", "X-Amz-Date", "X-Amz-Security-Token", "Authorization"])
        #expect(signing.request.header("X-Amz-Date") == "20150830T123600Z")
        #expect(signing.request.header("X-Amz-Security-Token") == "TOKEN")
        #expect(signing.request.header("Authorization") == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            + "SignedHeaders=host;x-amz-date;x-amz-security-token;x-custom, Signature=" + signing.signature)
        #expect(signing.canonicalRequest.split(separator: "\n", omittingEmptySubsequences: false)[3...6] == [
            "host:example.amazonaws.com", "x-amz-date:20150830T123600Z", "x-amz-security-token:TOKEN", "x-custom:a b",
        ])
        #expect(signer.canonicalRequest(of: signing.request) == signing.canonicalRequest)
    }

    @Test func presigningAddsTheParametersInBotocoresOrderAndSignsOnlyHost() throws {
        let signer = try Self.signer()
        var credentials = Self.suiteCredentials
        credentials.sessionToken = "token/with+specials="
        let request = SigV4Request(host: "example.com", path: "/ws", query: [("qualifier", "DEFAULT"), ("X-Amz-Signature", "stale")])
        let signing = try signer.presigning(request, credentials: credentials, at: try SigV4Timestamp(unixSeconds: Self.suiteUnixSeconds))
        #expect(signing.request.query.map(\.name) == ["qualifier", "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires",
                                                      "X-Amz-SignedHeaders", "X-Amz-Security-Token", "X-Amz-Signature"])
        #expect(signing.request.query.first { $0.name == "X-Amz-SignedHeaders" }?.value == "host")
        #expect(signing.request.query.first { $0.name == "X-Amz-Expires" }?.value == "300")
        #expect(signing.request.query.last?.value == signing.signature)
        #expect(signing.request.headers.isEmpty)
        #expect(signing.canonicalRequest.split(separator: "\n")[2].contains("X-Amz-Security-Token=token%2Fwith%2Bspecials%3D"))
        #expect(signer.canonicalRequest(of: signing.request) == signing.canonicalRequest)
        // Signing the signed request again replaces its parameters instead of repeating them.
        let again = try signer.presign(signing.request, credentials: credentials, at: try SigV4Timestamp(unixSeconds: Self.suiteUnixSeconds))
        #expect(again.requestTarget == signing.request.requestTarget)
    }

    @Test func badScopesAndLifetimesAreRefusedWithASentence() throws {
        #expect(throws: AWSConfigurationError.invalidScope(name: "region", value: "")) { try Self.signer(region: "") }
        #expect(throws: AWSConfigurationError.invalidScope(name: "service", value: "a/b")) { try Self.signer(region: "us-west-2", service: "a/b") }
        let signer = try Self.signer()
        let time = try SigV4Timestamp(unixSeconds: Self.suiteUnixSeconds)
        let request = SigV4Request(host: "example.com", path: "/ws")
        for expires in [0, -5, 604_801] {
            #expect(throws: AWSConfigurationError.invalidExpiry(seconds: expires)) { try signer.presign(request, credentials: Self.suiteCredentials, at: time, expires: expires) }
        }
        #expect(throws: Never.self) { _ = try signer.presign(request, credentials: Self.suiteCredentials, at: time, expires: 604_800) }
        #expect(AWSConfigurationError.invalidExpiry(seconds: 0).description == "a presigned request cannot expire after 0 s: choose 1 to 604800 s (7 days)")
    }

    @Test func signedRequestsPrintWithoutTokenOrSignature() throws {
        let signer = try Self.signer()
        let credentials = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "SECRETSECRET", sessionToken: "TOKENTOKEN")
        let time = try SigV4Timestamp(unixSeconds: Self.suiteUnixSeconds)
        let request = SigV4Request(host: "example.com", path: "/ws", query: [("qualifier", "DEFAULT")])
        let presigned = try signer.presigning(request, credentials: credentials, at: time)
        let headed = signer.headerSigning(request, credentials: credentials, at: time)
        for signing in [presigned, headed] {
            var dumped = ""
            dump(signing, to: &dumped)
            dump(signing.request, to: &dumped)
            for text in [signing.description, String(reflecting: signing), "\(signing.request)", String(reflecting: signing.request), dumped] {
                #expect(!text.contains("TOKENTOKEN") && !text.contains("SECRETSECRET") && !text.contains(signing.signature), "\(text)")
                #expect(text.contains("<redacted>") && text.contains("qualifier=DEFAULT"))
            }
        }
    }

    @Test func signersAreEqualForTheSameScopeAndKindOfHashing() throws {
        let signer = try Self.signer()
        let same = try Self.signer()
        #expect(signer == same)
        #expect(signer.hashValue == same.hashValue)
        #expect(signer != (try Self.signer(region: "us-east-1")))
        #expect(signer != (try Self.signer(service: "execute-api")))
        #expect(signer != (try SigV4Signer(region: "us-west-2", hashing: OtherHashing())))
    }
}
