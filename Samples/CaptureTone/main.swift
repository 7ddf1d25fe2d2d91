// A program over VoicePipeCore alone: no Foundation, no libsndfile, ALSA or libsamplerate linked.
// It makes one second of a 44.1 kHz stereo tone, converts it to 16 kHz mono Int16 frames with the
// fastest kernel set this CPU runs (chosen by Core itself), and prints each frame's level.
//
//   swift run sample-capture-tone
import VoicePipeCore

let rate: SampleRate = 44_100
let frames = Int(rate.hertz)
var interleaved = [Float](repeating: 0, count: 2 * frames)
for n in 0..<frames {
    // 997 Hz at -6 dBFS in both channels, then silence from 0.8 s.
    let value = n < frames * 4 / 5 ? Float(0.5 * Elementary.sin(2 * Double.pi * 997 * Double(n) / rate.hertz)) : 0
    interleaved[2 * n] = value
    interleaved[2 * n + 1] = value
}

do {
    let format = try FormatGuard.validate(AudioFormat(sampleRate: rate, channelCount: 2, sampleType: .float32))
    let converter = try CaptureConverter(input: format, options: CaptureOptions(frameMilliseconds: 100))
    var statistics = CaptureStatistics()
    let report: (borrowing CaptureFrame) -> Void = { frame in
        statistics.add(frame)
        print("frame \(frame.index): \(frame.sampleCount) samples, \(frame.level)")
    }
    try interleaved.withUnsafeBufferPointer { try converter.process($0, report) }
    try converter.flush(report)
    print("kernels: \(DSPKernels.best.name)")
    print("\(statistics.samples) samples at 16 kHz; \(statistics.summary)")
} catch {
    print("error: \(error)")
}
