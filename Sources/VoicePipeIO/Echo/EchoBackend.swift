import VoicePipeCore

/// The echo cancellers a session can use, by the name `--echo` takes.
public enum EchoBackend: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// WebRTC's audio processing module (0.3, as PulseAudio's and PipeWire's echo-cancel use it).
    case webrtc
    /// speexdsp's echo canceller with its preprocessor's residual echo suppression.
    case speex

    /// What a session uses when echo control is on and no backend is named.
    public static let `default`: EchoBackend = .speex

    public var description: String { rawValue }

    /// A fresh canceller of this backend.
    /// - Throws: ``EchoControlError`` for options the backend refuses, or a library that cannot
    ///   create its state.
    public func make(options: EchoControlOptions = EchoControlOptions()) throws(EchoControlError) -> any EchoCanceller {
        switch self {
        case .webrtc: try WebRTCEchoCanceller(options: options)
        case .speex: try SpeexEchoCanceller(options: options)
        }
    }
}
