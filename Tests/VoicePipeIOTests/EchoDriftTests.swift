import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// Clock drift between the speaker and the microphone over minutes of audio time, on the
/// simulated room's timeline: the reply at 24 kHz through 60 ms of latency and an echo path,
/// heard 10 dB down at 16 kHz by a microphone whose clock runs ±100 ppm against the speaker's.
/// The aligner measures the drift from the devices' stamps and follows it, so speexdsp's echo
/// removal after convergence holds from the first window to the last; with the drift not
/// followed (the first block's offset kept) the echo comes back.
///
/// ```
///  PacedRoom (one timeline) ─▶ speaker period stamps ─┐  recorded once per drift
///                           └▶ microphone blocks ─────┤
///                                                      ├─▶ aligner (drift followed) ─▶ stage ─▶ ERLE per 10 s
///                                                      └─▶ aligner (offset kept)    ─▶ stage ─▶ ERLE per 10 s
/// ```
///
/// By default two minutes through a short echo path (the room simulator's convolution is what
/// costs time in a debug build: about 1 s per audio second for a 0.1 s room, 3 s for 0.3 s);
/// `VOICEPIPE_DRIFT_MINUTES=10 VOICEPIPE_DRIFT_REVERBERATION=0.3 swift test --filter EchoDriftTests`
/// runs the issue's ten minutes in a generated 0.3 s room.
struct EchoDriftTests {
    static let environment = ProcessInfo.processInfo.environment
    static let minutes = min(max(environment["VOICEPIPE_DRIFT_MINUTES"].flatMap { Int($0) } ?? 2, 1), 60)
    static let reverberation = environment["VOICEPIPE_DRIFT_REVERBERATION"].flatMap { Double($0) }.map { min(max($0, 0.05), 0.6) }
    /// Seconds of each ERLE window, and of the convergence left out before the first.
    static let window = 10
    static let convergence = 10

    /// The room as the capture side received it: the microphone blocks (as sent, Int16) and
    /// stamps, and the speaker's periods' stamps with how many came before each block (their
    /// samples are ``reply`` at their frames).
    struct Recording {
        var microphone: [Int16] = []
        var blockStamps: [CapturedBlockStamp] = []
        var periodStamps: [PlayedPeriodStamp] = []
        var periodsBefore: [Int] = []
        var wallSeconds = 0.0
    }

    /// What one pass through the echo stage measured.
    struct Figures {
        /// The aligner's drift figure at the end (speaker against microphone).
        var driftPPM: Double?
        /// ERLE of each window after convergence (dB), in order.
        var erle: [Double]
        var blocksPassedThrough: Int
        var wallSeconds: Double
    }

    /// The drift the aligner should report for a microphone `ppm` fast: the speaker runs
    /// 1 / (1 + ppm·10⁻⁶) − 1 against it.
    static func expectedDrift(microphonePPM ppm: Double) -> Double {
        (1 / (1 + ppm * 1e-6) - 1) * 1e6
    }

    /// A 30 s program signal (far-end single talk), played in a loop as the reply.
    static let replyLoop: [Float] = Signals.program(sampleRate: 24_000, frames: 30 * 24_000, channel: 0).map { Float($0 * 0.8) }
    static func reply(_ frame: Int) -> Float { replyLoop[frame % replyLoop.count] }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = (ContinuousClock.now - start).components
        return Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18
    }

    /// A short echo path (a loudspeaker 1 m away and three early reflections, 6 ms in all) for
    /// the always-on run: the room simulator's convolution is what costs time in a debug build.
    /// The room: the short path by default, a generated room of `VOICEPIPE_DRIFT_REVERBERATION` seconds when set.
    static func impulse() throws -> RoomImpulseResponse {
        guard let reverberation else { return try shortPath() }
        return try RoomImpulseResponse(reverberationTime: reverberation, distance: 1, sampleRate: 16_000)
    }

    static var roomName: String { reverberation.map { "a \($0) s room" } ?? "a 6 ms echo path" }

    static func shortPath() throws -> RoomImpulseResponse {
        var taps = [Float](repeating: 0, count: 96)
        taps[47] = 1
        taps[61] = -0.45
        taps[78] = 0.3
        taps[95] = -0.2
        return try RoomImpulseResponse(samples: taps, sampleRate: 16_000)
    }

    static func record(microphonePPM ppm: Double, seconds: Int, impulse: RoomImpulseResponse, jitterSeconds: Double = 0.001) throws -> Recording {
        let started = ContinuousClock.now
        let room = try RoomSimulator(RoomConfiguration(playbackRate: 24_000, captureRate: 16_000, latency: 0.06,
                                                       impulseResponse: impulse, echoGainDB: -10, clockDriftPPM: ppm))
        var paced = PacedRoom(room: room, jitterSeconds: jitterSeconds)
        var recording = Recording()
        recording.microphone.reserveCapacity(seconds * 16_000)
        for _ in 0..<(seconds * 100) {
            let block = paced.next(reply: reply) { recording.periodStamps.append($0.stamp) }
            recording.periodsBefore.append(recording.periodStamps.count)
            recording.microphone += block.microphone.map(SampleConversion.int16)
            recording.blockStamps.append(block.stamp)
        }
        recording.wallSeconds = Self.seconds(since: started)
        return recording
    }

    static func stream(_ recording: Recording, compensatesDrift: Bool) throws -> Figures {
        let started = ContinuousClock.now
        let aligner = try EchoReferenceAligner(playbackRate: 24_000, options: EchoReferenceOptions(compensatesDrift: compensatesDrift))
        // Without the convergence guard: the figure is the aligner's and the canceller's; the
        // guard would hold back what a drifted reference leaves, and hide it.
        let stage = try EchoControlStage(canceller: SpeexEchoCanceller(), reference: aligner, frameSamples: 512, convergenceGuard: nil)
        // Windows of `window` seconds from the end of convergence; convergence and any remainder
        // fall in the last bin, which is not reported.
        let windowSamples = window * 16_000
        let windows = (recording.microphone.count - convergence * 16_000) / windowSamples
        func bin(_ sample: Int) -> Int {
            sample < convergence * 16_000 ? windows : min((sample - convergence * 16_000) / windowSamples, windows)
        }
        var microphonePower = [Double](repeating: 0, count: windows + 1)
        var cleanedPower = microphonePower
        for (index, sample) in recording.microphone.enumerated() {
            let value = Double(SampleConversion.float(sample))
            microphonePower[bin(index)] += value * value
        }
        var cleanedIndex = 0
        func collect(_ frame: UnsafeBufferPointer<Int16>, _ level: PeakLevel) {
            for sample in frame {
                let value = Double(SampleConversion.float(sample))
                cleanedPower[bin(cleanedIndex)] += value * value
                cleanedIndex += 1
            }
        }
        var period = [Float](repeating: 0, count: 240)
        var played = 0
        recording.microphone.withUnsafeBufferPointer { microphone in
            for (block, stamp) in recording.blockStamps.enumerated() {
                while played < recording.periodsBefore[block] {
                    let stamp = recording.periodStamps[played]
                    for index in period.indices { period[index] = reply(stamp.framePosition + index) }
                    period.withUnsafeBufferPointer { aligner.submit(PlayedPeriod(samples: $0, sampleRate: 24_000, stamp: stamp)) }
                    played += 1
                }
                stage.process(UnsafeBufferPointer(rebasing: microphone[(block * 160)..<((block + 1) * 160)]), stamp: stamp, collect)
            }
        }
        stage.flush(collect)
        let erle = (0..<windows).map { 10 * log10(microphonePower[$0] / max(cleanedPower[$0], 1e-30)) }
        return Figures(driftPPM: aligner.driftPPM, erle: erle, blocksPassedThrough: stage.blocksPassedThrough,
                       wallSeconds: Self.seconds(since: started))
    }

    static func describe(_ figures: Figures) -> String {
        let erle = figures.erle.map { String(format: "%.1f", $0) }.joined(separator: " ")
        return "drift \(figures.driftPPM.map { String(format: "%.2f ppm", $0) } ?? "not measured"), ERLE per \(window) s from \(convergence) s [\(erle)] dB, stage \(String(format: "%.1f", figures.wallSeconds)) s"
    }

    /// Exact stamps: the drift measured within 2 ppm, ERLE at least 35 dB in every window
    /// after convergence to the end; without following the drift the echo is back. Measured over
    /// 10 minutes on the short path: 46–66 dB followed, 11–13 dB not; over 2 minutes in the
    /// 0.3 s room: 40–56 dB followed, 19–21 dB not.
    @Test(arguments: [100.0, -100.0])
    func theAlignerMeasuresTheDriftAndTheEchoStaysRemovedToTheEnd(microphonePPM: Double) throws {
        let recording = try Self.record(microphonePPM: microphonePPM, seconds: Self.minutes * 60, impulse: Self.impulse(), jitterSeconds: 0)
        let followed = try Self.stream(recording, compensatesDrift: true)
        let unfollowed = try Self.stream(recording, compensatesDrift: false)
        let room = "microphone \(microphonePPM) ppm, exact stamps, \(Self.minutes) min, \(Self.roomName) (recorded in \(String(format: "%.1f", recording.wallSeconds)) s)"
        print("\(room), drift followed: \(Self.describe(followed))")
        print("\(room), drift not followed: \(Self.describe(unfollowed))")
        let drift = try #require(followed.driftPPM)
        #expect(abs(drift - Self.expectedDrift(microphonePPM: microphonePPM)) <= 2, "measured \(drift) ppm")
        #expect(followed.blocksPassedThrough == 0)
        for (index, erle) in followed.erle.enumerated() {
            #expect(erle >= 35, "window \(index) (from \(Self.convergence + index * Self.window) s): \(erle) dB")
        }
        let last = try #require(followed.erle.last.flatMap { followed in unfollowed.erle.last.map { (followed, $0) } })
        #expect(last.1 < 25, "not followed, the last window: \(unfollowed.erle)")
        #expect(last.0 - last.1 >= 20, "followed \(last.0) dB against \(last.1) dB")
    }

    /// Stamps with uniform jitter on each instant of both devices (±0.1 ms, as a driver's
    /// hardware timestamps give; ±1 ms, as "now − delay" taken after a scheduling delay may):
    /// the drift is still measured within 2 ppm. With ±0.1 ms the echo stays removed as with
    /// exact stamps (measured 43–59 dB); with ±1 ms the clock lines move with the jitter while
    /// they settle, and the reference with them: measured 28–34 dB for the first 50 s and
    /// 31–53 dB over ten minutes, printed, not held to the goal.
    @Test(arguments: [0.0001, 0.001])
    func withJitteredStampsTheDriftIsStillMeasured(jitterSeconds: Double) throws {
        let recording = try Self.record(microphonePPM: 100, seconds: Self.minutes * 60, impulse: Self.impulse(), jitterSeconds: jitterSeconds)
        let followed = try Self.stream(recording, compensatesDrift: true)
        let unfollowed = try Self.stream(recording, compensatesDrift: false)
        let room = "microphone 100 ppm, ±\(jitterSeconds * 1000) ms stamps, \(Self.minutes) min, \(Self.roomName)"
        print("\(room), drift followed: \(Self.describe(followed))")
        print("\(room), drift not followed: \(Self.describe(unfollowed))")
        let drift = try #require(followed.driftPPM)
        #expect(abs(drift - Self.expectedDrift(microphonePPM: 100)) <= 2, "measured \(drift) ppm")
        if jitterSeconds <= 0.0001 {
            for (index, erle) in followed.erle.enumerated() {
                #expect(erle >= 35, "window \(index) (from \(Self.convergence + index * Self.window) s): \(erle) dB")
            }
        }
    }
}
