import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// What the writer writes, the reader gives back sample for sample, however either side cuts the stream.
struct AudioFileRoundTripTests {
    static let bufferSizes = [1, 7, 480, 4096]

    @Test func int16WAVRoundTripIsExactForEveryBufferSize() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("int16.wav")
        let frames = 10_007
        var samples = Signals.int16(Fixtures.signal(frames: frames, channels: 2, sampleRate: 16_000))
        samples[0] = .min
        samples[1] = .max

        let writer = try AudioFileWriter(path: path, sampleRate: 16_000, channelCount: 2, encoding: .int16)
        // Write in uneven pieces: the file must not depend on how the writes were cut.
        var start = 0
        for piece in [1, 3, 500, 4_000, frames].map({ $0 * 2 }) where start < samples.count {
            let end = min(start + piece, samples.count)
            try samples[start..<end].withUnsafeBufferPointer { try writer.write($0) }
            start = end
        }
        #expect(writer.framesWritten == frames)
        try writer.close()

        let info = try AudioFileReader.inspect(path: path)
        #expect(info.container == "WAV")
        #expect(info.encoding == "Signed 16 bit PCM")
        #expect(info.format == AudioFormat(sampleRate: 16_000, channelCount: 2, sampleType: .int16, isInterleaved: true))
        #expect(info.frameCount == frames)
        #expect(info.declaredFrameCount == frames)
        #expect(try info.verdict.get().audioFormat == info.format)

        for bufferFrames in Self.bufferSizes + [frames] {
            let reader = try AudioFileReader(path: path)
            let (read, error) = AudioFiles.readAll(reader, bufferFrames: bufferFrames, as: Int16.self)
            #expect(error == nil)
            #expect(read == samples, "buffer of \(bufferFrames) frames")
            #expect(reader.framesRead == frames)
            // The end is sticky and quiet.
            let again = AudioFiles.readAll(reader, bufferFrames: bufferFrames, as: Int16.self)
            #expect(again.samples.isEmpty && again.error == nil)
        }
    }

    @Test func float32WAVRoundTripIsExactForEveryBufferSize() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("float.wav")
        let frames = 4_801
        var samples = Fixtures.signal(frames: frames, channels: 3, sampleRate: 48_000, seed: 9).map { Float($0) }
        // Floats are stored as given, including values past full scale and the smallest subnormal.
        samples[0] = 1.5
        samples[1] = -2
        samples[2] = .leastNonzeroMagnitude

        let writer = try AudioFileWriter(path: path, sampleRate: 48_000, channelCount: 3, encoding: .float32)
        try samples.withUnsafeBufferPointer { try writer.write($0) }
        try writer.close()
        #expect(writer.framesWritten == frames)

        let info = try AudioFileReader.inspect(path: path)
        #expect(info.encoding == "32 bit float")
        #expect(info.format == AudioFormat(sampleRate: 48_000, channelCount: 3, sampleType: .float32, isInterleaved: true))
        #expect(info.frameCount == frames)

        for bufferFrames in Self.bufferSizes + [frames] {
            let reader = try AudioFileReader(path: path)
            let (read, error) = AudioFiles.readAll(reader, bufferFrames: bufferFrames, as: Float.self)
            #expect(error == nil)
            #expect(read.map(\.bitPattern) == samples.map(\.bitPattern), "buffer of \(bufferFrames) frames")
            #expect(reader.framesRead == frames)
        }
    }

    @Test func writerConvertsWithVoicePipeConventions() throws {
        let directory = try TemporaryDirectory()
        // Float into a 16-bit file: ×32768, nearest-even, saturating, NaN → 0 (libsndfile alone would use ×32767).
        let floats: [Float] = [0, 0.5, -0.5, 1, -1, 2, -2, .nan, .infinity, 1.5 / 32768, 2.5 / 32768, 0.25]
        let int16Path = directory.path("from-float.wav")
        let int16Writer = try AudioFileWriter(path: int16Path, sampleRate: 8_000, channelCount: 1, encoding: .int16)
        try floats.withUnsafeBufferPointer { try int16Writer.write($0) }
        try int16Writer.close()
        let int16Read = AudioFiles.readAll(try AudioFileReader(path: int16Path), bufferFrames: 64, as: Int16.self)
        #expect(int16Read.samples == floats.map(SampleConversion.int16))
        #expect(int16Read.samples == [0, 16384, -16384, 32767, -32768, 32767, -32768, 0, 32767, 2, 2, 8192])

        // Int16 into a float file: x / 32768, exactly.
        let ints: [Int16] = [0, 1, -1, .max, .min, 12_345]
        let floatPath = directory.path("from-int16.wav")
        let floatWriter = try AudioFileWriter(path: floatPath, sampleRate: 8_000, channelCount: 2, encoding: .float32)
        try ints.withUnsafeBufferPointer { try floatWriter.write($0) }
        try floatWriter.close()
        let floatRead = AudioFiles.readAll(try AudioFileReader(path: floatPath), bufferFrames: 1, as: Float.self)
        #expect(floatRead.samples == ints.map(SampleConversion.float))
    }

    @Test func convertingWritesLongerThanTheScratchBufferKeepEverySample() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("long.wav")
        let samples = Fixtures.signal(frames: 30_001, channels: 2, sampleRate: 44_100).map { Float($0) }
        let writer = try AudioFileWriter(path: path, sampleRate: 44_100, channelCount: 2, encoding: .int16)
        try samples.withUnsafeBufferPointer { try writer.write($0) }
        try writer.close()
        #expect(writer.framesWritten == 30_001)
        let read = AudioFiles.readAll(try AudioFileReader(path: path), bufferFrames: 4096, as: Int16.self)
        #expect(read.samples == samples.map(SampleConversion.int16))
    }

    @Test func rawByteReadsMatchTypedReadsAtAnyAlignment() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bytes.wav")
        let samples = Signals.int16(Fixtures.signal(frames: 5_000, channels: 2, sampleRate: 16_000))
        let writer = try AudioFileWriter(path: path, sampleRate: 16_000, channelCount: 2, encoding: .int16)
        try samples.withUnsafeBufferPointer { try writer.write($0) }
        try writer.close()
        let expected = Fixtures.littleEndianBytes(samples)

        for offset in [0, 1] {          // 1: an odd address, so the reader must bounce through aligned memory
            for bufferFrames in [1, 7, 480, 5_000] {
                let reader = try AudioFileReader(path: path)
                var storage = [UInt8](repeating: 0, count: bufferFrames * 4 + offset + 3)  // +3: a partial frame of slack
                var bytes = [UInt8]()
                var thrown: AudioFileError?
                reading: while true {
                    let result = storage.withUnsafeMutableBytes { raw in
                        Result { () throws(AudioFileError) in
                            try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[offset...]))
                        }
                    }
                    switch result {
                    case .success(0):
                        break reading
                    case .success(let frames):
                        bytes += storage[offset..<(offset + frames * 4)]
                    case .failure(let error):
                        thrown = error
                        break reading
                    }
                }
                #expect(thrown == nil)
                #expect(bytes == expected, "offset \(offset), \(bufferFrames) frames")
                #expect(reader.framesRead == 5_000)
            }
        }
    }

    @Test func writerRefusesPartialFramesAndWritesAfterClose() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("misuse.wav")
        let writer = try AudioFileWriter(path: path, sampleRate: 16_000, channelCount: 2, encoding: .int16)
        let three: [Int16] = [1, 2, 3]
        let partial = caught { try three.withUnsafeBufferPointer { try writer.write($0) } }
        guard case .writeFailed(path, let reason, nil) = partial else {
            Issue.record("expected writeFailed, got \(String(describing: partial))")
            return
        }
        #expect(reason.contains("3 samples"))
        #expect(writer.framesWritten == 0)
        let two: [Int16] = [5, 6]
        try two.withUnsafeBufferPointer { try writer.write($0) }
        let empty: [Float] = []
        try empty.withUnsafeBufferPointer { try writer.write($0) }
        try writer.close()
        try writer.close()  // harmless
        let afterClose = caught { try two.withUnsafeBufferPointer { try writer.write($0) } }
        guard case .writeFailed(path, let closedReason, nil) = afterClose else {
            Issue.record("expected writeFailed, got \(String(describing: afterClose))")
            return
        }
        #expect(closedReason.contains("closed"))
        #expect(writer.framesWritten == 1)
        #expect(AudioFiles.readAll(try AudioFileReader(path: path), bufferFrames: 8, as: Int16.self).samples == [5, 6])
    }

    @Test func aWriterReleasedWithoutCloseStillFinishesTheHeader() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("forgotten.wav")
        let samples: [Int16] = Array(-500..<500)
        do {
            let writer = try AudioFileWriter(path: path, sampleRate: 22_050, channelCount: 1, encoding: .int16)
            try samples.withUnsafeBufferPointer { try writer.write($0) }
        }
        let info = try AudioFileReader.inspect(path: path)
        #expect(info.frameCount == 1_000)
        #expect(info.declaredFrameCount == 1_000)
        #expect(AudioFiles.readAll(try AudioFileReader(path: path), bufferFrames: 100, as: Int16.self).samples == samples)
    }

    @Test func readersAndWritersReleaseTheirFileDescriptors() throws {
        let directory = try TemporaryDirectory()
        let good = directory.path("good.wav")
        let writer = try AudioFileWriter(path: good, sampleRate: 16_000, channelCount: 1, encoding: .int16)
        try writer.close()
        let zeroRate = try directory.file("zero.wav", Fixtures.wav(sampleRate: 0, channels: 1, payload: [0, 0]))
        let garbage = try directory.file("garbage.bin", Array(repeating: 0x5A, count: 100))

        func openDescriptors() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        }
        let before = try openDescriptors()
        for index in 0..<1_500 {
            _ = try AudioFileReader.inspect(path: good)
            _ = try AudioFileReader(path: good)
            _ = try? AudioFileReader.inspect(path: zeroRate)
            _ = try? AudioFileReader(path: zeroRate)
            _ = try? AudioFileReader(path: garbage)
            _ = try? AudioFileReader(path: good, rawFormat: RawPCMFormat(sampleRate: 16_000, channelCount: 1, encoding: .int16))
            let scratch = try AudioFileWriter(path: directory.path("scratch\(index % 4).wav"), sampleRate: 8_000, channelCount: 1, encoding: .float32)
            if index.isMultiple(of: 2) { try scratch.close() }
        }
        // Other tests run alongside and open files too; a leak here would be thousands.
        #expect(try openDescriptors() - before < 100)
    }
}
