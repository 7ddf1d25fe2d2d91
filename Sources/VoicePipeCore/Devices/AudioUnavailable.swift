/// Which way audio flows through a device.
public enum AudioDirection: String, Sendable, Hashable, CustomStringConvertible {
    case capture
    case playback

    public var description: String { rawValue }
}

/// Why a device cannot be used: audio is unavailable, and the caller carries on without it (a voice
/// session continues as a text conversation).
public struct AudioUnavailable: SystemCodedError, Sendable, Hashable {
    /// What went wrong.
    public enum Reason: Sendable, Hashable {
        /// The device reported a format the guard refuses: a zero, negative or non-finite rate, or
        /// no channels. No tap was installed.
        case format(FormatRejection)
        /// No device of that name exists (or the system has no sound card).
        case noDevice
        /// The device exists but this user may not open it.
        case permissionDenied
        /// Another program holds the device.
        case deviceBusy
        /// The device opened but refused every format it was offered.
        case formatRefused(String)
        /// Any other failure, said in a few words ("its software parameters were refused").
        case failed(String)
        /// Opening or probing it did not finish within this long (its open blocks).
        case notAnswering(Duration)
    }

    /// The device's name as the caller gave it ("default", "hw:1,0", …).
    public let device: String
    public let direction: AudioDirection
    public let reason: Reason
    /// The code of the failing driver call (ALSA's negative errno), when one failed.
    public let code: SystemErrorCode?

    public init(device: String, direction: AudioDirection, reason: Reason, code: SystemErrorCode? = nil) {
        self.device = device
        self.direction = direction
        self.reason = reason
        self.code = code
    }

    /// The sentence, with the driver's words for a failure that has no reason of its own.
    public var message: String {
        let what = "audio \(direction) on '\(device)' is unavailable"
        switch reason {
        case .format(let rejection):
            return "\(what): \(rejection); \(direction == .capture ? "no tap was installed" : "no player was connected")"
        case .noDevice:
            return "\(what): there is no such device; see 'voicepipe devices' for the ones this system has"
        case .permissionDenied:
            return "\(what): permission denied; add this user to the 'audio' group or run with access to /dev/snd"
        case .deviceBusy:
            return "\(what): the device is busy; another program is using it"
        case .formatRefused(let detail):
            return "\(what): the device refused the format: \(detail)"
        case .failed(let detail):
            return "\(what): \(detail)" + (code.map { ": \($0.messageInSentence)" } ?? "")
        case .notAnswering(let limit):
            let seconds = (limit.seconds * 1000).rounded() / 1000
            let shown = seconds == seconds.rounded() ? "\(Int(seconds))" : "\(seconds)"
            return "\(what): it did not answer within \(shown) s (its open blocks, as a file PCM on a FIFO nobody has open does)"
        }
    }
}

/// A failure of a device that was open: it could not start, or it went away mid-stream.
public enum AudioDeviceError: SystemCodedError, Sendable, Hashable {
    /// A tap (or a player) is already installed; remove it first.
    case alreadyStarted(device: String)
    /// A tap was offered a format other than the one the device negotiated (the device writes
    /// frames of its own size whatever the caller believes).
    case formatMismatch(device: String, expected: String, received: String)
    /// The device was closed before the stream started.
    case closed(device: String)
    /// Starting the stream failed in the driver or the system.
    case startFailed(device: String, SystemErrorCode)
    /// The device failed mid-stream with an error other than an overrun or underrun (it was
    /// unplugged, or its driver gave up). Everything delivered before stays delivered.
    case deviceLost(device: String, SystemErrorCode, framesBefore: Int)
    /// A stamped tap was asked of a device that cannot say when it captured each buffer.
    case noTimestamps(device: String)

    /// The failing call's code, for a start or a stream that failed.
    public var code: SystemErrorCode? {
        switch self {
        case .startFailed(_, let code), .deviceLost(_, let code, _): code
        case .alreadyStarted, .formatMismatch, .closed, .noTimestamps: nil
        }
    }

    public var message: String {
        switch self {
        case .alreadyStarted(let device):
            "'\(device)' is already streaming; stop it first"
        case .formatMismatch(let device, let expected, let received):
            "'\(device)' streams \(expected), not \(received); install the tap with the device's own format"
        case .closed(let device):
            "'\(device)' was closed; open it again to stream"
        case .startFailed(let device, let code):
            "'\(device)' could not start: \(code.messageInSentence)"
        case .deviceLost(let device, let code, let frames):
            "'\(device)' failed after \(frames) frames: \(code.messageInSentence); what was captured before is kept"
        case .noTimestamps(let device):
            "'\(device)' cannot say when it captured each buffer; use a device that stamps its buffers (ALSA), or a tap without stamps"
        }
    }
}
