import VoicePipeClient
import VoicePipeCore
import VoicePipeIO

/// One input file through the capture converter into a capture file, with progress on a
/// terminal: the run `convert` and `encode` share.
struct FileCapture {
    let input: String
    let raw: RawPCMFormat?
    let capture: CaptureArguments
    let destination: CaptureFileWriter.Destination

    /// What a finished run read and wrote.
    struct Outcome {
        let reader: AudioFileReader
        let statistics: CaptureStatistics
    }

    /// Converts the whole file, warns about a truncated one, and returns the counts.
    /// - Parameters:
    ///   - doing: the progress line's label ("converting").
    ///   - done: what warnings and errors say was done ("converted").
    func run(doing: String, done: String) throws(CommandFailure) -> Outcome {
        let reader = try InputFile.open(input, raw: raw)
        let rate = reader.format.sampleRate
        let converter = try capture.converter(for: reader.format, source: "'\(input)'")
        let writer: CaptureFileWriter
        do { writer = try CaptureFileWriter(destination) } catch { throw CommandFailure.streaming(error, while: "creating \(destination.name)") }
        let progress = ProgressLine(label: doing, total: reader.info.frameCount.map { Double($0) / rate }, unit: "s")
        defer { progress.finish() }
        let ending: FileReadEnding
        do {
            ending = try converter.convert(reader, progress: { progress.update(Double($0) / rate) }, writer.write)
            try writer.finish()
        } catch {
            try? writer.finish()
            let failure = CommandFailure.streaming(error, while: "\(doing) '\(input)'")
            throw CommandFailure("\(failure.message); the \(writer.statistics.samples) frames \(done) before it are in \(destination.name)", exitCode: failure.exitCode)
        }
        progress.finish()
        if let warning = InputFile.truncationWarning(ending, path: input, done: done) { Console.error(warning) }
        return Outcome(reader: reader, statistics: writer.statistics)
    }
}
