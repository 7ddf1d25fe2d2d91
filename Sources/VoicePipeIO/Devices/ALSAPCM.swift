@preconcurrency import CALSA
import Glibc
import VoicePipeCore

/// A private ALSA configuration tree parsed from text, for opening PCMs that the system
/// configuration does not define (tests use `type file` PCMs this way, with no files or
/// environment variables involved).
///
/// ```
/// pcm.capture { type file slave.pcm { type null } file "/dev/null" infile "/tmp/in.raw" format raw }
/// ```
/// The tree holds only what the text defines: a slave must be written inline (`{ type null }`),
/// since the system's `null`, `hw` and `default` are not in it.
public final class ALSAConfiguration: @unchecked Sendable {
    // The tree is read-only after init; alsa-lib only reads it when opening a PCM.
    let tree: OpaquePointer

    /// Parses `text` (alsa.conf syntax).
    /// - Throws: ``ALSAConfigurationError`` naming the parse error.
    public init(_ text: String) throws(ALSAConfigurationError) {
        ALSA.prepare()
        var top: OpaquePointer?
        var input: OpaquePointer?
        let created = snd_config_top(&top)
        guard created == 0, let top else {
            throw ALSAConfigurationError(description: "could not create an ALSA configuration tree", code: ALSA.code(created == 0 ? -ENOMEM : created))
        }
        let bytes = Array(text.utf8)
        let opened = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { snd_input_buffer_open(&input, $0.baseAddress, $0.count) }
        }
        guard opened == 0, let input else {
            snd_config_delete(top)
            throw ALSAConfigurationError(description: "could not read the ALSA configuration text", code: ALSA.code(opened == 0 ? -ENOMEM : opened))
        }
        let loaded = snd_config_load(top, input)
        snd_input_close(input)
        guard loaded == 0 else {
            snd_config_delete(top)
            throw ALSAConfigurationError(description: "the ALSA configuration does not parse; check its braces and quotes", code: ALSA.code(loaded))
        }
        tree = top
    }

    deinit {
        snd_config_delete(tree)
    }
}

/// An ALSA configuration text that cannot be used.
public struct ALSAConfigurationError: SystemCodedError, Sendable, Hashable {
    /// What is wrong, without the code.
    public let problem: String
    /// alsa-lib's result for the failing call.
    public let alsaCode: SystemErrorCode

    init(description problem: String, code: SystemErrorCode) {
        self.problem = problem
        alsaCode = code
    }

    public var code: SystemErrorCode? { alsaCode }
    public var message: String { "\(problem): \(alsaCode.messageInSentence)" }
}

/// Shared ALSA helpers.
enum ALSA {
    private static let silenced: Bool = {
        guard getenv("VOICEPIPE_ALSA_ERRORS") == nil else { return false }
        vp_alsa_silence_errors()
        return true
    }()

    /// Replaces alsa-lib's stderr error printer (once per process): VoicePipe reports errors itself.
    /// With `VOICEPIPE_ALSA_ERRORS` set in the environment, alsa-lib's own messages stay (useful
    /// when a configuration file does not do what it should).
    static func prepare() {
        _ = silenced
    }

    /// alsa-lib's text for a negative error code.
    static func message(_ code: Int32) -> String {
        String(cString: snd_strerror(code))
    }

    /// A negative alsa-lib result as a code with alsa-lib's own text.
    static func code(_ result: Int32) -> SystemErrorCode {
        SystemErrorCode(.alsa, result, message: message(result))
    }

    /// The ALSA sample format for a sample type (little-endian, as every supported host is).
    static func format(_ type: SampleType) -> snd_pcm_format_t {
        switch type {
        case .int16: SND_PCM_FORMAT_S16_LE
        case .int32: SND_PCM_FORMAT_S32_LE
        case .float32: SND_PCM_FORMAT_FLOAT_LE
        case .float64: SND_PCM_FORMAT_FLOAT64_LE
        }
    }

    /// The reason an open failed, from its error code.
    static func openFailure(_ code: Int32) -> AudioUnavailable.Reason {
        switch -code {
        case ENOENT, ENODEV, ENXIO: .noDevice
        case EACCES, EPERM: .permissionDenied
        case EBUSY, EAGAIN: .deviceBusy
        default: .failed("the device could not be opened")
        }
    }
}

/// An open ALSA PCM: the handle and its negotiated hardware parameters. Closed by ``close()`` or
/// on deinit.
final class ALSAPCM: @unchecked Sendable {
    // The handle is used by one thread at a time: the opener, then the audio thread while
    // streaming; close() runs only after the stream has been joined.
    let handle: OpaquePointer
    let name: String
    let direction: AudioDirection
    private(set) var isClosed = false

    /// Opens `name` for `direction`, through `configuration` when given, else the system's.
    ///
    /// The open itself is always non-blocking, so a device another program holds gives
    /// ``AudioUnavailable/Reason/deviceBusy`` at once instead of waiting; `blocking` then sets the
    /// mode transfers use.
    init(name: String, direction: AudioDirection, configuration: ALSAConfiguration?, blocking: Bool) throws(AudioUnavailable) {
        ALSA.prepare()
        var pcm: OpaquePointer?
        let stream = direction == .capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK
        let mode = Int32(SND_PCM_NONBLOCK)
        let result: Int32
        if let configuration {
            result = snd_pcm_open_lconf(&pcm, name, stream, mode, configuration.tree)
        } else {
            result = snd_pcm_open(&pcm, name, stream, mode)
        }
        guard result == 0, let pcm else {
            throw AudioUnavailable(device: name, direction: direction, reason: ALSA.openFailure(result), code: ALSA.code(result))
        }
        if blocking { snd_pcm_nonblock(pcm, 0) }
        handle = pcm
        self.name = name
        self.direction = direction
    }

    /// Releases the device (once).
    func close() {
        guard !isClosed else { return }
        isClosed = true
        snd_pcm_close(handle)
    }

    deinit {
        close()
    }

    /// Audio is unavailable on this PCM, for `reason`, with the failing call's result if any.
    func unavailable(_ reason: AudioUnavailable.Reason, result: Int32? = nil) -> AudioUnavailable {
        AudioUnavailable(device: name, direction: direction, reason: reason, code: result.map(ALSA.code))
    }
}

/// A hardware-parameter space: everything the device allows, narrowed step by step.
final class ALSAHardwareParameters {
    let pointer: OpaquePointer
    let pcm: ALSAPCM

    /// The full space the device allows, with ALSA's own resampling off so that the rates are the
    /// device's (a plug layer that resamples stays transparent, since VoicePipe resamples better).
    init(_ pcm: ALSAPCM) throws(AudioUnavailable) {
        var params: OpaquePointer?
        let allocated = snd_pcm_hw_params_malloc(&params)
        guard allocated == 0, let params else {
            throw pcm.unavailable(.failed("its hardware parameters could not be allocated"), result: allocated == 0 ? -ENOMEM : allocated)
        }
        pointer = params
        self.pcm = pcm
        let any = snd_pcm_hw_params_any(pcm.handle, params)
        guard any >= 0 else { throw pcm.unavailable(.failed("the device has no usable configuration"), result: any) }
        _ = snd_pcm_hw_params_set_rate_resample(pcm.handle, params, 0)
    }

    deinit {
        snd_pcm_hw_params_free(pointer)
    }

    /// The whole-hertz rates the space allows (ALSA reports open ends through `dir`).
    var rateRange: (min: UInt32, max: UInt32) {
        var low: UInt32 = 0, high: UInt32 = 0, lowDirection: Int32 = 0, highDirection: Int32 = 0
        _ = snd_pcm_hw_params_get_rate_min(pointer, &low, &lowDirection)
        _ = snd_pcm_hw_params_get_rate_max(pointer, &high, &highDirection)
        if lowDirection > 0 { low &+= 1 }
        if highDirection < 0 && high > 0 { high -= 1 }
        return (low, max(low, high))
    }

    var channelRange: (min: UInt32, max: UInt32) {
        var low: UInt32 = 0, high: UInt32 = 0
        _ = snd_pcm_hw_params_get_channels_min(pointer, &low)
        _ = snd_pcm_hw_params_get_channels_max(pointer, &high)
        return (low, high)
    }

    func accepts(rate: UInt32) -> Bool { snd_pcm_hw_params_test_rate(pcm.handle, pointer, rate, 0) == 0 }
    func accepts(channels: UInt32) -> Bool { snd_pcm_hw_params_test_channels(pcm.handle, pointer, channels) == 0 }
    func accepts(format: snd_pcm_format_t) -> Bool { snd_pcm_hw_params_test_format(pcm.handle, pointer, format) == 0 }
    func accepts(access: snd_pcm_access_t) -> Bool { snd_pcm_hw_params_test_access(pcm.handle, pointer, access) == 0 }

    /// The ALSA names of every sample format the device accepts.
    var formatNames: [String] {
        (0...Int(SND_PCM_FORMAT_LAST.rawValue)).compactMap { raw in
            let format = snd_pcm_format_t(rawValue: Int32(raw))
            guard accepts(format: format), let name = snd_pcm_format_name(format) else { return nil }
            return String(cString: name)
        }
    }

    /// The rates VoicePipe tries, most preferred first, when the caller names none.
    static let nativeRates: [UInt32] = [48_000, 44_100, 96_000, 32_000, 88_200, 192_000, 24_000, 22_050, 16_000, 11_025, 8_000]
    /// The sample types VoicePipe reads, most preferred first (more bits before fewer).
    static let captureTypes: [SampleType] = [.float32, .int32, .int16, .float64]

    /// Narrows the space to one format: access, sample type, channels, rate, then period and
    /// buffer sizes. Preferences left `nil` take the device's native value.
    /// - Returns: the format as negotiated (rate and channels read back from the device).
    func negotiate(access: snd_pcm_access_t, types: [SampleType], preferences: DevicePreferences) throws(AudioUnavailable) -> AudioFormat {
        let handle = pcm.handle
        guard snd_pcm_hw_params_set_access(handle, pointer, access) == 0 else {
            let what = access == SND_PCM_ACCESS_RW_NONINTERLEAVED ? "non-interleaved access (SND_PCM_ACCESS_RW_NONINTERLEAVED)" : "interleaved access (SND_PCM_ACCESS_RW_INTERLEAVED)"
            throw pcm.unavailable(.formatRefused("it does not offer \(what); a 'plug' device such as 'plughw:0' or 'default' converts"))
        }
        let candidates = preferences.sampleType.map { [$0] } ?? types
        guard let type = candidates.first(where: { accepts(format: ALSA.format($0)) }),
              snd_pcm_hw_params_set_format(handle, pointer, ALSA.format(type)) == 0 else {
            if pcm.direction == .playback {
                throw pcm.unavailable(.formatRefused("it does not take Float32 samples (FLOAT_LE), and VoicePipe plays nothing else (a 16-bit player connection crashes real devices); a 'plug' device such as 'plughw:0' or 'default' converts"))
            }
            let names = candidates.map { String(cString: snd_pcm_format_name(ALSA.format($0))) }.joined(separator: ", ")
            throw pcm.unavailable(.formatRefused("it takes none of the sample formats VoicePipe reads (\(names)); a 'plug' device such as 'plughw:0' or 'default' converts"))
        }
        let channels = channelRange
        var channelCount = UInt32(clamping: preferences.channelCount ?? 0)
        if preferences.channelCount == nil {
            channelCount = channels.min == channels.max || !accepts(channels: 2) ? channels.min : 2
        }
        guard snd_pcm_hw_params_set_channels(handle, pointer, channelCount) == 0 else {
            throw pcm.unavailable(.formatRefused("it does not take \(channelCount) channels (it takes \(channels.min)–\(channels.max))"))
        }
        let rates = rateRange
        var rate: UInt32
        if let wanted = preferences.sampleRate {
            guard wanted.hertz.isFinite, wanted.hertz >= 1, wanted.hertz <= Double(UInt32.max) else {
                throw pcm.unavailable(.formatRefused("\(wanted.hertz) Hz is not a sample rate"))
            }
            rate = UInt32(wanted.hertz.rounded())
            guard snd_pcm_hw_params_set_rate(handle, pointer, rate, 0) == 0 else {
                let allowed = rates.min == rates.max ? "only \(rates.min) Hz" : "\(rates.min)–\(rates.max) Hz"
                throw pcm.unavailable(.formatRefused("it does not run at \(rate) Hz (it takes \(allowed)); leave the rate to the device, VoicePipe converts any rate"))
            }
        } else {
            rate = rates.min == rates.max ? rates.min : (Self.nativeRates.first(where: accepts(rate:)) ?? 48_000)
            var direction: Int32 = 0
            guard snd_pcm_hw_params_set_rate_near(handle, pointer, &rate, &direction) == 0 else {
                throw pcm.unavailable(.formatRefused("it accepts no sample rate near \(rate) Hz"))
            }
        }
        var period = snd_pcm_uframes_t(max(1, Int(rate) * preferences.periodMilliseconds / 1000))
        var direction: Int32 = 0
        _ = snd_pcm_hw_params_set_period_size_near(handle, pointer, &period, &direction)
        var buffer = period * snd_pcm_uframes_t(max(2, preferences.periods))
        _ = snd_pcm_hw_params_set_buffer_size_near(handle, pointer, &buffer)

        var negotiatedRate: UInt32 = 0, negotiatedChannels: UInt32 = 0
        direction = 0
        _ = snd_pcm_hw_params_get_rate(pointer, &negotiatedRate, &direction)
        _ = snd_pcm_hw_params_get_channels(pointer, &negotiatedChannels)
        return AudioFormat(sampleRate: SampleRate(hertz: Double(negotiatedRate)), channelCount: Int(negotiatedChannels), sampleType: type,
                           isInterleaved: access != SND_PCM_ACCESS_RW_NONINTERLEAVED)
    }

    /// Installs the narrowed parameters on the device (the stream is prepared, not started).
    /// - Returns: the period size in frames.
    func apply() throws(AudioUnavailable) -> Int {
        let result = snd_pcm_hw_params(pcm.handle, pointer)
        guard result == 0 else {
            throw pcm.unavailable(.formatRefused("the negotiated parameters were refused"), result: result)
        }
        var period: snd_pcm_uframes_t = 0
        var direction: Int32 = 0
        _ = snd_pcm_hw_params_get_period_size(pointer, &period, &direction)
        return max(Int(period), 1)
    }
}

/// What to ask a device for. Everything left `nil` takes the device's native value: VoicePipe
/// converts any rate, channel count and sample type, so it never asks for 16 kHz.
public struct DevicePreferences: Sendable, Hashable {
    /// A rate to insist on (the open fails if the device refuses it); `nil` for the native rate.
    public var sampleRate: SampleRate?
    /// A channel count to insist on; `nil` for the native count.
    public var channelCount: Int?
    /// A capture sample type to insist on; `nil` for the best the device offers. Playback is
    /// always Float32.
    public var sampleType: SampleType?
    /// Audio per transfer, in milliseconds (default 10).
    public var periodMilliseconds: Int
    /// Transfers the device buffers (default 4: 40 ms).
    public var periods: Int

    public init(sampleRate: SampleRate? = nil, channelCount: Int? = nil, sampleType: SampleType? = nil, periodMilliseconds: Int = 10, periods: Int = 4) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.sampleType = sampleType
        self.periodMilliseconds = min(max(periodMilliseconds, 1), 1000)
        self.periods = min(max(periods, 2), 64)
    }
}
