import Testing
import VoicePipeCore
import VoicePipeIO

/// The names a user chooses an echo canceller by, and what each builds.
struct EchoBackendTests {
    @Test func theCommandLineNamesChooseTheBackendsAndSpeexIsTheDefault() {
        #expect(EchoBackend.allCases.map(\.rawValue) == ["speex", "webrtc", "speex-preprocessor", "speex-linear"])
        #expect(EchoBackend(rawValue: "webrtc") == .webrtc)
        #expect(EchoBackend(rawValue: "off") == nil)
        #expect(EchoBackend.default == .speex)
    }

    @Test(arguments: EchoBackend.allCases)
    func eachBackendBuildsACancellerThatGoesByItsName(_ backend: EchoBackend) throws {
        let canceller = try backend.make(options: EchoControlOptions(noiseSuppression: false))
        #expect(canceller.name == backend.rawValue)
    }

    @Test func theSpeexBackendRunsVoicePipesSuppressorAndItsVariantsTheirOwn() throws {
        let residuals = try [EchoBackend.speex, .speexPreprocessor, .speexLinear].map { backend in
            try #require(backend.make() as? SpeexEchoCanceller).residual
        }
        #expect(residuals == [.spectral, .preprocessor, .off])
    }

    @Test(arguments: [EchoBackend.speex, .speexPreprocessor, .speexLinear])
    func aFilterLengthOutOfRangeIsRefusedWithItsLength(_ backend: EchoBackend) {
        #expect(throws: EchoControlError.filterLengthOutOfRange(milliseconds: 10)) {
            try backend.make(options: EchoControlOptions(filterLengthMilliseconds: 10))
        }
    }
}
