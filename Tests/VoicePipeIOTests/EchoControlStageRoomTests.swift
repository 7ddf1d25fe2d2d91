import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// The capture path's echo stage in a simulated room, with each real backend: the reply played at
/// 24 kHz goes through the loudspeaker's 60 ms latency and a 0.3 s room, the microphone hears it
/// 10 dB down at 16 kHz, the aligner puts what was played on the capture's timeline from the
/// devices' stamps, and the stage removes the echo from the frames that would be sent.
struct EchoControlStageRoomTests {
    enum Backend: String, CaseIterable, CustomStringConvertible {
        case webrtc, speex
        var description: String { rawValue }
        func make() throws -> any EchoCanceller {
            switch self {
            case .webrtc: try WebRTCEchoCanceller()
            case .speex: try SpeexEchoCanceller()
            }
        }
        /// The least echo removal held: measured in this room 40.6 dB (WebRTC) and 45.6 dB
        /// (speexdsp), less a margin; the run is deterministic (a seeded room, one thread).
        var minimumERLE: Double {
            switch self {
            case .webrtc: 35
            case .speex: 40
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func theStageRemovesTheEchoOfTheReplyInARoomWithTheAlignedReference(backend: Backend) throws {
        let impulse = try RoomImpulseResponse(reverberationTime: 0.3, distance: 1, sampleRate: 16_000)
        var room = try RoomSimulator(RoomConfiguration(playbackRate: 24_000, captureRate: 16_000, latency: 0.06,
                                                       impulseResponse: impulse, echoGainDB: -10))
        let aligner = try EchoReferenceAligner(playbackRate: 24_000)
        let stage = try EchoControlStage(canceller: backend.make(), reference: aligner, frameSamples: 512)
        let seconds = 12
        let reply = Signals.program(sampleRate: 24_000, frames: seconds * 24_000, channel: 0).map(Float.init)
        var microphone: [Float] = [], cleaned: [Float] = []
        for period in 0..<(seconds * 100) {
            let played = Array(reply[(period * 240)..<((period + 1) * 240)])
            let heard = room.play(played)
            played.withUnsafeBufferPointer {
                aligner.submit(PlayedPeriod(samples: $0, sampleRate: 24_000,
                                            stamp: PlayedPeriodStamp(framePosition: heard.frame, instant: Int64(((heard.time + heard.latency) * 1e9).rounded()))))
            }
            let captured = room.capture(frames: 160)
            microphone += captured.microphone
            let samples = captured.microphone.map { SampleConversion.int16($0) }
            let stamp = CapturedBlockStamp(framePosition: captured.report.timestamp.frame, instant: Int64((captured.report.timestamp.time * 1e9).rounded()))
            samples.withUnsafeBufferPointer { block in
                stage.process(block, stamp: stamp) { frame, _ in cleaned += frame.map(SampleConversion.float) }
            }
        }
        stage.flush { frame, _ in cleaned += frame.map(SampleConversion.float) }
        #expect(cleaned.count == microphone.count)
        // After convergence (the last 4 s), far-end single talk: how much of the echo is gone.
        let tail = (8 * 16_000)..<(seconds * 16_000)
        let erle = 10 * log10(Measurement.power(microphone, tail) / Measurement.power(cleaned, tail))
        print("echo stage in a 0.3 s room, 60 ms latency, \(backend): ERLE \(erle) dB, drift \(aligner.driftPPM.map { "\($0) ppm" } ?? "not yet measured")")
        #expect(erle >= backend.minimumERLE, "\(backend): \(erle) dB")
        #expect(stage.blocksPassedThrough == 0)
    }
}
