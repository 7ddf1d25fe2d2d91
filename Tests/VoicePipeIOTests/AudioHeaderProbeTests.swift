import CSndFile
import Testing
@testable import VoicePipeIO

/// The hand-written header reader that recovers what libsndfile refuses or clamps.
struct AudioHeaderProbeTests {
    static func probe(_ bytes: [UInt8]) -> AudioHeaderProbe? {
        AudioHeaderProbe.probe { offset, count in
            guard offset < bytes.count else { return [] }
            return Array(bytes[offset..<min(bytes.count, offset + count)])
        }
    }

    @Test func extendedFloatDecodesAIFFRates() {
        // Reference encodings as they appear in AIFF files.
        #expect(AudioHeaderProbe.extended80([0x40, 0x0E, 0xAC, 0x44, 0, 0, 0, 0, 0, 0]) == 44_100)
        #expect(AudioHeaderProbe.extended80([0x40, 0x0C, 0xFA, 0x00, 0, 0, 0, 0, 0, 0]) == 16_000)
        #expect(AudioHeaderProbe.extended80([0x40, 0x0B, 0xFA, 0x00, 0, 0, 0, 0, 0, 0]) == 8_000)
        #expect(AudioHeaderProbe.extended80([0x40, 0x0F, 0xBB, 0x80, 0, 0, 0, 0, 0, 0]) == 96_000)
        // The classic Macintosh rate 22254.5454… (0x400DADDD1745D145D000) is fractional.
        let mac = AudioHeaderProbe.extended80([0x40, 0x0D, 0xAD, 0xDD, 0x17, 0x45, 0xD1, 0x74, 0x5D, 0x00])
        #expect(abs(mac - 22_254.545_454_545_45) < 1e-9)
        #expect(AudioHeaderProbe.extended80([UInt8](repeating: 0, count: 10)) == 0)
        #expect(AudioHeaderProbe.extended80([0xC0, 0x0C, 0xFA, 0x00, 0, 0, 0, 0, 0, 0]) == -16_000)
        #expect(AudioHeaderProbe.extended80([0x7F, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0]) == .infinity)
        #expect(AudioHeaderProbe.extended80([0x7F, 0xFF, 0xC0, 0, 0, 0, 0, 0, 0, 1]).isNaN)
        #expect(AudioHeaderProbe.extended80([0x40]).isNaN)
        for rate in [8_000.0, 11_025, 22_050, 44_100, 48_000, 192_000, 0.5] {
            #expect(AudioHeaderProbe.extended80(Fixtures.extended80(rate)) == rate)
        }
    }

    @Test func wavHeaderGivesRateChannelsEncodingAndDeclaredFrames() {
        let bytes = Fixtures.wav(sampleRate: 44_100, channels: 2, oddChunkFirst: true, declaredDataBytes: 4_000, payload: [0, 0, 0, 0])
        #expect(Self.probe(bytes) == AudioHeaderProbe(
            container: .wav, sampleRate: 44_100, channelCount: 2, subformat: Int32(SF_FORMAT_PCM_16),
            encodingFallbackName: "WAV format tag 0x0001", declaredFrameCount: 1_000))
    }

    @Test func extensibleWAVUsesTheSubFormatTag() throws {
        let bytes = Fixtures.wav(sampleRate: 48_000, channels: 0, bitsPerSample: 64, formatTag: 3, extensible: true, payload: [])
        let probe = try #require(Self.probe(bytes))
        #expect(probe.subformat == Int32(SF_FORMAT_DOUBLE))
        #expect(probe.channelCount == 0)
        #expect(probe.sampleRate == 48_000)
    }

    @Test func streamingSentinelAndCompressedDataDeclareNothing() throws {
        let streaming = Fixtures.wav(sampleRate: 8_000, channels: 1, declaredDataBytes: 0xFFFF_FFFF, payload: [0, 0])
        #expect(try #require(Self.probe(streaming)).declaredFrameCount == nil)
        // IMA ADPCM: the block size is not a frame size, so data bytes / block align is not a frame count.
        let adpcm = Fixtures.wav(sampleRate: 8_000, channels: 1, bitsPerSample: 4, formatTag: 0x11, payload: [0, 0])
        let probe = try #require(Self.probe(adpcm))
        #expect(probe.declaredFrameCount == nil)
        #expect(probe.subformat == Int32(SF_FORMAT_IMA_ADPCM))
    }

    @Test func aiffHeaderGivesSignedChannelsAndCOMMFrames() throws {
        let bytes = Fixtures.aiff(rate80: Fixtures.extended80(32_000), channels: -1, declaredFrames: 12_345, payload: [])
        let probe = try #require(Self.probe(bytes))
        #expect(probe.container == .aiff)
        #expect(probe.sampleRate == 32_000)
        #expect(probe.channelCount == -1)
        #expect(probe.declaredFrameCount == 12_345)
        #expect(probe.subformat == Int32(SF_FORMAT_PCM_16))
    }

    @Test func otherBytesAreNotProbed() {
        #expect(Self.probe([]) == nil)
        #expect(Self.probe(Array("fLaC\u{0}\u{0}\u{0}\u{22}".utf8) + [UInt8](repeating: 0, count: 40)) == nil)
        #expect(Self.probe(Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVE".utf8)) == nil)  // no fmt chunk
        // A chunk size that points past any file ends the walk without trapping.
        var huge = Fixtures.Bytes()
        huge.ascii("RIFF")
        huge.u32le(0xFFFF_FFFF)
        huge.ascii("WAVE")
        huge.ascii("junk")
        huge.u32le(0xFFFF_FFFF)
        #expect(Self.probe(huge.bytes) == nil)
    }
}
