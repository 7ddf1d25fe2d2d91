/// The block an echo canceller works on: 10 ms of 16 kHz mono Float32 in −1 … 1 (160 samples),
/// the capture target's rate and the frame both libraries on Debian are built around.
public enum EchoBlock {
    /// The sample rate of every block.
    public static let sampleRate: SampleRate = 16_000
    /// Samples per block (10 ms at 16 kHz).
    public static let frameCount = 160
    /// The length of a block in milliseconds.
    public static let milliseconds = 10
}

/// How hard a backend suppresses the echo its linear filter leaves behind (WebRTC's
/// suppression level; speexdsp's residual echo suppression in dB).
public enum EchoSuppressionLevel: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case low, moderate, high

    public var description: String { rawValue }
}

/// What an echo-control stage does beside cancelling the echo.
///
/// The defaults are what measured best offline (`EchoCancellerTests`, speech through rooms of
/// T60 0.1 … 0.6 s, echo 10 dB down, 1 … 60 ms late): noise suppression on (WebRTC's echo return
/// loss enhancement rises from 31–35 dB to 48–52 dB, speexdsp's from 18–39 dB to 19–46 dB), gain
/// control off (it cost WebRTC 3 dB of ERLE and fights its delay-agnostic mode, as PipeWire notes),
/// high suppression (WebRTC's low and moderate levels keep more of a near-end talker but fell to
/// 22–31 dB ERLE on some rooms), a 200 ms filter (speexdsp: 30 dB on T60 0.3 s against 26 dB at
/// 100 ms and 28 dB at 300 ms; PulseAudio's default too).
public struct EchoControlOptions: Sendable, Hashable {
    /// The shortest and longest linear filter a backend accepts, in milliseconds.
    public static let filterLengthRange: ClosedRange<Int> = 20...500

    /// Suppress stationary noise (WebRTC's noise suppressor, speexdsp's preprocessor denoiser).
    public var noiseSuppression: Bool
    /// Adaptive digital gain control (off by default: it fights WebRTC's delay-agnostic mode).
    public var gainControl: Bool
    /// How hard the residual echo is suppressed.
    public var suppression: EchoSuppressionLevel
    /// The echo tail the linear filter models, in milliseconds (speexdsp; WebRTC's extended filter
    /// has a fixed length of 128 ms).
    public var filterLengthMilliseconds: Int

    public init(noiseSuppression: Bool = true, gainControl: Bool = false, suppression: EchoSuppressionLevel = .high, filterLengthMilliseconds: Int = 200) {
        self.noiseSuppression = noiseSuppression
        self.gainControl = gainControl
        self.suppression = suppression
        self.filterLengthMilliseconds = filterLengthMilliseconds
    }

    /// Checks the options every backend relies on.
    /// - Throws: ``EchoControlError/filterLengthOutOfRange(milliseconds:)``.
    public func validated() throws(EchoControlError) -> EchoControlOptions {
        guard Self.filterLengthRange.contains(filterLengthMilliseconds) else {
            throw .filterLengthOutOfRange(milliseconds: filterLengthMilliseconds)
        }
        return self
    }
}

/// Why an echo canceller could not be built or refused a block.
public enum EchoControlError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A buffer that is not exactly one ``EchoBlock``.
    case wrongBlockLength(near: Int, far: Int, output: Int)
    /// A filter length outside ``EchoControlOptions/filterLengthRange``.
    case filterLengthOutOfRange(milliseconds: Int)
    /// The backend's library could not create its state.
    case backendUnavailable(backend: String, reason: String)
    /// The backend's library refused a setting; `code` is the library's own error code.
    case configurationRefused(backend: String, setting: String, code: Int32)
    /// The backend's library failed on a block; `code` is the library's own error code.
    case processingFailed(backend: String, code: Int32)

    public var description: String {
        switch self {
        case .wrongBlockLength(let near, let far, let output):
            "echo control takes blocks of exactly \(EchoBlock.frameCount) samples (10 ms at 16 kHz), but was given \(near) microphone, \(far) reference and \(output) output samples"
        case .filterLengthOutOfRange(let ms):
            "an echo filter of \(ms) ms is outside the supported \(EchoControlOptions.filterLengthRange.lowerBound) … \(EchoControlOptions.filterLengthRange.upperBound) ms"
        case .backendUnavailable(let backend, let reason):
            "the \(backend) echo canceller is unavailable: \(reason)"
        case .configurationRefused(let backend, let setting, let code):
            "the \(backend) echo canceller refused its \(setting) setting (library error \(code)); try another --echo backend or different options"
        case .processingFailed(let backend, let code):
            "the \(backend) echo canceller failed on a block (library error \(code)); the block was passed through unprocessed"
        }
    }
}

/// An acoustic echo canceller over one timeline: each call takes the microphone block and the
/// reference block the speaker played at the instant that microphone block was captured.
///
/// ```
///  reply output ──(what played, when)──▶ aligner ──▶ far  ─┐
///                                                          ├─▶ process(near:far:into:) ─▶ output
///  capture converter ──(16 kHz, 10 ms blocks)──▶  near ────┘         (one thread)
///             ▲ microphone = near-end talker + noise + far ⊛ room (delay, reverberation)
/// ```
/// Alignment happens before this stage; the acoustic path (a few ms and the room's reverberation)
/// is what the canceller models. A canceller is not thread-safe: one thread calls it.
public protocol EchoCanceller: AnyObject {
    /// The backend's name as a user chooses it (`webrtc`, `speex`).
    var name: String { get }

    /// Cancels the echo of `far` in `near` and writes the cleaned block.
    /// - Parameters:
    ///   - near: one block from the microphone.
    ///   - far: one block of the reference, aligned with `near`.
    ///   - output: one block for the cleaned signal (it may be `near`'s memory).
    /// - Throws: ``EchoControlError/wrongBlockLength(near:far:output:)`` for a buffer that is not
    ///   one block; ``EchoControlError/processingFailed(backend:code:)`` when the library fails,
    ///   in which case `output` holds `near` unchanged.
    func process(near: UnsafeBufferPointer<Float>, far: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) throws(EchoControlError)

    /// Forgets the echo path learned so far (a new device, a new session).
    func reset()
}

extension EchoCanceller {
    /// Checks that the three buffers are one block each.
    /// - Throws: ``EchoControlError/wrongBlockLength(near:far:output:)``.
    @inlinable
    public func checkBlock(near: UnsafeBufferPointer<Float>, far: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) throws(EchoControlError) {
        guard near.count == EchoBlock.frameCount, far.count == EchoBlock.frameCount, output.count == EchoBlock.frameCount,
              near.baseAddress != nil, far.baseAddress != nil, output.baseAddress != nil else {
            throw .wrongBlockLength(near: near.count, far: far.count, output: output.count)
        }
    }
}
