import VoicePipeCore
import VoicePipeIO

/// `voicepipe devices`: the ALSA PCMs, what each accepts, and the guard's verdict.
struct DevicesCommand: Command {
    static let name = "devices"
    static let abstract = "List the ALSA capture and playback devices, their formats and the guard's verdict."
    /// `devices` takes no options.
    struct Options: CommandOptions {
        static var bindings: [OptionBinding<Self>] { [] }
    }

    static var help: String {
        HelpText.make(
            usage: "voicepipe devices",
            abstract: abstract,
            discussion: """
            Lists every PCM that ALSA's device hints name (the 'aplay -L' set; ALSA_CONFIG_PATH and
            ~/.asoundrc included). Each one is opened without starting a stream and probed for the
            rates, channel counts and sample formats it accepts, and for the format 'record' or 'play'
            would negotiate; the guard's verdict on that format says whether audio can flow. Devices
            that cannot be opened say why; one that does not answer within 2 s (its open blocks, as a
            file PCM reading a FIFO nobody writes does) is listed as not answering and the listing goes
            on. On a machine with no sound card ALSA lists only 'null'.
            Set VOICEPIPE_ALSA_ERRORS=1 to see alsa-lib's own messages as well (when a configuration
            file does not do what it should).
            """,
            examples: [
                "voicepipe devices",
                "VOICEPIPE_ALSA_ERRORS=1 voicepipe devices",
            ],
            bindings: Options.bindings)
    }

    init(options: Options, positionals: [String]) throws(CommandFailure) {
        _ = try Positionals.exactly(positionals, named: [], command: Self.name)
    }

    /// The sample formats VoicePipe reads, shown by name; the rest are counted.
    private static let namedFormats = ["S16_LE", "S32_LE", "FLOAT_LE", "FLOAT64_LE"]

    func run() throws(CommandFailure) -> ExitCode {
        let devices = AudioDevices.list()
        guard !devices.isEmpty else {
            print("ALSA lists no devices on this system (no sound card and no configured PCMs).")
            return .success
        }
        for device in devices {
            let description = device.description.split(separator: "\n").joined(separator: " — ")
            print(description.isEmpty ? device.name : "\(device.name): \(description)")
            if let capture = device.capture { print(Self.lines("capture", capture)) }
            if let playback = device.playback { print(Self.lines("playback", playback)) }
        }
        return .success
    }

    static func lines(_ direction: String, _ probe: Result<DeviceCapabilities, AudioUnavailable>) -> String {
        let label = "  \(direction):".padding(toLength: 12, withPad: " ", startingAt: 0)
        switch probe {
        case .failure(let error):
            return label + "unavailable: " + reason(error)
        case .success(let capabilities):
            let verdict: String
            switch capabilities.verdict {
            case .success: verdict = "guard: usable"
            case .failure(let rejection): verdict = "guard: refused (\(rejection))"
            }
            let rates = capabilities.sampleRates.lowerBound == capabilities.sampleRates.upperBound
                ? "\(capabilities.sampleRates.lowerBound)"
                : "\(capabilities.sampleRates.lowerBound.roundedHertz)–\(capabilities.sampleRates.upperBound)"
            let common = capabilities.commonRates.isEmpty ? "" : " (common: \(capabilities.commonRates.map { String($0.roundedHertz) }.joined(separator: ", ")))"
            let channels = capabilities.channelCounts.lowerBound == capabilities.channelCounts.upperBound
                ? "\(capabilities.channelCounts.lowerBound)" : "\(capabilities.channelCounts.lowerBound)–\(capabilities.channelCounts.upperBound)"
            let named = namedFormats.filter(capabilities.sampleFormats.contains)
            let others = capabilities.sampleFormats.count - named.count
            let formats = (named.isEmpty ? ["none VoicePipe reads"] : named).joined(separator: " ") + (others > 0 ? " (+\(others) more)" : "")
            let indent = String(repeating: " ", count: 12)
            return label + "\(DeviceSupport.describe(capabilities.negotiated)) — \(verdict)\n"
                + indent + "rates \(rates)\(common)\n"
                + indent + "channels \(channels); formats \(formats)"
        }
    }

    /// The reason alone (the device and direction are already on the line).
    private static func reason(_ error: AudioUnavailable) -> String {
        let text = error.description
        guard let colon = text.range(of: "is unavailable: ") else { return text }
        return String(text[colon.upperBound...])
    }
}
