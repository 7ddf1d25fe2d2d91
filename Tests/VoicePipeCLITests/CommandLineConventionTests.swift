import CSndFile
import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// The conventions sox and ffmpeg users expect: `-` both ways, containers by extension, many
/// files at once, `--quiet` and `--json`, one style of error, help that says how to use it.
struct CommandLineConventionTests {
    static let sample = CommandRunner.sample("speech-22k05-mono-s16.wav")
    /// What `convert` writes for ``sample``: the reference every other route must equal.
    static func reference(in directory: TemporaryDirectory) throws -> [Int16] {
        let path = directory.path("reference.wav")
        #expect(try CommandRunner.run(["convert", sample, path]).status == 0)
        return try AudioFiles.read(path, as: Int16.self).samples
    }

    /// Samples of a WAV held in memory.
    static func samples(ofWAV data: Data, in directory: TemporaryDirectory) throws -> [Int16] {
        let path = try directory.file("stdout-\(UUID().uuidString).wav", Array(data))
        return try AudioFiles.read(path, as: Int16.self).samples
    }

    // MARK: `-` both ways

    @Test func convertReadsStandardInputAndWritesStandardOutputAndNeverAFileNamedDash() throws {
        let directory = try TemporaryDirectory()
        let reference = try Self.reference(in: directory)
        let wav = try Data(contentsOf: URL(fileURLWithPath: Self.sample))

        let bothWays = try CommandRunner.run(["convert", "-", "-"], stdin: wav, in: directory.url)
        #expect(bothWays.status == 0, "\(bothWays.stderr)")
        #expect(try Self.samples(ofWAV: bothWays.output, in: directory) == reference)
        // The summary moves to stderr when stdout carries the audio.
        #expect(bothWays.stderr.hasPrefix("- -> -: 64209 frames at 22050 Hz"), "\(bothWays.stderr)")

        let fromStdin = try CommandRunner.run(["convert", "-", "out.wav"], stdin: wav, in: directory.url)
        #expect(fromStdin.status == 0)
        #expect(try AudioFiles.read(directory.path("out.wav"), as: Int16.self).samples == reference)
        let toStdout = try CommandRunner.run(["convert", Self.sample, "-"], in: directory.url)
        #expect(try Self.samples(ofWAV: toStdout.output, in: directory) == reference)
        #expect(!FileManager.default.fileExists(atPath: directory.path("-")))
    }

    @Test func encodeInfoPlayAndDecodeTakeDashToo() throws {
        let directory = try TemporaryDirectory()
        let wav = try Data(contentsOf: URL(fileURLWithPath: Self.sample))
        let fromFile = try CommandRunner.run(["encode", Self.sample])
        let fromStdin = try CommandRunner.run(["encode", "-"], stdin: wav)
        #expect(fromStdin.status == 0 && fromStdin.stdout == fromFile.stdout)

        let info = try CommandRunner.run(["info", "-"], stdin: wav)
        #expect(info.status == 0 && info.stdout.contains("64209"), "\(info)")

        let play = try CommandRunner.run(["play", "-", "--device", "null"], stdin: wav)
        #expect(play.status == 0 && play.stderr.contains("played 2.912 s of standard input"), "\(play)")

        // decode: messages on stdin, the reply WAV on stdout, transcripts moved to stderr.
        let messages = EncodeDecodeCommandTests.audioChunkLine([Int16](repeating: 8_192, count: 2_400)) + "\n"
            + #"{"type":"transcript","role":"assistant","text":"hello","final":true}"# + "\n"
        let decoded = try CommandRunner.run(["decode", "-", "--out", "-"], stdin: Data(messages.utf8), in: directory.url)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        let path = try directory.file("reply.wav", Array(decoded.output))
        #expect(try AudioFiles.read(path, as: Float.self).samples == [Float](repeating: 0.25, count: 2_400))
        #expect(decoded.stderr.contains("assistant: hello"))
        #expect(!FileManager.default.fileExists(atPath: directory.path("-")))
    }

    @Test func recordWritesToStandardOutput() throws {
        let directory = try TemporaryDirectory()
        let record = try CommandRunner.run(["record", "--device", "null", "--seconds", "0.5", "--out", "-"], in: directory.url)
        #expect(record.status == 0, "\(record.stderr)")
        #expect(try Self.samples(ofWAV: record.output, in: directory) == [Int16](repeating: 0, count: 8_000))
        #expect(!FileManager.default.fileExists(atPath: directory.path("-")))
    }

    // MARK: Containers by extension

    @Test(arguments: [("out.flac", Int32(SF_FORMAT_FLAC)), ("out.aiff", Int32(SF_FORMAT_AIFF)), ("out.aif", Int32(SF_FORMAT_AIFF)), ("out.wav", Int32(SF_FORMAT_WAV))])
    func theOutputsExtensionChoosesItsContainer(name: String, major: Int32) throws {
        let directory = try TemporaryDirectory()
        let reference = try Self.reference(in: directory)
        let result = try CommandRunner.run(["convert", Self.sample, directory.path(name)])
        #expect(result.status == 0, "\(result)")
        // Read back with libsndfile itself: the container it finds, and the samples.
        var info = SF_INFO()
        let handle = try #require(sf_open(directory.path(name), Int32(SFM_READ), &info))
        defer { sf_close(handle) }
        #expect(info.format & Int32(SF_FORMAT_TYPEMASK) == major)
        #expect(info.samplerate == 16_000 && info.channels == 1 && Int(info.frames) == reference.count)
        var samples = [Int16](repeating: 0, count: reference.count)
        #expect(sf_readf_short(handle, &samples, sf_count_t(samples.count)) == sf_count_t(reference.count))
        #expect(samples == reference)
    }

    @Test func rawOutputIsHeaderlessLittleEndianInt16() throws {
        let directory = try TemporaryDirectory()
        let reference = try Self.reference(in: directory)
        for name in ["out.raw", "out.pcm"] {
            #expect(try CommandRunner.run(["convert", Self.sample, directory.path(name)]).status == 0)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.path(name)))
            #expect(bytes.count == 2 * reference.count)
            #expect(stride(from: 0, to: bytes.count, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) } == reference)
        }
    }

    @Test func anExtensionVoicePipeCannotWriteIsAUsageErrorAndNothingIsWritten() throws {
        let directory = try TemporaryDirectory()
        for name in ["out.mp3", "out", "out.ogg"] {
            let result = try CommandRunner.run(["convert", Self.sample, directory.path(name)])
            #expect(result.status == 64, "\(name): \(result)")
            #expect(result.stderr.hasPrefix("voicepipe convert: cannot tell the container from"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.path(name)))
        }
        let floatFLAC = try CommandRunner.run(["decode", "/dev/null", "--out", directory.path("reply.flac")])
        #expect(floatFLAC.status == 64 && floatFLAC.stderr.contains("Float32"), "\(floatFLAC)")
    }

    // MARK: Many files

    @Test func aBatchConvertsEveryGoodFileAndReportsTheBadOneWithTheWorstStatus() throws {
        let directory = try TemporaryDirectory()
        let output = try TemporaryDirectory()
        let broken = try directory.file("broken.wav", Array("RIFF this is not audio".utf8))
        let missing = directory.path("missing.wav")
        let inputs = [CommandRunner.sample("speech-8k-mono-s16.wav"), broken, Self.sample, missing, CommandRunner.sample("speech-48k-stereo-f32.wav")]
        let result = try CommandRunner.run(["convert"] + inputs + ["--out-dir", output.url.path, "--jobs", "2"])
        #expect(result.status == 66, "the worst of 65 (garbage) and 66 (missing): \(result)")
        let lines = result.stdout.split(separator: "\n").filter { $0.contains(" -> ") }
        #expect(lines.count == 3, "one summary line per good file: \(result.stdout)")
        for name in ["speech-8k-mono-s16", "speech-22k05-mono-s16", "speech-48k-stereo-f32"] {
            #expect(lines.contains { $0.contains("\(name).wav: ") })
            #expect(FileManager.default.fileExists(atPath: output.path("\(name).wav")))
        }
        #expect(try AudioFiles.read(output.path("speech-22k05-mono-s16.wav"), as: Int16.self).samples == (try Self.reference(in: directory)))
        let errors = result.stderr.split(separator: "\n").filter { $0.hasPrefix("voicepipe convert: ") }
        #expect(errors.count == 2 && errors.contains { $0.contains("broken.wav") } && errors.contains { $0.contains("missing.wav") }, "\(result.stderr)")
        #expect(result.stdout.hasSuffix("converted 3 files of 5; 2 failed\n"), "the total, after the files' lines: \(result.stdout)")
    }

    @Test func aBatchOfEncodesWritesOneJSONLinesFilePerInput() throws {
        let output = try TemporaryDirectory()
        let inputs = ["speech-8k-mono-s16.wav", "speech-44k1-stereo-s16.wav"].map(CommandRunner.sample)
        let result = try CommandRunner.run(["encode"] + inputs + ["--out-dir", output.url.path])
        #expect(result.status == 0, "\(result)")
        for input in inputs {
            let single = try CommandRunner.run(["encode", input])
            let name = URL(fileURLWithPath: input).deletingPathExtension().lastPathComponent + ".jsonl"
            #expect(try String(contentsOfFile: output.path(name), encoding: .utf8) == single.stdout)
        }
    }

    @Test func twoInputsThatWouldShareAnOutputAreRefusedBeforeAnyWork() throws {
        let directory = try TemporaryDirectory()
        let output = try TemporaryDirectory()
        let copy = directory.path("speech-8k-mono-s16.wav")
        try FileManager.default.copyItem(atPath: CommandRunner.sample("speech-8k-mono-s16.wav"), toPath: copy)
        let result = try CommandRunner.run(["convert", CommandRunner.sample("speech-8k-mono-s16.wav"), copy, "--out-dir", output.url.path])
        #expect(result.status == 64, "\(result)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: output.url.path).isEmpty)
    }

    // MARK: --quiet and --json

    @Test func quietPrintsNothingAndJSONPrintsOneObjectPerFile() throws {
        let directory = try TemporaryDirectory()
        let quiet = try CommandRunner.run(["convert", Self.sample, directory.path("q.wav"), "--quiet"])
        #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty)

        let json = try CommandRunner.run(["convert", Self.sample, directory.path("j.wav"), "--json"])
        let object = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["input"] as? String == Self.sample)
        #expect(object["inputFrames"] as? Int == 64_209 && object["outputFrames"] as? Int == 46_592)
        #expect(object["inputRate"] as? Double == 22_050 && object["truncated"] as? Bool == false)
        #expect(object["frames"] as? Int == 91 && object["silentFrames"] as? Int != nil && object["peakDBFS"] as? Double != nil)

        let encoded = try CommandRunner.run(["encode", Self.sample, "--json", "--out", directory.path("e.jsonl")])
        let summary = try #require(JSONSerialization.jsonObject(with: Data(encoded.stdout.utf8)) as? [String: Any])
        #expect(summary["chunks"] as? Int == 91 && summary["outputFrames"] as? Int == 46_592)

        let decoded = try CommandRunner.run(["decode", directory.path("e.jsonl"), "--out", directory.path("r.wav"), "--json"])
        let reply = try #require(JSONSerialization.jsonObject(with: Data(decoded.stdout.utf8)) as? [String: Any])
        #expect(reply["audioChunks"] as? Int == 91 && reply["rejectedLines"] as? Int == 0 && reply["frames"] as? Int == 69_888)
    }

    // MARK: decode: nothing lost

    @Test func anUnplayableChunkIsABadLineAndEveryGoodChunkReachesTheFile() throws {
        let directory = try TemporaryDirectory()
        let good = EncodeDecodeCommandTests.audioChunkLine([Int16](repeating: 8_192, count: 2_400))
        let unplayable = EncodeDecodeCommandTests.audioChunkLine([Int16](repeating: 100, count: 2_400), sampleRate: 1_000_000)
        let runtimeError = #"{"type":"error","message":"model overloaded","code":"E503"}"#
        let lines = [good, unplayable, good, runtimeError, good].joined(separator: "\n") + "\n"
        let input = try directory.file("mixed.jsonl", Array(lines.utf8))
        let result = try CommandRunner.run(["decode", input, "--out", directory.path("reply.wav")])
        #expect(result.status == 65, "\(result)")
        #expect(try AudioFiles.read(directory.path("reply.wav"), as: Float.self).samples == [Float](repeating: 0.25, count: 7_200))
        #expect(result.stderr.contains("line 2: an audio chunk at 1000000 Hz cannot be played"), "\(result.stderr)")
        #expect(result.stderr.contains("line 4: the runtime reported an error: model overloaded (code E503)"))
        #expect(result.stderr.contains("3 audio chunks") && result.stderr.contains("1 runtime error; 1 line rejected"), "\(result.stderr)")
    }

    @Test func aWAVFileGivenToDecodeIsRefusedWithOneMessage() throws {
        let directory = try TemporaryDirectory()
        let result = try CommandRunner.run(["decode", CommandRunner.sample("speech-48k-stereo-f32.wav"), "--out", directory.path("reply.wav")])
        #expect(result.status == 65)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr.prefix(400))")
        #expect(lines.first?.hasPrefix("voicepipe decode: '\(CommandRunner.sample("speech-48k-stereo-f32.wav"))' does not look like JSON Lines: lines 1 to 20 are not messages") == true, "\(result.stderr)")
    }

    @Test func badLinesInTheMiddleOfMessagesAreSkippedNotTakenForGarbage() throws {
        let directory = try TemporaryDirectory()
        let good = EncodeDecodeCommandTests.audioChunkLine([Int16](repeating: 8_192, count: 480))
        let odd = #"{"type":"audio.chunk","data":"AQ==","sampleRate":24000}"#
        let lines = [String](repeating: good, count: 40) + [String](repeating: odd, count: 25) + [String](repeating: good, count: 45)
        let input = try directory.file("mixed.jsonl", Array((lines.joined(separator: "\n") + "\n").utf8))
        let result = try CommandRunner.run(["decode", input, "--out", directory.path("reply.wav")])
        #expect(result.status == 65)
        #expect(!result.stderr.contains("does not look like JSON Lines"))
        #expect(result.stderr.split(separator: "\n").filter { $0.contains("decodes to 1 byte") }.count == 25)
        #expect(try AudioFiles.read(directory.path("reply.wav"), as: Float.self).samples == [Float](repeating: 0.25, count: 85 * 480))
    }

    @Test func inputRefusedAsNotMessagesLeavesNoFile() throws {
        let directory = try TemporaryDirectory()
        let result = try CommandRunner.run(["decode", CommandRunner.sample("speech-8k-mono-s16.wav"), "--out", directory.path("reply.wav")])
        #expect(result.status == 65)
        #expect(!FileManager.default.fileExists(atPath: directory.path("reply.wav")))
    }

    @Test func jsonSummariesGoToStandardOutputUnlessItCarriesData() throws {
        let directory = try TemporaryDirectory()
        let encoded = try CommandRunner.run(["encode", Self.sample, "--out", directory.path("e.jsonl"), "--json"])
        #expect((try JSONSerialization.jsonObject(with: Data(encoded.stdout.utf8)) as? [String: Any])?["chunks"] as? Int == 91, "\(encoded)")
        let toStandardOutput = try CommandRunner.run(["encode", Self.sample, "--json"])
        #expect(toStandardOutput.stdout.split(separator: "\n").count == 91, "stdout carries only the messages")
        #expect(toStandardOutput.stderr.hasPrefix("{\"input\":"))

        let messages = EncodeDecodeCommandTests.audioChunkLine([Int16](repeating: 8_192, count: 480)) + "\n" + #"{"type":"transcript","role":"assistant","text":"hi","final":true}"#
        let input = try directory.file("reply.jsonl", Array(messages.utf8))
        let decoded = try CommandRunner.run(["decode", input, "--out", directory.path("r.wav"), "--json"])
        let reply = try #require(JSONSerialization.jsonObject(with: Data(decoded.stdout.utf8)) as? [String: Any], "\(decoded)")
        #expect(reply["sampleRate"] as? Double == 24_000 && reply["audioChunks"] as? Int == 1)
        #expect(decoded.stderr.contains("assistant: hi"), "transcripts move to stderr so stdout is only JSON")
    }

    @Test func aBatchRefusesAMissingDirectoryStandardInputAndJobsAloneBeforeAnyWork() throws {
        let directory = try TemporaryDirectory()
        let missing = try CommandRunner.run(["convert", Self.sample, Self.sample, "--out-dir", directory.path("nowhere")])
        #expect(missing.status == 73 && missing.stderr.split(separator: "\n").count == 1, "\(missing)")
        let dash = try CommandRunner.run(["encode", Self.sample, "-", "--out-dir", directory.url.path])
        #expect(dash.status == 64 && !FileManager.default.fileExists(atPath: directory.path("-.jsonl")), "\(dash)")
        let jobs = try CommandRunner.run(["convert", Self.sample, directory.path("out.wav"), "--jobs", "2"])
        #expect(jobs.status == 64, "\(jobs)")
    }

    @Test func aBatchInJSONGivesEveryFileAnObjectFailedOnesToo() throws {
        let directory = try TemporaryDirectory()
        let output = try TemporaryDirectory()
        let broken = try directory.file("broken.wav", Array("not audio".utf8))
        let result = try CommandRunner.run(["convert", Self.sample, broken, "--out-dir", output.url.path, "--json"])
        #expect(result.status == 65)
        let objects = try result.stdout.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(objects.count == 2)
        #expect(objects.contains { $0["input"] as? String == Self.sample && $0["exitStatus"] as? Int == 0 })
        #expect(objects.contains { $0["input"] as? String == broken && $0["exitStatus"] as? Int == 65 && ($0["error"] as? String)?.contains("broken.wav") == true })
    }

    @Test func aWAVOnAPipeIsConvertedAsItArrives() throws {
        // The WAV's bytes go in, the pipe stays open: the first message must come out regardless.
        let process = Process()
        process.executableURL = CommandRunner.binary
        process.arguments = ["encode", "-"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data(contentsOf: URL(fileURLWithPath: Self.sample)))
        var first = Data()
        while !first.contains(0x0A), let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty { first += byte }
        #expect(String(decoding: first, as: UTF8.self).hasPrefix(#"{"type":"audio.chunk","data":""#))
        try input.fileHandleForWriting.close()
        _ = try output.fileHandleForReading.readToEnd()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    // MARK: record

    @Test func recordSecondsWritesExactlyThatMuchFromAClocklessDevice() throws {
        let directory = try TemporaryDirectory()
        let result = try CommandRunner.run(["record", "--device", "null", "--seconds", "3", "--out", directory.path("three.wav")])
        #expect(result.status == 0, "\(result)")
        #expect(try AudioFiles.read(directory.path("three.wav"), as: Int16.self).samples.count == 48_000)
        #expect(!result.stderr.contains("dropped"))
    }

    @Test func ctrlCDuringARecordingReportsNoDroppedAudio() throws {
        let directory = try TemporaryDirectory()
        let out = directory.path("stopped.wav")
        let process = Process()
        process.executableURL = CommandRunner.binary
        process.arguments = ["record", "--device", "null", "--out", out]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        for _ in 0..<1_000 where !FileManager.default.fileExists(atPath: out) { usleep(10_000) }
        usleep(300_000)
        process.interrupt()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stderr)")
        #expect(!stderr.contains("dropped"), "\(stderr)")
    }

    // MARK: Messages and help

    @Test func errorsNameTheCommandAndStateTheSystemsCause() throws {
        let missing = try CommandRunner.run(["convert", "/no/such/file.wav", "/tmp/x.wav"])
        #expect(missing.stderr == "voicepipe convert: cannot read '/no/such/file.wav': no such file; check the path\n")
        // A directory that exists but takes no files (procfs) is not "a directory that does not exist".
        let proc = try CommandRunner.run(["convert", Self.sample, "/proc/voicepipe.wav"])
        #expect(proc.status == 73)
        #expect(proc.stderr == "voicepipe convert: cannot create '/proc/voicepipe.wav': no such file or directory; choose another path\n", "\(proc.stderr)")
        let usage = try CommandRunner.run(["convert", Self.sample])
        #expect(usage.status == 64 && usage.stderr.hasPrefix("voicepipe convert: missing <output>"))
    }

    @Test(arguments: ["convert", "info", "encode", "decode", "devices", "record", "play", "room"])
    func everyHelpShowsExamplesAndExitStatusesWithin100Columns(command: String) throws {
        let help = try CommandRunner.run([command, "--help"])
        #expect(help.status == 0)
        let examples = help.stdout.components(separatedBy: "\nEXAMPLES:\n").dropFirst().first?.components(separatedBy: "\n\n").first ?? ""
        #expect(examples.contains("voicepipe \(command)"), "\(command) --help shows an example of itself: \(examples)")
        #expect(help.stdout.contains("\nEXIT STATUS:\n  0   success"))
        for line in help.stdout.split(separator: "\n") where line.count > 100 {
            Issue.record("\(command) --help has a line of \(line.count) columns: \(line)")
        }
    }

    /// Help and the parser read the same declarations: every option `--help` lists is one the
    /// command accepts (with a value where help shows one), and only those are.
    @Test(arguments: ["session", "convert", "info", "encode", "decode", "devices", "record", "play", "room"])
    func everyOptionHelpListsIsAcceptedAndNoOther(command: String) throws {
        let help = try CommandRunner.run([command, "--help"]).stdout
        let rows = help.components(separatedBy: "\nOPTIONS:\n").dropFirst().first?.components(separatedBy: "\n\n").first ?? ""
        // An option's row starts two columns in; its wrapped help is indented further.
        let options = rows.split(separator: "\n").filter { $0.hasPrefix("  --") }.map { row -> (name: String, takesValue: Bool) in
            let words = row.split(separator: " ")
            return (String(words[0]), words.count > 1 && words[1].hasPrefix("<"))
        }
        #expect(rows.split(separator: "\n").contains { $0.hasPrefix("  -h, --help ") }, "\(rows)")
        #expect(options.isEmpty == (command == "devices"), "\(command): \(rows)")
        for option in options {
            // --help after it: the line is parsed whole (an unknown option would fail), then help wins.
            let run = try CommandRunner.run([command, option.name] + (option.takesValue ? ["x"] : []) + ["--help"])
            #expect(run.status == 0 && run.stdout == help, "\(command) \(option.name): \(run)")
        }
        let unknown = try CommandRunner.run([command, "--no-such-option", "--help"])
        #expect(unknown.status == 64 && unknown.stderr == "voicepipe \(command): unknown option '--no-such-option' (see 'voicepipe \(command) --help')\n", "\(unknown)")
    }
}
