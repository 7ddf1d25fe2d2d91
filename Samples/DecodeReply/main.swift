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

do {
    let lines = try JSONLinesReader(path: arguments[1], maximumLength: WireLimits.default.maxMessageBytes)
    // Int16 at the chunk's rate in, Float32 at the player's rate out (a new converter per rate).
    var converter = try PlaybackConverter()
    var frames = 0
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
            if converter.sourceRate != Double(chunk.sampleRate) {
                try converter.flush { frames += $0.frameCount }     // the old rate's tail first
                converter = try PlaybackConverter(sourceRate: Double(chunk.sampleRate))
            }
            try converter.process(chunk.samples) { buffer in
                // One contiguous Float buffer per channel: what a player node is connected with,
                // lent for this call only.
                let peak = buffer.withChannel(0) { channel in
                    var peak: Float = 0
                    for i in channel.indices { peak = max(peak, abs(channel[i])) }
                    return peak
                }
                frames += buffer.frameCount
                print("line \(number): \(buffer.frameCount) Float32 frames, \(buffer.channelCount) channel, peak \(peak)")
            }
        case .transcript(let role, let text, true):
            print("line \(number): \(role): \(text)")
        default:
            print("line \(number): \(envelope.message.type)")
        }
    }
    try converter.flush { frames += $0.frameCount }
    print("\(frames) frames of Float32 at 24 kHz (\(Double(frames) / 24_000) s)")
} catch {
    print("error: \(error)")
    exit(1)
}
