import FuzzSupport
@testable import VoicePipeSession

@_cdecl("fuzz_wire_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

/// A JSON value with every integral number written as the writer writes it (`-2.5e3` is the
/// number -2500, sent as `-2500`, read back as an integer): the value as JSON text carries it.
func normalized(_ value: JSONValue) -> JSONValue {
    switch value {
    case .number(let number) where number == number.rounded() && abs(number) < 9_007_199_254_740_992:
        return .integer(Int(number))
    case .array(let elements):
        return .array(elements.map(normalized))
    case .object(let object):
        return .object(normalized(object))
    default:
        return value
    }
}

func normalized(_ object: JSONObject) -> JSONObject {
    var result = JSONObject()
    for (key, value) in object { result[key] = normalized(value) }
    return result
}

/// An envelope as the JSON it stands for: every field of its message, then its extras.
func jsonFields(_ envelope: WireEnvelope) -> [JSONObject] {
    [normalized(WireCodec.fields(of: envelope.message)), normalized(envelope.extras)]
}

/// Arbitrary bytes as one wire message. `WireCodec.decode` gives an envelope or a typed
/// `WireError` (the signature allows nothing else; a trap is a crash). Properties of a decoded
/// envelope: its encoding decodes again, to the same message type with the same fields and extras
/// (numbers compared as JSON numbers: the model keeps `2500` and `2.5e3` apart, the text it
/// writes does not), and encoding that gives the same text again, so what the client writes it
/// reads back unchanged, extras and unknown types included. Text and bytes entry points agree.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let bytes = input.remaining()
    let decoded = Result { () throws(WireError) in try WireCodec.decode(bytes) }
    guard case .success(let envelope) = decoded else { return 0 }

    let text = WireCodec.encode(envelope)
    let again = Result { () throws(WireError) in try WireCodec.decode(text) }
    guard case .success(let decodedAgain) = again else {
        fuzzRequire(false, "decode(encode(envelope)) gave \(again) for \(text)")
        return 0
    }
    fuzzRequire(decodedAgain.message.type == envelope.message.type && jsonFields(decodedAgain) == jsonFields(envelope),
                "decode(encode(envelope)) gave \(decodedAgain) for \(envelope)")
    let textAgain = WireCodec.encode(decodedAgain)
    fuzzRequire(textAgain == text, "encoding is not stable: \(text) then \(textAgain)")
    if let string = String(validating: bytes, as: UTF8.self) {
        let fromString = Result { () throws(WireError) in try WireCodec.decode(string) }
        fuzzRequire(fromString == decoded, "the String entry point gave \(fromString)")
    }
    return 0
}
