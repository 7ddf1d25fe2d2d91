import CSpeexDSP
import VoicePipeCore

/// What follows speexdsp's linear filter to take away the echo it leaves behind.
public enum SpeexResidualSuppression: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The linear filter alone.
    case off
    /// speexdsp's preprocessor with the echo state: strong on some rooms, weak on long ones.
    case preprocessor
    /// VoicePipe's ``ResidualEchoSuppressor``: per-bin suppression only where the residual is
    /// echo, so the near end survives double talk.
    case spectral

    public var description: String { rawValue }
}

/// speexdsp's echo canceller (a multidelay block frequency-domain filter) followed by a residual
/// echo suppressor (speexdsp's preprocessor or VoicePipe's ``ResidualEchoSuppressor``) and, as
/// the options say, noise suppression and gain control; one instance owns one `SpeexEchoState`
/// and at most one `SpeexPreprocessState`.
///
/// ```
///  near Float ─▶ Int16 ─┐                          .preprocessor: speex_preprocess_run (echo state, NS, AGC)
///                       ├─▶ speex_echo_cancellation ─┤
///  far  Float ─▶ Int16 ─┘   (filter: options' length) .spectral: ResidualEchoSuppressor(e, near − e, far)
///                                                        ─▶ speex_preprocess_run (NS, AGC only)
///                                                     ─▶ Float output
/// ```
/// speexdsp works on Int16: Float→Int16 scales by 32768, rounds to nearest-even and saturates;
/// Int16→Float is x/32768. Every buffer is allocated once, in `init`. With `.spectral` the output
/// lags the microphone by ``ResidualEchoSuppressor/latencyFrames`` samples.
public final class SpeexEchoCanceller: EchoCanceller {
    /// The backend's name as ``EchoBackend`` spells it: `speex` (with VoicePipe's suppressor),
    /// `speex-preprocessor` or `speex-linear`.
    public var name: String { Self.backend(residual).rawValue }
    /// The options it was built with.
    public let options: EchoControlOptions
    /// What suppresses the residual echo after the linear filter.
    public let residual: SpeexResidualSuppression
    /// Whether anything suppresses the residual echo (false: the linear filter alone).
    public var residualEchoSuppression: Bool { residual != .off }
    /// speexdsp's functions, opened at run time.
    private let dsp: SpeexDSP
    private let echo: OpaquePointer
    private var preprocessor: OpaquePointer?
    private let near16: UnsafeMutablePointer<Int16>
    private let far16: UnsafeMutablePointer<Int16>
    private let out16: UnsafeMutablePointer<Int16>
    private let suppressor: ResidualEchoSuppressor?
    private let error32: UnsafeMutablePointer<Float>
    private let estimate32: UnsafeMutablePointer<Float>
    /// The reference block, kept for the suppressor (`far` may share the output's memory).
    private let far32: UnsafeMutableBufferPointer<Float>

    /// Creates the canceller with speexdsp's preprocessor as the residual suppressor (true) or
    /// the linear filter alone (false); see ``init(options:residual:)``.
    public convenience init(options: EchoControlOptions = EchoControlOptions(), residualEchoSuppression: Bool) throws(EchoControlError) {
        try self.init(options: options, residual: residualEchoSuppression ? .preprocessor : .off)
    }

    /// Creates the canceller for 16 kHz mono 10 ms blocks.
    /// - Parameters:
    ///   - options: noise suppression, gain control, suppression level and filter length.
    ///   - residual: what suppresses the residual echo (default: speexdsp's preprocessor); with
    ///     `.off` or `.spectral` and noise suppression and gain control both off, no preprocessor runs.
    /// - Throws: ``EchoControlError/filterLengthOutOfRange(milliseconds:)``,
    ///   ``EchoControlError/backendUnavailable(backend:reason:)`` when `libspeexdsp.so.1` is missing
    ///   (the reason of ``EchoLibraryUnavailable``) or speexdsp cannot create its state,
    ///   ``EchoControlError/configurationRefused(backend:setting:code:)`` for a setting it refuses.
    public init(options: EchoControlOptions = EchoControlOptions(), residual: SpeexResidualSuppression = .preprocessor) throws(EchoControlError) {
        let options = try options.validated()
        let dsp: SpeexDSP
        do throws(EchoLibraryUnavailable) {
            dsp = try SpeexDSP.load(for: Self.backend(residual))
        } catch {
            throw error.echoControlError
        }
        let frames = Int32(EchoBlock.frameCount)
        let taps = Int32(options.filterLengthMilliseconds * EchoBlock.frameCount / EchoBlock.milliseconds)
        guard let echo = dsp.echoStateInit(frames, taps) else {
            throw .backendUnavailable(backend: "speex", reason: "speex_echo_state_init could not create its state for a \(options.filterLengthMilliseconds) ms filter")
        }
        var rate = Int32(EchoBlock.sampleRate.hertz)
        let status = dsp.echoControl(echo, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
        guard status == 0 else {
            dsp.echoStateDestroy(echo)
            throw .configurationRefused(backend: "speex", setting: "sampling rate", code: status)
        }
        let preprocessor: OpaquePointer?
        do throws(EchoControlError) {
            preprocessor = try Self.makePreprocessor(dsp, echo: echo, options: options, residual: residual)
        } catch {
            dsp.echoStateDestroy(echo)
            throw error
        }
        self.preprocessor = preprocessor
        self.dsp = dsp
        self.options = options
        self.residual = residual
        self.echo = echo
        near16 = .allocate(capacity: EchoBlock.frameCount)
        far16 = .allocate(capacity: EchoBlock.frameCount)
        out16 = .allocate(capacity: EchoBlock.frameCount)
        suppressor = residual == .spectral ? ResidualEchoSuppressor(tuning: ResidualEchoSuppressor.Tuning(level: options.suppression)) : nil
        error32 = .allocate(capacity: EchoBlock.frameCount)
        estimate32 = .allocate(capacity: EchoBlock.frameCount)
        far32 = .allocate(capacity: EchoBlock.frameCount)
        far32.initialize(repeating: 0)
    }

    deinit {
        if let preprocessor { dsp.preprocessStateDestroy(preprocessor) }
        dsp.echoStateDestroy(echo)
        near16.deallocate()
        far16.deallocate()
        out16.deallocate()
        error32.deallocate()
        estimate32.deallocate()
        far32.deallocate()
    }

    public func process(near: UnsafeBufferPointer<Float>, far: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) throws(EchoControlError) {
        try checkBlock(near: near, far: far, output: output)
        for i in 0..<EchoBlock.frameCount {
            near16[i] = Self.int16(near[i])
            far16[i] = Self.int16(far[i])
            if suppressor != nil { far32[i] = far[i] }
        }
        dsp.echoCancellation(echo, near16, far16, out16)
        guard let suppressor else {
            if let preprocessor { _ = dsp.preprocessRun(preprocessor, out16) }
            for i in 0..<EchoBlock.frameCount {
                output[i] = Float(out16[i]) / 32768
            }
            return
        }
        for i in 0..<EchoBlock.frameCount {
            error32[i] = Float(out16[i]) / 32768
            estimate32[i] = Float(Int32(near16[i]) - Int32(out16[i])) / 32768
        }
        try suppressor.process(error: UnsafeBufferPointer(start: error32, count: EchoBlock.frameCount),
                               echoEstimate: UnsafeBufferPointer(start: estimate32, count: EchoBlock.frameCount),
                               farEnd: UnsafeBufferPointer(far32), into: output)
        guard let preprocessor else { return }
        for i in 0..<EchoBlock.frameCount { out16[i] = Self.int16(output[i]) }
        _ = dsp.preprocessRun(preprocessor, out16)
        for i in 0..<EchoBlock.frameCount {
            output[i] = Float(out16[i]) / 32768
        }
    }

    public func reset() {
        dsp.echoStateReset(echo)
        suppressor?.reset()
        // A fresh preprocessor forgets the noise and echo estimates; the old one stays if speexdsp
        // cannot make another (it only fails when memory runs out).
        if let fresh = try? Self.makePreprocessor(dsp, echo: echo, options: options, residual: residual) {
            if let preprocessor { dsp.preprocessStateDestroy(preprocessor) }
            preprocessor = fresh
        }
    }

    /// Float → Int16 as the package converts: ×32768, nearest-even, saturating (NaN gives 0).
    @inline(__always)
    private static func int16(_ x: Float) -> Int16 {
        let scaled = (x * 32768).rounded(.toNearestOrEven)
        guard scaled == scaled else { return 0 }
        return Int16(max(-32768, min(32767, scaled)))
    }

    /// The preprocessor for the options, or nil when it would do nothing.
    private static func makePreprocessor(_ dsp: SpeexDSP, echo: OpaquePointer, options: EchoControlOptions, residual: SpeexResidualSuppression) throws(EchoControlError) -> OpaquePointer? {
        let residualEchoSuppression = residual == .preprocessor
        guard residualEchoSuppression || options.noiseSuppression || options.gainControl else { return nil }
        guard let state = dsp.preprocessStateInit(Int32(EchoBlock.frameCount), Int32(EchoBlock.sampleRate.hertz)) else {
            throw .backendUnavailable(backend: "speex", reason: "speex_preprocess_state_init could not create its state")
        }
        let (suppress, suppressActive) = residualEchoSuppression ? echoSuppression(options.suppression) : (0, 0)
        // The preprocessor applies its spectral gains (residual echo included) only with its
        // denoiser on, so residual echo suppression without noise suppression runs the denoiser
        // with a noise attenuation of 0 dB.
        let settings: [(String, Int32, Int32)] = [
            ("noise suppression", SPEEX_PREPROCESS_SET_DENOISE, options.noiseSuppression || residualEchoSuppression ? 1 : 0),
            ("noise attenuation", SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, options.noiseSuppression ? -15 : 0),
            ("gain control", SPEEX_PREPROCESS_SET_AGC, options.gainControl ? 1 : 0),
            ("residual echo suppression", SPEEX_PREPROCESS_SET_ECHO_SUPPRESS, suppress),
            ("residual echo suppression during near-end speech", SPEEX_PREPROCESS_SET_ECHO_SUPPRESS_ACTIVE, suppressActive),
        ]
        for (setting, request, value) in settings {
            var value = value
            let status = dsp.preprocessControl(state, request, &value)
            guard status == 0 else {
                dsp.preprocessStateDestroy(state)
                throw .configurationRefused(backend: "speex", setting: setting, code: status)
            }
        }
        if residualEchoSuppression {
            let status = dsp.preprocessControl(state, SPEEX_PREPROCESS_SET_ECHO_STATE, UnsafeMutableRawPointer(echo))
            guard status == 0 else {
                dsp.preprocessStateDestroy(state)
                throw .configurationRefused(backend: "speex", setting: "echo state", code: status)
            }
        }
        return state
    }

    /// The backend name of each residual suppression, as a user chooses it.
    private static func backend(_ residual: SpeexResidualSuppression) -> EchoBackend {
        switch residual {
        case .spectral: .speex
        case .preprocessor: .speexPreprocessor
        case .off: .speexLinear
        }
    }

    /// The residual echo suppression (dB, negative) in far-end single talk and during near-end
    /// speech; `high` is speexdsp's own default (−40 / −15 dB).
    private static func echoSuppression(_ level: EchoSuppressionLevel) -> (Int32, Int32) {
        switch level {
        case .low: (-20, -5)
        case .moderate: (-30, -10)
        case .high: (-40, -15)
        }
    }
}
