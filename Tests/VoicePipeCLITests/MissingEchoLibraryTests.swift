import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// The built `voicepipe` on a machine without one echo backend's library, for real: each run is in
/// a private mount namespace (`unshare -m`, as root) with the library's file covered by /dev/null,
/// so the dynamic loader cannot load it. Everything but that backend works; a session on it stops
/// before it starts, exit 69, saying what to install or choose instead (never falling back to
/// the other backend on its own).
@Suite(.enabled(if: LibraryHiding.isPermitted, "needs 'unshare -m' and 'mount --bind' over libspeexdsp.so.1 (root, or a user namespace allowed to mount): not permitted here, so no library can be hidden from voicepipe"))
struct MissingEchoLibraryTests {
    /// A library to hide, and the backends on either side of it.
    enum Hidden: String, CaseIterable, Sendable, CustomStringConvertible {
        case speexDSP = "libspeexdsp.so.1"
        case webRTC = "libwebrtc_audio_processing.so.1"

        var description: String { rawValue }
        var package: String { self == .speexDSP ? "libspeexdsp1" : "libwebrtc-audio-processing1" }
        /// The backend on the other library, which still runs.
        var other: EchoBackend { self == .speexDSP ? .webrtc : .speex }

        /// The real file behind the soname, where the dynamic loader's cache (`ldconfig -p`) says
        /// it is (its version and directory are not hard-coded): a bind mount over it hides every
        /// name that leads to it.
        var file: String? { Self.files[self] }

        private static let files: [Hidden: String] = {
            guard let cache = try? CommandRunner.run(["-p"], executable: URL(fileURLWithPath: "/usr/sbin/ldconfig")), cache.status == 0 else { return [:] }
            var files: [Hidden: String] = [:]
            for hidden in allCases {
                let entry = cache.stdout.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("\(hidden.rawValue) ") }
                guard let path = entry?.components(separatedBy: " => ").last, let real = realpath(path, nil) else { continue }
                files[hidden] = String(cString: real)
                free(real)
            }
            return files
        }()
    }

    /// Runs `voicepipe arguments` with `hidden`'s file covered by /dev/null.
    static func run(_ arguments: [String], hiding hidden: Hidden) async throws -> CommandRunner.Result {
        let file = try #require(hidden.file, "\(hidden) is not in the dynamic loader's cache (ldconfig -p)")
        let script = "mount --bind /dev/null \"$1\" && shift && exec \"$@\""
        return try await CommandRunner.runOnOwnThread(["unshare", "-m", "sh", "-c", script, "sh", file, CommandRunner.binary.path] + arguments,
                                                      executable: URL(fileURLWithPath: "/usr/bin/env"))
    }

    @Test(arguments: Hidden.allCases)
    func convertStillWorksWithoutTheLibrary(_ hidden: Hidden) async throws {
        let directory = try TemporaryDirectory()
        let output = directory.path("out.wav")
        let result = try await Self.run(["convert", CommandRunner.sample("speech-8k-mono-s16.wav"), output], hiding: hidden)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        let (format, samples) = try AudioFiles.read(output, as: Int16.self)
        #expect(format == AudioFormat.captureTarget)
        #expect(samples.count == 44_586)
    }

    @Test(arguments: Hidden.allCases)
    func aSessionWithEchoOffStillRunsWithoutTheLibrary(_ hidden: Hidden) async throws {
        let result = try await Self.run(["session", CommandRunner.sample("speech-8k-mono-s16.wav"), "--fast", "--echo", "off"], hiding: hidden)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("turns: 1 (1 spoken, 0 typed)"), "\(result)")
    }

    /// The bundled sample spoken into the office room (README's example).
    static let room = ["session", CommandRunner.sample("room-barge-in-16k-mono-s16.wav"), "--room", "office"]
    /// ALSA's null devices, where a session with no `--echo` cancels with speex, the default.
    static let devices = ["session", "--mic", "null", "--speaker", "null"]

    /// The default backend (speex, with no `--echo`) in a room and on devices, a variant on the same
    /// library, and WebRTC.
    @Test(arguments: [(Hidden.speexDSP, room, "speex"), (.speexDSP, devices, "speex"), (.speexDSP, room + ["--echo", "speex-linear"], "speex-linear"),
                      (.webRTC, room + ["--echo", "webrtc"], "webrtc"), (.webRTC, devices + ["--echo", "webrtc"], "webrtc")])
    func aSessionOnTheMissingLibraryStopsBeforeItStartsAndSaysWhatToInstall(_ hidden: Hidden, arguments: [String], backend: String) async throws {
        let result = try await Self.run(arguments, hiding: hidden)
        #expect(result.status == 69, "\(result)")
        #expect(result.stdout.isEmpty, "the session must not start: \(result)")
        // The loader names the file by the path it found it at (/lib or /usr/lib, as installed).
        let found = try #require(result.stderr.firstMatch(of: /could not be loaded \(([^ ]+): file too short\)/), "\(result)")
        let path = String(found.1)
        #expect(path.hasSuffix("/\(hidden.rawValue)"), "\(path)")
        #expect(result.stderr == "voicepipe session: the \(backend) echo canceller is unavailable: \(hidden.rawValue) could not be loaded (\(path): file too short); install it with 'apt-get install \(hidden.package)', or choose '--echo \(hidden.other.rawValue)' or '--echo off'\n")
    }

    /// In real time, about 15 s each (both run at once).
    @Test(arguments: Hidden.allCases)
    func theOtherBackendStillCancelsTheRoomsEchoWithoutTheLibrary(_ hidden: Hidden) async throws {
        let result = try await Self.run(Self.room + ["--echo", hidden.other.rawValue, "--session-id", "s-\(hidden.other)"], hiding: hidden)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("room: office; echo control: \(hidden.other.rawValue)"), "\(result)")
        // Measured 51-52 dB with either backend on this sample (README).
        let erle = try #require(LiveRoomSessionTests.figure("echo return loss enhancement: ", in: result.stdout), "\(result)")
        #expect(erle >= 30, "ERLE \(erle) dB")
        #expect(result.stdout.contains("session s-\(hidden.other) ended cleanly"), "\(result)")
    }
}

/// Whether this machine lets a test cover a library file in a mount namespace of its own (tried
/// once, on speexdsp's file).
enum LibraryHiding {
    static let isPermitted: Bool = {
        guard let file = MissingEchoLibraryTests.Hidden.speexDSP.file,
              let probe = try? CommandRunner.run(["unshare", "-m", "sh", "-c", "mount --bind /dev/null \"$1\" && ! test -s \"$1\"", "sh", file],
                                                 executable: URL(fileURLWithPath: "/usr/bin/env")) else { return false }
        return probe.status == 0
    }()
}

/// What lets `voicepipe` start without the echo libraries: the loader maps neither for it.
struct EchoLibraryLinkTests {
    @Test func theToolNeedsNeitherEchoLibraryToStart() throws {
        // Every shared library the loader would map for it, direct or not.
        let ldd = try CommandRunner.run([CommandRunner.binary.path], executable: URL(fileURLWithPath: "/usr/bin/ldd"))
        #expect(ldd.status == 0, "\(ldd)")
        #expect(ldd.stdout.contains("libsndfile"), "ldd lists the dependencies: \(ldd.stdout)")
        for library in ["libspeexdsp", "libwebrtc_audio_processing"] {
            #expect(!ldd.stdout.contains(library), "\(library) is linked: \(ldd.stdout)")
        }
    }
}
