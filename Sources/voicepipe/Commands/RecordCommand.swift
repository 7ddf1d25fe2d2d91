import Foundation
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO

/// `voicepipe record`: a capture device through the capture converter into a WAV or JSON Lines file.
struct RecordCommand: Command {
    static let name = "record"
    static let abstract = "Record from an ALSA device to 16 kHz mono Int16 (WAV, or audio.chunk JSON Lines)."
    struct Options: CommandOptions {
        var device = DeviceOptions()
        var seconds: Double?
        var output: String?
        var frames: String?
        var capture = CaptureArguments()
        var sampleType: SampleType?
        var summary = SummaryOptions()

        static var outOption: OptionBinding<Self> {
            .option("out", "file", \.output, .text, help: "Write a 16 kHz mono Int16 file: .wav, .flac, .aif/.aiff or .raw/.pcm; '-' writes WAV to standard output.")
        }
        static var framesOption: OptionBinding<Self> {
            .option("frames", "file.jsonl", \.frames, .text, help: "Write audio.chunk messages, one per line ('-' for standard output).")
        }
        static var bindings: [OptionBinding<Self>] {
            [
                DeviceOptions.deviceOption.within(\.device),
                .option("seconds", "s", \.seconds, .decimal(in: 0.001...86_400), help: "Stop after this much device audio (default: until Ctrl-C)."),
                outOption,
                framesOption,
            ] + CaptureArguments.bindings.within(\.capture) + [DeviceOptions.rateOption(), DeviceOptions.channelsOption()].within(\.device) + [
                .option("sample-type", "type", \.sampleType, sampleTypeValue, help: "Insist on a device sample type: int16, int32, float32 or float64 (default: the best it offers)."),
                SummaryOptions.quietFlag.within(\.summary),
            ]
        }

        /// A sample type by name, in any case.
        private static var sampleTypeValue: OptionValue<SampleType> {
            OptionValue { text, flag, command throws(CommandFailure) in
                guard let sampleType = SampleType(rawValue: text.lowercased()) else {
                    throw .usage("'\(flag)' must be one of \(SampleType.allCases.map(\.rawValue).joined(separator: ", ")), not '\(text)'", command: command)
                }
                return sampleType
            }
        }
    }

    static var help: String {
        HelpText.make(
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
            bindings: Options.bindings)
    }

    let device: String
    let preferences: DevicePreferences
    let seconds: Double?
    let output: CaptureFileWriter.Destination
    let capture: CaptureArguments
    let summary: SummaryOptions

    init(options: Options, positionals: [String]) throws(CommandFailure) {
        summary = options.summary
        _ = try Positionals.exactly(positionals, named: [], command: Self.name)
        device = options.device.name
        var preferences = options.device.preferences
        preferences.sampleType = options.sampleType
        self.preferences = preferences
        seconds = options.seconds
        let outFlag = Options.outOption.flag, framesFlag = Options.framesOption.flag
        switch (options.output, options.frames) {
        case (let path?, nil): output = .audioFile(path: path, container: try OutputFile.container(for: path, command: Self.name))
        case (nil, let frames?): output = .jsonLines(path: frames)
        case (nil, nil): throw .usage("say where to write: '\(outFlag) <file.wav>' or '\(framesFlag) <file.jsonl>'", command: Self.name)
        case (_?, _?): throw .usage("'\(outFlag)' and '\(framesFlag)' cannot be combined; choose one", command: Self.name)
        }
        capture = options.capture
    }

    func run() throws(CommandFailure) -> ExitCode {
        let microphone: CaptureDevice
        do { microphone = try CaptureDevice.open(name: device, preferences: preferences) } catch { throw CommandFailure(error) }
        let format = microphone.format
        let pump: CapturePump
        do {
            pump = try CapturePump(device: microphone, converter: capture.converter(for: format, source: "'\(device)'"), frameLimit: seconds.map { Int(($0 * format.sampleRate.hertz).rounded()) })
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
        let meter = PeakMeter(rate: format.sampleRate.hertz, enabled: !summary.quiet, noteIfUnpaced: seconds == nil && !summary.quiet ? device : nil)
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
            summary.note("recorded \(seconds(report.framesKept)) from '\(device)' (\(DeviceSupport.describe(format.audioFormat))) to \(output.name): \(file.statistics.samples) frames at \(AudioFormat.captureTarget.sampleRate); \(file.statistics.summary)\(overruns)")
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
