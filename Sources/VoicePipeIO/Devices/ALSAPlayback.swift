@preconcurrency import CALSA
import Glibc
import VoicePipeCore

/// An ALSA playback PCM opened with Float32 samples and non-interleaved access
/// (`SND_PCM_FORMAT_FLOAT_LE`, `SND_PCM_ACCESS_RW_NONINTERLEAVED`): one contiguous buffer per
/// channel, exactly VoicePipe's player format. A device that refuses either is unavailable, with
/// the reason; VoicePipe never falls back to a 16-bit connection.
///
/// Writes block while the device's buffer is full. The stream starts only once the buffer is full
/// (or at the drain), so a player fed 20 ms network chunks has the whole buffer — 80 ms by default —
/// as its cushion against jitter. Underruns (and suspends) are recovered with `snd_pcm_recover` and counted; any other
/// write error fails the write with ``PlayerSinkError/failed(_:code:)``.
public final class ALSAPlayback: PlaybackHardware {
    public let name: String
    public let reportedFormat: AudioFormat
    public private(set) var underruns = 0

    private let pcm: ALSAPCM
    private let channelPointers: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    /// Opens `name` for playback and negotiates Float32 non-interleaved at the device's native
    /// rate and channel count, unless `preferences` insist on others.
    /// - Throws: ``AudioUnavailable`` naming why: no device, permission denied, busy, or a
    ///   format the device refuses.
    public init(name: String, preferences: DevicePreferences = DevicePreferences(periods: 8), configuration: ALSAConfiguration? = nil) throws(AudioUnavailable) {
        let pcm = try ALSAPCM(name: name, direction: .playback, configuration: configuration, blocking: true)
        let parameters = try ALSAHardwareParameters(pcm)
        var playback = preferences
        playback.sampleType = .float32
        reportedFormat = try parameters.negotiate(access: SND_PCM_ACCESS_RW_NONINTERLEAVED, types: [SampleType.float32], preferences: playback)
        _ = try parameters.apply()
        try Self.startWhenFull(pcm)
        self.pcm = pcm
        self.name = name
        channelPointers = .allocate(capacity: max(reportedFormat.channelCount, 1))
        channelPointers.initialize(repeating: nil, count: max(reportedFormat.channelCount, 1))
    }

    /// Frames written and not yet heard, from `snd_pcm_delay`; nil when the stream is not
    /// running or ALSA cannot tell. Call it on the thread that writes.
    public var playbackDelayFrames: Int? {
        guard !pcm.isClosed else { return nil }
        var delay = snd_pcm_sframes_t(0)
        guard snd_pcm_delay(pcm.handle, &delay) == 0 else { return nil }
        return max(Int(delay), 0)
    }

    deinit {
        channelPointers.deallocate()
    }

    /// Software parameters: start the stream when the buffer is full rather than at the first frame.
    private static func startWhenFull(_ pcm: ALSAPCM) throws(AudioUnavailable) {
        var software: OpaquePointer?
        let allocated = snd_pcm_sw_params_malloc(&software)
        guard allocated == 0, let software else {
            throw pcm.unavailable(.failed("its software parameters could not be allocated"), result: allocated == 0 ? -ENOMEM : allocated)
        }
        defer { snd_pcm_sw_params_free(software) }
        var bufferSize: snd_pcm_uframes_t = 0, periodSize: snd_pcm_uframes_t = 0
        _ = snd_pcm_get_params(pcm.handle, &bufferSize, &periodSize)
        var result = snd_pcm_sw_params_current(pcm.handle, software)
        if result == 0 { result = snd_pcm_sw_params_set_start_threshold(pcm.handle, software, max(bufferSize, 1)) }
        if result == 0 { result = snd_pcm_sw_params(pcm.handle, software) }
        guard result == 0 else {
            throw pcm.unavailable(.failed("its software parameters were refused"), result: result)
        }
    }

    public func start(_ format: PlayerFormat) throws(PlayerSinkError) {
        guard format.audioFormat == reportedFormat else {
            throw .formatMismatch(expected: reportedFormat.description, received: format.description)
        }
        guard !pcm.isClosed else { throw .notConnected }
        let prepared = snd_pcm_prepare(pcm.handle)
        guard prepared == 0 else { throw Self.failure("'\(name)' could not prepare its stream", prepared) }
    }

    public func write(_ buffer: borrowing PlaybackBuffer) throws(PlayerSinkError) {
        guard !pcm.isClosed else { throw .notConnected }
        guard buffer.channelCount == reportedFormat.channelCount else {
            throw .channelCountMismatch(expected: reportedFormat.channelCount, received: buffer.channelCount)
        }
        let (frameCount, channelCount) = (buffer.frameCount, buffer.channelCount)
        try buffer.withUnsafeLayout { base, channelStride throws(PlayerSinkError) in
            try write(base, channelStride: channelStride, frameCount: frameCount, channelCount: channelCount)
        }
    }

    /// Writes `frameCount` frames of `channelCount` runs `channelStride` samples apart, recovering
    /// from underruns and suspends.
    private func write(_ base: UnsafePointer<Float>, channelStride: Int, frameCount: Int, channelCount: Int) throws(PlayerSinkError) {
        var written = 0
        while written < frameCount {
            for channel in 0..<channelCount {
                channelPointers[channel] = UnsafeMutableRawPointer(mutating: base + channel * channelStride + written)
            }
            let result = snd_pcm_writen(pcm.handle, channelPointers, snd_pcm_uframes_t(frameCount - written))
            if result >= 0 {
                written += Int(result)
                continue
            }
            let code = Int32(truncatingIfNeeded: result)
            switch -code {
            case EAGAIN, EINTR:
                continue
            case EPIPE, ESTRPIPE:
                // Underrun (the device ran dry and played silence: counted) or suspend (system
                // sleep): alsa-lib's recovery prepares or resumes the stream, and playback carries on.
                if -code == EPIPE { underruns += 1 }
                let recovered = snd_pcm_recover(pcm.handle, code, 1)
                guard recovered == 0 else { throw Self.failure("'\(name)' could not recover from an underrun or suspend", recovered) }
            default:
                throw Self.failure("writing to '\(name)' failed", code)
            }
        }
    }

    public func drain() throws(PlayerSinkError) {
        guard !pcm.isClosed else { return }
        let drained = snd_pcm_drain(pcm.handle)
        guard drained == 0 || drained == -EBADFD else {
            throw Self.failure("'\(name)' could not play out its buffer", drained)
        }
    }

    /// Stops at once (what is buffered is dropped) and releases the device.
    public func close() {
        guard !pcm.isClosed else { return }
        snd_pcm_drop(pcm.handle)
        pcm.close()
    }

    /// A sink failure: what failed, alsa-lib's words for `result`, and the code.
    private static func failure(_ what: String, _ result: Int32) -> PlayerSinkError {
        let code = ALSA.code(result)
        return .failed("\(what): \(code.messageInSentence)", code: code)
    }
}


extension PlaybackDevice {
    /// Opens the ALSA playback device `name` with Float32 non-interleaved access at its native
    /// rate and channel count (or those `preferences` insist on) and checks the format with the guard.
    /// - Throws: ``AudioUnavailable`` with the reason: no device, permission denied, busy, a device
    ///   that refuses Float32 or non-interleaved access, or a format the guard refuses.
    public static func open(name: String, preferences: DevicePreferences = DevicePreferences(periods: 8), configuration: ALSAConfiguration? = nil) throws(AudioUnavailable) -> PlaybackDevice {
        try PlaybackDevice(ALSAPlayback(name: name, preferences: preferences, configuration: configuration))
    }
}
