import FuzzSupport
@testable import VoicePipeClient

@_cdecl("fuzz_websocket_assembly_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

/// What a text message must come out as, whatever its fragmentation: the oracle, written from
/// the contract rather than from the assembler.
func expectedOutcome(_ message: UnsafeRawBufferPointer, limit: Int) -> WebSocketMessageAssembler.Outcome {
    if message.count > limit { return .oversized(bytes: message.count, limit: limit) }
    if let text = String(validating: message, as: UTF8.self) { return .message(text) }
    return .notUTF8(bytes: message.count)
}

/// A server's stream of text messages, each cut into fragments, all described by the fuzzer's
/// bytes:
///
/// ```
///  limit (2 bytes, 0 … 1023) then, per message:
///    length (2 bytes, 0 … 2047)  pieces (1 byte, 0 … 15)  piece sizes (1 byte each)  message bytes
/// ```
///
/// The message is cut at the given sizes (an empty piece is a fragment with no payload; the rest
/// is the last, final piece). Properties: nothing comes out before a message's final piece; then
/// exactly one outcome, equal to the outcome of the message delivered whole to a fresh assembler
/// and to the oracle (the same text, the same oversized verdict with the full length, the same
/// UTF-8 verdict); a binary piece anywhere is refused and the next text message is whole.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let limit = Int(input.uint16() & 0x3FF)
    var fragmented = WebSocketMessageAssembler(limit: limit)
    var whole = WebSocketMessageAssembler(limit: limit)
    while !input.isEmpty {
        let length = Int(input.uint16() & 0x7FF)
        let pieceControl = input.byte()
        let pieceCount = Int(pieceControl & 0x0F)
        let binaryFirst = pieceControl & 0x80 != 0
        let sizes = (0..<pieceCount).map { _ in Int(input.byte()) }
        let message = input.bytes(length)

        if binaryFirst {
            // A binary message (of some of these bytes) before the text one: refused, and it
            // leaves nothing behind.
            let binary = UnsafeRawBufferPointer(rebasing: message[0..<min(message.count, sizes.first ?? 0)])
            let outcome = fragmented.take(binary, isFinal: pieceControl & 0x40 != 0, isBinary: true)
            fuzzRequire(outcome == .binary, "a binary piece gave \(String(describing: outcome))")
        }

        var start = 0
        var outcomes: [WebSocketMessageAssembler.Outcome] = []
        for size in sizes {
            let end = min(start + size, message.count)
            if let outcome = fragmented.take(UnsafeRawBufferPointer(rebasing: message[start..<end]), isFinal: false, isBinary: false) {
                outcomes.append(outcome)
            }
            start = end
        }
        fuzzRequire(outcomes.isEmpty, "a message came out before its final piece: \(outcomes)")
        let last = fragmented.take(UnsafeRawBufferPointer(rebasing: message[start...]), isFinal: true, isBinary: false)
        let reference = whole.take(message, isFinal: true, isBinary: false)
        let expected = expectedOutcome(message, limit: limit)
        fuzzRequire(last == expected, "fragmented at \(sizes): \(String(describing: last)), expected \(expected)")
        fuzzRequire(reference == expected, "whole: \(String(describing: reference)), expected \(expected)")
    }
    return 0
}
