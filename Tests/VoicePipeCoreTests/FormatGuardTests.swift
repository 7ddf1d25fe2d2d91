import Testing
import VoicePipeCore

/// The guard refuses every unusable format with the right reason, before anything is built.
struct FormatGuardTests {
    @Test func captureTargetIsPinned() {
        let target = AudioFormat.captureTarget
        #expect(target.sampleRate == 16_000)
        #expect(target.channelCount == 1)
        #expect(target.sampleType == .int16)
        #expect(target.isInterleaved)
        #expect(ValidatedFormat.captureTarget.audioFormat == target)
    }

    @Test func validFormatsPass() throws {
        for rate in [8_000.0, 11_025, 44_100, 48_000, 192_000] {
            for channels in [1, 2, 6] {
                let format = AudioFormat(sampleRate: SampleRate(hertz: rate), channelCount: channels, sampleType: .float32, isInterleaved: false)
                #expect(try FormatGuard.validate(format).audioFormat == format)
            }
        }
    }

    @Test func unusableFormatsAreRefusedWithTheirReason() {
        func rejection(_ rate: Double, _ channels: Int) -> FormatRejection? {
            if case .failure(let reason) = FormatGuard.verdict(for: AudioFormat(sampleRate: SampleRate(hertz: rate), channelCount: channels, sampleType: .int16)) {
                return reason
            }
            return nil
        }
        #expect(rejection(0, 2) == .sampleRateNotPositive(0))
        #expect(rejection(-44_100, 2) == .sampleRateNotPositive(-44_100))
        #expect(rejection(.infinity, 2) == .sampleRateNotFinite(SampleRate(hertz: .infinity)))
        #expect(rejection(48_000, 0) == .noChannels(0))
        #expect(rejection(48_000, -1) == .noChannels(-1))
        guard case .sampleRateNotFinite(let rate) = rejection(.nan, 1) else {
            Issue.record("NaN rate was not refused as not finite")
            return
        }
        #expect(rate.hertz.isNaN)
        #expect(FormatRejection.sampleRateNotPositive(0).description.contains("0 Hz"))
    }

    @Test func aConverterCannotBeBuiltForARefusedFormat() throws {
        // The only way to a converter is through the guard: a zero-rate format stops there.
        #expect(throws: FormatRejection.sampleRateNotPositive(0)) {
            let format = try FormatGuard.validate(AudioFormat(sampleRate: 0, channelCount: 1, sampleType: .int16))
            _ = try CaptureConverter(input: format)
        }
    }
}
