import VoicePipeCore
import VoicePipeIO

/// `voicepipe info`: a file's format and the format guard's verdict.
struct InfoCommand: Command {
    static let name = "info"
    static let abstract = "Show an audio file's format and whether VoicePipe can use it."
    static let options: [Arguments.Option] = [InputFile.rawOption]
    static let flags: [Arguments.Flag] = []
    static var help: String {
        Arguments.help(
            usage: "voicepipe info <file> [--raw <rate:channels:type>]",
            abstract: abstract,
            discussion: """
            Prints the container, encoding, format, length and the format guard's verdict. A file whose
            header reports a zero sample rate or no channels is shown with the reason it is refused, and
            the exit status is then 65.
            """,
            options: options, flags: flags)
    }

    let path: String
    let raw: RawPCMFormat?

    init(arguments: Arguments) throws(CommandFailure) {
        path = try arguments.positionals(exactly: ["file"], command: Self.name)[0]
        raw = try InputFile.rawFormat(arguments.value("raw"), command: Self.name)
    }

    func run() throws(CommandFailure) -> ExitCode {
        let info: AudioFileInfo
        if let raw {
            info = try InputFile.open(path, raw: raw).info
        } else {
            do {
                info = try AudioFileReader.inspect(path: path)
            } catch {
                throw CommandFailure(error)
            }
        }
        print("file:       \(info.path)")
        print("container:  \(info.container)")
        print("encoding:   \(info.encoding)")
        print("format:     \(info.format)")
        if let frames = info.frameCount {
            let duration = info.format.sampleRate > 0 && info.format.sampleRate.isFinite ? " (\(InputFile.seconds(frames, rate: info.format.sampleRate)))" : ""
            print("frames:     \(frames)\(duration)")
        }
        if let declared = info.declaredFrameCount, declared != info.frameCount {
            print("declared:   \(declared) frames in the header (the file is truncated)")
        }
        switch info.verdict {
        case .success(let format):
            let outputFrames = info.frameCount.flatMap { frames in
                (try? RationalRatio(inputRate: format.sampleRate, outputRate: AudioFormat.captureTarget.sampleRate)).map { $0.outputFrames(forInputFrames: frames) }
            }
            print("guard:      usable; converts to \(AudioFormat.describe(rate: AudioFormat.captureTarget.sampleRate)) mono Int16" + (outputFrames.map { " (\($0) frames)" } ?? ""))
            return .success
        case .failure(let rejection):
            print("guard:      refused: \(rejection)")
            throw CommandFailure("'\(path)' is not usable audio: \(rejection)", exitCode: .dataError)
        }
    }
}
