import Testing
import VoicePipeProtocols

/// Joining WebSocket fragments into messages: what the transport delivers does not depend on how
/// the server (or the network) cut a message, a message over the limit is counted, not kept, and a
/// message that is not UTF-8 or is binary is reported as such.
struct WebSocketMessageAssemblerTests {
    /// Feeds `pieces` as one message (the last piece final) and returns every outcome.
    static func feed(_ assembler: inout WebSocketMessageAssembler, _ pieces: [[UInt8]], isBinary: Bool = false) -> [WebSocketMessageAssembler.Outcome] {
        var outcomes: [WebSocketMessageAssembler.Outcome] = []
        for (index, piece) in pieces.enumerated() {
            let outcome = piece.withUnsafeBytes { assembler.take($0, isFinal: index == pieces.count - 1, isBinary: isBinary) }
            if let outcome { outcomes.append(outcome) }
        }
        return outcomes
    }

    @Test func aSinglePieceIsOneMessage() {
        var assembler = WebSocketMessageAssembler(limit: 100)
        #expect(Self.feed(&assembler, [Array(#"{"type":"interruption"}"#.utf8)]) == [.message(#"{"type":"interruption"}"#)])
    }

    @Test func fragmentsAreJoinedAndNothingIsDeliveredBeforeTheLast() {
        var assembler = WebSocketMessageAssembler(limit: 100)
        let text = Array("héllo, wörld".utf8)
        // Cut inside a two-byte character too: validity is judged on the whole message.
        let pieces = [Array(text[0..<2]), Array(text[2..<9]), [], Array(text[9...])]
        #expect(Self.feed(&assembler, pieces) == [.message("héllo, wörld")])
    }

    @Test func anEmptyMessageIsDelivered() {
        var assembler = WebSocketMessageAssembler(limit: 0)
        #expect(Self.feed(&assembler, [[]]) == [.message("")])
    }

    @Test func aMessageOfExactlyTheLimitIsKeptAndOneByteMoreIsNot() {
        var assembler = WebSocketMessageAssembler(limit: 4)
        #expect(Self.feed(&assembler, [Array("ab".utf8), Array("cd".utf8)]) == [.message("abcd")])
        #expect(Self.feed(&assembler, [Array("ab".utf8), Array("cd".utf8), Array("e".utf8)]) == [.oversized(bytes: 5, limit: 4)])
    }

    @Test func anOversizedMessageCountsEveryByteAndTheNextMessageIsWhole() {
        var assembler = WebSocketMessageAssembler(limit: 10)
        let pieces = [[UInt8](repeating: 0x61, count: 8), [UInt8](repeating: 0x61, count: 8), [UInt8](repeating: 0x61, count: 100)]
        #expect(Self.feed(&assembler, pieces) == [.oversized(bytes: 116, limit: 10)])
        #expect(Self.feed(&assembler, [Array("next".utf8)]) == [.message("next")])
    }

    @Test func invalidUTF8IsReportedWithItsLength() {
        var assembler = WebSocketMessageAssembler(limit: 100)
        #expect(Self.feed(&assembler, [[0x7B, 0xC3], [0x28, 0x7D]]) == [.notUTF8(bytes: 4)])
        #expect(Self.feed(&assembler, [Array("ok".utf8)]) == [.message("ok")])
    }

    @Test func aBinaryPieceIsRefusedAndDropsThePartialMessage() {
        var assembler = WebSocketMessageAssembler(limit: 100)
        let partial = Array("partial".utf8).withUnsafeBytes { assembler.take($0, isFinal: false, isBinary: false) }
        #expect(partial == nil)
        #expect(Self.feed(&assembler, [[1, 2, 3]], isBinary: true) == [.binary])
        #expect(Self.feed(&assembler, [Array("fresh".utf8)]) == [.message("fresh")])
    }

    @Test(arguments: [1, 2, 3, 7, 64])
    func theSameMessagesComeOutHoweverTheyAreCut(pieceSize: Int) {
        let messages = [#"{"type":"transcript","role":"user","text":"ça va","final":true}"#, "", String(repeating: "x", count: 40), "ü"]
        var whole = WebSocketMessageAssembler(limit: 32)
        var cut = WebSocketMessageAssembler(limit: 32)
        for message in messages {
            let bytes = Array(message.utf8)
            let pieces = stride(from: 0, to: max(bytes.count, 1), by: pieceSize).map { Array(bytes[$0..<min($0 + pieceSize, bytes.count)]) }
            #expect(Self.feed(&cut, pieces) == Self.feed(&whole, [bytes]))
        }
    }
}
