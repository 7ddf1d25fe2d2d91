/// One subcommand: parse → validate → run, with its own help.
protocol Command: Sendable {
    /// The word after `voicepipe`.
    static var name: String { get }
    /// One line for the command list.
    static var abstract: String { get }
    /// Full help text.
    static var help: String { get }
    /// Parses and validates the arguments that follow the command name.
    init(arguments: Arguments) throws(CommandFailure)
    /// Declared options and flags, for the parser.
    static var options: [Arguments.Option] { get }
    static var flags: [Arguments.Flag] { get }
    /// Does the work; returns the exit status.
    func run() throws(CommandFailure) -> ExitCode
}
