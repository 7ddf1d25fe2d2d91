import VoicePipeCore

/// The echo cancellers a user chooses by name (`--echo speex|webrtc`, and two speexdsp variants
/// kept for measuring), each built from ``EchoControlOptions``.
///
/// `speex` is the default: speexdsp's linear filter with VoicePipe's ``ResidualEchoSuppressor``
/// is the only configuration measured to meet both of issue 24's goals at once: 40–55 dB of echo
/// removed on every linear room of the aligned capture path (T60 0.1–0.6 s, 10–200 ms), 32 dB
/// with a clipping loudspeaker, 20 dB from the first half second, double talk scored above the
/// microphone (STOI 0.91 against 0.84, PESQ 1.49 against 1.11) and its words read as clean (80 of
/// 81, `EchoSpeechRecognitionTests`). speexdsp's preprocessor
/// keeps the near end (STOI 0.98) but removes only 22–38 dB; WebRTC 0.3 removes 31–55 dB but
/// takes a near-end talker down 17–24 dB (STOI 0.54). Figures: `EchoQualityMatrixTests`,
/// `EchoSpeechScoreTests`.
public enum EchoBackend: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// speexdsp's linear filter and VoicePipe's residual echo suppressor.
    case speex
    /// WebRTC's audio processing module 0.3 (extended filter, delay-agnostic, its suppressor).
    case webrtc
    /// speexdsp's linear filter and speexdsp's own preprocessor as the residual suppressor.
    case speexPreprocessor = "speex-preprocessor"
    /// speexdsp's linear filter alone.
    case speexLinear = "speex-linear"

    /// The backend a session uses when the user names none.
    public static let `default` = EchoBackend.speex

    public var description: String { rawValue }

    /// Opens the backend's shared library (once per process; later calls return what the first
    /// found) and resolves every function it calls, so a command can say what is missing before
    /// a session starts.
    /// - Throws: ``EchoLibraryUnavailable`` naming the library file or symbol and what to install.
    public func loadLibrary() throws(EchoLibraryUnavailable) {
        switch self {
        case .speex, .speexPreprocessor, .speexLinear: _ = try SpeexDSP.load(for: self)
        case .webrtc: _ = try WebRTCAudioProcessing.load()
        }
    }

    /// Builds the backend's canceller.
    /// - Parameter options: noise suppression, gain control, suppression level and filter length.
    /// - Throws: ``EchoControlError`` when the options are out of range, the library is missing
    ///   (``EchoControlError/backendUnavailable(backend:reason:)`` with the reason of
    ///   ``EchoLibraryUnavailable``) or cannot create its state.
    public func make(options: EchoControlOptions = EchoControlOptions()) throws(EchoControlError) -> any EchoCanceller {
        switch self {
        case .speex: try SpeexEchoCanceller(options: options, residual: .spectral)
        case .webrtc: try WebRTCEchoCanceller(options: options)
        case .speexPreprocessor: try SpeexEchoCanceller(options: options, residual: .preprocessor)
        case .speexLinear: try SpeexEchoCanceller(options: options, residual: .off)
        }
    }
}
