import Foundation
import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// The playback path: the pinned player format, exact Int16 → Float32, upmix and rate change,
/// sinks that refuse 16-bit and interleaved formats.
struct PlaybackTests {
    @Test func thePlayerFormatIsPinned() {
        let format = AudioFormat.playback
        #expect(format.sampleRate == 24_000)
        #expect(format.channelCount == 1)
        #expect(format.sampleType == .float32)
        #expect(format.isInterleaved == false)
        #expect(ValidatedFormat.playback.audioFormat == format)
        #expect(PlayerFormat.playback.audioFormat == format)
        #expect(AudioFormat.wirePlayback == AudioFormat(sampleRate: 24_000, channelCount: 1, sampleType: .int16, isInterleaved: true))
    }

    @Test func everyInt16ValueBecomesExactlyXOver32768() throws {
        let converter = try PlaybackConverter()
        #expect(converter.outputFormat == .playback)
        let all = (Int(Int16.min)...Int(Int16.max)).map { Int16($0) }
        var out = [Float]()
        try all.withUnsafeBufferPointer { samples in
            try converter.process(samples) { buffer in
                #expect(buffer.channelCount == 1)
                out += buffer.copyChannel(0)
            }
        }
        try converter.flush { _ in Issue.record("no tail without a rate change") }
        #expect(out.count == 65_536)
        for (value, float) in zip(all, out) where float != Float(value) / 32768 {
            Issue.record("\(value) became \(float)")
        }
    }

    @Test func upmixGivesEveryChannelItsOwnContiguousCopy() throws {
        let converter = try PlaybackConverter(channelCount: 3)
        let samples = Signals.int16(Signals.noise(amplitude: 0.5, frames: 5_000, seed: 4))
        var channels = [[Float]](repeating: [], count: 3)
        try samples.withUnsafeBufferPointer { s in
            try converter.process(s) { buffer in
                for c in 0..<3 { channels[c] += buffer.copyChannel(c) }
            }
        }
        let expected = samples.map { Float($0) / 32768 }
        for c in 0..<3 { #expect(channels[c] == expected) }
        #expect(converter.outputFormat.audioFormat == AudioFormat(sampleRate: 24_000, channelCount: 3, sampleType: .float32, isInterleaved: false))
    }

    @Test(arguments: [48_000.0, 44_100])
    func aRateChangeGoesThroughTheBuiltInResampler(deviceRate: Double) throws {
        let converter = try PlaybackConverter(outputRate: SampleRate(hertz: deviceRate), channelCount: 2)
        let amplitude = 0.5
        let tone = Signals.int16(Signals.sine(frequency: 1_000, amplitude: amplitude, sampleRate: 24_000, frames: 24_000))
        var left = [Float](), right = [Float]()
        let collect: (borrowing PlaybackBuffer) -> Void = { left += $0.copyChannel(0); right += $0.copyChannel(1) }
        try tone.withUnsafeBufferPointer { try converter.process($0, collect) }
        try converter.flush(collect)
        #expect(left.count == Int(deviceRate))
        #expect(left == right)
        let fit = Measurement.fitTone(left[4_800..<(left.count - 4_800)], frequency: 1_000, sampleRate: deviceRate)
        #expect(abs(Measurement.dB(fit.amplitude / amplitude)) < 0.1)
    }

    @Test func badPlaybackOptionsAreTypedErrors() {
        #expect(throws: PlaybackConverterError.channelCountOutOfRange(0)) { try PlaybackConverter(channelCount: 0) }
        #expect(throws: PlaybackConverterError.resampler(.unsupportedRate(0))) { try PlaybackConverter(outputRate: 0) }
    }

    @Test func sinksRefuse16BitAndInterleavedFormatsBeforeTheySeeThem() throws {
        let sink = RecordingSink()
        let int16 = try FormatGuard.validate(AudioFormat(sampleRate: 24_000, channelCount: 1, sampleType: .int16, isInterleaved: false))
        #expect(throws: PlayerSinkError.notFloat32(.int16)) { try sink.connect(format: int16) }
        let wire = try FormatGuard.validate(.wirePlayback)
        #expect(throws: PlayerSinkError.notFloat32(.int16)) { try sink.connect(format: wire) }
        let interleaved = try FormatGuard.validate(AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: true))
        #expect(throws: PlayerSinkError.interleaved(channelCount: 2)) { try sink.connect(format: interleaved) }
        let monoInterleaved = try FormatGuard.validate(AudioFormat(sampleRate: 24_000, channelCount: 1, sampleType: .float32, isInterleaved: true))
        #expect(throws: PlayerSinkError.interleaved(channelCount: 1)) { try sink.connect(format: monoInterleaved) }
        #expect(sink.connectCalls == 0, "a refused format never reaches the sink")

        try sink.connect(format: .playback)
        #expect(sink.connectedFormat == .playback)
        let stereo48k = try FormatGuard.validate(AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: false))
        try sink.connect(format: stereo48k)
        #expect(sink.connectedFormat?.channelCount == 2)
        #expect(PlayerSinkError.notFloat32(.int16).description.contains("16-bit"))
    }
}
