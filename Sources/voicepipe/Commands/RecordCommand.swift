import Foundation
import Synchronization
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
        Arguments.Option(name: "chunk-ms", valueName: "ms", help: "Audio per frame in milliseconds, 10 to 100 (default 32 = 512 samples)."),
        Arguments.Option(name: "channel", valueName: "index", help: "Take one device channel (from 0) instead of the average of all channels."),
        DeviceSupport.rateOption,
        DeviceSupport.channelsOption,
        Arguments.Option(name: "sample-type", valueName: "type", help: "Insist on a device sample type: int16, int32, float32 or float64 (default: the best it offers)."),
    ]
    static let flags: [Arguments.Flag] = []
    static var help: String {
        Arguments.help(
            usage: "voicepipe record [--device <name>] [--seconds <s>] (--out <file.wav> | --frames <file.jsonl>|-) [--chunk-ms <ms>] [--channel <index>] [--rate <hz>] [--channels <n>] [--sample-type <type>]",
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
    let output: Output
    let captureOptions: CaptureOptions

    enum Output {
        case wav(String)
        case frames(String)

        var path: String {
            switch self {
            case .wav(let path), .frames(let path): path
            }
        }
    }

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
        case (nil, let frames?): output = .frames(frames)
        case (nil, nil): throw .usage("say where to write: '--out <file.wav>' or '--frames <file.jsonl>'", command: Self.name)
        case (_?, _?): throw .usage("'--out' and '--frames' cannot be combined; choose one", command: Self.name)
        }
        captureOptions = try arguments.captureOptions(command: Self.name)
    }

    func run() throws(CommandFailure) -> ExitCode {
        let capture: CaptureDevice
        do {
            capture = try CaptureDevice.open(name: device, preferences: preferences)
        } catch {
            throw DeviceSupport.failure(error)
        }
        let format = capture.format
        let converter: CaptureConverter
        do {
            converter = try CaptureConverter(input: format, options: captureOptions)
        } catch {
            throw CommandFailure("cannot convert from '\(device)' (\(DeviceSupport.describe(format.format))): \(error)", exitCode: error.isUsageProblem ? .usage : .dataError)
        }
        // The audio thread: copy into the ring, count, stop at the limit. Nothing else.
        let bytesPerFrame = format.bytesPerFrame
        let ring = AudioRing(capacity: max(Int(format.sampleRate * 2), 4_096) * bytesPerFrame)
        let limit = seconds.map { max(Int(($0 * format.sampleRate).rounded()), 1) }
        let offered = Atomic<Int>(0)
        let dropped = Atomic<Int>(0)
        let signals = StopSignals { capture.stop() }
        defer { withExtendedLifetime(signals) {} }
        do {
            try capture.installTap { bytes in
                var frames = bytes.count / bytesPerFrame
                let before = offered.load(ordering: .relaxed)
                if let limit { frames = min(frames, limit - before) }
                if !ring.write(UnsafeRawBufferPointer(rebasing: bytes[0..<(frames * bytesPerFrame)])) {
                    dropped.add(frames, ordering: .relaxed)
                }
                offered.store(before + frames, ordering: .relaxed)
                return limit.map { before + frames >= $0 } == true ? .stop : .proceed
            }
        } catch {
            throw CommandFailure(error.description, exitCode: .unavailable)
        }
        // The file exists only once the device streams; the ring holds two seconds meanwhile.
        let sink: FrameSink
        do {
            sink = try FrameSink(output)
        } catch {
            capture.stop()
            _ = try? capture.waitUntilStopped()
            throw error
        }

        // This thread: drain the ring through the converter into the file, and show the meter.
        let meter = PeakMeter(rate: format.sampleRate)
        var stats = CaptureStatistics()
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 16_384 * bytesPerFrame, alignment: 16)
        defer { scratch.deallocate() }
        let emit: (CaptureFrame) throws -> Void = { frame in
            try sink.write(frame)
            stats.add(frame)
            meter.show(frame.level)
        }
        var writeFailure: CommandFailure?
        var streaming = true
        while streaming {
            streaming = capture.isStreaming
            do {
                while case let count = ring.read(into: scratch, granularity: bytesPerFrame), count > 0 {
                    try converter.process(UnsafeRawBufferPointer(rebasing: scratch[0..<count]), emit)
                    meter.advance(frames: count / bytesPerFrame)
                }
            } catch {
                writeFailure = (error as? CommandFailure) ?? CommandFailure("writing '\(output.path)' failed: \(error)", exitCode: .ioError)
                capture.stop()
                break
            }
            if streaming { usleep(5_000) }
        }
        let ended: Result<CaptureReport, AudioDeviceError> = Result { () throws(AudioDeviceError) in try capture.waitUntilStopped() }
        meter.finish()
        do {
            if writeFailure == nil { try converter.flush(emit) }
            try sink.finish()
        } catch {
            writeFailure = writeFailure ?? (error as? CommandFailure) ?? CommandFailure("writing '\(output.path)' failed: \(error)", exitCode: .ioError)
        }
        if let writeFailure { throw writeFailure }

        let lost = dropped.load(ordering: .relaxed)
        let kept = offered.load(ordering: .relaxed) - lost
        if lost > 0 {
            Console.error("warning: \(InputFile.seconds(lost, rate: format.sampleRate)) of device audio was dropped because converting and writing fell behind the device; the file holds the rest, joined")
        }
        let destination = output.path == "-" ? "standard output" : "'\(output.path)'"
        switch ended {
        case .success(let report):
            let overruns = report.overruns > 0 ? "; \(Console.count(report.overruns, "overrun")) recovered" : ""
            Console.error("recorded \(InputFile.seconds(kept, rate: format.sampleRate)) from '\(device)' (\(DeviceSupport.describe(format.format))) to \(destination): \(stats.samples) frames at 16000 Hz; \(stats.summary)\(overruns)")
            return .success
        case .failure(let error):
            throw CommandFailure("\(error.description); the \(InputFile.seconds(kept, rate: format.sampleRate)) recorded before are in \(destination)", exitCode: .ioError)
        }
    }
}

/// Where recorded frames go: a 16 kHz mono Int16 WAV, or audio.chunk JSON Lines.
private final class FrameSink {
    private let wav: AudioFileWriter?
    private let lines: OutputFile?

    init(_ output: RecordCommand.Output) throws(CommandFailure) {
        switch output {
        case .wav(let path):
            do {
                wav = try AudioFileWriter(path: path, sampleRate: 16_000, channelCount: 1, encoding: .int16)
            } catch {
                throw InputFile.failure(error)
            }
            lines = nil
        case .frames(let path):
            lines = try OutputFile(path: path)
            wav = nil
        }
    }

    func write(_ frame: CaptureFrame) throws {
        if let wav {
            try wav.write(frame.samples)
        } else if let lines {
            try lines.appendAudioChunkLine(frame.samples, sampleRate: 16_000)
        }
    }

    func finish() throws {
        if let wav {
            do { try wav.close() } catch { throw InputFile.failure(error) }
        }
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

    func advance(frames count: Int) {
        frames += count
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
    }
}
