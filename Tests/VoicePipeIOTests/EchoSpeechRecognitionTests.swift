import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// The near end in double talk read by a speech recogniser, as the issue asks: the canceller's
/// output must read as the clean near end does. A Python helper (Scripts/speech_words.py) speaks
/// ten Harvard sentences with flite and reads them with pocketsphinx 5 (its US English acoustic
/// model, a trigram language model of the ten sentences and a dictionary of their 62 words: the
/// question is what the echo and the canceller do to the words, not open-vocabulary recognition).
/// The sentences start after 9 s of far-end single talk in the issue's room (T60 0.3 s, 60 ms,
/// reference aligned from the devices' stamps) and are as loud as the echo, which plays on.
/// Measured: clean 81 of 81 words right (WER 0 %), the microphone 24 (WER 121 %, the echo read as
/// words); speexdsp's filter alone and with its preprocessor 81 (0 %); the default backend, with
/// VoicePipe's spectral suppressor judging the near end per band, 80 (4.9 %; 43, 49 %, when it
/// judged whole blocks); WebRTC 0.3 9 (91 %): it takes the near end down 12–19 dB in double talk,
/// so for it the issue's goal is not met yet and the figure is pinned.
@Suite(.serialized)
struct EchoSpeechRecognitionTests {
    static let script = CommandRunner.packageRoot.appendingPathComponent("Tests/VoicePipeIOTests/Scripts/speech_words.py").path
    /// pocketsphinx 5 (the Python module with its language-model builder) and flite on the PATH.
    static let available: Bool = (try? CommandRunner.run([EchoSpeechScoreTests.python, "-c", "import numpy, pocketsphinx.lm, shutil, sys; sys.exit(shutil.which('flite') is None)"],
                                                         executable: URL(fileURLWithPath: "/usr/bin/env")).status) == 0

    static let rate = 16_000
    static let singleTalkSeconds = 9
    static let latencySeconds = 0.06

    /// What `speech_words.py speak` printed: the sentences and where each lies in the talk.
    struct Speech: Decodable {
        struct Sentence: Decodable {
            var text: String
            var start: Int
            var end: Int
        }
        var rate: Int
        var sentences: [Sentence]
    }

    /// What `speech_words.py read` printed for one signal.
    struct Reading: Decodable, CustomStringConvertible {
        var words: Int
        var right: Int
        var errors: Int
        var heard: [String]

        /// Words recognised, percent of the words spoken.
        var wordsRight: Double { 100 * Double(right) / Double(words) }
        /// Substitutions, deletions and insertions, percent of the words spoken.
        var wordErrorRate: Double { 100 * Double(errors) / Double(words) }
        var description: String { String(format: "%d of %d words right (%.1f %%), WER %.1f %%", right, words, wordsRight, wordErrorRate) }
    }

    /// The microphone (echo, the near end from single talk's end on, a −70 dBFS white floor), the
    /// aligned reference, and the clean near end on the same timeline.
    struct Scene {
        var microphone: [Float]
        var reference: [Float]
        var nearEnd: [Float]
    }

    /// Plays the bundled far-end clip, looped, into the room as EchoQualityMatrixTests does and puts
    /// `talk` on the microphone from the end of single talk on, scaled to the echo's level over
    /// the sentences.
    static func scene(talk: [Float], speech: Speech) throws -> Scene {
        let clip = try EchoCancellerTests.speech("speech-22k05-mono-s16.wav")
        try #require(!clip.isEmpty, "the bundled speech sample could not be read")
        let start = singleTalkSeconds * rate
        let frames = (start + talk.count + rate / 2) / EchoBlock.frameCount * EchoBlock.frameCount
        let far = (0..<frames).map { clip[$0 % clip.count] }
        let latencyFrames = Int((latencySeconds * Double(rate)).rounded())
        let echo = EchoPath(reverberationTime: 0.3, delayMilliseconds: latencySeconds * 1000 + 3).echo(of: far)

        // The sentences as loud as the echo under them.
        var placed = [Float](repeating: 0, count: frames)
        for n in talk.indices { placed[start + n] = talk[n] }
        let spoken = speech.sentences.map { (start + $0.start)..<(start + $0.end) }
        let nearPower = spoken.reduce(0) { $0 + Measurement.power(placed, $1) }
        let echoPower = spoken.reduce(0) { $0 + Measurement.power(echo, $1) }
        let gain = Float((echoPower / max(nearPower, 1e-20)).squareRoot())
        let nearEnd = placed.map { $0 * gain }

        let floor = Signals.noise(amplitude: Signals.amplitude(dBFS: -70) * 3.0.squareRoot(), frames: frames, seed: 7)
        let microphone = (0..<frames).map { echo[$0] + nearEnd[$0] + Float(floor[$0]) }
        return Scene(microphone: microphone, reference: try EchoQualityMatrixTests.alignedReference(of: far, latencyFrames: latencyFrames), nearEnd: nearEnd)
    }

    /// Runs the helper and fails the test with its output when it does not exit 0.
    static func helper(_ arguments: [String]) throws -> Data {
        let result = try CommandRunner.run([EchoSpeechScoreTests.python, script] + arguments, executable: URL(fileURLWithPath: "/usr/bin/env"))
        try #require(result.status == 0, "\(result)")
        return result.output
    }

    /// Writes samples as raw Float32, the helper's format.
    static func write(_ samples: ArraySlice<Float>, to path: String) throws {
        try samples.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: path))
    }

    /// Reads a raw little-endian Float32 file, as the helper writes it.
    static func readFloats(_ path: String) throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { bytes in
            (0..<(bytes.count / 4)).map { index -> Float in
                let bits: UInt32 = bytes.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self)
                return Float(bitPattern: UInt32(littleEndian: bits))
            }
        }
    }

    /// How many more word errors, percent of the words spoken, the canceller's output may have
    /// than the clean near end: 5 points, four words of the 81.
    static let tolerance = 5.0

    /// The word error rate (percent) a backend that does not meet the goal is held to: the measured
    /// rate plus a margin, pinned so a change shows, not a goal met. Nil: the goal itself.
    static func pinnedWordErrorRate(_ backend: EchoBackend) -> Double? {
        switch backend {
        case .speexLinear, .speexPreprocessor: nil // measured 0 % (81 of 81 words right)
        case .speex: nil                           // measured 4.9 % (80 of 81 words right)
        case .webrtc: 100                          // measured 91.4 % (9 of 81), 86 % (13) without noise suppression
        }
    }

    @Test(.enabled(if: available, "needs flite and pocketsphinx 5: run scripts/bootstrap (it installs flite and runs Tests/VoicePipeIOTests/Scripts/setup), or set VOICEPIPE_PYTHON to a Python that has pocketsphinx"),
          arguments: EchoBackend.allCases)
    func theNearEndsWordsReadThroughTheCancellerAsTheyReadWithNoEcho(_ backend: EchoBackend) throws {
        let directory = try TemporaryDirectory()
        let talkPath = directory.path("talk.f32"), speechPath = directory.path("speech.json")
        let speechJSON = try Self.helper(["speak", talkPath])
        try speechJSON.write(to: URL(fileURLWithPath: speechPath))
        let speech = try JSONDecoder().decode(Speech.self, from: speechJSON)
        try #require(speech.rate == Self.rate && !speech.sentences.isEmpty, "the helper spoke \(speech.sentences.count) sentences at \(speech.rate) Hz")
        let talk = try Self.readFloats(talkPath)

        let scene = try Self.scene(talk: talk, speech: speech)
        let (output, _) = try EchoCancellerTests.run(backend.make(), microphone: scene.microphone, far: scene.reference)
        let start = Self.singleTalkSeconds * Self.rate
        let first = try #require(speech.sentences.first)
        let lag = Measurement.linearFit(estimate: output, reference: scene.nearEnd, (start + first.start)..<(start + first.end)).lag
        let delayed = output + [Float](repeating: 0, count: lag)

        try Self.write(scene.nearEnd[start..<(start + talk.count)], to: directory.path("clean.f32"))
        try Self.write(scene.microphone[start..<(start + talk.count)], to: directory.path("microphone.f32"))
        try Self.write(delayed[(start + lag)..<(start + lag + talk.count)], to: directory.path("output.f32"))
        let readings = try JSONDecoder().decode([String: Reading].self, from: Self.helper(
            ["read", speechPath, "clean=\(directory.path("clean.f32"))", "microphone=\(directory.path("microphone.f32"))", "output=\(directory.path("output.f32"))"]))
        let clean = try #require(readings["clean"]), microphone = try #require(readings["microphone"]), cancelled = try #require(readings["output"])
        print("speech words \(backend): clean \(clean); microphone \(microphone); through the canceller (lag \(lag)) \(cancelled)")
        print("speech words \(backend): the canceller's output heard \(cancelled.heard)")

        #expect(clean.wordsRight >= 80, "the recogniser reads the clean near end too poorly for a drop to mean something: \(clean)")
        #expect(microphone.wordErrorRate >= clean.wordErrorRate + 20, "the echo should make the microphone read clearly worse than the clean near end: \(microphone)")
        #expect(cancelled.wordErrorRate < microphone.wordErrorRate, "through the canceller: \(cancelled); microphone: \(microphone)")
        if let pinned = Self.pinnedWordErrorRate(backend) {
            #expect(cancelled.wordErrorRate <= pinned, "through the canceller: \(cancelled); pinned at WER \(pinned) %")
        } else {
            #expect(cancelled.wordErrorRate <= clean.wordErrorRate + Self.tolerance, "through the canceller: \(cancelled); clean: \(clean)")
        }
    }
}
