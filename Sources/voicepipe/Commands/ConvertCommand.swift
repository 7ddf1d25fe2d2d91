import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// `voicepipe convert`: audio files to the capture format, 16 kHz mono Int16.
struct ConvertCommand: Command {
    static let name = "convert"
    static let abstract = "Convert audio files to the capture format (16 kHz mono Int16)."
    struct Options: CommandOptions {
        var capture = CaptureArguments()
        var raw: RawPCMFormat?
        var batch = BatchOptions()
        var summary = SummaryOptions()

        static var bindings: [OptionBinding<Self>] {
            CaptureArguments.bindings.within(\.capture) + [InputFile.rawOption(\.raw)] + BatchOptions.bindings.within(\.batch)
                + [SummaryOptions.quietFlag.within(\.summary), SummaryOptions.jsonFlag.within(\.summary)]
        }
    }

    static var help: String {
        HelpText.make(
            usage: """
            voicepipe convert <input> <output> [options]
                   voicepipe convert <input>... --out-dir <dir> [--jobs <n>] [options]
            """,
            abstract: abstract,
            discussion: """
            Reads any file libsndfile opens (WAV, AIFF, FLAC, Ogg, MP3, ...; '-' is standard input),
            downmixes, resamples and rounds to 16 kHz mono Int16, and writes the container the output's
            extension names (\(AudioContainer.extensions); '-' writes WAV to standard output). One summary
            line per file: frames in and out, durations, the peak level and how many frames were digital
            silence (exact zeros, as from a dead microphone). With --out-dir, every input becomes a .wav
            of the same name in that directory, several at once; a bad file never stops the others.
            """,
            examples: [
                "voicepipe convert call.flac call-16k.wav",
                "voicepipe convert recordings/*.wav --out-dir converted --jobs 4",
                "sox in.mp3 -t wav - | voicepipe convert - - | aplay",
            ],
            bindings: Options.bindings)
    }

    let inputs: [String]
    /// One output per input.
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
            inputs = try Positionals.atLeastOne(positionals, named: "input", command: Self.name)
            outputs = try BatchCapture.outputs(for: inputs, in: directory, extension: "wav", command: Self.name).map { .audioFile(path: $0, container: .wav) }
            jobs = options.batch.width
        } else {
            let paths = try Positionals.exactly(positionals, named: ["input", "output"], command: Self.name)
            inputs = [paths[0]]
            outputs = [.audioFile(path: paths[1], container: try OutputFile.container(for: paths[1], command: Self.name))]
            jobs = nil
        }
        for (input, output) in zip(inputs, outputs) where InputFile.sameFile(input, output.path) {
            throw .usage("the output '\(output.path)' is the input file; choose another output path", command: Self.name)
        }
    }

    func run() throws(CommandFailure) -> ExitCode {
        let captures = zip(inputs, outputs).map { FileCapture(input: $0, raw: raw, capture: capture, destination: $1) }
        guard let jobs else {
            let outcome = try captures[0].run(doing: "converting", done: "converted", showProgress: !summary.quiet)
            report(captures[0], outcome)
            return .success
        }
        let (status, failed) = BatchCapture(jobs: captures, width: jobs).run(doing: "converting", done: "converted") { job, result in
            switch result {
            case .success(let outcome): report(job, outcome)
            case .failure(let failure):
                Console.error("voicepipe \(Self.name): \(failure.message)")
                if summary.json && !summary.quiet { print(JSONWriter.string(.object(BatchCapture.failureJSON(job, failure)))) }
            }
        }
        if !summary.quiet && !summary.json { print("converted \(Console.count(inputs.count - failed, "file")) of \(inputs.count)" + (failed > 0 ? "; \(failed) failed" : "")) }
        return status
    }

    /// The summary of one file: text to stdout (stderr when stdout carries the audio), or JSON.
    private func report(_ job: FileCapture, _ outcome: FileCapture.Outcome) {
        if let warning = outcome.warning { Console.warning(Self.name, warning) }
        let stats = outcome.statistics, rate = outcome.inputRate, target = AudioFormat.captureTarget.sampleRate
        let text = "\(job.input) -> \(job.destination.path): \(outcome.framesRead) frames at \(rate) (\(InputFile.seconds(outcome.framesRead, rate: rate))) -> \(stats.samples) frames at \(target) (\(InputFile.seconds(stats.samples, rate: target))); \(stats.summary)"
        let toStandardOutput = job.destination.path == "-"
        summary.emit(text, json: Self.json(job, outcome, unit: "frames"), textToStandardError: toStandardOutput, standardOutputCarriesData: toStandardOutput)
    }

    /// One file's summary as JSON; `unit` names the pieces of output ("frames", or "chunks" for encode).
    static func json(_ job: FileCapture, _ outcome: FileCapture.Outcome, unit: String) -> JSONObject {
        let stats = outcome.statistics
        let capitalized = unit.prefix(1).uppercased() + unit.dropFirst()
        return [
            "input": .string(job.input), "output": .string(job.destination.path),
            "inputFrames": .integer(outcome.framesRead), "inputRate": .number(outcome.inputRate.hertz),
            "outputFrames": .integer(stats.samples), "outputRate": .number(AudioFormat.captureTarget.sampleRate.hertz),
            "seconds": .seconds(stats.samples, rate: AudioFormat.captureTarget.sampleRate),
            "peakDBFS": .decibels(stats.frames == 0 ? nil : stats.maxDBFS),
            "quietestNonSilentDBFS": .decibels(stats.minNonSilentDBFS),
            unit: .integer(stats.frames), "silent\(capitalized)": .integer(stats.silentFrames),
            "truncated": .bool(outcome.warning != nil), "exitStatus": .integer(0),
        ]
    }
}
