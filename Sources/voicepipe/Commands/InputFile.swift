import Foundation
import VoicePipeCore
import VoicePipeIO

/// Opening input files the same way in every command, with errors mapped to exit statuses.
enum InputFile {
    /// The `--raw` option shared by commands that read audio files.
    static let rawOption = Arguments.Option(
        name: "raw", valueName: "rate:channels:type",
        help: "Read a headerless little-endian PCM file, e.g. 48000:2:int16 (types: int16, int32, float32, float64).")

    /// Parses a `--raw` value.
    static func rawFormat(_ text: String?, command: String) throws(CommandFailure) -> AudioFormat? {
        guard let text else { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let rate = Double(parts[0]), let channels = Int(parts[1]), let type = SampleType(rawValue: parts[2].lowercased()) else {
            throw .usage("'--raw' must look like 48000:2:int16 (rate:channels:type), not '\(text)'", command: command)
        }
        return AudioFormat(sampleRate: rate, channelCount: channels, sampleType: type)
    }

    /// Opens a reader.
    static func open(_ path: String, raw: AudioFormat?) throws(CommandFailure) -> AudioFileReader {
        do {
            if let raw {
                return try AudioFileReader(path: path, rawFormat: raw)
            }
            return try AudioFileReader(path: path)
        } catch {
            throw failure(error)
        }
    }

    /// A capture converter for the reader's format with the chosen resampler.
    static func captureConverter(for reader: AudioFileReader, resampler choice: ResamplerChoice, options: CaptureOptions) throws(CommandFailure) -> CaptureConverter {
        let format = reader.format
        do {
            let resampler = try choice.make(from: format.sampleRate, to: AudioFormat.captureTarget.sampleRate)
            return try CaptureConverter(input: format, options: options, resampler: resampler)
        } catch let error as CaptureConverterError {
            throw CommandFailure("cannot convert '\(reader.info.path)': \(error)", exitCode: error.isUsageProblem ? .usage : .dataError)
        } catch {
            throw CommandFailure("cannot convert '\(reader.info.path)' (\(format)): \(error)", exitCode: .dataError)
        }
    }

    /// Reads the whole file through the converter, handing every frame to `emit`, and flushes.
    /// A truncated file is converted as far as it goes and reported through `truncated`.
    static func stream(_ reader: AudioFileReader, through converter: CaptureConverter, progress: ProgressLine, truncated: (_ read: Int, _ declared: Int) -> Void, _ emit: (CaptureFrame) throws -> Void) throws {
        let format = reader.format
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4_096 * format.bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let frames = try readAllowingTruncation(reader, into: buffer, truncated: truncated)
            if frames == 0 { break }
            try converter.process(UnsafeRawBufferPointer(rebasing: buffer[0..<(frames * format.bytesPerFrame)]), emit)
            progress.update(Double(reader.framesRead) / format.sampleRate)
        }
        try converter.flush(emit)
    }

    /// The failure for an error thrown while streaming a file.
    static func streamFailure(_ error: any Error, input: String) -> CommandFailure {
        if let fileError = error as? AudioFileError { return failure(fileError) }
        if let failure = error as? CommandFailure { return failure }
        return CommandFailure("converting '\(input)' failed: \(error)", exitCode: .software)
    }

    /// Reads the next buffer; at a truncated end, reports the counts and returns 0 (the frames
    /// present were all delivered before).
    static func readAllowingTruncation(_ reader: AudioFileReader, into buffer: UnsafeMutableRawBufferPointer, truncated: (_ read: Int, _ declared: Int) -> Void) throws(AudioFileError) -> Int {
        do {
            return try reader.read(into: buffer)
        } catch {
            guard case .truncated(_, let read, let declared) = error else { throw error }
            truncated(read, declared)
            return 0
        }
    }

    /// The exit status and message for a file error.
    static func failure(_ error: AudioFileError) -> CommandFailure {
        switch error {
        case .fileNotFound, .cannotOpen:
            CommandFailure(error.description, exitCode: .noInput)
        case .invalidRawFormat:
            CommandFailure(error.description, exitCode: .usage)
        case .unrecognizedFormat, .unusableFormat, .corrupt, .truncated:
            CommandFailure(error.description, exitCode: .dataError)
        case .cannotCreate:
            CommandFailure(error.description, exitCode: .cannotCreate)
        case .writeFailed:
            CommandFailure(error.description, exitCode: .ioError)
        case .incompatibleBuffer:
            CommandFailure(error.description, exitCode: .software)
        }
    }

    /// Whether two paths name the same file (so an output would overwrite its input).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        let left = URL(fileURLWithPath: a).standardizedFileURL.resolvingSymlinksInPath().path
        let right = URL(fileURLWithPath: b).standardizedFileURL.resolvingSymlinksInPath().path
        return left == right
    }

    /// Seconds with three decimals, for summaries.
    static func seconds(_ frames: Int, rate: Double) -> String {
        String(format: "%.3f s", Double(frames) / rate)
    }
}

/// The resamplers a command can choose with `--resampler`.
enum ResamplerChoice: String, CaseIterable {
    case builtin
    case srcBest = "src-best"
    case srcMedium = "src-medium"
    case srcFastest = "src-fastest"
    case srcLinear = "src-linear"

    static let option = Arguments.Option(
        name: "resampler", valueName: "name",
        help: "builtin (default), or libsamplerate's src-best, src-medium, src-fastest, src-linear.")

    /// Builds the chosen resampler.
    func make(from inputRate: Double, to outputRate: Double) throws(ResamplerError) -> any Resampler {
        switch self {
        case .builtin: try BuiltInResampler(inputRate: inputRate, outputRate: outputRate)
        case .srcBest: try LibsamplerateResampler(inputRate: inputRate, outputRate: outputRate, quality: .sincBest)
        case .srcMedium: try LibsamplerateResampler(inputRate: inputRate, outputRate: outputRate, quality: .sincMedium)
        case .srcFastest: try LibsamplerateResampler(inputRate: inputRate, outputRate: outputRate, quality: .sincFastest)
        case .srcLinear: try LibsamplerateResampler(inputRate: inputRate, outputRate: outputRate, quality: .linear)
        }
    }
}
