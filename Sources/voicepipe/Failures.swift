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
            self.init(error.description, exitCode: .noInput)
        case .invalidRawFormat:
            self.init(error.description, exitCode: .usage)
        case .unrecognizedFormat, .unusableFormat, .corrupt, .truncated:
            self.init(error.description, exitCode: .dataError)
        case .cannotCreate:
            self.init(error.description, exitCode: .cannotCreate)
        case .writeFailed:
            self.init(error.description, exitCode: .ioError)
        case .incompatibleBuffer:
            self.init(error.description, exitCode: .software)
        }
    }

    /// A JSON Lines error: 66 for input, 73/74 for output.
    init(_ error: JSONLinesError) {
        switch error {
        case .noSuchFile, .cannotOpen: self.init(error.description, exitCode: .noInput)
        case .readFailed, .writeFailed: self.init(error.description, exitCode: .ioError)
        case .cannotCreate: self.init(error.description, exitCode: .cannotCreate)
        }
    }

    /// A device that cannot be used: 69 (EX_UNAVAILABLE) with the reason.
    init(_ error: AudioUnavailable) {
        self.init(error.description, exitCode: .unavailable)
    }

    /// Any error met while streaming: the typed ones mapped above, else an internal error naming `what`.
    static func streaming(_ error: any Error, while what: String) -> CommandFailure {
        switch error {
        case let failure as CommandFailure: failure
        case let error as AudioFileError: CommandFailure(error)
        case let error as JSONLinesError: CommandFailure(error)
        default: CommandFailure("\(what) failed: \(error)", exitCode: .software)
        }
    }
}
