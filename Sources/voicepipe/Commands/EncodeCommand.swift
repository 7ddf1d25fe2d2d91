import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// `voicepipe encode`: audio files to the `audio.chunk` messages a voice session sends.
struct EncodeCommand: Command {
    static let name = "encode"
    static let abstract = "Turn audio files into audio.chunk messages (JSON Lines) as a session sends them."
    struct Options: CommandOptions {
        var output: String?
        var capture = CaptureArguments()
        var raw: RawPCMFormat?
        var batch = BatchOptions()
        var summary = SummaryOptions()

        static var outOption: OptionBinding<Self> {
            .option("out", "file", \.output, .text, help: "Where to write the JSON Lines; '-' for standard output (default).")
        }
        static var bindings: [OptionBinding<Self>] {
            [outOption] + CaptureArguments.bindings.within(\.capture) + [InputFile.rawOption(\.raw)] + BatchOptions.bindings.within(\.batch)
                + [SummaryOptions.quietFlag.within(\.summary), SummaryOptions.jsonFlag.within(\.summary)]
        }
    }

    static var help: String {
        HelpText.make(
            usage: """
            voicepipe encode <input> [--out <file>|-] [options]
                   voicepipe encode <input>... --out-dir <dir> [--jobs <n>] [options]
            """,
            abstract: abstract,
            discussion: """
            Converts the input ('-' is standard input) to 16 kHz mono Int16 exactly as 'voicepipe convert'
            does and writes one {"type":"audio.chunk","data":"<base64>","sampleRate":16000} message per line.
            A summary goes to stderr: chunks, duration, the loudest chunk's peak, the quietest non-silent
            chunk's peak, and how many chunks were digital silence. With --out-dir, every input becomes a
            .jsonl of the same name in that directory, several at once.
            """,
            examples: [
                "voicepipe encode question.wav > question.jsonl",
                "voicepipe encode calls/*.flac --out-dir messages",
            ],
            bindings: Options.bindings)
    }

    let inputs: [String]
    let outputs: [CaptureFileWriter.Destination]
    let capture: CaptureArguments
    let raw: RawPCMFormat?
    let summary: SummaryOptions
    let jobs: Int?

    init(options: Options, positionals: [String]) throws(CommandFailure) {
        capture = options.capture
        raw = options.raw
        summary = options.summary
        if let directory = options.batch.directory {
            guard options.output == nil else {
                throw .usage("'\(Options.outOption.flag)' and '\(BatchOptions.outDirOption.flag)' cannot be combined; choose one", command: Self.name)
            }
            inputs = try Positionals.atLeastOne(positionals, named: "input", command: Self.name)
            outputs = try BatchCapture.outputs(for: inputs, in: directory, extension: "jsonl", command: Self.name).map { .jsonLines(path: $0) }
            jobs = options.batch.width
        } else {
            inputs = [try Positionals.exactly(positionals, named: ["input"], command: Self.name)[0]]
            outputs = [.jsonLines(path: options.output ?? "-")]
            jobs = nil
        }
        for (input, output) in zip(inputs, outputs) where InputFile.sameFile(input, output.path) {
            throw .usage("the output '\(output.path)' is the input file; choose another output path", command: Self.name)
        }
    }

    func run() throws(CommandFailure) -> ExitCode {
        let captures = zip(inputs, outputs).map { FileCapture(input: $0, raw: raw, capture: capture, destination: $1) }
        guard let jobs else {
            report(captures[0], try captures[0].run(doing: "encoding", done: "encoded", showProgress: !summary.quiet))
            return .success
        }
        let (status, failed) = BatchCapture(jobs: captures, width: jobs).run(doing: "encoding", done: "encoded") { job, result in
            switch result {
            case .success(let outcome): report(job, outcome)
            case .failure(let failure):
                Console.error("voicepipe \(Self.name): \(failure.message)")
                if summary.json && !summary.quiet { print(JSONWriter.string(.object(BatchCapture.failureJSON(job, failure)))) }
            }
        }
        summary.note("encoded \(Console.count(inputs.count - failed, "file")) of \(inputs.count)" + (failed > 0 ? "; \(failed) failed" : ""))
        return status
    }

    /// The summary of one file, on stderr (stdout may carry the messages).
    private func report(_ job: FileCapture, _ outcome: FileCapture.Outcome) {
        if let warning = outcome.warning { Console.warning(Self.name, warning) }
        let stats = outcome.statistics, target = AudioFormat.captureTarget.sampleRate
        let quietest = stats.minNonSilentDBFS.map { "\(PeakLevel.format($0)) dBFS" } ?? "none"
        let text = "encoded \(Console.count(stats.frames, "chunk")) (\(InputFile.seconds(stats.samples, rate: target)) at \(target)) to \(job.destination.name); peak \(PeakLevel.format(stats.maxDBFS)) dBFS loudest, \(quietest) quietest non-silent; \(Console.count(stats.silentFrames, "chunk")) digital silence"
        summary.emit(text, json: ConvertCommand.json(job, outcome, unit: "chunks"), textToStandardError: true, standardOutputCarriesData: job.destination.path == "-")
    }
}
