import VoicePipeCore
import VoicePipeIO

/// A room written as text, as `--room` takes it: a preset, options, or a preset with options that
/// change it, separated by commas.
///
/// ```
/// office
/// kitchen,drift=100
/// rt60=0.3,distance=1,latency=0.06,echo=-10,noise=pink:-55
/// ir=measured.wav,latency=0.12,clip=3,noise=file:cafe.wav:-40
/// ```
///
/// | option      | meaning                                                    | range            |
/// |-------------|------------------------------------------------------------|------------------|
/// | `rt60`      | reverberation time of a generated response (s)             | 0.05 … 2         |
/// | `distance`  | loudspeaker to microphone (m), for a generated response    | 0.05 … 20        |
/// | `ir`        | a measured impulse response, an audio file (any rate)      | up to 4 s        |
/// | `latency`   | device latency (s)                                         | 0.01 … 0.2       |
/// | `echo`      | gain on the echo at the microphone (dB)                    | −80 … 20         |
/// | `clip`      | loudspeaker soft-clipping drive (`off` for linear)         | 0.1 … 20         |
/// | `noise`     | `white`, `pink`, `brown`, `babble` or `file:PATH`, then `:LEVEL` dBFS, or `off` | −100 … 0 |
/// | `drift`     | microphone clock against the loudspeaker's (ppm)           | −1000 … 1000     |
/// | `unreported`| latency the loudspeaker leaves out of its delay report (s) | −0.1 … 0.4       |
/// | `seed`      | chooses the generated response and the noise               | a whole number   |
public enum RoomDescription {
    /// Why a room description was refused.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// A word that is neither a preset nor `option=value`.
        case unknownWord(String)
        /// An option this parser does not know.
        case unknownOption(String)
        /// A value that is not what its option takes.
        case badValue(option: String, value: String, expected: String)
        /// The room the options make is outside what the simulator models.
        case room(RoomError)
        /// An impulse response or noise file that could not be read as audio.
        case file(option: String, path: String, reason: String)

        public var description: String {
            switch self {
            case .unknownWord(let word):
                "'\(word)' is not a room: give a preset (\(RoomPreset.allCases.map(\.rawValue).joined(separator: ", "))) or option=value (\(RoomDescription.options.joined(separator: ", ")))"
            case .unknownOption(let option):
                "'\(option)' is not a room option; the options are \(RoomDescription.options.joined(separator: ", "))"
            case .badValue(let option, let value, let expected):
                "the room's '\(option)' takes \(expected), not '\(value)'"
            case .room(let error):
                "\(error)"
            case .file(let option, let path, let reason):
                "cannot use '\(path)' as the room's \(option): \(reason)"
            }
        }
    }

    /// The options a description may set.
    public static let options = ["rt60", "distance", "ir", "latency", "echo", "clip", "noise", "drift", "unreported", "seed"]

    /// The room `text` describes, between a loudspeaker at `playbackRate` and a microphone at `captureRate`.
    /// Without a preset, options start from the `office` preset's figures.
    /// - Throws: ``Failure`` naming the word, the option or the file at fault.
    public static func configuration(_ text: String, playbackRate: SampleRate = .reply, captureRate: SampleRate = .capture) throws(Failure) -> RoomConfiguration {
        var words = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmed }
        var preset = RoomPreset.office
        if let first = words.first, let named = RoomPreset(rawValue: first) {
            preset = named
            words.removeFirst()
        }
        var seed: UInt64 = 1
        var pairs: [(String, String)] = []
        for word in words {
            guard let equals = word.firstIndex(of: "=") else {
                throw .unknownWord(word)
            }
            let option = String(word[..<equals]), value = String(word[word.index(after: equals)...])
            guard options.contains(option) else { throw .unknownOption(option) }
            if option == "seed" {
                guard let number = UInt64(value) else { throw .badValue(option: option, value: value, expected: "a whole number") }
                seed = number
            }
            pairs.append((option, value))
        }
        var configuration: RoomConfiguration
        do throws(RoomError) {
            configuration = try preset.configuration(playbackRate: playbackRate, captureRate: captureRate, seed: seed)
        } catch {
            throw .room(error)
        }
        let presetResponse = presetShape(preset)
        var reverberation = presetResponse.reverberationTime, distance = presetResponse.distance
        var generateResponse = false
        for (option, value) in pairs {
            switch option {
            case "rt60":
                reverberation = try number(option, value)
                generateResponse = true
            case "distance":
                distance = try number(option, value)
                generateResponse = true
            case "ir":
                configuration.impulseResponse = try impulseResponse(path: value, captureRate: captureRate)
            case "latency":
                configuration.latency = try number(option, value)
            case "echo":
                configuration.echoGainDB = try number(option, value)
            case "clip":
                configuration.loudspeakerDrive = value == "off" ? nil : try number(option, value)
            case "noise":
                configuration.noise = try noise(value, captureRate: captureRate)
            case "drift":
                configuration.clockDriftPPM = try number(option, value)
            case "unreported":
                configuration.unreportedLatency = try number(option, value)
            default:
                break
            }
        }
        if generateResponse {
            guard !pairs.contains(where: { $0.0 == "ir" }) else {
                throw .badValue(option: "ir", value: pairs.first { $0.0 == "ir" }?.1 ?? "", expected: "either a measured response or rt60 and distance, not both")
            }
            do throws(RoomError) {
                configuration.impulseResponse = try RoomImpulseResponse(reverberationTime: reverberation, distance: distance, sampleRate: captureRate, seed: seed)
            } catch {
                throw .room(error)
            }
        }
        do throws(RoomError) {
            try configuration.validate()
        } catch {
            throw .room(error)
        }
        return configuration
    }

    /// The reverberation time and distance a preset's response is generated from.
    private static func presetShape(_ preset: RoomPreset) -> (reverberationTime: Double, distance: Double) {
        switch preset {
        case .car: (0.08, 0.7)
        case .office: (0.4, 1.0)
        case .kitchen: (0.6, 1.5)
        }
    }

    private static func number(_ option: String, _ value: String) throws(Failure) -> Double {
        guard let number = Double(value), number.isFinite else { throw .badValue(option: option, value: value, expected: "a number") }
        return number
    }

    /// `pink:-55`, `babble:-45`, `file:cafe.wav:-40`, `off`.
    private static func noise(_ value: String, captureRate: SampleRate) throws(Failure) -> RoomNoise? {
        if value == "off" { return nil }
        let expected = "white, pink, brown, babble or file:PATH, then :LEVEL in dBFS (pink:-55), or off"
        guard let colon = value.lastIndex(of: ":") else { throw .badValue(option: "noise", value: value, expected: expected) }
        let kindText = String(value[..<colon]), levelText = String(value[value.index(after: colon)...])
        guard let level = Double(levelText), level.isFinite else { throw .badValue(option: "noise", value: value, expected: expected) }
        let kind: RoomNoise.Kind
        switch kindText {
        case "white": kind = .white
        case "pink": kind = .pink
        case "brown": kind = .brown
        case "babble": kind = .babble(talkers: 6)
        default:
            guard kindText.hasPrefix("file:") else { throw .badValue(option: "noise", value: value, expected: expected) }
            let path = String(kindText.dropFirst("file:".count))
            kind = .samples(try samples(path: path, option: "noise", rate: captureRate))
        }
        guard RoomNoise.levels.contains(level) else {
            throw .room(.outOfRange(option: "noise level (dBFS)", value: level, range: RoomNoise.levels))
        }
        return RoomNoise(kind, levelDBFS: level)
    }

    /// A measured response from an audio file, resampled to the capture rate.
    private static func impulseResponse(path: String, captureRate: SampleRate) throws(Failure) -> RoomImpulseResponse {
        let file = try mono(path: path, option: "impulse response")
        do throws(RoomError) {
            return try RoomImpulseResponse(samples: file.samples, sampleRate: file.sampleRate).resampled(to: captureRate)
        } catch {
            throw .file(option: "impulse response", path: path, reason: "\(error)")
        }
    }

    /// A noise recording at the capture rate, mono.
    private static func samples(path: String, option: String, rate: SampleRate) throws(Failure) -> [Float] {
        let file = try mono(path: path, option: option)
        guard file.sampleRate == rate else {
            throw .file(option: option, path: path, reason: "a noise recording must be at \(rate), not \(file.sampleRate); convert it first (voicepipe convert writes 16 kHz mono)")
        }
        guard !file.samples.isEmpty else { throw .file(option: option, path: path, reason: "it holds no audio") }
        return file.samples
    }

    /// The whole file, its channels averaged; a file that cannot be read is the option's failure.
    private static func mono(path: String, option: String) throws(Failure) -> (samples: [Float], sampleRate: SampleRate) {
        do throws(AudioFileError) {
            return try MonoAudioFile.read(path: path)
        } catch {
            throw .file(option: option, path: path, reason: error.message)
        }
    }
}

private extension String {
    var trimmed: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
