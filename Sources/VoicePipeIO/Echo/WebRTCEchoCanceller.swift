import CWebRTCShim
import VoicePipeCore

/// WebRTC's audio processing module 0.3 (the legacy canceller PulseAudio and PipeWire use on
/// Debian 12) behind ``EchoCanceller``: one instance owns one `webrtc::AudioProcessing`.
///
/// ```
///  far  (10 ms) ──▶ vp_webrtc_process_reverse ──▶ ┌──────────────────────────────┐
///                   vp_webrtc_set_stream_delay ──▶│ AEC (extended filter 128 ms, │
///  near (10 ms) ──▶ vp_webrtc_process ──────────▶ │ delay-agnostic), NS, AGC     │──▶ output
///                                                 └──────────────────────────────┘
/// ```
/// Configured as PipeWire's echo-cancel module: extended filter and delay-agnostic mode on, drift
/// compensation off (alignment happens before this stage), noise suppression and adaptive digital
/// gain control as the options say, the high-pass filter on.
public final class WebRTCEchoCanceller: EchoCanceller {
    public let name = "webrtc"
    /// The options it was built with.
    public let options: EchoControlOptions
    private let processor: OpaquePointer

    /// Creates the module for 16 kHz mono 10 ms blocks.
    /// - Parameter options: noise suppression, gain control and the suppression level (the
    ///   filter length is the extended filter's own).
    /// - Throws: ``EchoControlError/configurationRefused(backend:setting:code:)`` naming the setting
    ///   the library refused, ``EchoControlError/backendUnavailable(backend:reason:)`` when
    ///   `libwebrtc_audio_processing.so.1` is missing (the reason of ``EchoLibraryUnavailable``)
    ///   or it could not create its state.
    public init(options: EchoControlOptions = EchoControlOptions()) throws(EchoControlError) {
        self.options = try options.validated()
        let library: WebRTCAudioProcessing
        do throws(EchoLibraryUnavailable) {
            library = try WebRTCAudioProcessing.load()
        } catch {
            throw error.echoControlError
        }
        var config = VPWebRTCConfig(
            sample_rate_hz: Int32(EchoBlock.sampleRate.hertz),
            noise_suppression: options.noiseSuppression ? 1 : 0,
            noise_suppression_level: 2,
            gain_control: options.gainControl ? 1 : 0,
            suppression_level: Self.level(options.suppression),
            extended_filter: 1,
            delay_agnostic: 1,
            high_pass_filter: 1)
        var created: OpaquePointer?
        var step = VPWebRTCStepNone
        var entryPoints = library.entryPoints
        let status = vp_webrtc_create(&entryPoints, &config, &created, &step)
        guard status == 0, let created else {
            if step == VPWebRTCStepCreate || step == VPWebRTCStepNone {
                throw .backendUnavailable(backend: "webrtc", reason: "webrtc::AudioProcessing could not be created (library error \(status))")
            }
            throw .configurationRefused(backend: "webrtc", setting: Self.setting(step), code: status)
        }
        processor = created
    }

    deinit { vp_webrtc_destroy(processor) }

    public func process(near: UnsafeBufferPointer<Float>, far: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) throws(EchoControlError) {
        try checkBlock(near: near, far: far, output: output)
        let frames = Int32(EchoBlock.frameCount)
        var status = vp_webrtc_process_reverse(processor, far.baseAddress, frames)
        if status == 0 { status = vp_webrtc_set_stream_delay(processor, 0) }
        if status == 0 { status = vp_webrtc_process(processor, near.baseAddress, output.baseAddress, frames) }
        guard status == 0 else {
            if UnsafePointer(output.baseAddress) != near.baseAddress { _ = output.update(fromContentsOf: near) }
            throw .processingFailed(backend: name, code: status)
        }
    }

    /// Re-initialises the module with the formats it was created with (its `Initialize()`, which
    /// fails only for formats it refused at creation, so its status carries nothing here).
    public func reset() { _ = vp_webrtc_reset(processor) }

    private static func level(_ level: EchoSuppressionLevel) -> Int32 {
        switch level {
        case .low: 0
        case .moderate: 1
        case .high: 2
        }
    }

    private static func setting(_ step: VPWebRTCStep) -> String {
        switch step {
        case VPWebRTCStepInitialize: "16 kHz mono stream format"
        case VPWebRTCStepHighPassFilter: "high-pass filter"
        case VPWebRTCStepEchoCancellation: "echo cancellation"
        case VPWebRTCStepSuppressionLevel: "suppression level"
        case VPWebRTCStepDriftCompensation: "drift compensation"
        case VPWebRTCStepNoiseSuppression: "noise suppression"
        case VPWebRTCStepGainControl: "gain control"
        default: "creation"
        }
    }
}
