import Foundation
import Testing
import VoicePipeIO
import VoicePipeTestSupport

/// The README says what the code does: its library example is the sample program, whole, and
/// that program gives exactly the command line's samples.
struct DocumentationTests {
    static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: CommandRunner.packageRoot.appendingPathComponent(relativePath), encoding: .utf8)
    }

    @Test(arguments: ["Samples/ConvertFile/main.swift", "Samples/SessionFile/main.swift"])
    func theREADMEsLibraryExamplesAreTheSamplePrograms(path: String) throws {
        let sample = try Self.text(path)
        #expect(try Self.text("README.md").contains("```swift\n" + sample + "```"))
    }

    @Test func theSampleProgramWritesExactlyWhatConvertWrites() throws {
        let directory = try TemporaryDirectory()
        for name in ["speech-44k1-stereo-s16.wav", "speech-48k-stereo-f32.wav"] {
            let input = CommandRunner.sample(name)
            let fromLibrary = directory.path("library-\(name)"), fromTool = directory.path("tool-\(name)")
            let run = try CommandRunner.run([input, fromLibrary], executable: CommandRunner.executable(named: "sample-convert-file"))
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try CommandRunner.run(["convert", input, fromTool]).status == 0)
            #expect(try AudioFiles.read(fromLibrary, as: Int16.self).samples == AudioFiles.read(fromTool, as: Int16.self).samples, "\(name)")
        }
    }

    @Test func theQuickStartWritesWhereGitIgnores() throws {
        let readme = try Self.text("README.md")
        #expect(readme.contains("scripts/bootstrap && swift run -c release voicepipe session Samples/Audio/speech-48k-stereo-f32.wav --out .build/reply.wav"))
        #expect(readme.contains("voicepipe convert Samples/Audio/speech-48k-stereo-f32.wav .build/speech-16k.wav"))
        #expect(try Self.text(".gitignore").split(separator: "\n").contains(".build/"))
    }
}
