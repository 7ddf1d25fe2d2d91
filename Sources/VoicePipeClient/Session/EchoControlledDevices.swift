import VoicePipeCore

/// A microphone and a speaker with echo control between them, each opened again when it fails
/// mid-session, as a session without echo control does with either alone.
///
/// ```
///  microphone ─▶ CapturePump ─▶ converter ─▶ EchoControlStage ─▶ session frames   (reopenable capture)
///                                                  ▲ reference
///  speaker ◀── DeviceReplyOutput ── each period ─▶ EchoReferenceAligner           (ReopeningReplyOutput)
/// ```
///
/// The stage and the aligner outlive the devices: a microphone opened again (guarded before its
/// tap, converted from the format it came back in) feeds the same stage, which starts its
/// canceller afresh for the new capture stream; a speaker opened again feeds the same aligner,
/// which follows it at the rate it came back in.
public struct EchoControlledDevices {
    /// The capture for the session driver: the microphone's pump, opened again when it fails.
    public let capture: SessionCapture
    /// The reply output for the session driver: the speaker, let go and opened again when it fails.
    public let output: ReopeningReplyOutput
    public let stage: EchoControlStage
    public let aligner: EchoReferenceAligner

    /// Opens the speaker, then the microphone, and builds the echo control between them.
    /// - Parameters:
    ///   - microphoneName, speakerName: the devices, for the timeline ("microphone 'usb'").
    ///   - openMicrophone, openSpeaker: open the device (the format guard runs in `CaptureDevice`
    ///     and `PlaybackDevice`); called again every `interval` while a failed one is gone.
    ///   - converter: the capture converter for the format a microphone opened in; its frame
    ///     length must be the same for every format (it comes from the capture options).
    ///   - canceller: the echo canceller, kept for the whole session.
    ///   - onSpeakerChange: told when the speaker is lost and when it is back.
    /// - Throws: what opening a device throws; ``EchoReferenceError`` and ``EchoControlError``
    ///   when the echo control cannot be built for these devices.
    public init(microphoneName: String, speakerName: String, interval: Duration = .seconds(2),
                openMicrophone: @escaping @Sendable () throws -> CaptureDevice,
                converter: @escaping @Sendable (ValidatedFormat) throws -> CaptureConverter,
                openSpeaker: @escaping @Sendable () throws -> PlaybackDevice,
                canceller: any EchoCanceller,
                now: @escaping () -> ContinuousClock.Instant = { ContinuousClock.now },
                onSpeakerChange: @escaping @Sendable (String) -> Void = { _ in }) throws {
        let speaker = try openSpeaker()
        let microphone = try openMicrophone()
        let firstConverter = try converter(microphone.format)
        let aligner = try EchoReferenceAligner(playbackRate: speaker.format.sampleRate)
        let stage = try EchoControlStage(canceller: canceller, reference: aligner, frameSamples: firstConverter.frameLength)
        let shared = SharedStage(stage)
        let openPump = { @Sendable () throws -> CapturePump in
            let device = try openMicrophone()
            let converter = try converter(device.format)
            guard converter.frameLength == shared.stage.frameSamples else {
                throw EchoControlError.wrongBlockLength(near: converter.frameLength, far: EchoBlock.frameCount, output: shared.stage.frameSamples)
            }
            return try CapturePump(device: device, converter: converter, whenFull: .drop, echo: shared.stage)
        }
        let openOutput = { @Sendable (device: PlaybackDevice) throws -> any ReplyOutput in
            try DeviceReplyOutput(device: device, periodObserver: { aligner.submit($0) })
        }
        let pump = try CapturePump(device: microphone, converter: firstConverter, whenFull: .drop, echo: stage)
        capture = .reopenableDevice(pump, reopen: CaptureReopening(name: "microphone '\(microphoneName)'", interval: interval, open: openPump))
        output = ReopeningReplyOutput(name: "speaker '\(speakerName)'", first: try openOutput(speaker), interval: interval, now: now,
                                      open: { try openOutput(try openSpeaker()) }, onChange: onSpeakerChange)
        self.stage = stage
        self.aligner = aligner
    }
}

/// The echo stage handed from one microphone's pump to the next.
private final class SharedStage: @unchecked Sendable {
    // Safety: the stage is used on one pump's converter thread at a time. The driver opens the
    // next pump only after the last one's thread has reported the loss (its last use of the
    // stage), and starts it on a new thread, which orders every use after the last.
    let stage: EchoControlStage

    init(_ stage: EchoControlStage) {
        self.stage = stage
    }
}
