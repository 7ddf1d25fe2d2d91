import Foundation
import VoicePipeCore
import VoicePipeIO

/// Opening input files the same way in every command, with errors mapped to exit statuses.
enum InputFile {
    /// The `--raw` option shared by commands that read audio files, bound to `field`.
    static func rawOption<Options>(_ field: WritableKeyPath<Options, RawPCMFormat?>) -> OptionBinding<Options> {
        .option("raw", "rate:channels:type", field, rawFormat,
                help: "Read a headerless file of interleaved samples, e.g. 8000:1:mulaw or 48000:2:int16 (types: \(RawEncoding.allCases.map(\.rawValue).joined(separator: ", ")); little-endian).")
    }

    /// A `--raw` value: rate, channels and sample type.
    static var rawFormat: OptionValue<RawPCMFormat> {
        OptionValue { text, flag, command throws(CommandFailure) in
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, let rate = Double(parts[0]), let channels = Int(parts[1]) else {
                throw .usage("'\(flag)' must look like 48000:2:int16 (rate:channels:type), not '\(text)'", command: command)
            }
            guard rate == rate.rounded(), rate >= 1, rate <= RationalRatio.maximumRate.hertz else {
                throw .usage("'\(flag)' rate must be a whole number of hertz from 1 to \(Int(RationalRatio.maximumRate.hertz)), not '\(parts[0])'", command: command)
            }
            guard (1...1024).contains(channels) else {
                throw .usage("'\(flag)' channels must be 1 to 1024, not '\(parts[1])'", command: command)
            }
            guard let encoding = RawEncoding(rawValue: parts[2].lowercased()) else {
                throw .usage("'\(flag)' type '\(parts[2])' is not one of \(RawEncoding.allCases.map(\.rawValue).joined(separator: ", "))", command: command)
            }
            return RawPCMFormat(sampleRate: SampleRate(hertz: rate), channelCount: channels, encoding: encoding)
        }
    }

    /// Opens a reader.
    static func open(_ path: String, raw: RawPCMFormat?) throws(CommandFailure) -> AudioFileReader {
        do {
            if let raw {
                return try AudioFileReader(path: path, rawFormat: raw)
            }
            return try AudioFileReader(path: path)
        } catch {
            throw CommandFailure(error)
        }
    }

    /// The warning for a file whose data ends early, naming what was done with it.
    static func truncationWarning(_ ending: FileReadEnding, path: String, done: String) -> String? {
        guard case .truncated(let read, let declared) = ending else { return nil }
        if let declared {
            return "\(name(path)) is truncated: its header declares \(declared) frames but the file holds \(read); \(done) the \(read) frames present"
        }
        return "\(name(path)) is truncated: its stream stops before its end; \(done) the \(read) frames present"
    }

    /// Whether two paths name the same file (so an output would overwrite its input); "-" is a
    /// stream, never a file.
    static func sameFile(_ a: String, _ b: String) -> Bool {
        guard a != "-", b != "-" else { return false }
        let left = URL(fileURLWithPath: a).standardizedFileURL.resolvingSymlinksInPath().path
        let right = URL(fileURLWithPath: b).standardizedFileURL.resolvingSymlinksInPath().path
        return left == right
    }

    /// How messages name an input: "'take.wav'", or "standard input" for "-".
    static func name(_ path: String) -> String {
        path == "-" ? "standard input" : "'\(path)'"
    }

    /// Seconds with three decimals, for summaries.
    static func seconds(_ frames: Int, rate: SampleRate) -> String {
        String(format: "%.3f s", Double(frames) / rate.hertz)
    }
}

/// Output paths: "-" is standard output, and the extension chooses the container.
enum OutputFile {
    /// The container `path` asks for ("-" is WAV on standard output).
    /// - Throws: a usage error naming the extensions VoicePipe writes.
    static func container(for path: String, command: String) throws(CommandFailure) -> AudioContainer {
        if path == "-" { return .wav }
        guard let container = AudioContainer(forPath: path) else {
            throw .usage("cannot tell the container from '\(path)': give the output one of the extensions \(AudioContainer.extensions), or '-' for WAV on standard output", command: command)
        }
        return container
    }
}
