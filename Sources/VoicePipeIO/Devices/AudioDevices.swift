@preconcurrency import CALSA
import Foundation
import Glibc
import VoicePipeCore

/// What a device accepts, probed through its hardware parameters without starting a stream.
public struct DeviceCapabilities: Sendable, Hashable {
    /// Lowest and highest sample rate (whole hertz, as ALSA reports them).
    public let sampleRates: ClosedRange<SampleRate>
    /// The common rates (8 kHz … 192 kHz) the device accepts.
    public let commonRates: [SampleRate]
    /// Fewest and most channels.
    public let channelCounts: ClosedRange<Int>
    /// ALSA's names of the sample formats it accepts ("S16_LE", "FLOAT_LE", …).
    public let sampleFormats: [String]
    /// The format an open with default preferences negotiates (for playback: Float32, deinterleaved).
    public let negotiated: AudioFormat

    /// The guard's verdict on the negotiated format.
    public var verdict: Result<ValidatedFormat, FormatRejection> { FormatGuard.verdict(for: negotiated) }
}

/// One PCM as ALSA's hints name it, probed for each direction it serves.
public struct AudioDeviceInfo: Sendable, Hashable {
    /// The name to open it by ("null", "default", "hw:CARD=PCH,DEV=0", …).
    public let name: String
    /// ALSA's description, one line per line of the hint.
    public let description: String
    /// The capture probe: what it accepts, or why it cannot be opened; `nil` if it does no capture.
    public let capture: Result<DeviceCapabilities, AudioUnavailable>?
    /// The playback probe (Float32 non-interleaved negotiation), `nil` if it does no playback.
    public let playback: Result<DeviceCapabilities, AudioUnavailable>?
}

/// The ALSA devices of this system.
public enum AudioDevices {
    /// How long one device may take to answer a probe before it is listed as not answering.
    public static let defaultProbeTimeout: Duration = .seconds(2)

    /// The PCMs ALSA's device hints list (the `aplay -L` / `arecord -L` set, `ALSA_CONFIG_PATH`
    /// and `~/.asoundrc` included), each opened non-blocking and probed for the directions it
    /// serves; no stream is started. A probe that takes longer than `probeTimeout` (a PCM whose
    /// open blocks, as a file PCM reading a FIFO nobody writes does) is listed as not answering.
    public static func list(probeTimeout: Duration = defaultProbeTimeout) -> [AudioDeviceInfo] {
        ALSA.prepare()
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) == 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var devices: [AudioDeviceInfo] = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            guard let name = hintValue(hint, "NAME") else { continue }
            let direction = hintValue(hint, "IOID")
            let description = hintValue(hint, "DESC") ?? ""
            devices.append(AudioDeviceInfo(
                name: name, description: description,
                capture: direction == "Output" ? nil : probe(name, .capture, timeout: probeTimeout),
                playback: direction == "Input" ? nil : probe(name, .playback, timeout: probeTimeout)))
        }
        return devices
    }

    /// ``probe(_:_:configuration:)`` on a thread of its own, waited for at most `timeout`: a
    /// device that has not answered by then is ``AudioUnavailable/Reason/notAnswering(_:)``, and
    /// its probe is left to finish (or block) on its own.
    public static func probe(_ name: String, _ direction: AudioDirection, configuration: ALSAConfiguration? = nil,
                             timeout: Duration) -> Result<DeviceCapabilities, AudioUnavailable> {
        let outcome = Guarded<Result<DeviceCapabilities, AudioUnavailable>?>(nil)
        let answered = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let result = probe(name, direction, configuration: configuration)
            outcome.withLock { $0 = result }
            answered.signal()
        }
        guard answered.wait(timeout: .now() + max(0, timeout.seconds)) == .success, let result = outcome.withLock({ $0 }) else {
            return .failure(AudioUnavailable(device: name, direction: direction, reason: .notAnswering(timeout)))
        }
        return result
    }

    /// Probes one device for one direction, through `configuration` when given.
    public static func probe(_ name: String, _ direction: AudioDirection, configuration: ALSAConfiguration? = nil) -> Result<DeviceCapabilities, AudioUnavailable> {
        Result { () throws(AudioUnavailable) in
            let pcm = try ALSAPCM(name: name, direction: direction, configuration: configuration, blocking: false)
            let parameters = try ALSAHardwareParameters(pcm)
            let rates = parameters.rateRange
            let channels = parameters.channelRange
            let common = ALSAHardwareParameters.nativeRates.filter(parameters.accepts(rate:)).map { SampleRate(hertz: Double($0)) }.sorted()
            let formats = parameters.formatNames
            // Negotiate on the same space as an open would, without installing it.
            let negotiated: AudioFormat
            if direction == .capture {
                negotiated = try parameters.negotiate(access: SND_PCM_ACCESS_RW_INTERLEAVED, types: ALSAHardwareParameters.captureTypes, preferences: DevicePreferences())
            } else {
                negotiated = try parameters.negotiate(access: SND_PCM_ACCESS_RW_NONINTERLEAVED, types: [.float32], preferences: DevicePreferences(sampleType: .float32))
            }
            return DeviceCapabilities(
                sampleRates: SampleRate(hertz: Double(rates.min))...SampleRate(hertz: Double(max(rates.min, rates.max))), commonRates: common,
                channelCounts: Int(channels.min)...Int(max(channels.min, channels.max)),
                sampleFormats: formats, negotiated: negotiated)
        }
    }

    private static func hintValue(_ hint: UnsafeMutableRawPointer, _ key: String) -> String? {
        guard let value = snd_device_name_get_hint(hint, key) else { return nil }
        defer { free(value) }
        return String(cString: value)
    }
}
