import CSndFile
import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// Every container and encoding comes back in its native sample type with the right format and data.
struct AudioFileFormatTests {
    @Test func handBuiltAIFFReadsBigEndianSamplesAtAnExtendedRate() throws {
        let directory = try TemporaryDirectory()
        let samples = Signals.int16(Fixtures.signal(frames: 999, channels: 2, sampleRate: 22_050))
        let path = try directory.file("tone.aiff", Fixtures.aiff(
            rate80: Fixtures.extended80(22_050), channels: 2, declaredFrames: 999, payload: Fixtures.int16BE(samples)))

        let info = try AudioFileReader.inspect(path: path)
        #expect(info.container == "AIFF")
        #expect(info.encoding == "Signed 16 bit PCM")
        #expect(info.format == AudioFormat(sampleRate: 22_050, channelCount: 2, sampleType: .int16, isInterleaved: true))
        #expect(info.frameCount == 999)
        #expect(info.declaredFrameCount == 999)

        let reader = try AudioFileReader(path: path)
        let read = AudioFiles.readAll(reader, bufferFrames: 7, as: Int16.self)
        #expect(read.error == nil)
        #expect(read.samples == samples)
    }

    @Test func twentyFourBitAIFFArrivesAsLeftJustifiedInt32() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("deep.aiff")
        // 24-bit values, left-justified in Int32 as libsndfile and VoicePipe carry them.
        var generator = SplitMix64(seed: 3)
        let samples: [Int32] = (0..<3_000).map { _ in Int32(truncatingIfNeeded: generator.next()) & ~0xFF }
        try Fixtures.writeWithLibsndfile(path, format: Int32(SF_FORMAT_AIFF | SF_FORMAT_PCM_24), sampleRate: 96_000, channels: 1, samples: samples)

        let reader = try AudioFileReader(path: path)
        #expect(reader.info.encoding == "Signed 24 bit PCM")
        #expect(reader.format.audioFormat == AudioFormat(sampleRate: 96_000, channelCount: 1, sampleType: .int32, isInterleaved: true))
        let read = AudioFiles.readAll(reader, bufferFrames: 480, as: Int32.self)
        #expect(read.error == nil)
        #expect(read.samples == samples)
    }

    @Test func flacSixteenBitIsLosslessInt16() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("speech.flac")
        let samples = Signals.int16(Fixtures.signal(frames: 20_000, channels: 2, sampleRate: 16_000))
        try Fixtures.writeWithLibsndfile(path, format: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), sampleRate: 16_000, channels: 2, samples: samples)

        let info = try AudioFileReader.inspect(path: path)
        #expect(info.container == "FLAC")
        #expect(info.encoding == "Signed 16 bit PCM")
        #expect(info.format == AudioFormat(sampleRate: 16_000, channelCount: 2, sampleType: .int16, isInterleaved: true))
        #expect(info.frameCount == 20_000)
        #expect(info.declaredFrameCount == 20_000)

        for bufferFrames in [1, 7, 4096] {
            let read = AudioFiles.readAll(try AudioFileReader(path: path), bufferFrames: bufferFrames, as: Int16.self)
            #expect(read.error == nil)
            #expect(read.samples == samples)
        }
    }

    @Test func flacTwentyFourBitIsLosslessInt32() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("deep.flac")
        let samples: [Int32] = Fixtures.signal(frames: 6_000, channels: 1, sampleRate: 48_000).map { Int32(($0 * 8_388_607).rounded()) << 8 }
        try Fixtures.writeWithLibsndfile(path, format: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_24), sampleRate: 48_000, channels: 1, samples: samples)

        let reader = try AudioFileReader(path: path)
        #expect(reader.info.encoding == "Signed 24 bit PCM")
        #expect(reader.format.sampleType == .int32)
        #expect(AudioFiles.readAll(reader, bufferFrames: 1_000, as: Int32.self).samples == samples)
    }

    @Test func oggVorbisDecodesToFloatCloseToTheOriginal() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("tone.ogg")
        let rate = 44_100.0
        let frames = 44_100
        let left = Signals.sine(frequency: 1_000, amplitude: 0.5, sampleRate: rate, frames: frames).map { Float($0) }
        let right = Signals.sine(frequency: 3_000, amplitude: 0.25, sampleRate: rate, frames: frames).map { Float($0) }
        try Fixtures.writeWithLibsndfile(path, format: Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS), sampleRate: Int(rate), channels: 2, samples: Signals.interleave([left, right]))

        let reader = try AudioFileReader(path: path)
        #expect(reader.info.container == "OGG")
        #expect(reader.info.encoding == "Vorbis")
        #expect(reader.format.audioFormat == AudioFormat(sampleRate: SampleRate(hertz: rate), channelCount: 2, sampleType: .float32, isInterleaved: true))
        let read = AudioFiles.readAll(reader, bufferFrames: 480, as: Float.self)
        #expect(read.error == nil)
        #expect(read.samples.count == frames * 2)

        // Lossy: compare the middle second's tones, not samples.
        let decodedLeft = stride(from: 0, to: read.samples.count, by: 2).map { read.samples[$0] }
        let decodedRight = stride(from: 1, to: read.samples.count, by: 2).map { read.samples[$0] }
        let window = 4_410..<39_690
        let fitLeft = Measurement.fitTone(decodedLeft[window], frequency: 1_000, sampleRate: rate)
        let fitRight = Measurement.fitTone(decodedRight[window], frequency: 3_000, sampleRate: rate)
        #expect(abs(Measurement.dB(fitLeft.amplitude / 0.5)) < 0.5)
        #expect(abs(Measurement.dB(fitRight.amplitude / 0.25)) < 0.5)
        #expect(fitLeft.sinad > 30)
        #expect(fitRight.sinad > 30)
        // Same timing as the original: no delay, no polarity flip.
        let error = zip(decodedLeft[window], left[window]).map { Double($0 - $1) }
        #expect(Measurement.rms(error) < 0.02)
    }

    @Test func wavEncodingsArriveInTheirNativeTypes() throws {
        let directory = try TemporaryDirectory()

        // 24-bit PCM → Int32, left-justified.
        let deepPath = directory.path("pcm24.wav")
        let deep: [Int32] = [0, 256, -256, Int32.max & ~0xFF, Int32.min, 0x1234_5600]
        try Fixtures.writeWithLibsndfile(deepPath, format: Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_24), sampleRate: 48_000, channels: 2, samples: deep)
        let deepReader = try AudioFileReader(path: deepPath)
        #expect(deepReader.format.sampleType == .int32)
        #expect(AudioFiles.readAll(deepReader, bufferFrames: 2, as: Int32.self).samples == deep)

        // 32-bit PCM → Int32.
        let widePath = directory.path("pcm32.wav")
        let wide: [Int32] = [0, 1, -1, .max, .min, 123_456_789]
        try Fixtures.writeWithLibsndfile(widePath, format: Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_32), sampleRate: 48_000, channels: 1, samples: wide)
        let wideReader = try AudioFileReader(path: widePath)
        #expect(wideReader.info.encoding == "Signed 32 bit PCM")
        #expect(AudioFiles.readAll(wideReader, bufferFrames: 4, as: Int32.self).samples == wide)

        // Double → Float64, bit for bit.
        let doublePath = directory.path("double.wav")
        let doubles: [Double] = [0, 0.1, -0.3333333333333333, 1e-300, 0.9999999999]
        try Fixtures.writeWithLibsndfile(doublePath, format: Int32(SF_FORMAT_WAV | SF_FORMAT_DOUBLE), sampleRate: 8_000, channels: 1, samples: doubles)
        let doubleReader = try AudioFileReader(path: doublePath)
        #expect(doubleReader.info.encoding == "64 bit float")
        #expect(doubleReader.format.sampleType == .float64)
        #expect(AudioFiles.readAll(doubleReader, bufferFrames: 3, as: Double.self).samples.map(\.bitPattern) == doubles.map(\.bitPattern))

        // Unsigned 8-bit and µ-law → Int16.
        let bytePath = try directory.file("u8.wav", Fixtures.wav(sampleRate: 8_000, channels: 1, bitsPerSample: 8, payload: [128, 255, 0, 129]))
        let byteReader = try AudioFileReader(path: bytePath)
        #expect(byteReader.info.encoding == "Unsigned 8 bit PCM")
        #expect(byteReader.format.sampleType == .int16)
        #expect(AudioFiles.readAll(byteReader, bufferFrames: 16, as: Int16.self).samples == [0, 127 << 8, -128 << 8, 1 << 8])

        let ulawPath = directory.path("ulaw.wav")
        try Fixtures.writeWithLibsndfile(ulawPath, format: Int32(SF_FORMAT_WAV | SF_FORMAT_ULAW), sampleRate: 8_000, channels: 1, samples: [Int16](repeating: 0, count: 80))
        let ulawReader = try AudioFileReader(path: ulawPath)
        #expect(ulawReader.info.encoding == "U-Law")
        #expect(ulawReader.format.sampleType == .int16)
        #expect(AudioFiles.readAll(ulawReader, bufferFrames: 16, as: Int16.self).samples.count == 80)
    }

    @Test func waveFormatExtensibleIsReadLikeWAV() throws {
        let directory = try TemporaryDirectory()
        let samples = Signals.int16(Fixtures.signal(frames: 300, channels: 2, sampleRate: 32_000))
        let path = try directory.file("extensible.wav", Fixtures.wav(
            sampleRate: 32_000, channels: 2, extensible: true, oddChunkFirst: true, payload: Fixtures.int16LE(samples)))
        let reader = try AudioFileReader(path: path)
        #expect(reader.info.container == "WAVEX")
        #expect(reader.format.audioFormat == AudioFormat(sampleRate: 32_000, channelCount: 2, sampleType: .int16, isInterleaved: true))
        #expect(reader.info.declaredFrameCount == 300)
        #expect(AudioFiles.readAll(reader, bufferFrames: 64, as: Int16.self).samples == samples)
    }

    @Test func rawFilesReadWithTheirExplicitFormat() throws {
        let directory = try TemporaryDirectory()

        let int16Samples = Signals.int16(Fixtures.signal(frames: 1_000, channels: 2, sampleRate: 16_000))
        // One stray byte at the end: not a whole frame, so it is not delivered.
        let int16Path = try directory.file("capture.raw", Fixtures.int16LE(int16Samples) + [0x7F])
        let int16Reader = try AudioFileReader(path: int16Path, rawFormat: RawPCMFormat(sampleRate: 16_000, channelCount: 2, encoding: .int16))
        #expect(int16Reader.info.container == "RAW")
        #expect(int16Reader.info.encoding == "Signed 16 bit PCM")
        #expect(int16Reader.info.frameCount == 1_000)
        #expect(int16Reader.info.declaredFrameCount == nil)
        #expect(int16Reader.format.audioFormat == AudioFormat(sampleRate: 16_000, channelCount: 2, sampleType: .int16, isInterleaved: true))
        let int16Read = AudioFiles.readAll(int16Reader, bufferFrames: 7, as: Int16.self)
        #expect(int16Read.error == nil)
        #expect(int16Read.samples == int16Samples)

        let floats = Fixtures.signal(frames: 777, channels: 1, sampleRate: 24_000).map { Float($0) }
        let floatPath = try directory.file("player.f32", Fixtures.littleEndianBytes(floats))
        let floatReader = try AudioFileReader(path: floatPath, rawFormat: RawPCMFormat(sampleRate: 24_000, channelCount: 1, encoding: .float32))
        #expect(floatReader.info.encoding == "32 bit float")
        #expect(floatReader.format.isInterleaved && floatReader.info.format.isInterleaved)
        #expect(AudioFiles.readAll(floatReader, bufferFrames: 100, as: Float.self).samples.map(\.bitPattern) == floats.map(\.bitPattern))

        let ints: [Int32] = [.min, -1, 0, 1, .max, 0x0102_0304]
        let intPath = try directory.file("wide.s32", Fixtures.littleEndianBytes(ints))
        let intReader = try AudioFileReader(path: intPath, rawFormat: RawPCMFormat(sampleRate: 8_000, channelCount: 3, encoding: .int32))
        #expect(AudioFiles.readAll(intReader, bufferFrames: 1, as: Int32.self).samples == ints)

        let doubles: [Double] = [0.5, -0.25, 1e-10, -1]
        let doublePath = try directory.file("exact.f64", Fixtures.littleEndianBytes(doubles))
        let doubleReader = try AudioFileReader(path: doublePath, rawFormat: RawPCMFormat(sampleRate: 192_000, channelCount: 2, encoding: .float64))
        #expect(doubleReader.info.encoding == "64 bit float")
        #expect(AudioFiles.readAll(doubleReader, bufferFrames: 3, as: Double.self).samples == doubles)
    }

    @Test func rf64IsReadWithItsDeclaredLength() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("broadcast.rf64")
        let samples = Signals.int16(Fixtures.signal(frames: 2_000, channels: 2, sampleRate: 48_000))
        try Fixtures.writeWithLibsndfile(path, format: Int32(SF_FORMAT_RF64 | SF_FORMAT_PCM_16), sampleRate: 48_000, channels: 2, samples: samples)
        let reader = try AudioFileReader(path: path)
        #expect(reader.info.container == "RF64")
        #expect(reader.info.declaredFrameCount == 2_000)
        #expect(AudioFiles.readAll(reader, bufferFrames: 480, as: Int16.self).samples == samples)
    }
}
