import AllocationCounting
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// The whole echo stage in steady state allocates nothing per frame: the render side handing
/// periods to the aligner and the capture side cleaning blocks (the aligner's reference, the
/// backend, the re-framing and peaks), with each backend, its noise suppression on and off.
struct EchoStageAllocationTests {
    enum Variant: String, CaseIterable, CustomStringConvertible {
        case webrtc, webrtcNoiseSuppression, speex, speexResidualAndNoiseSuppression
        var description: String { rawValue }
        func make() throws -> any EchoCanceller {
            switch self {
            case .webrtc: try WebRTCEchoCanceller(options: EchoControlOptions(noiseSuppression: false))
            case .webrtcNoiseSuppression: try WebRTCEchoCanceller()
            case .speex: try SpeexEchoCanceller(options: EchoControlOptions(noiseSuppression: false), residualEchoSuppression: false)
            case .speexResidualAndNoiseSuppression: try SpeexEchoCanceller()
            }
        }
    }

    /// What the two devices delivered, recorded once: the periods played before each block, and
    /// the blocks, with their stamps.
    struct Recording {
        var periods: [[Float]] = []
        var periodStamps: [PlayedPeriodStamp] = []
        /// Periods played before block i (cumulative).
        var periodsBefore: [Int] = []
        var blocks: [[Int16]] = []
        var blockStamps: [CapturedBlockStamp] = []
    }

    static let seconds = 8
    /// Past the clocks' minimum span (5 s), so the drift is measured and followed.
    static let warmUpSeconds = 6

    /// The reply through the room (60 ms, 0.3 s, 10 dB down) with a microphone 100 ppm fast.
    static let recording: Recording = {
        var recording = Recording()
        guard let impulse = try? RoomImpulseResponse(reverberationTime: 0.3, distance: 1, sampleRate: 16_000),
              let room = try? RoomSimulator(RoomConfiguration(playbackRate: 24_000, captureRate: 16_000, latency: 0.06, impulseResponse: impulse,
                                                              echoGainDB: -10, clockDriftPPM: 100)) else { return recording }
        var paced = PacedRoom(room: room, jitterSeconds: 0.001)
        let reply = Signals.program(sampleRate: 24_000, frames: seconds * 24_000 + 2_400, channel: 0).map(Float.init)
        for _ in 0..<(seconds * 100) {
            let block = paced.next(reply: { reply[$0 % reply.count] }) { period in
                recording.periods.append(Array(period.samples))
                recording.periodStamps.append(period.stamp)
            }
            recording.periodsBefore.append(recording.periods.count)
            recording.blocks.append(block.microphone.map(SampleConversion.int16))
            recording.blockStamps.append(block.stamp)
        }
        return recording
    }()

    @Test(arguments: Variant.allCases)
    func theWholeStageAllocatesNothingPerFrameOnceWarmedUp(_ variant: Variant) throws {
        let recording = Self.recording
        try #require(recording.blocks.count == Self.seconds * 100, "the room could not be built")
        let aligner = try EchoReferenceAligner(playbackRate: 24_000)
        let stage = try EchoControlStage(canceller: variant.make(), reference: aligner, frameSamples: 512)
        var frames = 0
        var allocations: UInt64 = 0
        var played = 0
        for index in recording.blocks.indices {
            let counted = index >= Self.warmUpSeconds * 100
            let step = {
                while played < recording.periodsBefore[index] {
                    recording.periods[played].withUnsafeBufferPointer {
                        aligner.submit(PlayedPeriod(samples: $0, sampleRate: 24_000, stamp: recording.periodStamps[played]))
                    }
                    played += 1
                }
                recording.blocks[index].withUnsafeBufferPointer { block in
                    stage.process(block, stamp: recording.blockStamps[index]) { _, _ in frames += 1 }
                }
            }
            if counted { allocations += countAllocations(step) } else { step() }
        }
        let countedFrames = (Self.seconds - Self.warmUpSeconds) * 16_000 / 512
        #expect(frames >= Self.seconds * 16_000 / 512)
        #expect(aligner.driftPPM != nil, "the drift is measured, so its path is the one counted")
        #expect(stage.blocksPassedThrough == 0)
        #expect(allocations == 0, "\(allocations) heap allocations over \(countedFrames) frames (200 blocks) after \(Self.warmUpSeconds) s of warm-up")
    }
}
