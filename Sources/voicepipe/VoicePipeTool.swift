import Foundation
import VoicePipeCore
import VoicePipeIO

/// The `voicepipe` entry point: picks the subcommand, parses, runs, exits with its status.
@main
enum VoicePipeTool {
    /// The subcommands, in the order `--help` lists them.
    static let commands: [any Command.Type] = [SessionCommand.self, ConvertCommand.self, InfoCommand.self, EncodeCommand.self, DecodeCommand.self, DevicesCommand.self, RecordCommand.self, PlayCommand.self, RoomCommand.self, PresignCommand.self, ReportCommand.self]

    static let version = "0.1.0"

    static func main() {
        exit(run(Array(CommandLine.arguments.dropFirst())).rawValue)
    }

    /// Parses the command line, runs the command and returns its exit status.
    static func run(_ arguments: [String]) -> ExitCode {
        guard let first = arguments.first else {
            Console.error(overview)
            return .usage
        }
        switch first {
        case "-h", "--help", "help":
            if first == "help", arguments.count > 1, let command = commands.first(where: { $0.name == arguments[1] }) {
                print(command.help)
            } else {
                print(overview)
            }
            return .success
        case "--version":
            print("voicepipe \(version) (\(LibraryVersions.sndfile); \(LibraryVersions.samplerate); alsa-lib \(LibraryVersions.alsa))")
            print("resampler kernels: \(DSPKernels.best.name)")
            return .success
        default:
            break
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            Console.error("voicepipe: unknown command '\(first)' (see 'voicepipe --help')")
            return .usage
        }
        do {
            return try command.main(Array(arguments.dropFirst()))
        } catch {
            Console.error("voicepipe \(command.name): \(error.message)")
            return error.exitCode
        }
    }

    static var overview: String {
        let width = (commands.map { $0.name.count }.max() ?? 0) + 2
        let list = commands.map { "  " + $0.name + String(repeating: " ", count: width - $0.name.count) + $0.abstract }
        return """
        OVERVIEW: VoicePipe converts audio for speech-to-speech voice clients: any file or device format
        to 16 kHz mono Int16 frames, and the reply audio back to Float32 for players.

        USAGE: voicepipe <command> [options]

        COMMANDS:
        \(list.joined(separator: "\n"))

          See 'voicepipe <command> --help' for a command's options.

        OPTIONS:
          --version   Show the version and the C libraries in use.
          -h, --help  Show help information.
        """
    }
}
