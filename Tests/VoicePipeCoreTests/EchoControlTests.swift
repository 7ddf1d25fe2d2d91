import Testing
import VoicePipeCore

/// The echo-control block format, options and the sentences of its errors.
struct EchoControlTests {
    @Test func aBlockIsTenMillisecondsOfTheCaptureTarget() {
        #expect(EchoBlock.sampleRate == AudioFormat.captureTarget.sampleRate)
        #expect(EchoBlock.frameCount == 160)
        #expect(Double(EchoBlock.frameCount) / EchoBlock.sampleRate.hertz * 1_000 == Double(EchoBlock.milliseconds))
    }

    @Test func theDefaultsAreNoiseSuppressionOnGainControlOffHighSuppressionAndA200MillisecondFilter() throws {
        let options = try EchoControlOptions().validated()
        #expect(options == EchoControlOptions(noiseSuppression: true, gainControl: false, suppression: .high, filterLengthMilliseconds: 200))
    }

    @Test(arguments: [0, 19, 501, -10])
    func aFilterLengthOutsideTwentyToFiveHundredMillisecondsIsRefused(_ milliseconds: Int) {
        #expect(throws: EchoControlError.filterLengthOutOfRange(milliseconds: milliseconds)) {
            try EchoControlOptions(filterLengthMilliseconds: milliseconds).validated()
        }
    }

    @Test(arguments: [20, 128, 500])
    func aFilterLengthInsideTheRangeIsKept(_ milliseconds: Int) throws {
        #expect(try EchoControlOptions(filterLengthMilliseconds: milliseconds).validated().filterLengthMilliseconds == milliseconds)
    }

    @Test func everyErrorSaysWhatHappenedInASentence() {
        #expect(EchoControlError.wrongBlockLength(near: 159, far: 160, output: 160).description
            == "echo control takes blocks of exactly 160 samples (10 ms at 16 kHz), but was given 159 microphone, 160 reference and 160 output samples")
        #expect(EchoControlError.filterLengthOutOfRange(milliseconds: 600).description
            == "an echo filter of 600 ms is outside the supported 20 … 500 ms")
        #expect(EchoControlError.backendUnavailable(backend: "speex", reason: "speex_echo_state_init could not create its state for a 200 ms filter").description
            == "the speex echo canceller is unavailable: speex_echo_state_init could not create its state for a 200 ms filter")
        #expect(EchoControlError.configurationRefused(backend: "webrtc", setting: "noise suppression", code: -6).description
            == "the webrtc echo canceller refused its noise suppression setting (library error -6); try another --echo backend or different options")
        #expect(EchoControlError.processingFailed(backend: "webrtc", code: -8).description
            == "the webrtc echo canceller failed on a block (library error -8); the block was passed through unprocessed")
    }
}
