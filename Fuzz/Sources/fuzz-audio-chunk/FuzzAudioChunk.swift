import FuzzSupport
import VoicePipeCore
@testable import VoicePipeSession

@_cdecl("fuzz_audio_chunk_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

/// The general decoder alone: the strict JSON parser and the field reader, no fast path.
func generalDecode(_ bytes: UnsafeRawBufferPointer, limits: WireLimits) -> Result<WireEnvelope, WireError> {
    Result { () throws(WireError) in
        guard bytes.count <= limits.maxMessageBytes else {
            throw .messageTooLarge(bytes: bytes.count, limit: limits.maxMessageBytes)
        }
        let value: JSONValue
        do throws(JSONSyntaxError) {
            value = try JSONParser.parse(bytes)
        } catch {
            throw .notJSON(error)
        }
        return try WireCodec.envelope(from: value, limits: limits)
    }
}

/// Arbitrary bytes (the first two choose the payload limit) through the `audio.chunk` fast path
/// (`AudioChunkJSON`) and through the general decoder. Properties: a chunk the fast path accepts,
/// the general decoder accepts with the same rate and samples and no extra fields; a chunk the
/// fast path refuses, the general decoder refuses too, with the same `AudioChunkError` when it
/// gets as far as the audio; the two-step parse agrees with the one-step decode; and
/// `WireCodec.decode`, which tries the fast path first, gives exactly what the general decoder
/// gives, for every input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    // Mostly the default limit; sometimes a small one, so the size checks are reached.
    let selector = input.uint16()
    let maxPayload = selector & 0x8000 == 0 ? AudioChunkJSON.defaultMaxPayloadBytes : Int(selector & 0x7FF)
    let limits = WireLimits(maxPayloadBytes: maxPayload)
    let message = input.remaining()

    let fast = AudioChunkJSON.decode(message, maxPayloadBytes: maxPayload)
    let general = generalDecode(message, limits: limits)
    switch fast {
    case .chunk(let chunk):
        fuzzRequire(general == .success(WireEnvelope(message: .audioChunk(chunk))), "fast path \(chunk.sampleRate) × \(chunk.samples.count), general \(general)")
    case .failure(let error):
        switch general {
        case .success(let envelope):
            fuzzRequire(false, "fast path refused (\(error)) but the general decoder accepted \(envelope)")
        case .failure(.audioChunk(let generalError)):
            fuzzRequire(generalError == error, "fast path \(error), general \(generalError)")
        case .failure:
            break   // refused for what is wrong with the JSON or the fields, before the audio
        }
    case .notAudioChunk:
        break
    }

    // The two steps agree with the one.
    switch AudioChunkJSON.parse(message, maxPayloadBytes: maxPayload) {
    case .chunk(let header):
        if case .chunk(let chunk) = fast {
            fuzzRequire(header.sampleRate == chunk.sampleRate && header.sampleCount == chunk.samples.count, "header \(header) for a chunk of \(chunk.samples.count)")
        } else {
            fuzzRequire(!(fast == .notAudioChunk), "parse found a chunk, decode found none")
        }
    case .failure(let error):
        fuzzRequire(fast == .failure(error), "parse \(error), decode \(fast)")
    case .notAudioChunk:
        fuzzRequire(fast == .notAudioChunk, "parse found no chunk, decode \(fast)")
    }

    let combined = Result { () throws(WireError) in try WireCodec.decode(message, limits: limits) }
    fuzzRequire(combined == general, "WireCodec.decode \(combined), general decoder \(general)")
    return 0
}
