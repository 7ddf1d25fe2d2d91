// A complete program over the public API: convert any audio file to 16 kHz mono Int16 frames,
// write them to a WAV file and report each frame's level.
//
//   swift run sample-convert-file Samples/Audio/speech-8k-mono-s16.wav /tmp/out.wav
import Foundation
import VoicePipeCore
import VoicePipeIO

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    print("usage: sample-convert-file <input> <output.wav>")
    exit(64)
}

do {
    let reader = try AudioFileReader(path: arguments[1])              // any format libsndfile reads
    let converter = try CaptureConverter(input: reader.format)          // takes a ValidatedFormat only
    let writer = try AudioFileWriter(path: arguments[2], sampleRate: 16_000, channelCount: 1, encoding: .int16)

    // Reads the whole file through the converter and flushes it; frames arrive on this thread.
    let ending = try converter.convert(reader) { frame in
        // frame.withSamples: up to 512 Int16 samples at 16 kHz, lent for this call only;
        // frame.level: peak, dBFS, digital silence
        try frame.withSamples { samples in try samples.withUnsafeBufferPointer { try writer.write($0) } }
        print("frame \(frame.index) at \(Double(frame.startSample) / 16_000) s: \(frame.level)")
    }
    try writer.close()
    if case .truncated(let read, let declared) = ending {
        print("note: the file is truncated: \(read) frames were there" + (declared.map { ", of the \($0) its header declares" } ?? ""))
    }
} catch {
    print("error: \(error)")
    exit(1)
}
