import Foundation
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// One row of the drift table: ten minutes of the issue's room with the microphone's clock off
/// the speaker's, through the echo stage with speexdsp, the drift followed and not.
struct EchoDriftRow: Codable {
    var name: String
    /// How fast the microphone's clock runs against the speaker's (ppm).
    var microphonePPM: Double
    /// Uniform jitter on every stamp's instant (± seconds).
    var jitterSeconds: Double
    var minutes: Int
    /// The aligner's figure at the end, and the exact one (speaker against microphone).
    var measuredDriftPPM: Double?
    var expectedDriftPPM: Double
    /// ERLE of each minute (the first from 10 s), dB: the drift followed, and the first offset kept.
    var followedERLE: [Double]
    var unfollowedERLE: [Double]
}

/// The drift figures of section 6, measured rather than timed: the reply at 24 kHz through 60 ms
/// of latency and a 0.3 s room, heard 10 dB down at 16 kHz by a microphone ±100 ppm off, for ten
/// minutes of audio time on the room's timeline (`PacedRoom`: the speaker topped up before each
/// 10 ms block, the devices' stamps). The room is recorded once per row and streamed through
/// two aligners. The test suite's `EchoDriftTests` holds the same in a shorter run.
enum EchoDriftBenchmark {
    static let name = "echo/drift"
    static let minutes = 10
    static let convergenceSeconds = 10

    static func rows(progress: Progress) -> [EchoDriftRow] {
        [(100.0, 0.0), (-100.0, 0.0), (100.0, 0.001)].compactMap { ppm, jitter in
            progress.say("echo drift: \(ppm) ppm, ±\(jitter * 1000) ms stamps, \(minutes) min")
            return row(microphonePPM: ppm, jitterSeconds: jitter)
        }
    }

    struct Recording {
        var microphone: [Int16] = []
        var blockStamps: [CapturedBlockStamp] = []
        var periodStamps: [PlayedPeriodStamp] = []
        var periodsBefore: [Int] = []
    }

    static let replyLoop: [Float] = Signals.program(sampleRate: 24_000, frames: 30 * 24_000, channel: 0).map { Float($0 * 0.8) }
    static func reply(_ frame: Int) -> Float { replyLoop[frame % replyLoop.count] }

    static func row(microphonePPM ppm: Double, jitterSeconds: Double) -> EchoDriftRow? {
        guard let recording = record(microphonePPM: ppm, jitterSeconds: jitterSeconds),
              let followed = stream(recording, compensatesDrift: true),
              let unfollowed = stream(recording, compensatesDrift: false) else { return nil }
        let jitterName = jitterSeconds > 0 ? "/jitter-\(Format.significant(jitterSeconds * 1000))ms" : ""
        return EchoDriftRow(name: "\(name)/\(ppm > 0 ? "+" : "")\(Int(ppm))ppm\(jitterName)", microphonePPM: ppm, jitterSeconds: jitterSeconds,
                            minutes: minutes, measuredDriftPPM: followed.drift, expectedDriftPPM: (1 / (1 + ppm * 1e-6) - 1) * 1e6,
                            followedERLE: followed.erle, unfollowedERLE: unfollowed.erle)
    }

    static func record(microphonePPM ppm: Double, jitterSeconds: Double) -> Recording? {
        guard let impulse = try? RoomImpulseResponse(reverberationTime: 0.3, distance: 1, sampleRate: 16_000),
              let room = try? RoomSimulator(RoomConfiguration(playbackRate: 24_000, captureRate: 16_000, latency: 0.06,
                                                              impulseResponse: impulse, echoGainDB: -10, clockDriftPPM: ppm)) else { return nil }
        var paced = PacedRoom(room: room, jitterSeconds: jitterSeconds)
        var recording = Recording()
        recording.microphone.reserveCapacity(minutes * 60 * 16_000)
        for _ in 0..<(minutes * 60 * 100) {
            let block = paced.next(reply: reply) { recording.periodStamps.append($0.stamp) }
            recording.periodsBefore.append(recording.periodStamps.count)
            for value in block.microphone { recording.microphone.append(SampleConversion.int16(value)) }
            recording.blockStamps.append(block.stamp)
        }
        return recording
    }

    /// ERLE per minute after convergence, and the aligner's drift figure at the end.
    static func stream(_ recording: Recording, compensatesDrift: Bool) -> (erle: [Double], drift: Double?)? {
        guard let aligner = try? EchoReferenceAligner(playbackRate: 24_000, options: EchoReferenceOptions(compensatesDrift: compensatesDrift)),
              let canceller = try? SpeexEchoCanceller(),
              // No convergence guard: it would hold back what a drifted reference leaves, and hide it.
              let stage = try? EchoControlStage(canceller: canceller, reference: aligner, frameSamples: 512, convergenceGuard: nil) else { return nil }
        let convergence = convergenceSeconds * 16_000
        // Minute m covers samples [60 s·m, 60 s·(m+1)), the first from the end of convergence.
        func bin(_ sample: Int) -> Int? { sample < convergence ? nil : min(sample / (60 * 16_000), minutes - 1) }
        var microphonePower = [Double](repeating: 0, count: minutes)
        var cleanedPower = microphonePower
        for (index, sample) in recording.microphone.enumerated() {
            guard let bin = bin(index) else { continue }
            let value = Double(SampleConversion.float(sample))
            microphonePower[bin] += value * value
        }
        var cleanedIndex = 0
        func collect(_ frame: UnsafeBufferPointer<Int16>, _ level: PeakLevel) {
            for sample in frame {
                if let bin = bin(cleanedIndex) {
                    let value = Double(SampleConversion.float(sample))
                    cleanedPower[bin] += value * value
                }
                cleanedIndex += 1
            }
        }
        var period = [Float](repeating: 0, count: 240)
        var played = 0
        recording.microphone.withUnsafeBufferPointer { microphone in
            for (block, stamp) in recording.blockStamps.enumerated() {
                while played < recording.periodsBefore[block] {
                    let periodStamp = recording.periodStamps[played]
                    for index in period.indices { period[index] = reply(periodStamp.framePosition + index) }
                    period.withUnsafeBufferPointer { aligner.submit(PlayedPeriod(samples: $0, sampleRate: 24_000, stamp: periodStamp)) }
                    played += 1
                }
                stage.process(UnsafeBufferPointer(rebasing: microphone[(block * 160)..<((block + 1) * 160)]), stamp: stamp, collect)
            }
        }
        stage.flush(collect)
        let erle = (0..<minutes).map { 10 * log10(microphonePower[$0] / max(cleanedPower[$0], 1e-30)) }
        return (erle, aligner.driftPPM)
    }

    static func table(_ rows: [EchoDriftRow], _ out: inout String) {
        func line(_ s: String = "") { out += s + "\n" }
        line("### Drift over ten minutes")
        line()
        line("`EchoControlStage` with speexdsp (residual echo and noise suppression) in the room above, the microphone's clock ±100 ppm off the speaker's, \(minutes) minutes of audio time; the aligner fed with the devices' stamps (exact, or with uniform jitter on every instant). **drift** = the aligner's figure at the end (expected in brackets); **ERLE** = microphone energy over cleaned energy in each minute (the first from \(convergenceSeconds) s): its lowest, first and last, with the drift followed and with the first offset kept.")
        line()
        line("| row | drift (ppm) | ERLE followed: lowest, first, last minute | ERLE not followed: lowest, first, last minute |")
        line("|---|---:|---:|---:|")
        func figures(_ erle: [Double]) -> String {
            guard let first = erle.first, let last = erle.last, let lowest = erle.min() else { return "–" }
            return "\(Format.significant(lowest)), \(Format.significant(first)), \(Format.significant(last)) dB"
        }
        for row in rows {
            let drift = row.measuredDriftPPM.map { String(format: "%.2f", $0) } ?? "–"
            line("| \(row.name) | \(drift) (\(String(format: "%.2f", row.expectedDriftPPM))) | \(figures(row.followedERLE)) | \(figures(row.unfollowedERLE)) |")
        }
        line()
    }
}
