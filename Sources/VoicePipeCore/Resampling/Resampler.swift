/// Why a resampler could not be built or could not process a buffer.
public enum ResamplerError: SystemCodedError, Sendable, Hashable {
    /// A rate outside what the resampler supports.
    case unsupportedRate(SampleRate)
    /// The output buffer cannot hold what this call may produce.
    case outputBufferTooSmall(needed: Int, available: Int)
    /// The built-in filter design failed (a bug, never caused by input).
    case filterDesignFailed(String)
    /// A backend library refused the conversion or failed: what happened, and the library's own
    /// code where a call returned one.
    case backendFailure(String, code: SystemErrorCode?)

    /// The backend's code, when a backend call failed.
    public var code: SystemErrorCode? {
        if case .backendFailure(_, let code) = self { return code }
        return nil
    }

    public var message: String {
        switch self {
        case .unsupportedRate(let rate):
            "cannot resample at \(rate): supported rates are \(RationalRatio.minimumRate) to \(RationalRatio.maximumRate)"
        case .outputBufferTooSmall(let needed, let available):
            "the output buffer holds \(available) frames but this call may produce \(needed); size it with maxOutputFrames(forInputFrames:)"
        case .filterDesignFailed(let reason):
            "the resampler's filter design failed: \(reason)"
        case .backendFailure(let message, let code):
            "the resampler backend failed: \(message)" + (code.map { ": \($0.messageInSentence)" } ?? "")
        }
    }
}

/// A streaming mono sample-rate converter.
///
/// Shape (as libsamplerate's `SRC_DATA` and miniaudio's converters): configure in `init`, which
/// preallocates everything; call ``process(_:into:)`` with buffers of any size, in order; call
/// ``flush(into:)`` once at the end of the stream to drain the filter; ``reset()`` abandons a stream.
///
/// Every conforming type keeps the output time-aligned with the input (the filter delay is
/// compensated) and makes the whole stream exactly ``RationalRatio/outputFrames(forInputFrames:)``
/// frames long, however the input was cut into buffers.
public protocol Resampler: AnyObject {
    /// Input frames per second.
    var inputRate: SampleRate { get }
    /// Output frames per second.
    var outputRate: SampleRate { get }
    /// Seconds of input the resampler must see beyond an output frame's time before it can emit
    /// that frame: its algorithmic latency.
    var latency: Double { get }
    /// The most frames one ``process(_:into:)`` call with `count` input frames can produce.
    func maxOutputFrames(forInputFrames count: Int) -> Int
    /// The most frames ``flush(into:)`` can produce.
    var maxFlushFrames: Int { get }
    /// Consumes all of `input` and writes the output frames that are now complete.
    /// - Returns: the number of frames written to the start of `output`.
    /// - Throws: ``ResamplerError/outputBufferTooSmall(needed:available:)`` when `output` is smaller
    ///   than ``maxOutputFrames(forInputFrames:)`` (nothing is consumed), or a backend failure.
    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) throws(ResamplerError) -> Int
    /// Ends the stream: writes the remaining frames, then starts a new stream.
    /// - Returns: the number of frames written to the start of `output`.
    func flush(into output: UnsafeMutableBufferPointer<Float>) throws(ResamplerError) -> Int
    /// Abandons the current stream without output and starts a new one.
    func reset()
}
