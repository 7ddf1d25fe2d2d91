import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// The echo stage when the speaker's stamps are wrong, as on ALSA's file plugin (its delay report
/// leaves out 80 ms of buffer and the pipe) or a Bluetooth speaker: speech played into a 0.3 s
/// room reaches the microphone `error` seconds later (or earlier) than the stamps say. With the
/// delay estimator the stage finds the offset, moves the reference and cancels as if the stamps
/// were right; without it the canceller spends its filter on the offset, or cannot follow at all.
struct EchoDelayCorrectionTests {
    /// The four bundled sentences, end to end, at 16 kHz: a reply as the runtime would send it.
    static let reply: [Float] = {
        let names = ["speech-48k-stereo-f32.wav", "speech-44k1-stereo-s16.wav", "speech-22k05-mono-s16.wav", "speech-8k-mono-s16.wav"]
        let samples = names.flatMap { (try? SpeechSamples.capture($0)) ?? [] }
        return (samples + samples).map(SampleConversion.float)
    }()

    struct Outcome {
        var erle: Double
        var corrections: Int
        var correction: Double
        var measuredLag: Double?
    }

    /// Plays the reply into the room for 16 s with stamps `error` seconds early, the talker (if any)
    /// speaking throughout; ERLE over the last 6 s of far-end single talk (or of everything).
    static func run(error: Double, estimating: Bool, backend: EchoBackend = .speexLinear, talker: [Float]? = nil) throws -> Outcome {
        let impulse = try RoomImpulseResponse(reverberationTime: 0.3, distance: 1, sampleRate: 16_000)
        var room = try RoomSimulator(RoomConfiguration(playbackRate: 16_000, captureRate: 16_000, latency: 0.06,
                                                       impulseResponse: impulse, echoGainDB: -10))
        let aligner = try EchoReferenceAligner(playbackRate: 16_000)
        let stage = try EchoControlStage(canceller: backend.make(), reference: aligner, frameSamples: 512, convergenceGuard: nil,
                                         delayEstimation: estimating ? EchoDelayEstimatorOptions() : nil)
        let seconds = 16
        #expect(reply.count >= (seconds + 1) * 16_000)
        var microphone: [Float] = [], cleaned: [Float] = []
        // The speaker is fed 300 ms ahead of the capture, as a reply output renders ahead of the
        // device: the reference for stamps that are early is then already there to read.
        func play(_ period: Int) {
            let played = Array(reply[(period * 160)..<((period + 1) * 160)])
            let heard = room.play(played)
            played.withUnsafeBufferPointer {
                aligner.submit(PlayedPeriod(samples: $0, sampleRate: 16_000,
                                            stamp: PlayedPeriodStamp(framePosition: heard.frame, instant: Int64(((heard.time + heard.latency - error) * 1e9).rounded()))))
            }
        }
        let ahead = 30
        for period in 0..<ahead { play(period) }
        for period in 0..<(seconds * 100) {
            play(period + ahead)
            var captured = room.capture(frames: 160).microphone
            if let talker {
                for index in 0..<160 { captured[index] += talker[(period * 160 + index) % talker.count] }
            }
            microphone += captured
            let samples = captured.map { SampleConversion.int16($0) }
            let stamp = CapturedBlockStamp(framePosition: period * 160, instant: Int64((Double(period) / 100 * 1e9).rounded()))
            samples.withUnsafeBufferPointer { block in
                stage.process(block, stamp: stamp) { frame, _ in cleaned += frame.map(SampleConversion.float) }
            }
        }
        stage.flush { frame, _ in cleaned += frame.map(SampleConversion.float) }
        let tail = (10 * 16_000)..<(seconds * 16_000)
        let erle = 10 * log10(Measurement.power(microphone, tail) / Measurement.power(cleaned, tail))
        return Outcome(erle: erle, corrections: stage.delayCorrections, correction: aligner.delayCorrection, measuredLag: stage.delayEstimator?.measuredLag)
    }

    @Test(arguments: [0.1, 0.2, -0.03])
    func stampsThatAreOffAreCorrectedAndTheEchoIsCancelledAsIfTheyWereRight(error: Double) throws {
        let right = try Self.run(error: 0, estimating: true)
        let corrected = try Self.run(error: error, estimating: true)
        let trusted = try Self.run(error: error, estimating: false)
        print("stamps \(Int(error * 1000)) ms early: ERLE \(corrected.erle) dB corrected (\(corrected.corrections) correction of \(corrected.correction) s, lag \(corrected.measuredLag ?? .nan) s), \(trusted.erle) dB trusting the stamps, \(right.erle) dB with right stamps")
        #expect(right.corrections == 0)
        #expect(corrected.corrections == 1)
        // The echo's direct path is 60 ms of latency and 1 m of air after the stamps, then `error`.
        #expect(abs(corrected.correction - error) <= 0.004, "moved \(corrected.correction) s for stamps \(error) s off")
        // speexdsp's linear filter alone (no suppressor, no guard, which would hide the filter's
        // alignment): measured 29.4 dB with right stamps and 29.5-29.6 dB corrected; trusting
        // stamps 100 ms, 200 ms and -30 ms off, 20.5, 0.4 and 1.1 dB.
        #expect(corrected.erle >= right.erle - 1, "\(corrected.erle) dB against \(right.erle) dB")
        #expect(corrected.erle >= 25)
        #expect(trusted.erle <= corrected.erle - 8)
    }

    @Test func aTalkerOverTheReplyDoesNotMoveARightReference() throws {
        // A near-end talker over the whole reply (the second half of the reply, unrelated speech).
        let talker = Array(Self.reply.reversed())
        let outcome = try Self.run(error: 0, estimating: true, talker: talker)
        #expect(outcome.corrections == 0)
    }
}
