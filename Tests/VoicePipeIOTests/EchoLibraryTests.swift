import Testing
import VoicePipeCore
@testable import VoicePipeIO
import VoicePipeTestSupport

/// The echo backends' shared libraries, opened at run time: a missing file or symbol is
/// ``EchoLibraryUnavailable`` with a sentence that says what to install or choose instead, and
/// the real libraries load and cancel.
struct EchoLibraryTests {
    @Test func aLibraryFileThatDoesNotExistIsTheTypedErrorWithTheLoadersMessageAndWhatToDo() {
        let absent = EchoLibrary.File(name: "libvoicepipe-absent.so.1", package: "libspeexdsp1")
        let loaderMessage = "libvoicepipe-absent.so.1: cannot open shared object file: No such file or directory"
        let expected = EchoLibraryUnavailable(backend: .speex, library: "libvoicepipe-absent.so.1", package: "libspeexdsp1",
                                              missing: .library, loaderMessage: loaderMessage)
        #expect(throws: expected) { try EchoLibrary.open(absent, for: .speex) }
        #expect(expected.description == "the speex echo canceller is unavailable: libvoicepipe-absent.so.1 could not be loaded (\(loaderMessage)); install it with 'apt-get install libspeexdsp1', or choose '--echo webrtc' or '--echo off'")
    }

    @Test func aMissingWebRTCLibrarySuggestsSpeexAndItsOwnPackage() {
        let absent = EchoLibrary.File(name: "libvoicepipe-absent-webrtc.so.1", package: EchoLibrary.File.webRTC.package)
        do throws(EchoLibraryUnavailable) {
            _ = try EchoLibrary.open(absent, for: .webrtc)
            Issue.record("a library that does not exist was opened")
        } catch {
            #expect(error.description == "the webrtc echo canceller is unavailable: libvoicepipe-absent-webrtc.so.1 could not be loaded (libvoicepipe-absent-webrtc.so.1: cannot open shared object file: No such file or directory); install it with 'apt-get install libwebrtc-audio-processing1', or choose '--echo speex' or '--echo off'")
        }
    }

    @Test func aSymbolTheLibraryLacksIsTheSameErrorNamingTheSymbol() throws {
        let library = try EchoLibrary.open(.speexDSP, for: .speexLinear)
        do throws(EchoLibraryUnavailable) {
            _ = try library.address(of: "speex_echo_state_init_vp_absent")
            Issue.record("a symbol that does not exist was resolved")
        } catch {
            #expect(error.backend == .speexLinear)
            #expect(error.library == "libspeexdsp.so.1")
            #expect(error.missing == .symbol("speex_echo_state_init_vp_absent"))
            // dlerror names the library by the path the loader found it at.
            #expect(error.loaderMessage.hasSuffix("libspeexdsp.so.1: undefined symbol: speex_echo_state_init_vp_absent"), "\(error.loaderMessage)")
            #expect(error.description == "the speex-linear echo canceller is unavailable: libspeexdsp.so.1 has no speex_echo_state_init_vp_absent (\(error.loaderMessage)), so it is not the version VoicePipe was built for; install it with 'apt-get install libspeexdsp1', or choose '--echo webrtc' or '--echo off'")
        }
    }

    @Test func theCancellersThrowTheSameSentenceAsEchoControlErrorAndSpeexDSPsFailureNamesTheBackendChosen() {
        let failure = EchoLibraryUnavailable(backend: .speex, library: "libspeexdsp.so.1", package: "libspeexdsp1", missing: .library,
                                             loaderMessage: "libspeexdsp.so.1: file too short")
        #expect(failure.echoControlError == .backendUnavailable(backend: "speex", reason: failure.reason))
        #expect(failure.echoControlError.description == failure.description)
        #expect(failure.naming(.speexPreprocessor).description == "the speex-preprocessor echo canceller is unavailable: libspeexdsp.so.1 could not be loaded (libspeexdsp.so.1: file too short); install it with 'apt-get install libspeexdsp1', or choose '--echo webrtc' or '--echo off'")
    }

    @Test func theLibrariesAreTheDebianSonamesAndTheirPackages() {
        #expect(EchoLibrary.File.speexDSP == EchoLibrary.File(name: "libspeexdsp.so.1", package: "libspeexdsp1"))
        #expect(EchoLibrary.File.webRTC == EchoLibrary.File(name: "libwebrtc_audio_processing.so.1", package: "libwebrtc-audio-processing1"))
    }

    /// White noise at −20 dBFS through a room with 60 ms of delay (T60 0.3 s); the ERLE (dB) over
    /// the last second of six that each backend reaches: measured 25.7 (speex), 26.9
    /// (speex-preprocessor), 23.7 (speex-linear), less 6 dB; and 15.4 (webrtc), less 3 dB, which
    /// WebRTC reaches only with the options the shim gives it (delay-agnostic mode, the extended
    /// filter): keyed by the shim's own copies of webrtc::Config's keys, not the library's, they
    /// were silently lost and it reached 7.5 dB.
    @Test(arguments: [(EchoBackend.speex, 19.0), (.webrtc, 12), (.speexPreprocessor, 20), (.speexLinear, 17)])
    func eachBackendsLibraryLoadsAndItsCancellerRemovesTheEcho(_ backend: EchoBackend, minimumERLE: Double) throws {
        try backend.loadLibrary()
        try backend.loadLibrary()
        let canceller = try backend.make(options: EchoControlOptions(noiseSuppression: false))
        let rate = Int(EchoBlock.sampleRate.hertz)
        let far = Signals.noise(amplitude: Signals.amplitude(dBFS: -20), frames: 6 * rate, seed: 24).map { Float($0) }
        let microphone = EchoPath(reverberationTime: 0.3, delayMilliseconds: 60).echo(of: far)
        var output = [Float](repeating: 0, count: microphone.count)
        let block = EchoBlock.frameCount
        try microphone.withUnsafeBufferPointer { near in
            try far.withUnsafeBufferPointer { reference in
                try output.withUnsafeMutableBufferPointer { out in
                    for start in stride(from: 0, to: near.count - block + 1, by: block) {
                        try canceller.process(near: UnsafeBufferPointer(rebasing: near[start..<start + block]),
                                              far: UnsafeBufferPointer(rebasing: reference[start..<start + block]),
                                              into: UnsafeMutableBufferPointer(rebasing: out[start..<start + block]))
                    }
                }
            }
        }
        let erle = Measurement.erle(microphone: microphone, output: output, (5 * rate)..<(6 * rate))
        #expect(erle >= minimumERLE, "\(backend): ERLE \(erle) dB")
    }
}
