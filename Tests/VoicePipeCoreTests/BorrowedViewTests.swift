import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// The borrowed views the converters lend their callbacks: a ``CaptureFrame``'s samples and a
/// ``PlaybackBuffer``'s channels, read through `Span` and copied out.
///
/// Keeping a view past its callback is not tested here because it does not compile: both types
/// are `~Copyable` and borrowed by their callbacks, so `let last = frame` fails with "'frame' is
/// borrowed and cannot be consumed", and a `Span` stored outside `withSamples` or `withChannel`
/// fails with "lifetime-dependent variable '…' escapes its scope".
struct BorrowedViewTests {
    @Test func aCaptureFramesSpanHoldsExactlyItsSamplesAndTheCopyEqualsIt() throws {
        // The target format is the identity, so each frame is a known slice of the input.
        let input = Signals.int16(Signals.noise(amplitude: 0.9, frames: 1_300, seed: 11))
        let converter = try CaptureConverter(input: .captureTarget)
        var viewed: [[Int16]] = [], copied: [[Int16]] = [], counts: [Int] = [], starts: [Int] = []
        let collect: (borrowing CaptureFrame) -> Void = { frame in
            viewed.append(frame.withSamples { samples in samples.indices.map { samples[$0] } })
            copied.append(frame.copySamples())
            counts.append(frame.withSamples { $0.count })
            starts.append(frame.startSample)
            #expect(frame.withSamples { $0.count } == frame.sampleCount)
        }
        try input.withUnsafeBufferPointer { try converter.process($0, collect) }
        try converter.flush(collect)
        #expect(counts == [512, 512, 276])
        #expect(starts == [0, 512, 1_024])
        #expect(viewed == [Array(input[0..<512]), Array(input[512..<1_024]), Array(input[1_024...])])
        #expect(copied == viewed)
    }

    @Test func aCopiedFrameKeepsItsSamplesAfterTheConverterReusesItsStorage() throws {
        let input = (0..<1_024).map { Int16($0 * 7 - 3_000) }
        let converter = try CaptureConverter(input: .captureTarget)
        var kept: [[Int16]] = []
        try input.withUnsafeBufferPointer { try converter.process($0) { kept.append($0.copySamples()) } }
        #expect(kept == [Array(input[0..<512]), Array(input[512...])])
    }

    @Test func aPlaybackBuffersChannelSpansHoldExactlyXOver32768() throws {
        let converter = try PlaybackConverter(channelCount: 2)
        let samples: [Int16] = [Int16.min, -1, 0, 1, 16_384, Int16.max]
        var spans = [[Float]](repeating: [], count: 2), copies = [[Float]](repeating: [], count: 2)
        try converter.process(samples) { buffer in
            #expect(buffer.channelCount == 2 && buffer.frameCount == samples.count)
            for c in 0..<2 {
                spans[c] += buffer.withChannel(c) { channel in channel.indices.map { channel[$0] } }
                copies[c] += buffer.copyChannel(c)
            }
        }
        let expected: [Float] = [-1, -1.0 / 32_768, 0, 1.0 / 32_768, 0.5, 32_767.0 / 32_768]
        #expect(spans == [expected, expected])
        #expect(copies == spans)
    }

    @Test func theLayoutAccessorShowsEachChannelAtItsStride() throws {
        let converter = try PlaybackConverter(channelCount: 3)
        let samples: [Int16] = [8_192, -8_192, 4_096]
        var channels: [[Float]] = []
        try converter.process(samples) { buffer in
            let frames = buffer.frameCount
            channels = buffer.withUnsafeLayout { base, stride in
                (0..<3).map { c in Array(UnsafeBufferPointer(start: base + c * stride, count: frames)) }
            }
        }
        #expect(channels == [[Float]](repeating: [0.25, -0.25, 0.125], count: 3))
    }
}
