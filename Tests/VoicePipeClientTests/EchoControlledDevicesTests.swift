import Foundation
import Synchronization
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession
import VoicePipeTestSupport

/// A microphone and a speaker with echo control between them, each failing mid-session and
/// coming back in another format: the session goes on as text, every frame captured is sent, the
/// echo stage starts afresh for the new microphone and the reference follows the new speaker.
struct EchoControlledDevicesTests {
    /// Passes the microphone through (so what is sent is exactly what the converter made) and
    /// counts its resets.
    final class PassThroughCanceller: EchoCanceller {
        let name = "pass-through"
        private let resetCount = Atomic<Int>(0)
        var resets: Int { resetCount.load(ordering: .relaxed) }
        func process(near: UnsafeBufferPointer<Float>, far: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) throws(EchoControlError) {
            try checkBlock(near: near, far: far, output: output)
            for index in 0..<near.count { output[index] = near[index] }
        }
        func reset() { resetCount.add(1, ordering: .relaxed) }
    }

    static let speakerFormat = AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: false)
    /// The hands-free profile both devices come back in.
    static let handsFreeSpeaker = AudioFormat(sampleRate: 16_000, channelCount: 1, sampleType: .float32, isInterleaved: false)

    @Test func bothDevicesFailAndComeBackInTheirHandsFreeFormatsWithEchoControlFollowing() throws {
        let microphones = [FakeAudioDevice(name: "headset", format: CaptureReopeningTests.headset),
                           FakeAudioDevice(name: "headset", format: CaptureReopeningTests.handsFree)]
        let speakers = [FakeAudioDevice(name: "headset", format: Self.speakerFormat), FakeAudioDevice(name: "headset", format: Self.handsFreeSpeaker)]
        let microphoneOpens = Locked(0), speakerOpens = Locked(0)
        let time = Locked(ContinuousClock.now)
        let changes = Locked<[String]>([])
        let canceller = PassThroughCanceller()
        let devices = try EchoControlledDevices(
            microphoneName: "headset", speakerName: "headset",
            openMicrophone: {
                let open = microphoneOpens.withLock { $0 += 1; return $0 }
                return try CaptureDevice(microphones[min(open, 2) - 1])
            },
            converter: { format in try CaptureConverter(input: format) },
            openSpeaker: {
                let open = speakerOpens.withLock { $0 += 1; return $0 }
                return try PlaybackDevice(speakers[min(open, 2) - 1])
            },
            canceller: canceller, now: { time.value }, onSpeakerChange: { change in changes.withLock { $0.append(change) } })
        #expect(microphoneOpens.value == 1 && speakerOpens.value == 1)
        let running = SessionDriverTests.Running(options: SessionDriverTests.options(), capture: devices.capture)
        #expect(running.waitForMessages(1))

        // The speaker plays a reply, fails, is let go, and comes back at 16 kHz mono for the next.
        let chunk = AudioChunk(sampleRate: 24_000, samples: [Int16](repeating: 8_192, count: 480))
        #expect(try devices.output.play(chunk) == false)
        #expect(waitUntil { speakers[0].played.first?.contains { abs($0 - 0.25) < 0.01 } == true })
        speakers[0].failPlayback(SystemErrorCode(.alsa, -ENODEV, message: "No such device"))
        #expect(waitUntil { (try? devices.output.play(chunk)) == true && devices.output.losses == 1 })
        time.withLock { $0 += .seconds(2) }
        #expect(try devices.output.play(chunk) == false && speakerOpens.value == 2)
        #expect(changes.value.last == "speaker 'headset' is back")
        #expect(waitUntil { speakers[1].played.first?.contains { abs($0 - 0.25) < 0.01 } == true })

        // The microphone hears 0.6 s, then is unplugged mid-word.
        let tone = Signals.sine(frequency: 440, amplitude: 0.5, sampleRate: 48_000, frames: 28_800)
        let stereo = Signals.interleave([tone, tone]).map(Float.init)
        CaptureReopeningTests.deliver(stereo.withUnsafeBytes { Array($0) }, to: microphones[0], bytesPerBuffer: 480 * 8)
        let before = try CaptureReopeningTests.converted(stereo, format: CaptureReopeningTests.headset)
        let unflushed = try CaptureReopeningTests.converted(stereo, format: CaptureReopeningTests.headset, flushing: false).count
        // The stage holds back less than one frame and one 10 ms block until the stream ends.
        #expect(waitUntil { running.collect(); return running.received.compactMap(\.audioChunk).flatMap(\.samples).count >= unflushed - 512 - 160 })
        microphones[0].fail(SystemErrorCode(.alsa, -ENODEV, message: "No such device"))
        #expect(waitUntil { running.driver.snapshot.stateLine.contains("audio unavailable") })
        _ = waitUntil { running.collect(); return running.received.compactMap(\.audioChunk).flatMap(\.samples).count == before.count }
        #expect(running.received.compactMap(\.audioChunk).flatMap(\.samples) == before, "every frame captured before the loss, through the stage")

        // Back on the interval, in the hands-free profile: guarded, converted from 16 kHz mono Int16,
        // through the same stage, which starts its canceller again for the new capture stream.
        running.clock.advance(by: .seconds(2))
        #expect(waitUntil { !running.driver.snapshot.stateLine.contains("audio unavailable") })
        #expect(microphoneOpens.value == 2)
        let again = Signals.int16(Signals.sine(frequency: 300, amplitude: 0.5, sampleRate: 16_000, frames: 8_000))
        CaptureReopeningTests.deliver(again.withUnsafeBytes { Array($0) }, to: microphones[1], bytesPerBuffer: 160 * 2)
        let after = try CaptureReopeningTests.converted(again, format: CaptureReopeningTests.handsFree, flushing: false)
        let whole = after.count / 512 * 512 - 512
        #expect(waitUntil { running.collect(); return running.received.compactMap(\.audioChunk).flatMap(\.samples).count >= before.count + whole })
        let sentAfter = Array(running.received.compactMap(\.audioChunk).flatMap(\.samples).dropFirst(before.count))
        #expect(Array(sentAfter.prefix(whole)) == Array(after.prefix(whole)))
        #expect(devices.stage.captureRestarts == 1 && canceller.resets == 1)
        // The capture side collected the speaker's periods: both streams taken, the second at its own rate.
        #expect(devices.aligner.captureRestarts == 1)
        #expect(devices.aligner.rateChanges == 1 && devices.aligner.currentPlaybackRate == 16_000 && devices.aligner.rejectedPeriods == 0)
        #expect(running.driver.snapshot.counters.audioLosses == 1)
        try devices.output.finish()
        _ = try running.finish()
        #expect(microphones[1].tapInstallations == 1)
    }
}

extension WireMessage {
    /// The chunk of an `audio.chunk`, else nil.
    fileprivate var audioChunk: AudioChunk? {
        if case .audioChunk(let chunk) = self { chunk } else { nil }
    }
}
