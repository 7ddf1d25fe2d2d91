import VoicePipeClient
import VoicePipeCore
import VoicePipeIO

/// The exit status and line for each library error a command can meet, in one place.
extension CommandFailure {
    /// A file error: 66 for a missing or unreadable input, 64 for a bad `--raw`, 65 for unusable
    /// audio, 73/74 for output that cannot be created or written.
    init(_ error: AudioFileError) {
        switch error {
        case .fileNotFound, .cannotOpen:
            self.init(error.message, exitCode: .noInput)
        case .invalidRawFormat:
            self.init(error.message, exitCode: .usage)
        case .unrecognizedFormat, .unusableFormat, .corrupt, .truncated:
            self.init(error.message, exitCode: .dataError)
        case .cannotCreate:
            self.init(error.message, exitCode: .cannotCreate)
        case .writeFailed:
            self.init(error.message, exitCode: .ioError)
        case .incompatibleBuffer:
            self.init(error.message, exitCode: .software)
        }
    }

    /// A JSON Lines error: 66 for input, 73/74 for output.
    init(_ error: JSONLinesError) {
        switch error {
        case .noSuchFile, .cannotOpen: self.init(error.message, exitCode: .noInput)
        case .readFailed, .writeFailed: self.init(error.message, exitCode: .ioError)
        case .cannotCreate: self.init(error.message, exitCode: .cannotCreate)
        }
    }

    /// A device that cannot be used: 69 (EX_UNAVAILABLE) with the reason.
    init(_ error: AudioUnavailable) {
        self.init(error.message, exitCode: .unavailable)
    }

    /// Any error met while streaming: the typed ones mapped above, else an internal error naming
    /// `what`. Sentences are shown without the system's code (the library's words are in them).
    static func streaming(_ error: any Error, while what: String) -> CommandFailure {
        switch error {
        case let failure as CommandFailure: failure
        case let error as AudioFileError: CommandFailure(error)
        case let error as JSONLinesError: CommandFailure(error)
        case let error as any SystemCodedError: CommandFailure("\(what) failed: \(error.message)", exitCode: .ioError)
        default: CommandFailure("\(what) failed: \(error)", exitCode: .software)
        }
    }
}
