import Foundation
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO

/// `voicepipe room`: a simulated room between two FIFOs that ALSA `file` PCMs read and write, so a
/// live `--mic`/`--speaker` session runs on real ALSA devices on a machine with no sound card.
struct RoomCommand: Command {
    static let name = "room"
    static let abstract = "Play a simulated room between two FIFOs that ALSA file PCMs use (no sound card needed)."

    /// Background noise by name, or none.
    enum NoiseChoice: String, CaseIterable, Sendable {
        case white, pink, brown, babble, none
    }

    struct Options: CommandOptions {
        var microphoneFIFO: String?
        var speakerFIFO: String?
        var alsaConfig = false
        var output: String?
        var preset: RoomPreset?
        var talker: String?
        var talkerAt: Double?
        var talkerGain: Double?
        var latency: Double?
        var reverb: Double?
        var distance: Double?
        var echoGain: Double?
        var drive: Double?
        var noise: NoiseChoice?
        var noiseLevel: Double?
        var drift: Double?
        var seed: Int?
        var encoding: FIFOStreamFormat.Encoding?
        var rate: Int?
        var channels: Int?
        var seconds: Double?
        var summary = SummaryOptions()

        static var micOption: OptionBinding<Self> {
            .option("mic-fifo", "path", \.microphoneFIFO, .text, help: "The FIFO the room writes the microphone into (an ALSA file PCM's infile).")
        }
        static var speakerOption: OptionBinding<Self> {
            .option("speaker-fifo", "path", \.speakerFIFO, .text, help: "The FIFO the room reads the speaker from (an ALSA file PCM's file).")
        }
        static var alsaConfigFlag: OptionBinding<Self> {
            .flag("alsa-config", \.alsaConfig, help: "Print an ALSA configuration defining room_mic and room_speaker on the two FIFOs, and exit.")
        }
        static var outOption: OptionBinding<Self> {
            .option("out", "file", \.output, .text, help: "With --alsa-config: write the configuration to this file instead of standard output.")
        }
        static var reverbOption: OptionBinding<Self> {
            .option("reverb", "s", \.reverb, .decimal(in: RoomImpulseResponse.reverberationTimes), help: "Reverberation time T60 of a generated response (with --distance).")
        }
        static var distanceOption: OptionBinding<Self> {
            .option("distance", "m", \.distance, .decimal(in: RoomImpulseResponse.distances), help: "Loudspeaker to microphone distance of a generated response (with --reverb).")
        }
        static var bindings: [OptionBinding<Self>] {
            [
                micOption,
                speakerOption,
                alsaConfigFlag,
                outOption,
                .option("preset", "room", \.preset, .choice, help: "The room to start from: car, office (default) or kitchen."),
                .option("talker", "file", \.talker, .text, help: "The person speaking into the room: any audio file 'convert' reads."),
                .option("talker-at", "s", \.talkerAt, .decimal(in: 0...3_600), help: "When the talker starts, from the microphone's first read (default 0.5)."),
                .option("talker-gain", "dB", \.talkerGain, .decimal(in: -80...40), help: "A gain on the talker (default 0)."),
                .option("latency", "s", \.latency, .decimal(in: RoomConfiguration.latencies), help: "Loudspeaker latency, 0.01 to 0.2 (the preset's by default)."),
                reverbOption,
                distanceOption,
                .option("echo-gain", "dB", \.echoGain, .decimal(in: RoomConfiguration.echoGains), help: "How loud the loudspeaker is at the microphone, -80 to 20 dB."),
                .option("drive", "x", \.drive, .decimal(in: RoomConfiguration.drives), help: "Loudspeaker soft clipping, 0.1 to 20 (default: the preset's)."),
                .option("noise", "kind", \.noise, .choice, help: "Background noise: white, pink, brown, babble or none (the preset's by default)."),
                .option("noise-level", "dBFS", \.noiseLevel, .decimal(in: RoomNoise.levels), help: "The noise's RMS level, -100 to 0 dBFS."),
                .option("drift", "ppm", \.drift, .decimal(in: RoomConfiguration.clockDrifts), help: "How fast the microphone's clock runs against the loudspeaker's, -1000 to 1000 ppm."),
                .option("seed", "n", \.seed, .integer(in: 0...Int.max), help: "Chooses the noise and the generated response (default 1)."),
                .option("format", "name", \.encoding, .choice, help: "The FIFOs' samples: FLOAT_LE (default) or S16_LE."),
                .option("rate", "hz", \.rate, .integer(in: FIFOStreamFormat.sampleRates), help: "The FIFOs' rate (default 48000)."),
                .option("channels", "n", \.channels, .integer(in: FIFOStreamFormat.channelCounts), help: "The FIFOs' channels (default 2)."),
                .option("seconds", "s", \.seconds, .decimal(in: 0.01...86_400), help: "End after this much room time (default: when the session closes a device)."),
                SummaryOptions.quietFlag.within(\.summary),
            ]
        }
    }

    static var help: String {
        HelpText.make(
            usage: "voicepipe room --mic-fifo <fifo> --speaker-fifo <fifo> [--alsa-config [--out <f>]] [options]",
            abstract: abstract,
            discussion: """
            ALSA's file PCM reads its capture from a file and writes its playback to one; on two FIFOs,
            with this command at their other ends, a program using real ALSA devices hears a room: what
            its speaker plays goes through the loudspeaker's latency, the room's response and the echo
            gain, and comes back into its microphone with the talker and the noise, paced in real time
            by the room's clock (the file PCM has no clock of its own). Make the FIFOs with mkfifo, write
            the ALSA configuration with --alsa-config (room_mic and room_speaker, the FIFOs' absolute
            paths), start the room, then the session with ALSA_CONFIG_PATH naming that configuration
            (the examples, in order). Either may start first: each waits for the other.

            The FIFOs carry raw samples in the format the program negotiates: VoicePipe's devices take
            FLOAT_LE, 48000 Hz, 2 channels on a file PCM, the default here; for another program give
            --format, --rate and --channels to match (its reads must be 10 ms periods). The room itself
            runs at 16 kHz, resampled to the FIFO's rate; build with -c release for the presets' long
            responses in real time. Its timeline starts at the microphone's first read, so --talker-at
            counts from there. The room ends when the session closes its microphone or its speaker,
            after --seconds, or on Ctrl-C, and prints what moved: frames each way, frames dropped
            because the reader fell behind, silence played because nothing was written in time, and
            how late its clock woke.
            """,
            examples: [
                "mkfifo mic.fifo speaker.fifo",
                "voicepipe room --mic-fifo mic.fifo --speaker-fifo speaker.fifo --alsa-config --out room.conf",
                "voicepipe room --mic-fifo mic.fifo --speaker-fifo speaker.fifo --talker talk.wav --preset car &",
                "ALSA_CONFIG_PATH=room.conf voicepipe session --mic room_mic --speaker room_speaker",
            ],
            bindings: Options.bindings)
    }

    let microphoneFIFO: String
    let speakerFIFO: String
    let options: Options

    init(options: Options, positionals: [String]) throws(CommandFailure) {
        _ = try Positionals.exactly(positionals, named: [], command: Self.name)
        let mic = Options.micOption.flag, speaker = Options.speakerOption.flag
        guard let microphoneFIFO = options.microphoneFIFO, let speakerFIFO = options.speakerFIFO else {
            throw .usage("name both FIFOs: '\(mic) <path>' and '\(speaker) <path>' (make them with mkfifo)", command: Self.name)
        }
        if options.output != nil && !options.alsaConfig {
            throw .usage("'\(Options.outOption.flag)' applies to '\(Options.alsaConfigFlag.flag)'", command: Self.name)
        }
        if (options.reverb == nil) != (options.distance == nil) {
            throw .usage("give '\(Options.reverbOption.flag)' and '\(Options.distanceOption.flag)' together: they generate the room's response", command: Self.name)
        }
        self.microphoneFIFO = microphoneFIFO
        self.speakerFIFO = speakerFIFO
        self.options = options
    }

    func run() throws(CommandFailure) -> ExitCode {
        if options.alsaConfig { return try writeConfiguration() }
        let format = FIFOStreamFormat(sampleRate: options.rate ?? 48_000, channelCount: options.channels ?? 2, encoding: options.encoding ?? .floatLE)
        let seed = UInt64(options.seed ?? 1)
        let configuration = try roomConfiguration(speakerRate: format.sampleRate, seed: seed)
        let talker: RoomTalker?
        do {
            talker = try options.talker.map { path throws(FIFORoomError) in
                try RoomTalker.load(path: path, sampleRate: configuration.captureRate, startSeconds: options.talkerAt ?? 0.5, gainDB: options.talkerGain ?? 0)
            }
        } catch {
            throw CommandFailure(error.description, exitCode: options.talker.map { FileManager.default.fileExists(atPath: $0) } == false ? .noInput : .dataError)
        }
        let room: FIFORoom
        do {
            room = try FIFORoom(microphone: microphoneFIFO, format: format, speaker: speakerFIFO, format: format, room: configuration, talker: talker,
                                options: FIFORoomOptions(duration: options.seconds))
        } catch {
            throw Self.failure(error)
        }
        let signals = StopSignals { room.requestStop() }
        defer { withExtendedLifetime(signals) {} }
        let summary = options.summary
        let preset = options.preset ?? .office
        let report: FIFORoomReport
        do {
            report = try room.run { event in
                switch event {
                case .waitingForMicrophone:
                    summary.note("room '\(preset.rawValue)' (\(format)): waiting for a program to open the microphone FIFO '\(microphoneFIFO)'")
                case .microphoneOpened:
                    summary.note("the microphone is open; the room starts at its first read")
                case .started:
                    summary.note("room started" + (options.talker.map { ", the talker '\($0)' at \(Self.seconds(options.talkerAt ?? 0.5))" } ?? ""))
                case .speakerOpened:
                    summary.note("the speaker is playing into the room")
                case .ended:
                    break
                }
            }
        } catch {
            throw Self.failure(error)
        }
        summary.note(Self.describe(report, format: format))
        return .success
    }

    /// The preset with the options laid over it; the room runs at 16 kHz, the capture target.
    private func roomConfiguration(speakerRate: Int, seed: UInt64) throws(CommandFailure) -> RoomConfiguration {
        do throws(RoomError) {
            var configuration = try (options.preset ?? .office).configuration(playbackRate: SampleRate(hertz: Double(speakerRate)), captureRate: .capture, seed: seed)
            if let latency = options.latency { configuration.latency = latency }
            if let echoGain = options.echoGain { configuration.echoGainDB = echoGain }
            if let drive = options.drive { configuration.loudspeakerDrive = drive }
            if let drift = options.drift { configuration.clockDriftPPM = drift }
            if let reverb = options.reverb, let distance = options.distance {
                configuration.impulseResponse = try RoomImpulseResponse(reverberationTime: reverb, distance: distance, sampleRate: .capture, seed: seed)
            }
            let level = options.noiseLevel ?? configuration.noise?.levelDBFS ?? -50
            switch options.noise {
            case .none?: configuration.noise = nil
            case .white?: configuration.noise = RoomNoise(.white, levelDBFS: level)
            case .pink?: configuration.noise = RoomNoise(.pink, levelDBFS: level)
            case .brown?: configuration.noise = RoomNoise(.brown, levelDBFS: level)
            case .babble?: configuration.noise = RoomNoise(.babble(talkers: 6), levelDBFS: level)
            case nil: configuration.noise?.levelDBFS = level
            }
            try configuration.validate()
            return configuration
        } catch {
            throw .usage("\(error)", command: Self.name)
        }
    }

    /// `--alsa-config`: the two PCMs on the FIFOs (absolute paths), to standard output or a file.
    private func writeConfiguration() throws(CommandFailure) -> ExitCode {
        let directory = FileManager.default.currentDirectoryPath
        func absolute(_ path: String) -> String { path.hasPrefix("/") ? path : directory + "/" + path }
        let text = FIFORoom.alsaConfiguration(microphoneFIFO: absolute(microphoneFIFO), speakerFIFO: absolute(speakerFIFO))
        guard let output = options.output, output != "-" else {
            Console.write(text, to: STDOUT_FILENO)
            return .success
        }
        guard FileManager.default.createFile(atPath: output, contents: Data(text.utf8)) else {
            throw CommandFailure("cannot create '\(output)': check that its folder exists and can be written", exitCode: .cannotCreate)
        }
        options.summary.note("wrote the ALSA configuration for room_mic and room_speaker to '\(output)'; use it with ALSA_CONFIG_PATH=\(absolute(output))")
        return .success
    }

    /// A room failure with the status that says whose it is.
    private static func failure(_ error: FIFORoomError) -> CommandFailure {
        switch error {
        case .fifoMissing, .notAFIFO, .cannotOpen: CommandFailure(error.description, exitCode: .noInput)
        case .sameFIFO, .unusableFormat, .periodTooLarge, .rateMismatch, .room: .usage(error.description, command: name)
        case .talker: CommandFailure(error.description, exitCode: .dataError)
        case .resampler: CommandFailure(error.description, exitCode: .software)
        case .ioFailed: CommandFailure(error.description, exitCode: .ioError)
        }
    }

    /// The closing summary: what moved each way and how well the clock kept time.
    static func describe(_ report: FIFORoomReport, format: FIFOStreamFormat) -> String {
        let rate = Double(format.sampleRate)
        var sound = "\(report.speakerSoundFrames) with sound"
        if let first = report.firstSpeakerSoundFrame, let last = report.lastSpeakerSoundFrame { sound += ", frames \(first) to \(last)" }
        return "room ended after \(seconds(report.seconds)) (\(report.end.rawValue)): microphone \(report.microphoneFrames) frames "
            + "(\(report.droppedMicrophoneFrames) dropped); speaker \(report.speakerFrames) frames read (\(sound)), "
            + "\(seconds(Double(report.speakerSilenceFrames) / rate)) of silence filled in; clock \(Console.count(report.latePeriods, "period")) late, "
            + "at most \(String(format: "%.1f", report.maximumLateness * 1000)) ms"
    }

    /// "1.250 s".
    static func seconds(_ value: Double) -> String {
        String(format: "%.3f s", value)
    }
}
