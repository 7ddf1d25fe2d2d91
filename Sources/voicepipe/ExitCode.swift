/// Exit statuses, after BSD sysexits(3), so scripts can tell bad usage from bad data.
enum ExitCode: Int32 {
    case success = 0
    /// Some input was refused but the command finished (e.g. a corrupt line in a batch).
    case failure = 1
    /// EX_USAGE: the command line was wrong.
    case usage = 64
    /// EX_DATAERR: the input is not usable audio (garbage, zero-rate header, corrupt).
    case dataError = 65
    /// EX_NOINPUT: the input file does not exist or cannot be read.
    case noInput = 66
    /// EX_UNAVAILABLE: a service (an audio device) is unavailable.
    case unavailable = 69
    /// EX_SOFTWARE: an internal error.
    case software = 70
    /// EX_CANTCREAT: the output file cannot be created.
    case cannotCreate = 73
    /// EX_IOERR: writing the output failed.
    case ioError = 74
    /// EX_TEMPFAIL: the voice runtime failed or did not answer in time (a session).
    case temporaryFailure = 75
}

extension ExitCode {
    /// The statuses as every command's help lists them.
    static let help = [
        "0   success",
        "64  the command line was wrong (EX_USAGE)",
        "65  the input is not usable: garbage, a zero-rate header, corrupt audio, not messages (EX_DATAERR)",
        "66  an input file does not exist or cannot be read (EX_NOINPUT)",
        "69  the audio device is unavailable (EX_UNAVAILABLE)",
        "73  an output file cannot be created (EX_CANTCREAT)",
        "74  writing failed, or a device failed mid-stream; what came before is kept (EX_IOERR)",
    ]
}

/// A failure that ends a command: the one line to print and the exit status.
struct CommandFailure: Error {
    let message: String
    let exitCode: ExitCode

    init(_ message: String, exitCode: ExitCode) {
        self.message = message
        self.exitCode = exitCode
    }

    /// A usage error: the message plus a pointer to the command's help.
    static func usage(_ message: String, command: String? = nil) -> CommandFailure {
        let help = command.map { "voicepipe \($0) --help" } ?? "voicepipe --help"
        return CommandFailure("\(message) (see '\(help)')", exitCode: .usage)
    }
}
