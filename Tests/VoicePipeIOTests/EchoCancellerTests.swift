import AllocationCounting
import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// Both echo-control backends offline on synthetic rooms: the echo they remove in far-end single
/// talk, how fast, and what is left of a near-end talker in double talk.
@Suite(.serialized)
struct EchoCancellerTests {
    /// One backend configuration as the table names it.
    enum Variant: String, CaseIterable, CustomStringConvertible {
        case webrtc = "webrtc"
        case webrtcNS = "webrtc+ns"
        case speexLinear = "speex (filter only)"
        case speex = "speex+res"
        case speexNS = "speex+res+ns"
        case speexSpectral = "speex+spectral"
        case speexSpectralNS = "speex+spectral+ns"

        var description: String { rawValue }

        func make() throws -> any EchoCanceller {
            switch self {
            case .webrtc: return try WebRTCEchoCanceller(options: EchoControlOptions(noiseSuppression: false))
            case .webrtcNS: return try WebRTCEchoCanceller(options: EchoControlOptions(noiseSuppression: true))
            case .speexLinear: return try SpeexEchoCanceller(options: EchoControlOptions(noiseSuppression: false), residualEchoSuppression: false)
            case .speex: return try SpeexEchoCanceller(options: EchoControlOptions(noiseSuppression: false))
            case .speexNS: return try SpeexEchoCanceller(options: EchoControlOptions(noiseSuppression: true))
            case .speexSpectral: return try SpeexEchoCanceller(options: EchoControlOptions(noiseSuppression: false), residual: .spectral)
            case .speexSpectralNS: return try SpeexEchoCanceller(options: EchoControlOptions(noiseSuppression: true), residual: .spectral)
            }
        }

        /// The ERLE (dB) every room in the table reaches after convergence: the lowest measured
        /// (T60 0.6 s or a 60 ms delay) less 3 dB.
        var minimumERLE: Double {
            switch self {
            case .webrtc: 28      // measured 31.5 … 35.4
            case .webrtcNS: 45    // measured 48.2 … 52.0
            case .speexLinear: 13 // measured 16.3 … 31.0
            case .speex: 15       // measured 18.0 … 39.1
            case .speexNS: 15     // measured 18.6 … 45.5
            // Measured 22.9 … 47.3 (with NS 23.2 … 55.2): 26–28 dB where the linear filter absorbs
            // 60 ms of delay itself, 23 dB where that is also a 0.6 s room (judged per block, before
            // the bands kept a double-talking near end's words: 30.0 … 58.1, pinned at 27); aligned
            // as the capture path aligns it, every room reaches 35 dB (EchoQualityMatrixTests).
            case .speexSpectral, .speexSpectralNS: 20
            }
        }

        /// The latest second (1 s windows) from which every window stays within 3 dB of the
        /// steady ERLE: the slowest measured plus one second. Not pinned for the spectral
        /// suppressor, whose gated windows swing by more than 3 dB around a steady 50–86 dB; its
        /// time to converge is measured as the time to 20 dB, in EchoQualityMatrixTests.
        var maximumConvergenceSeconds: Double? {
            switch self {
            case .webrtc, .webrtcNS: 4            // measured 3
            case .speexLinear, .speex, .speexNS: 8 // measured 2 … 7
            case .speexSpectral, .speexSpectralNS: nil
            }
        }

        /// The least the near-end talker's SDR (``Measurement/linearFit(estimate:reference:_:lags:)``)
        /// gains through the canceller over the microphone's in double talk, and the least of its
        /// level that survives: the worst measured less 3 dB. WebRTC 0.3's suppressor takes the
        /// near end down by 15 … 19 dB and leaves it worse than the microphone (a figure pinned
        /// here so a change shows, not a goal met); speexdsp keeps it within 0.3 dB and 16 … 19 dB
        /// above the echo.
        var doubleTalk: (minimumGainDB: Double, minimumLevelDB: Double) {
            switch self {
            case .webrtc: (-7, -20)      // measured −1.7 … −3.4 dB gain, −15.3 … −16.8 dB level
            case .webrtcNS: (-8, -22)    // measured −2.5 … −4.5 dB gain, −16.5 … −18.9 dB level
            case .speexLinear: (13, -1)  // measured 15.9 … 18.9 dB gain, −0.1 dB level
            case .speex, .speexNS: (13, -1) // measured 16.1 … 18.3 dB gain, −0.3 dB level
            case .speexSpectral, .speexSpectralNS: (4, -6) // measured 10.8 … 11.7 dB gain, −1.5 … −1.6 dB level
            }
        }
    }

    /// 16 kHz Float speech from a bundled sample, through the capture converter.
    static func speech(_ name: String) throws -> [Float] {
        let reader = try AudioFileReader(path: CommandRunner.sample(name))
        let converter = try CaptureConverter(input: reader.format, options: CaptureOptions(frameMilliseconds: 10))
        var samples = [Int16]()
        _ = try converter.convert(reader) { samples += $0.copySamples() }
        return samples.map { Float($0) / 32768 }
    }

    static let rate = 16_000
    static let singleTalkSeconds = 10
    static let totalSeconds = 13

    /// The far end: speech looped for the whole scene.
    static let far: [Float] = {
        guard let clip = try? speech("speech-22k05-mono-s16.wav"), !clip.isEmpty else { return [] }
        return (0..<(totalSeconds * rate)).map { clip[$0 % clip.count] }
    }()

    /// The near end: another clip, time-reversed (speech-like but uncorrelated with the far end),
    /// from the end of single talk on, at the echo's level.
    static func nearEnd(echo: [Float], singleTalkSeconds: Int = singleTalkSeconds) -> [Float] {
        guard let clip = try? speech("speech-48k-stereo-f32.wav") else { return [] }
        let reversed = Array(clip.reversed())
        let start = singleTalkSeconds * rate
        let end = min(start + reversed.count, echo.count)
        let gain = (Measurement.power(echo, start..<end) / max(Measurement.power(reversed, 0..<(end - start)), 1e-20)).squareRoot()
        var near = [Float](repeating: 0, count: echo.count)
        for n in start..<end { near[n] = Float(gain) * reversed[n - start] }
        return near
    }

    /// What one run measured.
    struct Figures: CustomStringConvertible {
        var label: String
        var reverberationTime: Double
        var delayMilliseconds: Double
        var erle: Double
        var convergenceSeconds: Double
        var microphoneSDR: Double
        var outputSDR: Double
        var retainedLevel: Double
        var outputLag: Int
        var millisecondsPerAudioSecond: Double

        var description: String {
            func f(_ x: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", x) }
            return "\(label.padding(toLength: 20, withPad: " ", startingAt: 0)) T60 \(f(reverberationTime)) s  delay \(f(delayMilliseconds, 0)) ms  ERLE \(f(erle)) dB  converged \(f(convergenceSeconds)) s  double talk SDR mic \(f(microphoneSDR)) dB -> out \(f(outputSDR)) dB, near-end level \(f(retainedLevel)) dB (lag \(outputLag))  cost \(f(millisecondsPerAudioSecond, 2)) ms per audio s"
        }
    }

    /// Runs a canceller over blocks of `microphone` with `far` as the reference.
    static func run(_ canceller: any EchoCanceller, microphone: [Float], far: [Float]) throws -> (output: [Float], elapsed: Duration) {
        var output = [Float](repeating: 0, count: microphone.count)
        let block = EchoBlock.frameCount
        let clock = ContinuousClock()
        let start = clock.now
        try microphone.withUnsafeBufferPointer { mic in
            try far.withUnsafeBufferPointer { reference in
                try output.withUnsafeMutableBufferPointer { out in
                    for offset in stride(from: 0, to: mic.count - block + 1, by: block) {
                        try canceller.process(near: UnsafeBufferPointer(rebasing: mic[offset..<(offset + block)]),
                                              far: UnsafeBufferPointer(rebasing: reference[offset..<(offset + block)]),
                                              into: UnsafeMutableBufferPointer(rebasing: out[offset..<(offset + block)]))
                    }
                }
            }
        }
        return (output, clock.now - start)
    }

    /// The microphone in one room: the far end's echo, the near-end talker from the end of single
    /// talk on, and a white noise floor at −70 dBFS; and the clean near end.
    static func scene(reverberationTime: Double, delayMilliseconds: Double) -> (near: [Float], microphone: [Float]) {
        let echo = EchoPath(reverberationTime: reverberationTime, delayMilliseconds: delayMilliseconds).echo(of: far)
        let near = nearEnd(echo: echo)
        let floor = Signals.noise(amplitude: Signals.amplitude(dBFS: -70) * 3.0.squareRoot(), frames: far.count, seed: 7)
        return (near, (0..<far.count).map { echo[$0] + near[$0] + Float(floor[$0]) })
    }

    /// The scene on one room, through one variant, measured.
    static func measure(_ variant: Variant, reverberationTime: Double, delayMilliseconds: Double) throws -> Figures {
        try measure(variant.rawValue, variant.make, reverberationTime: reverberationTime, delayMilliseconds: delayMilliseconds)
    }

    /// The scene on one room, through the canceller `make` builds, measured.
    static func measure(_ label: String, _ make: () throws -> any EchoCanceller, reverberationTime: Double, delayMilliseconds: Double) throws -> Figures {
        let (near, microphone) = scene(reverberationTime: reverberationTime, delayMilliseconds: delayMilliseconds)
        let (output, elapsed) = try run(make(), microphone: microphone, far: far)

        let singleTalkEnd = singleTalkSeconds * rate
        let steady = Measurement.erle(microphone: microphone, output: output, (6 * rate)..<singleTalkEnd)
        let windows = (0..<singleTalkSeconds).map { Measurement.erle(microphone: microphone, output: output, ($0 * rate)..<(($0 + 1) * rate)) }
        let converged = (0..<windows.count).first { start in windows[start...].allSatisfy { $0 >= steady - 3 } } ?? singleTalkSeconds
        let doubleTalk = (singleTalkEnd + rate / 10)..<(singleTalkEnd + 28 * rate / 10)
        let seconds = Double(far.count) / Double(rate)
        let microphoneFit = Measurement.linearFit(estimate: microphone, reference: near, doubleTalk)
        let outputFit = Measurement.linearFit(estimate: output, reference: near, doubleTalk)
        return Figures(label: label, reverberationTime: reverberationTime, delayMilliseconds: delayMilliseconds,
                       erle: steady, convergenceSeconds: Double(converged),
                       microphoneSDR: microphoneFit.signalToDistortionDB, outputSDR: outputFit.signalToDistortionDB,
                       retainedLevel: outputFit.levelDB, outputLag: outputFit.lag,
                       millisecondsPerAudioSecond: Double(elapsed.components.attoseconds) / 1e15 / seconds + Double(elapsed.components.seconds) * 1e3 / seconds)
    }

    static let rooms: [(reverberationTime: Double, delayMilliseconds: Double)] = [
        (0.1, 1), (0.1, 60), (0.3, 10), (0.3, 60), (0.6, 1), (0.6, 60),
    ]

    @Test(arguments: Variant.allCases)
    func eachBackendRemovesTheEchoOfLinearRoomsAndKeepsTheNearEndTalker(_ variant: Variant) throws {
        try #require(!Self.far.isEmpty, "the bundled speech sample could not be read")
        for room in Self.rooms {
            let figures = try Self.measure(variant, reverberationTime: room.reverberationTime, delayMilliseconds: room.delayMilliseconds)
            print("echo table: \(figures)")
            #expect(figures.erle >= variant.minimumERLE, "\(figures)")
            if let latest = variant.maximumConvergenceSeconds {
                #expect(figures.convergenceSeconds <= latest, "\(figures)")
            }
            #expect(figures.outputSDR - figures.microphoneSDR >= variant.doubleTalk.minimumGainDB, "\(figures)")
            #expect(figures.retainedLevel >= variant.doubleTalk.minimumLevelDB, "\(figures)")
        }
    }
}

/// What each backend does beside cancelling: refusals, in-place output, reset, a near end alone.
struct EchoCancellerBehaviourTests {
    static let backends: [String] = EchoBackend.allCases.map(\.rawValue)

    static func make(_ name: String, options: EchoControlOptions = EchoControlOptions()) throws -> any EchoCanceller {
        try #require(EchoBackend(rawValue: name), "no echo backend is named \(name)").make(options: options)
    }

    @Test(arguments: backends)
    func aBlockThatIsNotTenMillisecondsIsRefusedWithItsLengths(_ backend: String) throws {
        let canceller = try Self.make(backend)
        #expect(canceller.name == backend)
        let near = [Float](repeating: 0, count: 159), far = [Float](repeating: 0, count: 160)
        var output = [Float](repeating: 0, count: 160)
        #expect(throws: EchoControlError.wrongBlockLength(near: 159, far: 160, output: 160)) {
            try near.withUnsafeBufferPointer { n in
                try far.withUnsafeBufferPointer { f in
                    try output.withUnsafeMutableBufferPointer { try canceller.process(near: n, far: f, into: $0) }
                }
            }
        }
    }

    @Test func speexRefusesAFilterLengthOutsideTheRangeBeforeCreatingItsState() {
        #expect(throws: EchoControlError.filterLengthOutOfRange(milliseconds: 1_000)) {
            try SpeexEchoCanceller(options: EchoControlOptions(filterLengthMilliseconds: 1_000))
        }
    }

    @Test(arguments: backends)
    func theOutputMayBeTheMicrophoneBuffer(_ backend: String) throws {
        let far = EchoCancellerTests.far
        try #require(!far.isEmpty, "the bundled speech sample could not be read")
        let scene = Array(far[0..<(3 * 16_000)])
        let microphone = EchoPath(reverberationTime: 0.2, delayMilliseconds: 5).echo(of: scene)
        let (separate, _) = try EchoCancellerTests.run(Self.make(backend), microphone: microphone, far: scene)
        var inPlace = microphone
        let canceller = try Self.make(backend)
        try scene.withUnsafeBufferPointer { reference in
            try inPlace.withUnsafeMutableBufferPointer { buffer in
                for offset in stride(from: 0, to: buffer.count, by: EchoBlock.frameCount) {
                    let block = UnsafeMutableBufferPointer(rebasing: buffer[offset..<(offset + EchoBlock.frameCount)])
                    try canceller.process(near: UnsafeBufferPointer(block), far: UnsafeBufferPointer(rebasing: reference[offset..<(offset + EchoBlock.frameCount)]), into: block)
                }
            }
        }
        #expect(inPlace == separate)
    }

    @Test(arguments: backends)
    func resetForgetsTheEchoPathSoTheFirstSecondIsAsAFreshCancellers(_ backend: String) throws {
        let far = EchoCancellerTests.far
        try #require(!far.isEmpty, "the bundled speech sample could not be read")
        let scene = Array(far[0..<(4 * 16_000)])
        let microphone = EchoPath(reverberationTime: 0.3, delayMilliseconds: 20).echo(of: scene)
        let (fresh, _) = try EchoCancellerTests.run(Self.make(backend), microphone: microphone, far: scene)
        let canceller = try Self.make(backend)
        _ = try EchoCancellerTests.run(canceller, microphone: microphone, far: scene)
        canceller.reset()
        let (afterReset, _) = try EchoCancellerTests.run(canceller, microphone: microphone, far: scene)
        let first = 0..<16_000
        let freshERLE = Measurement.erle(microphone: microphone, output: fresh, first)
        let resetERLE = Measurement.erle(microphone: microphone, output: afterReset, first)
        let convergedERLE = Measurement.erle(microphone: microphone, output: fresh, (3 * 16_000)..<(4 * 16_000))
        print("reset \(backend): first-second ERLE fresh \(freshERLE) dB, after reset \(resetERLE) dB, converged \(convergedERLE) dB")
        #expect(resetERLE <= freshERLE + 2)
        #expect(resetERLE <= convergedERLE - 3)
    }

    @Test(arguments: backends)
    func aNearEndTalkerAloneComesThroughAtItsLevel(_ backend: String) throws {
        let talker = try EchoCancellerTests.speech("speech-48k-stereo-f32.wav")
        let near = Array(talker[0..<(talker.count / EchoBlock.frameCount * EchoBlock.frameCount)])
        let silence = [Float](repeating: 0, count: near.count)
        let (output, _) = try EchoCancellerTests.run(Self.make(backend, options: EchoControlOptions(noiseSuppression: false)), microphone: near, far: silence)
        let range = 8_000..<near.count
        let fit = Measurement.linearFit(estimate: output, reference: near, range)
        print("near end alone \(backend): level \(fit.levelDB) dB, SDR \(fit.signalToDistortionDB) dB, lag \(fit.lag)")
        #expect(abs(fit.levelDB) <= 1)
        #expect(fit.signalToDistortionDB >= 20)
    }

    @Test(arguments: backends)
    func aWarmedUpCancellerAllocatesNothingPerBlock(_ backend: String) throws {
        let far = EchoCancellerTests.far
        try #require(!far.isEmpty, "the bundled speech sample could not be read")
        let scene = Array(far[0..<(2 * 16_000)])
        let microphone = EchoPath(reverberationTime: 0.3, delayMilliseconds: 20).echo(of: scene)
        let canceller = try Self.make(backend)
        var output = [Float](repeating: 0, count: microphone.count)
        let block = EchoBlock.frameCount
        var allocations: UInt64 = 0
        try microphone.withUnsafeBufferPointer { mic in
            try scene.withUnsafeBufferPointer { reference in
                try output.withUnsafeMutableBufferPointer { out in
                    for offset in stride(from: 0, to: mic.count, by: block) {
                        let near = UnsafeBufferPointer(rebasing: mic[offset..<(offset + block)])
                        let farBlock = UnsafeBufferPointer(rebasing: reference[offset..<(offset + block)])
                        let into = UnsafeMutableBufferPointer(rebasing: out[offset..<(offset + block)])
                        if offset < 100 * block {
                            try canceller.process(near: near, far: farBlock, into: into)
                        } else {
                            allocations += try countAllocations { try canceller.process(near: near, far: farBlock, into: into) }
                        }
                    }
                }
            }
        }
        #expect(allocations == 0, "heap allocations over 100 blocks after 100 blocks of warm-up")
    }
}

/// The near end in double talk scored as listeners would: STOI and wideband PESQ against the clean
/// near end, beside the microphone's own scores, through a Python helper (pystoi, pesq).
struct EchoSpeechScoreTests {
    /// VOICEPIPE_PYTHON, else the environment Scripts/setup makes (scripts/bootstrap runs it), else python3.
    static let python: String = {
        if let chosen = ProcessInfo.processInfo.environment["VOICEPIPE_PYTHON"] { return chosen }
        let venv = CommandRunner.packageRoot.appendingPathComponent(".build/python/bin/python").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : "python3"
    }()
    static let script = CommandRunner.packageRoot.appendingPathComponent("Tests/VoicePipeIOTests/Scripts/speech_scores.py").path
    static let available: Bool = (try? CommandRunner.run([python, "-c", "import pystoi, pesq"], executable: URL(fileURLWithPath: "/usr/bin/env")).status) == 0

    /// The least STOI and PESQ gain (output less microphone, in double talk on the issue's room:
    /// T60 0.3 s, 60 ms, near end as loud as the echo) each variant holds: the measured gain less
    /// a margin (for VoicePipe's spectral suppressor: the goal itself). The microphone scores STOI
    /// 0.84, PESQ 1.11; WebRTC 0.3 with noise suppression
    /// took them to 0.54 and 1.04 (a loss pinned so a change shows, not a goal met); speexdsp to
    /// 0.98 and 1.78 (filter only) or 2.12 (with its preprocessor).
    static func minimumGain(_ variant: EchoCancellerTests.Variant) -> (stoi: Double, pesq: Double) {
        switch variant {
        case .webrtc, .webrtcNS: (-0.35, -0.4)
        case .speexLinear, .speex, .speexNS: (0.10, 0.4)
        // The goal, no lower than the microphone: measured 0.915 and 1.49 (0.915 and 1.52 with NS).
        case .speexSpectral, .speexSpectralNS: (0, 0)
        }
    }

    @Test(.enabled(if: available, "needs pystoi and pesq: run Tests/VoicePipeIOTests/Scripts/setup (scripts/bootstrap does), or set VOICEPIPE_PYTHON to a Python that has them"),
          arguments: [EchoCancellerTests.Variant.webrtcNS, .speexLinear, .speexNS, .speexSpectral, .speexSpectralNS])
    func theNearEndInDoubleTalkKeepsItsIntelligibility(_ variant: EchoCancellerTests.Variant) throws {
        try #require(!EchoCancellerTests.far.isEmpty, "the bundled speech sample could not be read")
        let (near, microphone) = EchoCancellerTests.scene(reverberationTime: 0.3, delayMilliseconds: 60)
        let (output, _) = try EchoCancellerTests.run(variant.make(), microphone: microphone, far: EchoCancellerTests.far)
        let start = EchoCancellerTests.singleTalkSeconds * EchoCancellerTests.rate, end = start + 29 * EchoCancellerTests.rate / 10
        let lag = Measurement.linearFit(estimate: output, reference: near, start..<end).lag
        let directory = try TemporaryDirectory()
        func write(_ name: String, _ samples: [Float]) throws -> String {
            let path = directory.path(name)
            try samples.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: path))
            return path
        }
        let result = try CommandRunner.run([Self.python, Self.script, "16000", "\(start)", "\(end)", try write("near.f32", near),
                                            "microphone=\(try write("microphone.f32", microphone))", "output=\(try write("output.f32", output))@\(lag)"],
                                           executable: URL(fileURLWithPath: "/usr/bin/env"))
        try #require(result.status == 0, "\(result)")
        let scores = try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: [String: Double]])
        let mic = try #require(scores["microphone"]), out = try #require(scores["output"])
        let stoiMic = try #require(mic["stoi"]), stoiOut = try #require(out["stoi"])
        let pesqMic = try #require(mic["pesq"]), pesqOut = try #require(out["pesq"])
        print("speech scores \(variant): STOI mic \(stoiMic) -> out \(stoiOut), PESQ mic \(pesqMic) -> out \(pesqOut)")
        #expect(stoiOut - stoiMic >= Self.minimumGain(variant).stoi)
        #expect(pesqOut - pesqMic >= Self.minimumGain(variant).pesq)
    }
}
