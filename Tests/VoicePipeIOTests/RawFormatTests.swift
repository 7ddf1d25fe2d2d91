import CSndFile
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// A headerless file in every encoding reads exactly as the same audio in a WAV file does.
struct RawFormatTests {
    /// Each encoding, the WAV subtype that stores it the same way, a rate and a channel count.
    static let cases: [(encoding: RawEncoding, subtype: Int32, rate: Int, channels: Int)] = [
        (.u8, Int32(SF_FORMAT_PCM_U8), 8_000, 1),
        (.int16, Int32(SF_FORMAT_PCM_16), 16_000, 2),
        (.int24, Int32(SF_FORMAT_PCM_24), 96_000, 2),
        (.int32, Int32(SF_FORMAT_PCM_32), 48_000, 3),
        (.float32, Int32(SF_FORMAT_FLOAT), 44_100, 2),
        (.float64, Int32(SF_FORMAT_DOUBLE), 22_050, 1),
        (.mulaw, Int32(SF_FORMAT_ULAW), 8_000, 1),
        (.alaw, Int32(SF_FORMAT_ALAW), 8_000, 2),
    ]

    @Test func theDecodedSampleTypeIsTheNarrowestThatHoldsTheEncoding() {
        let expected: [RawEncoding: SampleType] = [
            .u8: .int16, .int16: .int16, .mulaw: .int16, .alaw: .int16,
            .int24: .int32, .int32: .int32, .float32: .float32, .float64: .float64,
        ]
        for encoding in RawEncoding.allCases {
            #expect(encoding.decodedSampleType == expected[encoding], "\(encoding)")
        }
        #expect(RawEncoding.allCases.map(\.bytesPerSample) == [1, 2, 3, 4, 4, 8, 1, 1])
        #expect(RawPCMFormat(sampleRate: 8_000, channelCount: 1, encoding: .mulaw).description == "8000 Hz, mono, µ-law")
        #expect(RawPCMFormat(sampleRate: 48_000, channelCount: 6, encoding: .int24).decodedFormat
            == AudioFormat(sampleRate: 48_000, channelCount: 6, sampleType: .int32, isInterleaved: true))
    }

    @Test(arguments: cases.indices)
    func aRawFileDeliversExactlyTheSamplesOfTheSameAudioInAWAV(index: Int) throws {
        let (encoding, subtype, rate, channels) = Self.cases[index]
        let directory = try TemporaryDirectory()
        let wav = directory.path("audio.wav")
        let frames = 3_001
        try SndFileFixtures.write(wav, format: Int32(SF_FORMAT_WAV) | subtype, sampleRate: rate, channels: channels,
                                  samples: Fixtures.signal(frames: frames, channels: channels, sampleRate: Double(rate)))
        let raw = try directory.file("audio.raw", SndFileFixtures.wavData(wav))

        let wavReader = try AudioFileReader(path: wav)
        let rawReader = try AudioFileReader(path: raw, rawFormat: RawPCMFormat(sampleRate: SampleRate(hertz: Double(rate)), channelCount: channels, encoding: encoding))
        #expect(rawReader.format == wavReader.format, "\(encoding)")
        #expect(rawReader.format.sampleType == encoding.decodedSampleType)
        #expect(rawReader.info.container == "RAW")
        #expect(rawReader.info.encoding == wavReader.info.encoding)
        #expect(rawReader.info.frameCount == frames)
        #expect(rawReader.info.frameCountIsExact)

        switch encoding.decodedSampleType {
        case .int16: try Self.expectSameSamples(rawReader, wavReader, frames: frames, as: Int16.self)
        case .int32: try Self.expectSameSamples(rawReader, wavReader, frames: frames, as: Int32.self)
        case .float32: try Self.expectSameSamples(rawReader, wavReader, frames: frames, as: Float.self)
        case .float64: try Self.expectSameSamples(rawReader, wavReader, frames: frames, as: Double.self)
        }
    }

    private static func expectSameSamples<T: PCMSample & Numeric>(_ raw: AudioFileReader, _ wav: AudioFileReader, frames: Int, as type: T.Type) throws {
        let fromRaw = AudioFiles.readAll(raw, bufferFrames: 333, as: T.self)
        let fromWAV = AudioFiles.readAll(wav, bufferFrames: 4_096, as: T.self)
        #expect(fromRaw.error == nil && fromWAV.error == nil)
        #expect(fromRaw.samples.count == frames * raw.format.channelCount)
        #expect(fromRaw.samples == fromWAV.samples)
        // Not silence: the encoding carried the signal.
        #expect(fromRaw.samples.contains { $0 != 0 })
    }

    @Test func eightBitAndTelephoneEncodingsDecodeToLibsndfilesInt16Values() throws {
        let directory = try TemporaryDirectory()
        // u8: 128 is silence, each step is 256 in Int16.
        let u8 = try directory.file("u8.raw", [0, 64, 128, 129, 255])
        let u8Read = AudioFiles.readAll(try AudioFileReader(path: u8, rawFormat: RawPCMFormat(sampleRate: 8_000, channelCount: 1, encoding: .u8)), as: Int16.self)
        #expect(u8Read.samples == [-32_768, -16_384, 0, 256, 32_512])
        // G.711: 0xFF is µ-law's zero, 0xD5 A-law's smallest positive value; 0x80 and 0xAA their largest.
        let mulaw = try directory.file("mulaw.raw", [0xFF, 0x7F, 0x80, 0x00])
        let mulawRead = AudioFiles.readAll(try AudioFileReader(path: mulaw, rawFormat: RawPCMFormat(sampleRate: 8_000, channelCount: 1, encoding: .mulaw)), as: Int16.self)
        #expect(mulawRead.samples == [0, 0, 32_124, -32_124])
        let alaw = try directory.file("alaw.raw", [0xD5, 0x55, 0xAA, 0x2A])
        let alawRead = AudioFiles.readAll(try AudioFileReader(path: alaw, rawFormat: RawPCMFormat(sampleRate: 8_000, channelCount: 1, encoding: .alaw)), as: Int16.self)
        #expect(alawRead.samples == [8, -8, 32_256, -32_256])
        // int24: three little-endian bytes, left-justified in Int32.
        let int24 = try directory.file("s24.raw", [0x01, 0x00, 0x00, 0xFF, 0xFF, 0x7F, 0x00, 0x00, 0x80])
        let int24Read = AudioFiles.readAll(try AudioFileReader(path: int24, rawFormat: RawPCMFormat(sampleRate: 48_000, channelCount: 1, encoding: .int24)), as: Int32.self)
        #expect(int24Read.samples == [256, 0x7FFF_FF00, Int32.min])
    }
}
