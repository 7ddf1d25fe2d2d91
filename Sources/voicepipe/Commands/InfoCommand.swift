import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// `voicepipe info`: each file's format, its length, and what `convert` will make of it.
struct InfoCommand: Command {
    static let name = "info"
    static let abstract = "Show audio files' formats and what 'convert' will make of them."
    struct Options: CommandOptions {
        var raw: RawPCMFormat?
        var capture = CaptureArguments()
        var json = false
        var quiet = false

        static var jsonFlag: OptionBinding<Self> { .flag("json", \.json, help: "Print one JSON object per file, one per line, instead of the text.") }
        static var quietFlag: OptionBinding<Self> { .flag("quiet", \.quiet, help: "Print nothing but errors; the exit status tells.") }
        static var bindings: [OptionBinding<Self>] {
            [InputFile.rawOption(\.raw)] + CaptureArguments.bindings.within(\.capture) + [jsonFlag, quietFlag]
        }
    }

    static var help: String {
        HelpText.make(
            usage: "voicepipe info <file>... [--json | --quiet] [--raw <rate:channels:type>] [options]",
            abstract: abstract,
            discussion: """
            Prints, for each file, the container, encoding, rate and channels, the sample type the file
            decodes to, the frames 'convert' will read, and whether 'convert' can use the file (with the
            same options) and how many 16 kHz frames it will write. Where the header's count is not exact
            (FLAC, Ogg, MP3) the file is decoded to count its frames. A file whose data ends early is
            shown as truncated and still converts; a file that is damaged, refused by the format guard
            (0 Hz, no channels) or that the converter cannot take is reported with convert's reason.
            A bad file does not stop the others; the exit status is the worst of them (0, or 64 to 74
            as 'convert' would exit).

            --json keys, in this order: path, container, encoding, sampleType (decoded), sampleRate,
            channels, frames (what convert reads), framesCounted (decoded to count them), headerFrames
            (libsndfile's count, an estimate for MP3), declaredFrames, truncated, damaged, convertible,
            reason, outputFrames (at 16 kHz), exitStatus; unknown values are null.
            """,
            examples: ["voicepipe info call.wav", "voicepipe info --raw 8000:1:int16 call.raw"],
            bindings: Options.bindings)
    }

    let paths: [String]
    let raw: RawPCMFormat?
    let capture: CaptureArguments
    let json: Bool
    let quiet: Bool

    init(options: Options, positionals: [String]) throws(CommandFailure) {
        paths = try Positionals.atLeastOne(positionals, named: "file", command: Self.name)
        raw = options.raw
        capture = options.capture
        json = options.json
        quiet = options.quiet
        if json && quiet {
            throw .usage("'\(Options.jsonFlag.flag)' and '\(Options.quietFlag.flag)' cannot be used together", command: Self.name)
        }
    }

    func run() throws(CommandFailure) -> ExitCode {
        var worst = ExitCode.success
        for (index, path) in paths.enumerated() {
            let report = FileReport(path: path, raw: raw, capture: capture)
            if json {
                print(JSONWriter.string(.object(report.jsonObject)))
            } else if !quiet {
                print((index == 0 ? "" : "\n") + report.text)
            }
            if let failure = report.failure {
                // The same line VoicePipeTool prints for a failure that ends a command.
                Console.error("voicepipe \(Self.name): \(failure.message)")
                if failure.exitCode.rawValue > worst.rawValue { worst = failure.exitCode }
            }
        }
        return worst
    }
}

/// What `info` found about one file: the header's facts, the frames `convert` reads, and the first
/// failure `convert` would stop with, found by the same library calls `convert` makes.
struct FileReport {
    let path: String
    /// The header's facts; nil when the file cannot be opened at all.
    private(set) var info: AudioFileInfo?
    /// The frames a reader delivers and how reading ends; nil when the file could not be read.
    private(set) var length: AudioFileLength?
    /// The frames delivered before a damaged stream stopped, with the error.
    private(set) var damage: (framesBefore: Int, error: AudioFileError)?
    /// The 16 kHz frames `convert` writes; nil when it cannot convert the file.
    private(set) var outputFrames: Int?
    /// The failure `convert` would end with (open, guard, converter, damaged data, in that order).
    private(set) var failure: CommandFailure?

    init(path: String, raw: RawPCMFormat?, capture: CaptureArguments) {
        self.path = path
        // The header as reported, even when the guard refuses it.
        if raw == nil {
            do { info = try AudioFileReader.inspect(path: path) } catch { failure = CommandFailure(error) }
        }
        guard failure == nil else { return }
        // Then exactly what convert does: open (the guard), build the converter, read to the end.
        let reader: AudioFileReader
        do {
            reader = try InputFile.open(path, raw: raw)
        } catch {
            failure = error
            return
        }
        info = reader.info
        var converter: CaptureConverter?
        do {
            converter = try capture.converter(for: reader.format, source: InputFile.name(path))
        } catch {
            failure = error
        }
        do {
            length = try reader.measureLength()
        } catch {
            damage = (reader.framesRead, error)
            if failure == nil { failure = CommandFailure(error) }
        }
        if let converter, let length, failure == nil {
            // Every resampler makes a stream exactly the ratio's length; the converter's exists, so
            // the ratio of its rates does.
            outputFrames = (try? RationalRatio(inputRate: converter.resampler.inputRate, outputRate: converter.resampler.outputRate))?
                .outputFrames(forInputFrames: length.frames)
        }
    }

    /// The frames `convert` reads: all of them, or those before the damage.
    var frames: Int? { length?.frames ?? damage?.framesBefore }

    var isTruncated: Bool {
        if case .truncated = length?.ending { return true }
        return false
    }

    private var declaredFrames: Int? {
        if case .truncated(_, let declared) = length?.ending { return declared }
        return info?.declaredFrameCount
    }

    // MARK: Text

    var text: String {
        let shownPath = path == "-" ? "standard input" : path
        guard let info else { return "file:       \(shownPath)\nerror:      \(failure?.message ?? "the file cannot be read")" }
        let format = info.format
        let rate = format.sampleRate.description
        let channels = format.channelCount == 1 ? "mono" : format.channelCount == 2 ? "stereo" : "\(format.channelCount) ch"
        var lines = [
            "file:       \(shownPath)",
            "container:  \(info.container)",
            "encoding:   \(info.encoding)",
            "format:     \(rate), \(channels)",
            "samples:    \(format.sampleType), decoded from \(info.encoding)",
        ]
        let seconds: (Int) -> String = { frames in
            format.sampleRate.hertz > 0 && format.sampleRate.hertz.isFinite ? " (\(InputFile.seconds(frames, rate: format.sampleRate)))" : ""
        }
        if let length {
            var line = "frames:     \(length.frames)\(seconds(length.frames))"
            if length.wasCounted {
                line += ", counted by decoding"
                if let header = info.frameCount, header != length.frames, header != declaredFrames {
                    line += " (the header estimates \(header))"
                }
            }
            lines.append(line)
        } else if let damage {
            lines.append("frames:     \(damage.framesBefore)\(seconds(damage.framesBefore)) before the damage")
        } else if let declared = info.declaredFrameCount {
            lines.append("frames:     \(declared) declared in the header (not read)")
        }
        if case .truncated(let read, let declared) = length?.ending {
            if let declared {
                lines.append("declared:   \(declared) frames in the header (the file is truncated: its data ends after \(read))")
            } else {
                lines.append("declared:   no length in the header (the file is truncated: its stream stops before its end)")
            }
        }
        if let damage {
            lines.append("damaged:    reading stops after \(damage.framesBefore) frames (\(damage.error.code?.messageInSentence ?? "a read error"))")
        }
        if let outputFrames {
            lines.append("guard:      usable; converts to \(AudioFormat.captureTarget.sampleRate) mono Int16 (\(outputFrames) frames)")
        } else if case .failure(let rejection) = info.verdict {
            // The format guard's own words; the error line says what to do about it.
            lines.append("guard:      refused: \(rejection)")
        } else {
            // The format passed the guard, but convert would refuse the file (its rate, an option, damage).
            lines.append("guard:      usable")
            lines.append("convert:    refused: \(failure?.message ?? "the file cannot be converted")")
        }
        return lines.joined(separator: "\n")
    }

    // MARK: JSON

    var jsonObject: JSONObject {
        let format = info?.format
        var object = JSONObject()
        object["path"] = .string(path)
        object["container"] = info.map { .string($0.container) } ?? .null
        object["encoding"] = info.map { .string($0.encoding) } ?? .null
        object["sampleType"] = format.map { .string($0.sampleType.description) } ?? .null
        object["sampleRate"] = format.map { Self.number($0.sampleRate.hertz) } ?? .null
        object["channels"] = format.map { .integer($0.channelCount) } ?? .null
        object["frames"] = frames.map { .integer($0) } ?? .null
        object["framesCounted"] = .bool(length?.wasCounted ?? (damage != nil))
        object["headerFrames"] = info?.frameCount.map { .integer($0) } ?? .null
        object["declaredFrames"] = declaredFrames.map { .integer($0) } ?? .null
        object["truncated"] = .bool(isTruncated)
        object["damaged"] = .bool(damage != nil)
        object["convertible"] = .bool(outputFrames != nil)
        object["reason"] = failure.map { .string($0.message) } ?? .null
        object["outputFrames"] = outputFrames.map { .integer($0) } ?? .null
        object["exitStatus"] = .integer(Int(failure?.exitCode.rawValue ?? 0))
        return object
    }

    /// A rate as a JSON integer when it is whole, else as a number.
    private static func number(_ value: Double) -> JSONValue {
        if value.isFinite, value == value.rounded(), let whole = Int(exactly: value) { return .integer(whole) }
        return value.isFinite ? .number(value) : .null
    }
}
