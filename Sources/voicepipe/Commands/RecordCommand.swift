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
        Arguments.Option(name: "out", valueName: "file", help: "Write a 16 kHz mono Int16 file: .wav, .flac, .aif/.aiff or .raw/.pcm; '-' writes WAV to standard output."),
        Arguments.Option(name: "frames", valueName: "file.jsonl", help: "Write audio.chunk messages, one per line ('-' for standard output)."),
    ] + CaptureArguments.options + [
        DeviceSupport.rateOption,
        DeviceSupport.channelsOption,
        Arguments.Option(name: "sample-type", valueName: "type", help: "Insist on a device sample type: int16, int32, float32 or float64 (default: the best it offers)."),
    ]
    static let flags: [Arguments.Flag] = [SummaryOptions.quietFlag]
    static var help: String {
        Arguments.help(
            usage: "voicepipe record (--out <file> | --frames <file.jsonl>) [--seconds <s>] [options]",
            abstract: abstract,
            discussion: """
            Opens the device at its native rate, channel count and sample type (never assuming 16 kHz),
            checks the negotiated format with the guard, and converts what it captures exactly as
            'voicepipe convert' converts a file. The audio thread only copies into a ring; conversion and
            writing happen on the main thread. A live peak meter shows on stderr when it is a terminal.
            Ctrl-C stops cleanly and keeps what was recorded (a second Ctrl-C quits at once). --seconds
            records exactly that much: when conversion falls behind, the audio thread waits for it (a
            real device then counts an overrun; ALSA's clockless 'null' is simply paced). --out writes
            the container its extension names (\(AudioContainer.extensions); '-' is WAV on standard
            output). When the device is missing, busy, not permitted or reports an unusable format,
            audio is unavailable: the reason is printed and the exit status is 69. A device that fails
            mid-recording keeps what came before (status 74).
            """,
            examples: [
                "voicepipe record --seconds 5 --out question.wav",
                "voicepipe record --device plughw:1 --frames - | nc runtime 9000",
            ],
            options: options, flags: flags)
    }

    let device: String
    let preferences: DevicePreferences
    let seconds: Double?
    let output: CaptureFileWriter.Destination
    let capture: CaptureArguments
    let summary: SummaryOptions

    init(arguments: Arguments) throws(CommandFailure) {
        summary = SummaryOptions(arguments)
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
        case (let path?, nil): output = .audioFile(path: path, container: try OutputFile.container(for: path, command: Self.name))
        case (nil, let frames?): output = .jsonLines(path: frames)
        case (nil, nil): throw .usage("say where to write: '--out <file.wav>' or '--frames <file.jsonl>'", command: Self.name)
        case (_?, _?): throw .usage("'--out' and '--frames' cannot be combined; choose one", command: Self.name)
        }
        capture = try CaptureArguments(arguments, command: Self.name)
    }

    func run() throws(CommandFailure) -> ExitCode {
        let microphone: CaptureDevice
        do { microphone = try CaptureDevice.open(name: device, preferences: preferences) } catch { throw CommandFailure(error) }
        let format = microphone.format
        let pump: CapturePump
        do {
            pump = try CapturePump(device: microphone, converter: capture.converter(for: format, source: "'\(device)'"), frameLimit: seconds.map { Int(($0 * format.sampleRate).rounded()) })
            try pump.start()
        } catch let error as CapturePumpError {
            throw CommandFailure(error.message, exitCode: .unavailable)
        } catch {
            throw CommandFailure.streaming(error, while: "starting '\(device)'")
        }
        let signals = StopSignals { pump.stop() }
        defer { withExtendedLifetime(signals) {} }
        // The file exists only once the device streams; the ring holds two seconds meanwhile.
        let file: CaptureFileWriter
        do { file = try CaptureFileWriter(output) } catch { pump.stop(); throw CommandFailure.streaming(error, while: "creating \(output.name)") }
        let meter = PeakMeter(rate: format.sampleRate, enabled: !summary.quiet, noteIfUnpaced: seconds == nil && !summary.quiet ? device : nil)
        let outcome = Result { try pump.run(progress: meter.advance(converted:)) { frame in try file.write(frame); meter.show(frame.level) } }
        meter.finish()
        let seconds = { (frames: Int) in InputFile.seconds(frames, rate: format.sampleRate) }
        do { try file.finish() } catch { throw CommandFailure.streaming(error, while: "writing \(output.name)") }
        switch outcome {
        case .success(let report):
            if report.framesDropped > 0 {
                Console.warning(Self.name, "\(seconds(report.framesDropped)) of device audio was dropped because converting and writing fell behind the device; the file holds the rest, joined")
            }
            let overruns = report.device.overruns > 0 ? "; \(Console.count(report.device.overruns, "overrun")) recovered" : ""
            summary.note("recorded \(seconds(report.framesKept)) from '\(device)' (\(DeviceSupport.describe(format.audioFormat))) to \(output.name): \(file.statistics.samples) frames at \(AudioFormat.describe(rate: AudioFormat.captureTarget.sampleRate)); \(file.statistics.summary)\(overruns)")
            return .success
        case .failure(CapturePumpError.deviceLost(let error, let framesKept)):
            throw CommandFailure("\(error.message); the \(seconds(framesKept)) recorded before are in \(output.name)", exitCode: .ioError)
        case .failure(let error):
            throw CommandFailure.streaming(error, while: "writing \(output.name)")
        }
    }
}

/// A live peak meter on stderr (only when it is a terminal), redrawn at most ten times a second.
private final class PeakMeter {
    private let rate: Double
    private let enabled: Bool
    /// The device to name once if it delivers much faster than real time; nil to say nothing.
    private var unpacedDevice: String?
    private let start = Date()
    private var frames = 0
    private var loudest = -Double.infinity
    private var lastDraw = Date.distantPast
    private var drawn = false

    init(rate: Double, enabled: Bool, noteIfUnpaced device: String?) {
        self.rate = rate
        self.enabled = enabled
        unpacedDevice = device
    }

    func show(_ level: PeakLevel) {
        loudest = max(loudest, level.dBFS)
    }

    /// Redraws after the pump has converted `converted` device frames in all.
    func advance(converted: Int) {
        frames = converted
        if let device = unpacedDevice, Double(frames) / rate >= 2, Double(frames) / rate > 4 * Date().timeIntervalSince(start) {
            unpacedDevice = nil
            finish()
            Console.error("voicepipe record: note: '\(device)' delivers audio faster than real time (it has no clock), so the recording runs as fast as it is converted; Ctrl-C stops it")
        }
        guard enabled, Console.stderrIsTerminal, Date().timeIntervalSince(lastDraw) >= 0.1 else { return }
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
