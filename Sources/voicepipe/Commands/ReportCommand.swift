import Foundation
import VoicePipeClient
import VoicePipeCore
import VoicePipeSession

/// `voicepipe report`: corpus reports (from several machines, say) merged into one, every
/// percentile recomputed from the raw per-turn figures.
struct ReportCommand: Command {
    static let name = "report"
    static let abstract = "Merge corpus reports (report.json files) into one, recomputing every figure."

    struct Options: CommandOptions {
        var json = false
        var outputDirectory: String?

        static var bindings: [OptionBinding<Self>] {
            [
                .flag("json", \.json, help: "Print the merged report as one JSON object instead of the page."),
                .option("out-dir", "dir", \.outputDirectory, .text, help: "Also write report.json, report.md and report-latency.svg into this existing folder."),
            ]
        }
    }

    static var help: String {
        HelpText.make(
            usage: "voicepipe report <report.json>... [--json] [--out-dir <dir>]",
            abstract: abstract,
            discussion: """
            Reads the report.json that 'voicepipe session <input>... --out-dir DIR' leaves, one or many (a
            corpus split by file across machines), and prints one report of all their sessions, in the order
            given: sessions ok and failed by reason, turns, the turn-latency distribution (median, p90, p95,
            p99, max) over every answered turn, connect-to-ready times, interruptions, tool calls, reconnections
            and audio. Percentiles are recomputed from each turn's latency, never averaged. The JSON's shape is
            CorpusReport's (version \(CorpusReport.version)), documented in the README.
            """,
            examples: [
                "voicepipe report machine-a/report.json machine-b/report.json",
                "voicepipe report runs/*/report.json --json > all.json",
                "voicepipe report runs/*/report.json --out-dir merged",
            ],
            bindings: Options.bindings)
    }

    let inputs: [String]
    let options: Options

    init(options: Options, positionals: [String]) throws(CommandFailure) {
        inputs = try Positionals.atLeastOne(positionals, named: "report.json", command: Self.name)
        if let directory = options.outputDirectory { try OutputFolder.requireExisting(directory) }
        self.options = options
    }

    func run() throws(CommandFailure) -> ExitCode {
        var reports: [CorpusReport] = []
        for input in inputs {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: input))
            } catch {
                throw CommandFailure("cannot read '\(input)': \((error as NSError).localizedDescription)", exitCode: .noInput)
            }
            do throws(CorpusReportError) {
                let value: JSONValue
                do {
                    value = try JSONParser.parse(String(decoding: data, as: UTF8.self))
                } catch {
                    throw CorpusReportError.notAReport(source: "'\(input)'", reason: "it is not JSON (\(error))")
                }
                reports.append(try CorpusReport(json: value, source: "'\(input)'"))
            } catch {
                throw CommandFailure(error.description, exitCode: .dataError)
            }
        }
        let merged = CorpusReport.merged(reports)
        if let directory = options.outputDirectory {
            try CorpusReportFiles.write(merged, into: directory)
        }
        if options.json {
            print(JSONWriter.string(.object(merged.json)))
        } else {
            print(CorpusReportPage.markdown(merged, latencyImage: nil), terminator: "")
        }
        return .success
    }
}

/// A corpus report's three files in a folder: report.json, report.md and the latency SVG it shows.
enum CorpusReportFiles {
    static let jsonName = "report.json"
    static let pageName = "report.md"
    static let latencyImageName = "report-latency.svg"

    static func write(_ report: CorpusReport, into directory: String) throws(CommandFailure) {
        let folder = URL(fileURLWithPath: directory)
        let svg = CorpusReportPage.latencySVG(report)
        var files = [(jsonName, JSONWriter.string(.object(report.json)) + "\n"),
                     (pageName, CorpusReportPage.markdown(report, latencyImage: svg == nil ? nil : latencyImageName))]
        if let svg { files.append((latencyImageName, svg)) }
        for (name, text) in files {
            let path = folder.appendingPathComponent(name).path
            do {
                try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw CommandFailure("cannot write '\(path)': \((error as NSError).localizedDescription)", exitCode: .cannotCreate)
            }
        }
    }
}
