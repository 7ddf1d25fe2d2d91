// The playback format pinned the way a tester pins it in their own project: with a fake player of
// their own, through the public API only. On real devices a 16-bit player connection crashes, so
// these tests fail loudly if anything ever offers a player another format.
import Testing
import VoicePipeCore
import VoicePipeSession

/// A player that records the format it was connected with and every buffer it was given.
final class RecordingPlayer: PlayerSink {
    var connectedFormat: PlayerFormat?
    var samples: [Float] = []
    var bufferChannelCounts: Set<Int> = []

    func connect(_ format: PlayerFormat) throws(PlayerSinkError) { connectedFormat = format }
    func play(_ buffer: borrowing PlaybackBuffer) throws(PlayerSinkError) {
        bufferChannelCounts.insert(buffer.channelCount)
        samples += buffer.copyChannel(0)
    }
    func disconnect() throws(PlayerSinkError) {}
}

struct PlaybackFormatTests {
    @Test func thePlayerFormatIs24kHzMonoFloat32Deinterleaved() {
        let format = AudioFormat.playback
        #expect(format.sampleRate == 24_000)
        #expect(format.channelCount == 1)
        #expect(format.sampleType == .float32)
        #expect(!format.isInterleaved)
    }

    @Test func aPlayerCannotBeOfferedInt16OrInterleavedAudio() throws {
        let int16 = try FormatGuard.validate(AudioFormat(sampleRate: 24_000, channelCount: 1, sampleType: .int16, isInterleaved: false))
        #expect(throws: PlayerSinkError.notFloat32(.int16)) { try PlayerFormat(int16) }
        let interleaved = try FormatGuard.validate(AudioFormat(sampleRate: 24_000, channelCount: 2, sampleType: .float32, isInterleaved: true))
        #expect(throws: PlayerSinkError.interleaved(channelCount: 2)) { try PlayerFormat(interleaved) }
        let player = RecordingPlayer()
        #expect(throws: PlayerSinkError.notFloat32(.int16)) { try player.connect(format: int16) }
        #expect(player.connectedFormat == nil)
    }

    @Test func replyAudioFromTheWireReachesThePlayerAsFloat32() throws {
        // What a runtime sends: 24 kHz Int16, base64, in an audio.chunk message.
        let samples: [Int16] = [0, 16_384, -16_384, 32_767, -32_768, 1, -1, 0]
        let text = samples.withUnsafeBufferPointer { AudioChunkJSON.encode($0, sampleRate: 24_000) }
        guard case .audioChunk(let chunk) = try WireCodec.decode(text).message else {
            Issue.record("not an audio.chunk: \(text)")
            return
        }
        let player = RecordingPlayer()
        let reply = try ReplyPlayer(sink: player)
        try reply.play(chunk)
        try reply.finish()
        #expect(player.connectedFormat == .playback)
        #expect(player.connectedFormat?.audioFormat.sampleType == .float32)
        #expect(player.bufferChannelCounts == [1])
        // Same rate in and out: each sample is the Int16 value over 32 768, exactly.
        #expect(player.samples == samples.map { Float($0) / 32_768 })
    }
}
