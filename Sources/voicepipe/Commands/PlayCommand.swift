import Foundation
import Synchronization
import VoicePipeCore
import VoicePipeIO

/// `voicepipe play`: any audio file, as deinterleaved Float32, to an ALSA playback device.
struct PlayCommand: Command {
    static let name = "play"
    static let abstract = "Play an audio file on an ALSA device through the Float32 playback path."
    struct Options: CommandOptions {
        var device = DeviceOptions()
        var raw: RawPCMFormat?
        var summary = SummaryOptions()

        static var bindings: [OptionBinding<Self>] {
            [
                DeviceOptions.deviceOption,
                DeviceOptions.rateOption(help: "Insist on this device rate (default: the file's rate when the device takes it, else the device's native rate)."),
                DeviceOptions.channelsOption(help: "Insist on this many device channels (default: the file's count when the device takes it, else the device's native count)."),
            ].within(\.device) + [InputFile.rawOption(\.raw), SummaryOptions.quietFlag.within(\.summary)]
        }
    }

    static var help: String {
        HelpText.make(
            usage: "voicepipe play <file>|- [--device <name>] [--rate <hz>] [--channels <n>] [options]",
            abstract: abstract,
            discussion: """
            Opens the device with Float32 samples and non-interleaved access (one buffer per channel, the
            only format VoicePipe plays; a device that refuses it is unavailable rather than connected
            with 16 bits). The device is asked for the file's rate and channel count first and otherwise
            opened at its native ones: the file is then resampled with the built-in resampler, and a
            different channel count plays the average of the file's channels on every device channel.
            Ctrl-C stops after what is buffered. A missing, busy or unusable device exits with status 69.
            '-' plays standard input.
            """,
            examples: [
                "voicepipe play reply.wav",
                "voicepipe play speech.flac --device plughw:0",
            ],
            bindings: Options.bindings)
    }

    let input: String
    let device: String
    let preferences: DevicePreferences
    let raw: RawPCMFormat?
    let summary: SummaryOptions

    init(options: Options, positionals: [String]) throws(CommandFailure) {
        input = try Positionals.exactly(positionals, named: ["file"], command: Self.name)[0]
        summary = options.summary
        device = options.device.name
        preferences = options.device.preferences
        raw = options.raw
    }

    func run() throws(CommandFailure) -> ExitCode {
        let reader = try InputFile.open(input, raw: raw)
        let source = reader.format
        let player = try openDevice(for: source)
        do {
            try player.connect()
        } catch {
            throw CommandFailure("'\(device)' refused playback: \(error)", exitCode: .unavailable)
        }
        let converter: PCMPlaybackConverter
        do {
            converter = try PCMPlaybackConverter(source: source, player: player.format)
        } catch {
            throw CommandFailure("cannot play \(InputFile.name(input)) (\(DeviceSupport.describe(source.audioFormat))) on '\(device)' (\(DeviceSupport.describe(player.format.audioFormat))): \(error)", exitCode: .dataError)
        }
        let stop = Atomic<Bool>(false)
        let signals = StopSignals { stop.store(true, ordering: .relaxed) }
        defer { withExtendedLifetime(signals) {} }
        let progress = ProgressLine(label: "playing", total: reader.info.frameCount.map { Double($0) / source.sampleRate.hertz }, unit: "s", enabled: !summary.quiet)
        defer { progress.finish() }
        let ending: FileReadEnding
        do {
            ending = try converter.play(reader, into: player, progress: { progress.update(Double($0) / source.sampleRate.hertz) }, shouldStop: { stop.load(ordering: .relaxed) })
            try player.disconnect()
        } catch let error as AudioFileError {
            throw CommandFailure(error)
        } catch {
            throw CommandFailure("playing on '\(device)' failed: \(error)", exitCode: .ioError)
        }
        progress.finish()
        if let warning = InputFile.truncationWarning(ending, path: input, done: "played") { Console.warning(Self.name, warning) }
        let stopped = ending == .stopped ? " (stopped early)" : ""
        let underruns = player.underruns > 0 ? "; \(Console.count(player.underruns, "underrun")) recovered" : ""
        summary.note("played \(InputFile.seconds(reader.framesRead, rate: source.sampleRate)) of \(InputFile.name(input)) (\(DeviceSupport.describe(source.audioFormat))) on '\(device)' (\(DeviceSupport.describe(player.format.audioFormat)))\(stopped)\(underruns)")
        return .success
    }

    /// The device at the rate and channel count asked for, the file's where nothing was asked, and
    /// else at the device's native ones.
    private func openDevice(for source: ValidatedFormat) throws(CommandFailure) -> PlaybackDevice {
        var asked = preferences
        asked.sampleRate = preferences.sampleRate ?? source.sampleRate
        asked.channelCount = preferences.channelCount ?? source.channelCount
        if asked != preferences, let matching = try? PlaybackDevice.open(name: device, preferences: asked) { return matching }
        do {
            return try PlaybackDevice.open(name: device, preferences: preferences)
        } catch {
            throw CommandFailure(error)
        }
    }
}
