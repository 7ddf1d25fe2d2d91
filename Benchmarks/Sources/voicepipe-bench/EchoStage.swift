import Foundation
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// One row of the echo-control table: the capture path's echo stage with one backend.
struct EchoStageRow: Codable {
    var name: String
    var backend: String
    /// CPU seconds per second of 16 kHz audio through the stage: median (min–max).
    var cpuPerAudioSecond: Spread
    /// The median as a share of one core.
    var shareOfOneCore: Double
    /// Microphone energy over cleaned energy, whole stream (convergence included), in dB.
    var energyReductionDB: Double?
    /// Heap allocations per 512-sample frame in steady state (the last 4 s, the drift measured),
    /// render side and capture side together.
    var allocationsPerFrame: Double?
}

/// The echo stage (`EchoControlStage`: aligner reference, backend, re-framing into 512-sample
/// frames with their peaks) on 10 s of a simulated room: the reply played at 24 kHz through 60 ms
/// of latency and a 0.3 s room, heard 10 dB down at 16 kHz. Each pass builds a fresh stage and
/// backend (their creation is in the figure) and streams the whole recording, stamps included,
/// as the live path would, one 10 ms period at a time.
final class EchoStageBenchmark {
    static let prefix = "echo/"
    static let seconds = 10

    struct Recording {
        var played: [[Float]] = []
        var playedStamps: [PlayedPeriodStamp] = []
        var captured: [[Int16]] = []
        var capturedStamps: [CapturedBlockStamp] = []
    }

    struct Case {
        let name: String
        let backend: String
        let make: () throws -> any EchoCanceller
        let estimatesDelay: Bool
        let timed: TimedCell
        var lastReduction: Double?
    }

    private(set) var cases: [Case] = []
    private let recording: Recording

    init(filter: (String) -> Bool) {
        recording = Self.record()
        let backends: [(String, String, () throws -> any EchoCanceller)] = [
            ("webrtc", "WebRTC 0.3, noise suppression off", { try WebRTCEchoCanceller(options: EchoControlOptions(noiseSuppression: false)) }),
            ("webrtc+ns", "WebRTC 0.3 with noise suppression (the default)", { try WebRTCEchoCanceller() }),
            ("speex", "speexdsp canceller alone", { try SpeexEchoCanceller(options: EchoControlOptions(noiseSuppression: false), residualEchoSuppression: false) }),
            ("speex+res", "speexdsp with residual echo suppression", { try SpeexEchoCanceller(options: EchoControlOptions(noiseSuppression: false)) }),
            ("speex+res+ns", "speexdsp with residual echo and noise suppression", { try SpeexEchoCanceller() }),
            ("pass-through", "the stage alone (aligner, delay estimator, blocks, frames, peaks), backend copies", { PassThroughCanceller() }),
        ]
        var variants = backends.map { ($0.0, $0.1, $0.2, true) }
        variants.append(("pass-through-trusting-stamps", "the stage alone without the delay estimator (the stamps trusted)", { PassThroughCanceller() }, false))
        for (name, backend, make, estimatesDelay) in variants where filter(Self.prefix + name) {
            let recording = recording
            let timed = TimedCell(name: Self.prefix + name, maxPasses: 20) {
                BlackHole.consume(Self.stream(recording, through: make, estimatesDelay: estimatesDelay)?.blocksProcessed ?? -1)
            }
            cases.append(Case(name: Self.prefix + name, backend: backend, make: make, estimatesDelay: estimatesDelay, timed: timed))
        }
    }

    func run(_ schedule: RoundRobin, progress: Progress) {
        schedule.run(cases.map(\.timed), label: "echo stage", progress: progress)
    }

    func rows() -> [EchoStageRow] {
        cases.map { item in
            let perPass = item.timed.cpuPerPass
            let perSecond = Spread(median: perPass.median / Double(Self.seconds), min: perPass.min / Double(Self.seconds),
                                   max: perPass.max / Double(Self.seconds))
            var allocations: UInt64 = 0
            let stage = Self.stream(recording, through: item.make, estimatesDelay: item.estimatesDelay, countingFrom: Self.steadyBlock, allocations: &allocations)
            let frames = Double((recording.captured.count - Self.steadyBlock) * 160) / 512
            return EchoStageRow(name: item.name, backend: item.backend, cpuPerAudioSecond: perSecond,
                                shareOfOneCore: perSecond.median, energyReductionDB: stage?.energyReductionDB,
                                allocationsPerFrame: stage.map { _ in Double(allocations) / frames })
        }
    }

    /// The first block of the steady state: 6 s in, past the clocks' 5 s minimum span.
    static let steadyBlock = 600

    /// The whole recording through a fresh stage; nil when the backend could not be made.
    private static func stream(_ recording: Recording, through make: () throws -> any EchoCanceller, estimatesDelay: Bool) -> EchoControlStage? {
        var allocations: UInt64 = 0
        return stream(recording, through: make, estimatesDelay: estimatesDelay, countingFrom: recording.captured.count, allocations: &allocations)
    }

    /// The whole recording through a fresh stage, counting heap allocations from block `countingFrom` on.
    private static func stream(_ recording: Recording, through make: () throws -> any EchoCanceller, estimatesDelay: Bool, countingFrom: Int,
                               allocations: inout UInt64) -> EchoControlStage? {
        guard let canceller = try? make(), let aligner = try? EchoReferenceAligner(playbackRate: 24_000),
              let stage = try? EchoControlStage(canceller: canceller, reference: aligner, frameSamples: 512,
                                                delayEstimation: estimatesDelay ? EchoDelayEstimatorOptions() : nil) else { return nil }
        for index in recording.captured.indices {
            func step() {
                recording.played[index].withUnsafeBufferPointer {
                    aligner.submit(PlayedPeriod(samples: $0, sampleRate: 24_000, stamp: recording.playedStamps[index]))
                }
                recording.captured[index].withUnsafeBufferPointer { block in
                    stage.process(block, stamp: recording.capturedStamps[index]) { frame, level in BlackHole.consume(level.peak + frame.count) }
                }
            }
            if index >= countingFrom { allocations += countAllocations(step) } else { step() }
        }
        stage.flush { frame, level in BlackHole.consume(level.peak + frame.count) }
        return stage
    }

    /// 10 s of the reply through the room, with the devices' stamps, recorded once.
    private static func record() -> Recording {
        var recording = Recording()
        guard let impulse = try? RoomImpulseResponse(reverberationTime: 0.3, distance: 1, sampleRate: 16_000),
              var room = try? RoomSimulator(RoomConfiguration(playbackRate: 24_000, captureRate: 16_000, latency: 0.06,
                                                              impulseResponse: impulse, echoGainDB: -10)) else { return recording }
        let reply = Signals.program(sampleRate: 24_000, frames: seconds * 24_000, channel: 0).map(Float.init)
        for period in 0..<(seconds * 100) {
            let played = Array(reply[(period * 240)..<((period + 1) * 240)])
            let heard = room.play(played)
            recording.played.append(played)
            recording.playedStamps.append(PlayedPeriodStamp(framePosition: heard.frame, instant: Int64(((heard.time + heard.latency) * 1e9).rounded())))
            let captured = room.capture(frames: 160)
            recording.captured.append(captured.microphone.map { SampleConversion.int16($0) })
            recording.capturedStamps.append(CapturedBlockStamp(framePosition: captured.report.timestamp.frame,
                                                               instant: Int64((captured.report.timestamp.time * 1e9).rounded())))
        }
        return recording
    }

    static func table(_ rows: [EchoStageRow], _ out: inout String) {
        func line(_ s: String = "") { out += s + "\n" }
        line("## 6. Echo control: the capture path's echo stage")
        line()
        line("`EchoControlStage` with each backend on 10 s of a simulated room (the reply at 24 kHz through 60 ms of latency and a 0.3 s room, heard 10 dB down at 16 kHz), fed period by period with the devices' stamps as the live path is: the aligner's reference, the backend, the re-framing into 512-sample frames and their peaks. Each pass builds a fresh stage and backend. **CPU per audio second** = median (min–max); **of one core** = the median as a share of one core (the goal is at most 1 %). **reduction** = microphone energy over cleaned energy over the whole stream, convergence included. **allocations per frame** = heap allocations of the render and capture sides together per 512-sample frame over the last 4 s (steady state, the drift measured; the goal is 0).")
        line()
        line("| contender | backend | CPU ms per audio second | of one core | reduction | allocations per frame |")
        line("|---|---|---:|---:|---:|---:|")
        for row in rows {
            let cpu = Format.spread(row.cpuPerAudioSecond) { Format.significant($0 * 1000) }
            let reduction = row.energyReductionDB.map { Format.significant($0) + " dB" } ?? "–"
            let allocations = row.allocationsPerFrame.map { $0 == 0 ? "0" : Format.significant($0) } ?? "–"
            line("| \(row.name) | \(row.backend) | \(cpu) | \(Format.significant(row.shareOfOneCore * 100)) % | \(reduction) | \(allocations) |")
        }
        line()
    }
}

/// A backend that copies the microphone: what the stage itself costs.
private final class PassThroughCanceller: EchoCanceller {
    let name = "pass-through"
    func process(near: UnsafeBufferPointer<Float>, far: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) throws(EchoControlError) {
        try checkBlock(near: near, far: far, output: output)
        _ = output.update(fromContentsOf: near)
    }
    func reset() {}
}
