import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// The `[Int16]` and `Span<Int16>` forms of `AudioChunkJSON.encode` and
/// `PlaybackConverter.process` give exactly what the pointer forms give.
struct SpanInputTests {
    static let lengths = [0, 1, 2, 3, 7, 512, 1_001]

    static func samples(_ count: Int) -> [Int16] {
        Signals.int16(Signals.noise(amplitude: 0.99, frames: count, seed: UInt64(count) + 5))
    }

    @Test func theShortestMessagesAreExact() {
        let empty: [Int16] = [], one: [Int16] = [1]
        #expect(AudioChunkJSON.encode(empty, sampleRate: 16_000) == #"{"type":"audio.chunk","data":"","sampleRate":16000}"#)
        #expect(AudioChunkJSON.encode(empty.span, sampleRate: 16_000) == #"{"type":"audio.chunk","data":"","sampleRate":16000}"#)
        #expect(AudioChunkJSON.encode(one, sampleRate: 24_000) == #"{"type":"audio.chunk","data":"AQA=","sampleRate":24000}"#)
        #expect(AudioChunkJSON.encode(one.span, sampleRate: 24_000) == #"{"type":"audio.chunk","data":"AQA=","sampleRate":24000}"#)
    }

    @Test(arguments: lengths)
    func encodeGivesTheSameStringFromAnArrayASpanAndAPointer(count: Int) {
        let samples = Self.samples(count)
        let fromPointer = samples.withUnsafeBufferPointer { AudioChunkJSON.encode($0, sampleRate: 16_000) }
        #expect(Array(AudioChunkJSON.encode(samples, sampleRate: 16_000).utf8) == Array(fromPointer.utf8))
        #expect(Array(AudioChunkJSON.encode(samples.span, sampleRate: 16_000).utf8) == Array(fromPointer.utf8))
        #expect(AudioChunkJSON.decode(fromPointer) == .chunk(AudioChunk(sampleRate: 16_000, samples: samples)))
    }

    @Test(arguments: lengths)
    func encodeIntoABufferWritesTheSameBytesFromAnArrayASpanAndAPointer(count: Int) {
        let samples = Self.samples(count)
        let length = AudioChunkJSON.encodedCount(sampleCount: count, sampleRate: 24_000)
        // One spare byte, left as written, shows nothing is written past the message.
        func written(_ encode: (UnsafeMutableRawBufferPointer) -> Int) -> [UInt8] {
            var output = [UInt8](repeating: 0xEE, count: length + 1)
            let count = output.withUnsafeMutableBytes(encode)
            #expect(count == length)
            return output
        }
        let fromPointer = written { out in samples.withUnsafeBufferPointer { AudioChunkJSON.encode($0, sampleRate: 24_000, into: out) } }
        #expect(fromPointer.last == 0xEE)
        #expect(written { AudioChunkJSON.encode(samples, sampleRate: 24_000, into: $0) } == fromPointer)
        #expect(written { AudioChunkJSON.encode(samples.span, sampleRate: 24_000, into: $0) } == fromPointer)
    }

    /// Every block's samples, as bit patterns, after process and flush.
    static func converted(_ rate: Double, _ feed: (PlaybackConverter, (borrowing PlaybackBuffer) -> Void) throws -> Void) throws -> [UInt32] {
        let converter = try PlaybackConverter(outputRate: SampleRate(hertz: rate))
        var out: [UInt32] = []
        let collect: (borrowing PlaybackBuffer) -> Void = { out += $0.copyChannel(0).map(\.bitPattern) }
        try feed(converter, collect)
        try converter.flush(collect)
        return out
    }

    @Test(arguments: lengths, [24_000.0, 48_000])
    func processGivesTheSameFloatsFromAnArrayASpanAndAPointer(count: Int, outputRate: Double) throws {
        let samples = Self.samples(count)
        let fromPointer = try Self.converted(outputRate) { converter, collect in
            try samples.withUnsafeBufferPointer { try converter.process($0, collect) }
        }
        let fromArray = try Self.converted(outputRate) { converter, collect in try converter.process(samples, collect) }
        let fromSpan = try Self.converted(outputRate) { converter, collect in try converter.process(samples.span, collect) }
        #expect(fromArray == fromPointer)
        #expect(fromSpan == fromPointer)
        if outputRate == 24_000 {
            #expect(fromPointer == samples.map { (Float($0) / 32_768).bitPattern })
        } else {
            #expect(fromPointer.count == 2 * count)
        }
    }
}
