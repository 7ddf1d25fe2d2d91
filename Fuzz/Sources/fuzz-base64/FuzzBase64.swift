import FuzzSupport
@testable import VoicePipeCore

@_cdecl("fuzz_base64_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}
/// Arbitrary bytes as base64 text. Properties: the optimised decoder agrees with the plain
/// reference, value for value and error for error; text that decodes is canonical, so encoding the
/// result gives the text back (with both encoders); the buffer-based decoder reports the same count
/// and bytes and refuses a buffer one byte short with a typed error; and any bytes survive
/// encode then decode.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let text = input.remaining()
    let textArray = Array(text)
    let decoded = Result { () throws(Base64Error) in try Base64.decodeToArray(text) }
    let reference = Result { () throws(Base64Error) in try Base64Reference.decode(textArray) }
    fuzzRequire(decoded == reference, "decoder \(decoded) but reference \(reference)")

    if case .success(let bytes) = decoded {
        fuzzRequire(Array(Base64.encode(bytes).utf8) == textArray, "encode(decode(text)) is not the text")
        fuzzRequire(Base64Reference.encode(bytes) == textArray, "the reference's encode(decode(text)) is not the text")
        let count = Result { () throws(Base64Error) in try Base64.decodedCount(forEncoded: text) }
        fuzzRequire(count == .success(bytes.count), "decodedCount \(count) for \(bytes.count) bytes")
        var output = [UInt8](repeating: 0, count: bytes.count)
        let written = output.withUnsafeMutableBytes { buffer in
            Result { () throws(Base64Error) in try Base64.decode(text, into: buffer) }
        }
        fuzzRequire(written == .success(bytes.count) && output == bytes, "decode(into:) gave \(written)")
        if bytes.count > 0 {
            var short = [UInt8](repeating: 0, count: bytes.count - 1)
            let refused = short.withUnsafeMutableBytes { buffer in
                Result { () throws(Base64Error) in try Base64.decode(text, into: buffer) }
            }
            fuzzRequire(refused == .failure(.outputTooSmall(required: bytes.count, available: bytes.count - 1)), "a short buffer gave \(refused)")
        }
    }

    // The input as bytes to encode: always decodes back to itself.
    let encoded = Base64.encode(textArray)
    fuzzRequire(Array(encoded.utf8) == Base64Reference.encode(textArray), "encoder disagrees with the reference")
    let back = Result { () throws(Base64Error) in try Base64.decode(encoded) }
    fuzzRequire(back == .success(textArray), "decode(encode(bytes)) gave \(back)")
    return 0
}
