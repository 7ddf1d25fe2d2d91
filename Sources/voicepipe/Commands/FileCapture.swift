import Foundation
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// One input file through the capture converter into a capture file: the run `convert` and
/// `encode` share, for one file or for each file of a batch.
struct FileCapture: Sendable {
    let input: String
    let raw: RawPCMFormat?
    let capture: CaptureArguments
    let destination: CaptureFileWriter.Destination

    /// What a finished run read and wrote.
    struct Outcome: Sendable {
        let framesRead: Int
        let inputRate: SampleRate
        let statistics: CaptureStatistics
        /// The truncation warning, if the file ended before its header said.
        let warning: String?
    }

    /// Converts the whole file.
    /// - Parameters:
    ///   - doing: what is being done ("converting"), for the progress line and errors.
    ///   - done: what warnings and errors say was done ("converted").
    ///   - showProgress: whether to draw a progress line (on a terminal).
    func run(doing: String, done: String, showProgress: Bool) throws(CommandFailure) -> Outcome {
        let reader = try InputFile.open(input, raw: raw)
        let rate = reader.format.sampleRate
        let converter = try capture.converter(for: reader.format, source: InputFile.name(input))
        let writer: CaptureFileWriter
        do { writer = try CaptureFileWriter(destination) } catch { throw CommandFailure.streaming(error, while: "creating \(destination.name)") }
        let progress = showProgress ? ProgressLine(label: doing, total: reader.info.frameCount.map { Double($0) / rate.hertz }, unit: "s") : nil
        defer { progress?.finish() }
        let ending: FileReadEnding
        do {
            ending = try converter.convert(reader, progress: { progress?.update(Double($0) / rate.hertz) }, writer.write)
            try writer.finish()
        } catch {
            try? writer.finish()
            let failure = CommandFailure.streaming(error, while: "\(doing) \(InputFile.name(input))")
            // Standard output gets the file only at its end, so only a real file keeps what came before.
            guard destination.path != "-" else { throw failure }
            throw CommandFailure("\(failure.message); the \(writer.statistics.samples) frames \(done) before it are in \(destination.name)", exitCode: failure.exitCode)
        }
        return Outcome(framesRead: reader.framesRead, inputRate: rate, statistics: writer.statistics,
                       warning: InputFile.truncationWarning(ending, path: input, done: done))
    }
}

/// `--out-dir` and `--jobs`, declared once for the commands that convert many files at once.
struct BatchOptions: Sendable {
    static var outDirOption: OptionBinding<Self> {
        .option("out-dir", "dir", \.directory, .text, help: "Convert every input into this directory (it must exist), one output per input named after it.")
    }
    static var jobsOption: OptionBinding<Self> {
        .option("jobs", "n", \.jobs, .integer(in: 1...256), help: "Files converted at once with --out-dir (default: one per CPU core).")
            .requiring(outDirOption, "works with '\(outDirOption.flag)' (many inputs at once)")
    }
    static var bindings: [OptionBinding<Self>] { [outDirOption, jobsOption] }

    /// The directory every input is converted into; nil for one input and one output.
    var directory: String?
    /// Files at once; nil for one per core.
    var jobs: Int?

    /// Files converted at once in a batch: `--jobs`, else one per core.
    var width: Int { jobs ?? ProcessInfo.processInfo.activeProcessorCount }
}

/// Many files through ``FileCapture`` in parallel (`--out-dir`, `--jobs`): one result line per
/// file as each finishes, a total at the end, and the worst exit status; a bad file never stops
/// the others.
struct BatchCapture {
    let jobs: [FileCapture]
    let width: Int

    /// One file's failure as a JSON summary line, for `--json` batches.
    static func failureJSON(_ job: FileCapture, _ failure: CommandFailure) -> JSONObject {
        ["input": .string(job.input), "output": .string(job.destination.path), "exitStatus": .integer(Int(failure.exitCode.rawValue)), "error": .string(failure.message)]
    }

    /// The output path for `input` in `directory`, with `extension`. Refuses, before any work, a
    /// directory that is not there, standard input among the inputs, and two inputs that would
    /// write the same output.
    static func outputs(for inputs: [String], in directory: String, extension: String, command: String) throws(CommandFailure) -> [String] {
        try OutputFolder.requireExisting(directory)
        if inputs.contains("-") {
            throw .usage("'-' (standard input) cannot be one of many inputs; convert it on its own", command: command)
        }
        let paths = inputs.map { input -> String in
            let name = URL(fileURLWithPath: input).deletingPathExtension().lastPathComponent
            return URL(fileURLWithPath: directory).appendingPathComponent(name + "." + `extension`).path
        }
        var seen = [String: String]()
        for (input, path) in zip(inputs, paths) {
            if let other = seen.updateValue(input, forKey: path) {
                throw .usage("'\(other)' and '\(input)' would both be written to '\(path)'; convert them in separate runs", command: command)
            }
        }
        return paths
    }

    /// Runs every job; `report` prints one finished file's result (on this thread, one at a time).
    /// - Returns: the worst exit status (0 when every file succeeded) and the count that failed.
    func run(doing: String, done: String, report: (FileCapture, Result<FileCapture.Outcome, CommandFailure>) -> Void) -> (status: ExitCode, failed: Int) {
        let progress = ProgressLine(label: doing, total: Double(jobs.count), unit: "files")
        var finished = 0
        let results = ParallelJobs.run(count: jobs.count, width: width, { [jobs] index in
            Result { () throws(CommandFailure) in try jobs[index].run(doing: doing, done: done, showProgress: false) }
        }, completed: { index, result in
            progress.finish()
            report(jobs[index], result)
            finished += 1
            progress.update(Double(finished))
        })
        progress.finish()
        let failures = results.compactMap { result -> CommandFailure? in
            if case .failure(let failure) = result { return failure }
            return nil
        }
        let worst = failures.map(\.exitCode).max { $0.rawValue < $1.rawValue } ?? .success
        return (worst, failures.count)
    }
}

/// A folder a command writes into, which must already exist (as `convert --out-dir` has always wanted).
enum OutputFolder {
    /// Refuses, before any work, a folder that is not there (exit 73).
    static func requireExisting(_ directory: String) throws(CommandFailure) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandFailure("cannot write into '\(directory)': it is not a directory that exists; create it first", exitCode: .cannotCreate)
        }
    }
}
