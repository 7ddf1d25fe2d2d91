import Foundation
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO

/// `voicepipe record`: a capture device through the capture converter into a WAV or JSON Lines file.
struct RecordCommand: Command {
    static let name = "record"
    static let abstract = "Record from an ALSA device to 16 kHz mono Int16 (WAV, or audio.chunk JSON Lines)."
    static let options: [Arguments.Option] = [
        DeviceSupport.deviceOption,
        Arguments.Option(name: "seconds", valueName: "s", help: "Stop after this much device audio (default: until Ctrl-C)."),
        Arguments.Option(name: "out", valueName: "file.wav", help: "Write a 16 kHz mono Int16 WAV."),
        Arguments.Option(name: "frames", valueName: "file.jsonl", help: "Write audio.chunk messages, one per line ('-' for standard output)."),
    ] + CaptureArguments.options + [
        DeviceSupport.rateOption,
        DeviceSupport.channelsOption,
        Arguments.Option(name: "sample-type", valueName: "type", help: "Insist on a device sample type: int16, int32, float32 or float64 (default: the best it offers)."),
    ]
    static let flags: [Arguments.Flag] = []
    static var help: String {
        Arguments.help(
            usage: "voicepipe record [--device <name>] [--seconds <s>] (--out <file.wav> | --frames <file.jsonl>|-) [--chunk-ms <ms>] [--channel <index>] [--resampler <name>] [--rate <hz>] [--channels <n>] [--sample-type <type>]",
            abstract: abstract,
            discussion: """
            Opens the device at its native rate, channel count and sample type (never assuming 16 kHz),
            checks the negotiated format with the guard, and converts what it captures exactly as
            'voicepipe convert' converts a file. The audio thread only copies into a ring; conversion and
            writing happen on the main thread. A live peak meter shows on stderr when it is a terminal.
            Ctrl-C stops cleanly and keeps what was recorded (a second Ctrl-C quits at once). When the device is missing, busy, not
            permitted or reports an unusable format, audio is unavailable: the reason is printed and
            the exit status is 69. A device that fails mid-recording keeps what came before (status 74).
            """,
            options: options, flags: flags)
    }

    let device: String
    let preferences: DevicePreferences
    let seconds: Double?
    let output: CaptureFileOutput.Destination
    let capture: CaptureArguments

    init(arguments: Arguments) throws(CommandFailure) {
        _ = try arguments.positionals(exactly: [], command: Self.name)
        device = DeviceSupport.deviceName(arguments)
        var preferences = try DeviceSupport.preferences(arguments, command: Self.name)
        if let type = arguments.value("sample-type") {
            guard let sampleType = SampleType(rawValue: type.lowercased()) else {
                throw .usage("'--sample-type' must be one of int16, int32, float32, float64, not '\(type)'", command: Self.name)
            }
            preferences.sampleType = sampleType
        }
        self.preferences = preferences
        seconds = try arguments.decimal("seconds", in: 0.001...86_400, command: Self.name)
        switch (arguments.value("out"), arguments.value("frames")) {
        case (let wav?, nil): output = .wav(wav)
        case (nil, let frames?): output = .jsonLines(frames)
        case (nil, nil): throw .usage("say where to write: '--out <file.wav>' or '--frames <file.jsonl>'", command: Self.name)
        case (_?, _?): throw .usage("'--out' and '--frames' cannot be combined; choose one", command: Self.name)
        }
        capture = try CaptureArguments(arguments, command: Self.name)
    }

    func run() throws(CommandFailure) -> ExitCode {
        let microphone: CaptureDevice
        do { microphone = try CaptureDevice.open(name: device, preferences: preferences) } catch { throw CommandFailure(error) }
        let format = microphone.format
        let converter = try capture.converter(for: format, source: "'\(device)'")
        let pump: CapturePump
        do {
            pump = try CapturePump(device: microphone, converter: converter, frameLimit: seconds.map { Int(($0 * format.sampleRate).rounded()) })
        } catch {
            throw CommandFailure(error.description, exitCode: .software)
        }
        let signals = StopSignals { pump.stop() }
        defer { withExtendedLifetime(signals) {} }
        let recording = Recording(output: output, rate: format.sampleRate)
        let outcome = Result { try pump.run(progress: recording.meter.advance(converted:), recording.write) }
        recording.meter.finish()
        let destination = output.path == "-" ? "standard output" : "'\(output.path)'"
        let kept = { (frames: Int) in InputFile.seconds(frames, rate: format.sampleRate) }
        switch outcome {
        case .success(let report):
            try recording.finish()
            if report.framesDropped > 0 {
                Console.error("warning: \(kept(report.framesDropped)) of device audio was dropped because converting and writing fell behind the device; the file holds the rest, joined")
            }
            let overruns = report.device.overruns > 0 ? "; \(Console.count(report.device.overruns, "overrun")) recovered" : ""
            Console.error("recorded \(kept(report.framesKept)) from '\(device)' (\(format)) to \(destination): \(recording.statistics.samples) frames at \(AudioFormat.describe(rate: AudioFormat.captureTarget.sampleRate)); \(recording.statistics.summary)\(overruns)")
            return .success
        case .failure(CapturePumpError.deviceLost(let error, let report)):
            try recording.finish()
            throw CommandFailure("\(error.description); the \(kept(report.framesKept)) recorded before are in \(destination)", exitCode: .ioError)
        case .failure(CapturePumpError.startFailed(let error)):
            throw CommandFailure(error.description, exitCode: .unavailable)
        case .failure(let error):
            try? recording.finish()
            throw CommandFailure.streaming(error, while: "writing \(destination)")
        }
    }
}

/// The file side of a recording: created at the first frame (so nothing exists until the device
/// streams), the statistics, and the live meter.
private final class Recording {
    let meter: PeakMeter
    private(set) var statistics = CaptureStatistics()
    private let output: CaptureFileOutput.Destination
    private var file: CaptureFileOutput?

    init(output: CaptureFileOutput.Destination, rate: Double) {
        self.output = output
        meter = PeakMeter(rate: rate)
    }

    func write(_ frame: CaptureFrame) throws {
        if file == nil { file = try CaptureFileOutput(output) }
        try file?.write(frame)
        statistics.add(frame)
        meter.show(frame.level)
    }

    /// Finishes the file (creating an empty one if no frame came).
    func finish() throws(CommandFailure) {
        do {
            if file == nil { file = try CaptureFileOutput(output) }
            try file?.finish()
        } catch {
            throw CommandFailure.streaming(error, while: "writing '\(output.path)'")
        }
    }
}

/// Where captured frames go: a 16 kHz mono Int16 WAV, or audio.chunk JSON Lines.
final class CaptureFileOutput {
    enum Destination {
        case wav(String)
        case jsonLines(String)

        var path: String {
            switch self {
            case .wav(let path), .jsonLines(let path): path
            }
        }
    }

    private let wav: AudioFileWriter?
    private let lines: JSONLinesWriter?

    init(_ destination: Destination) throws {
        let target = AudioFormat.captureTarget
        switch destination {
        case .wav(let path):
            wav = try AudioFileWriter(path: path, sampleRate: Int(target.sampleRate), channelCount: target.channelCount, encoding: .int16)
            lines = nil
        case .jsonLines(let path):
            lines = try JSONLinesWriter(path: path)
            wav = nil
        }
    }

    func write(_ frame: CaptureFrame) throws {
        try wav?.write(frame.samples)
        try lines?.appendAudioChunk(frame.samples, sampleRate: Int(AudioFormat.captureTarget.sampleRate))
    }

    func finish() throws {
        try wav?.close()
        try lines?.flush()
    }
}

/// A live peak meter on stderr (only when it is a terminal), redrawn at most ten times a second.
private final class PeakMeter {
    private let rate: Double
    private var frames = 0
    private var loudest = -Double.infinity
    private var lastDraw = Date.distantPast
    private var drawn = false

    init(rate: Double) {
        self.rate = rate
    }

    func show(_ level: PeakLevel) {
        loudest = max(loudest, level.dBFS)
    }

    /// Redraws after the pump has converted `converted` device frames in all.
    func advance(converted: Int) {
        frames = converted
        guard Console.stderrIsTerminal, Date().timeIntervalSince(lastDraw) >= 0.1 else { return }
        lastDraw = Date()
        let width = 30
        let filled = loudest.isFinite ? max(0, min(width, Int(((loudest + 60) / 60 * Double(width)).rounded()))) : 0
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let level = loudest.isFinite ? "\(PeakLevel.format(loudest)) dBFS" : "silence"
        Console.errorRaw(String(format: "\rrecording %7.1f s  [%@]  %@ (Ctrl-C stops)\u{1B}[K", Double(frames) / rate, bar, level))
        drawn = true
        loudest = -.infinity
    }

    func finish() {
        if drawn { Console.errorRaw("\r\u{1B}[K") }
        drawn = false
    }
}
