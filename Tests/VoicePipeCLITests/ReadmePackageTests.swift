import Foundation
import Testing
import VoicePipeIO
import VoicePipeTestSupport

/// The README's SwiftPM manifest and sample programs, exactly as quoted, build as a package of
/// their own that depends on this checkout by path, and the programs it builds run.
struct ReadmePackageTests {
    /// The `swift` on the search path; nil when there is none (the test is then skipped).
    static let swift: URL? = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        .map { URL(fileURLWithPath: String($0)).appendingPathComponent("swift") }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    /// The marker the README puts on the line before each fenced block that is a file of the package.
    static let marker = "<!-- readme-package: "

    /// Every block the README marks, by the path in its marker: the lines between the ```swift
    /// fence that follows the marker and the closing fence.
    static func quotedFiles(in readme: String) throws -> [String: String] {
        let lines = readme.components(separatedBy: "\n")
        var files = [String: String]()
        for (index, line) in lines.enumerated() where line.hasPrefix(marker) && line.hasSuffix(" -->") {
            let path = String(line.dropFirst(marker.count).dropLast(" -->".count))
            try #require(index + 1 < lines.count && lines[index + 1] == "```swift", "the README's marker for \(path) is not followed by a ```swift block")
            let body = lines[(index + 2)...].prefix { $0 != "```" }
            try #require(index + 2 + body.count < lines.count, "the README's block for \(path) has no closing fence")
            files[path] = body.joined(separator: "\n") + "\n"
        }
        return files
    }

    /// Writes `text` to `url` unless it already holds it, so a rerun's build stays incremental.
    static func write(_ text: String, to url: URL) throws {
        if let existing = try? String(contentsOf: url, encoding: .utf8), existing == text { return }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    @Test(.enabled(if: swift != nil, "no 'swift' on the search path, so the README's package cannot be built"))
    func theREADMEsManifestAndSamplesBuildAndRunAsAPackageOfTheirOwn() async throws {
        let swift = try #require(Self.swift)
        let readme = try String(contentsOf: CommandRunner.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let files = try Self.quotedFiles(in: readme)
        #expect(files.keys.sorted() == ["Package.swift", "Sources/ConvertFile/main.swift", "Sources/SessionFile/main.swift"])

        // The layout the README describes: the package beside a folder named voicepipe (a link
        // to this checkout). It lives in the build directory, so a rerun builds incrementally.
        let scratch = CommandRunner.packageRoot.appendingPathComponent(".build/readme-package")
        let package = scratch.appendingPathComponent("MyTool")
        let checkout = scratch.appendingPathComponent("voicepipe")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: checkout.path)) != CommandRunner.packageRoot.path {
            try? FileManager.default.removeItem(at: checkout)
            try FileManager.default.createSymbolicLink(atPath: checkout.path, withDestinationPath: CommandRunner.packageRoot.path)
        }
        for (path, text) in files { try Self.write(text, to: package.appendingPathComponent(path)) }

        let build = try await CommandRunner.runOnOwnThread(["build", "--package-path", package.path], executable: swift)
        try #require(build.status == 0, "swift build of the README's package failed:\n\(build)")
        let binPath = try await CommandRunner.runOnOwnThread(["build", "--package-path", package.path, "--show-bin-path"], executable: swift)
        let bin = URL(fileURLWithPath: binPath.stdout.trimmingCharacters(in: .whitespacesAndNewlines))

        // convert-file writes what `voicepipe convert` writes, one line per 32 ms frame.
        let directory = try TemporaryDirectory()
        let input = CommandRunner.sample("speech-8k-mono-s16.wav")
        let converted = try CommandRunner.run([input, directory.path("library.wav")], executable: bin.appendingPathComponent("convert-file"))
        #expect(converted.status == 0, "\(converted)")
        #expect(converted.stdout.split(separator: "\n").filter { $0.hasPrefix("frame ") }.count == 88, "\(converted.stdout)")
        #expect(try CommandRunner.run(["convert", input, directory.path("tool.wav")]).status == 0)
        let library = try AudioFiles.read(directory.path("library.wav"), as: Int16.self)
        #expect(library.format.sampleRate == 16_000 && library.samples.count == 44_586)
        #expect(library.samples == (try AudioFiles.read(directory.path("tool.wav"), as: Int16.self).samples))

        // session-file: the embedded runtime's reply is the turn's 44 586 frames at 24 kHz.
        let session = try CommandRunner.run([input, directory.path("reply.wav")], executable: bin.appendingPathComponent("session-file"))
        #expect(session.status == 0, "\(session)")
        #expect(session.stdout.contains("ended cleanly: true"), "\(session.stdout)")
        #expect(session.stdout.contains("reply: 66879 frames at 24 kHz"), "\(session.stdout)")
        #expect(try AudioFiles.read(directory.path("reply.wav"), as: Float.self).samples.count == 66_879)
    }
}
