// A complete program over the public API: decode a runtime's messages (JSON Lines, one message a
// line) into the deinterleaved Float32 buffers a player takes, 24 kHz mono, and report them.
//
//   swift run sample-decode-reply messages.jsonl
import Foundation
import VoicePipeClient
import VoicePipeCore
import VoicePipeSession

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    print("usage: sample-decode-reply <messages.jsonl>")
    exit(64)
}

/// A player of our own, as a program with a real device would connect: it takes one contiguous
/// Float buffer per channel, and here only counts frames and measures the peak.
final class PeakMeter: PlayerSink {
    var channelCount = 0
    var frames = 0
    var peak: Float = 0

    func connect(_ format: PlayerFormat) throws(PlayerSinkError) { channelCount = format.channelCount }
    func play(_ buffer: borrowing PlaybackBuffer) throws(PlayerSinkError) {
        frames += buffer.frameCount
        // Channel 0 is lent for this call only, as one contiguous Float buffer.
        peak = buffer.withChannel(0) { channel in
            var peak = self.peak
            for i in channel.indices { peak = max(peak, abs(channel[i])) }
            return peak
        }
    }
    func disconnect() throws(PlayerSinkError) {}
}

do {
    let lines = try JSONLinesReader(path: arguments[1], maximumLength: WireLimits.default.maxMessageBytes)
    // Int16 at each chunk's rate in, Float32 at the player's 24 kHz out (the player follows rate
    // changes); no pre-roll, so each chunk reaches the meter as it is played.
    let meter = PeakMeter()
    let player = try ReplyPlayer(sink: meter, queueOptions: PlaybackQueueOptions(preRollMilliseconds: 0))
    var number = 0
    while let line = try lines.next() {
        number += 1
        guard case .text(let bytes) = line else { print("line \(number): too long, skipped"); continue }
        let envelope: WireEnvelope
        do {
            envelope = try bytes.withUnsafeBytes { try WireCodec.decode($0) }
        } catch {
            print("line \(number): \(error)")            // typed, with a sentence; the rest goes on
            continue
        }
        switch envelope.message {
        case .audioChunk(let chunk):
            let before = meter.frames
            meter.peak = 0
            try player.play(chunk)
            print("line \(number): \(meter.frames - before) Float32 frames, \(meter.channelCount) channel, peak \(meter.peak)")
        case .transcript(let role, let text, true):
            print("line \(number): \(role): \(text)")
        default:
            print("line \(number): \(envelope.message.type)")
        }
    }
    try player.finish()                                  // the last rate's tail, then the end
    print("\(player.framesPlayed) frames of Float32 at 24 kHz (\(Double(player.framesPlayed) / 24_000) s)")
} catch {
    print("error: \(error)")
    exit(1)
}
