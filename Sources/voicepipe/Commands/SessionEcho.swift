import Foundation
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// `--echo`: which canceller cleans the microphone of the speaker's sound, or none.
enum EchoSetting: RawRepresentable, CaseIterable, Hashable, Sendable {
    case backend(EchoBackend)
    case off

    static var allCases: [EchoSetting] { EchoBackend.allCases.map { .backend($0) } + [.off] }

    init?(rawValue: String) {
        if rawValue == "off" {
            self = .off
        } else if let backend = EchoBackend(rawValue: rawValue) {
            self = .backend(backend)
        } else {
            return nil
        }
    }

    var rawValue: String {
        switch self {
        case .backend(let backend): backend.rawValue
        case .off: "off"
        }
    }

    /// The backend, nil for `off`.
    var backend: EchoBackend? {
        if case .backend(let backend) = self { return backend }
        return nil
    }
}

/// The live audio of a session with echo control: the microphone's pump cleaned against what the
/// speaker played, or a simulated room's devices.
struct LiveAudio {
    let capture: SessionCapture
    let output: any ReplyOutput
    /// Echo control on real devices, to report.
    let stage: EchoControlStage?
    let aligner: EchoReferenceAligner?
    let backend: EchoBackend?
    /// The simulated room, with `--room`.
    let room: RoomSessionDevices?
    let roomDescription: String?

    /// A microphone and a speaker on ALSA with `backend` between them: the speaker's periods go
    /// to an aligner, the microphone's frames through the echo stage. Either device that fails
    /// mid-session is opened again every 2 s (guarded anew, converted from the format it comes
    /// back in), the session going on as text meanwhile.
    static func devices(microphone: String, speaker: String, backend: EchoBackend, capture: CaptureArguments, command: String) throws(CommandFailure) -> LiveAudio {
        try requireLibrary(of: backend)
        let canceller: any EchoCanceller
        do {
            canceller = try backend.make()
        } catch {
            throw CommandFailure("cannot start echo control: \(error); '--echo off' runs without it", exitCode: .unavailable)
        }
        do {
            let devices = try EchoControlledDevices(
                microphoneName: microphone, speakerName: speaker,
                openMicrophone: { try CaptureDevice.open(name: microphone) },
                converter: { format in try capture.converter(for: format, source: "'\(microphone)'") },
                openSpeaker: { try PlaybackDevice.open(name: speaker) },
                canceller: canceller, onSpeakerChange: { change in Console.warning(command, change) })
            return LiveAudio(capture: devices.capture, output: devices.output, stage: devices.stage, aligner: devices.aligner, backend: backend,
                             room: nil, roomDescription: nil)
        } catch let failure as CommandFailure {
            throw failure
        } catch let error as AudioUnavailable {
            throw CommandFailure(error.message, exitCode: .unavailable)
        } catch let error as EchoControlError {
            throw CommandFailure("cannot start echo control: \(error); '--echo off' runs without it", exitCode: .unavailable)
        } catch let error as EchoReferenceError {
            throw CommandFailure("cannot start echo control: \(error.message)", exitCode: .unavailable)
        } catch {
            throw CommandFailure("cannot start echo control: \(error)", exitCode: .unavailable)
        }
    }

    /// A simulated room with the input file as the person speaking into it.
    static func room(_ configuration: RoomConfiguration, description: String, talker path: String, raw: RawPCMFormat?, backend: EchoBackend?,
                     capture: CaptureArguments, keepsSignals: Bool) throws(CommandFailure) -> LiveAudio {
        if let backend { try requireLibrary(of: backend) }
        let reader = try InputFile.open(path, raw: raw)
        let converter = try capture.converter(for: reader.format, source: InputFile.name(path))
        let talker: [Float]
        do {
            talker = try RoomSessionOptions.talker(from: FileCaptureSource(reader: reader, converter: converter))
        } catch {
            throw CommandFailure("cannot read \(InputFile.name(path)): \(error)", exitCode: .dataError)
        }
        do {
            let room = try RoomSessionDevices(RoomSessionOptions(room: configuration, talker: talker, echo: backend, capture: capture.options,
                                                                 keepsSignals: keepsSignals))
            return LiveAudio(capture: .device(room.pump), output: room.output, stage: room.stage, aligner: room.aligner, backend: backend,
                             room: room, roomDescription: description)
        } catch {
            throw CommandFailure("cannot set up the room: \(error)", exitCode: .unavailable)
        }
    }

    /// Opens the backend's shared library before any device, file or runtime, so a missing one
    /// (the default speex included) is told before the session starts, never replaced by another
    /// backend. Exit 69 (EX_UNAVAILABLE), as for every echo-control and device failure: the
    /// backend is a service this machine lacks, which the sentence says how to install.
    private static func requireLibrary(of backend: EchoBackend) throws(CommandFailure) {
        do throws(EchoLibraryUnavailable) {
            try backend.loadLibrary()
        } catch {
            throw CommandFailure(error.description, exitCode: .unavailable)
        }
    }

    /// The summary's lines about the echo and the room.
    func summary() -> [String] {
        var lines: [String] = []
        if let room {
            let report = room.report()
            lines.append("room: \(roomDescription ?? "simulated"); echo control: \(backend?.rawValue ?? "off")")
            if let erle = report.echoReturnLossEnhancementDB {
                lines.append("echo return loss enhancement: \(Self.decibels(erle)) over \(Self.seconds(report.singleTalkSeconds)) of the reply alone")
            }
            lines.append("self-interruptions: \(report.selfInterruptions) (the reply interrupted while the person was silent)")
            lines.append("barge-ins honoured: \(report.bargeInsHonoured) of \(report.bargeIns) (the person speaking over the reply)")
            if let drift = report.measuredDriftPPM { lines.append("clock drift measured: \(String(format: "%+.1f", drift)) ppm") }
            if let stage, let moved = Self.delayCorrection(stage) { lines.append(moved) }
            if report.blocksPassedThrough > 0 { lines.append("echo control failed on \(report.blocksPassedThrough) blocks, sent unprocessed") }
            if report.loudspeakerUnderruns > 0 {
                lines.append("the loudspeaker ran dry \(report.loudspeakerUnderruns) times (the reply output fell behind); \(report.referenceGapFrames) frames of reference silence filled in")
            }
        } else if let stage, let backend {
            var line = "echo control (\(backend.rawValue)):"
            if let reduction = stage.energyReductionDB { line += " \(Self.decibels(reduction)) less energy sent than heard" }
            if let drift = aligner?.driftPPM { line += "; clock drift \(String(format: "%+.1f", drift)) ppm" }
            lines.append(line)
            if let moved = Self.delayCorrection(stage) { lines.append(moved) }
            if stage.blocksPassedThrough > 0 { lines.append("echo control failed on \(stage.blocksPassedThrough) blocks, sent unprocessed: \(stage.firstFailure.map { "\($0)" } ?? "")") }
        }
        return lines
    }

    /// Writes the room's signals into `directory`; the lines to print.
    func writeRecording(to directory: String) -> (lines: [String], failure: String?) {
        guard let room else { return ([], nil) }
        do {
            let paths = try room.writeRecording(to: directory)
            return (["room signals written: " + paths.map { URL(fileURLWithPath: $0).lastPathComponent }.joined(separator: ", ") + " in \(directory)"], nil)
        } catch {
            return ([], "cannot write the room's signals into '\(directory)': \(error.message)")
        }
    }

    /// How far the reference was moved because the echo came later or earlier than the speaker's
    /// reported delay; nil when the stamps were right.
    private static func delayCorrection(_ stage: EchoControlStage) -> String? {
        guard stage.delayCorrections > 0 else { return nil }
        let moved = stage.reference.delayCorrection * 1000
        let direction = moved >= 0 ? "later" : "earlier"
        return "echo delay: the echo came \(String(format: "%.0f", abs(moved))) ms \(direction) than the speaker reported; the reference was moved to it"
            + (stage.delayCorrections > 1 ? " (\(stage.delayCorrections) times)" : "")
    }

    private static func decibels(_ value: Double) -> String { String(format: "%.1f dB", value) }
    private static func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }
}

extension SessionCommand.Options {
    static var echoOption: OptionBinding<Self> {
        .option("echo", "backend", \.echo, .choice,
                help: "Cancel the speaker's sound in the microphone: speex (default with --mic and --speaker, or --room), webrtc, speex-preprocessor, speex-linear, or off.")
    }
    static var roomOption: OptionBinding<Self> {
        .option("room", "room", \.room, roomValue,
                help: "Run live in a simulated room, the input file as the person speaking: car, office, kitchen, or options (rt60=0.3,latency=0.06,echo=-10,noise=pink:-55,drift=100,clip=2,ir=file.wav,unreported=0.1), after a preset or alone.")
    }
    static var roomRecordOption: OptionBinding<Self> {
        .option("room-record", "dir", \.roomRecord, .text, help: "With --room, write the microphone, near-end, echo and cleaned signals into this folder as WAV files.")
    }

    /// A `--room` description, parsed and checked at once.
    private static var roomValue: OptionValue<RoomChoice> {
        OptionValue { text, flag, command throws(CommandFailure) in
            do throws(RoomDescription.Failure) {
                return RoomChoice(text: text, configuration: try RoomDescription.configuration(text))
            } catch {
                if case .file = error { throw CommandFailure("'\(flag)': \(error)", exitCode: .dataError) }
                throw .usage("'\(flag)': \(error)", command: command)
            }
        }
    }
}

/// A `--room` as given and the room it makes.
struct RoomChoice: Sendable {
    let text: String
    let configuration: RoomConfiguration
}

extension SessionArguments {
    /// Refuses echo and room options that cannot work together, before anything is opened.
    static func checkLive(_ options: SessionCommand.Options, input: String?, command: String) throws(CommandFailure) {
        typealias Options = SessionCommand.Options
        let room = Options.roomOption.flag, echo = Options.echoOption.flag
        if options.room != nil {
            guard input != nil else { throw .usage("'\(room)' needs an input file: the person speaking into the room", command: command) }
            for (given, flag) in [(options.microphone != nil, Options.micOption.flag), (options.speaker != nil, Options.speakerOption.flag),
                                  (options.output != nil, Options.outOption.flag), (options.fast, Options.fastFlag.flag)] where given {
                throw .usage("'\(room)' is its own microphone and speaker, in real time; it cannot be combined with '\(flag)'", command: command)
            }
            if input == "-" { throw .usage("'\(room)' reads the person's speech whole before the session: give it as a file, not standard input", command: command) }
        } else if let setting = options.echo, setting != .off, options.microphone == nil || options.speaker == nil {
            throw .usage("'\(echo) \(setting.rawValue)' cancels a speaker's sound in a microphone: it needs both '\(Options.micOption.flag)' and '\(Options.speakerOption.flag)' (or '\(room)'); here there is nothing to cancel", command: command)
        }
        if let directory = options.roomRecord {
            guard options.room != nil else { throw .usage("'\(Options.roomRecordOption.flag)' records a simulated room: give '\(room)' too", command: command) }
            try OutputFolder.requireExisting(directory)
        }
    }

    /// The echo backend a live session uses: as `--echo` says, else the default with both a
    /// microphone and a speaker (or a room), else none.
    static func echoBackend(_ options: SessionCommand.Options) -> EchoBackend? {
        if let setting = options.echo { return setting.backend }
        return options.room != nil || (options.microphone != nil && options.speaker != nil) ? .default : nil
    }
}
