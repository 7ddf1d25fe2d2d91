/// One subcommand: parse → validate → run, with its own help.
protocol Command: Sendable {
    /// The command's options as typed fields, each bound once to its flag.
    associatedtype Options: CommandOptions
    /// The word after `voicepipe`.
    static var name: String { get }
    /// One line for the command list.
    static var abstract: String { get }
    /// Full help text.
    static var help: String { get }
    /// Validates the parsed options and the positionals that follow the command name.
    init(options: Options, positionals: [String]) throws(CommandFailure)
    /// Does the work; returns the exit status.
    func run() throws(CommandFailure) -> ExitCode
}

extension Command {
    /// Parses the arguments after the command name and runs the command (or prints its help).
    static func main(_ arguments: [String]) throws(CommandFailure) -> ExitCode {
        let parsed = try ParsedArguments<Options>(arguments, command: name)
        if parsed.wantsHelp {
            print(help)
            return .success
        }
        return try Self(options: parsed.options, positionals: parsed.positionals).run()
    }
}
