import Dispatch
import Foundation
import Synchronization
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// The capture pump moves device audio through the ring and the converter on another thread,
/// losing nothing it can keep and telling what it could not.
struct CapturePumpTests {
    static let format = AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .int16)

    /// 0.5 s of a stereo tone at the device format, as the device would deliver it.
    static func deviceAudio(frames: Int = 24_000) -> [Int16] {
        let left = Signals.sine(frequency: 440, amplitude: 0.5, sampleRate: 48_000, frames: frames)
        let right = Signals.sine(frequency: 1_000, amplitude: 0.25, sampleRate: 48_000, frames: frames)
        return Signals.int16(Signals.interleave([left, right]))
    }

    /// What the converter gives for `samples` fed whole: the reference every pump run must equal.
    static func converted(_ samples: [Int16], format: ValidatedFormat) throws -> [Int16] {
        let converter = try CaptureConverter(input: format)
        var out = [Int16]()
        try samples.withUnsafeBufferPointer { buffer in try converter.process(buffer) { out += $0.copySamples() } }
        try converter.flush { out += $0.copySamples() }
        return out
    }

    /// Runs `pump` on a background thread; returns a way to wait for its outcome.
    static func runInBackground(_ pump: CapturePump) -> () -> (Result<CapturePumpReport, any Error>, [Int16], Int) {
        let done = DispatchSemaphore(value: 0)
        let outcome = Guarded<(Result<CapturePumpReport, any Error>, [Int16], Int)?>(nil)
        Thread.detachNewThread {
            var samples = [Int16]()
            var frames = 0
            let result = Result { try pump.run { frame in samples += frame.copySamples(); frames += 1 } }
            outcome.withLock { $0 = (result, samples, frames) }
            done.signal()
        }
        return {
            done.wait()
            return outcome.withLock { $0! }
        }
    }

    /// Delivers `samples` to the fake device in 10 ms buffers (480 frames), as its audio thread would.
    static func deliver(_ samples: [Int16], to fake: FakeAudioDevice, framesPerBuffer: Int = 480) -> [CaptureTapAction] {
        let channels = format.channelCount
        return stride(from: 0, to: samples.count, by: framesPerBuffer * channels).map { start in
            let end = min(start + framesPerBuffer * channels, samples.count)
            return samples[start..<end].withUnsafeBytes { fake.deliver($0) }
        }
    }

    @Test func everyDeliveredFrameIsConvertedExactlyAsTheConverterDoesAlone() throws {
        let fake = FakeAudioDevice(name: "mic", format: Self.format)
        let device = try CaptureDevice(fake)
        let pump = try CapturePump(device: device, converter: CaptureConverter(input: device.format))
        try pump.start()
        let wait = Self.runInBackground(pump)
        let audio = Self.deviceAudio()
        #expect(Self.deliver(audio, to: fake).allSatisfy { $0 == .proceed })
        pump.stop()
        let (result, samples, _) = wait()
        let report = try result.get()
        #expect(report.framesKept == 24_000 && report.framesDropped == 0)
        #expect(report.device.frames == 24_000)
        #expect(samples == (try Self.converted(audio, format: device.format)))
        #expect(samples.count == 8_000)
    }

    @Test func theFrameLimitEndsTheStreamAtExactlyThatManyDeviceFrames() throws {
        let fake = FakeAudioDevice(name: "mic", format: Self.format)
        let device = try CaptureDevice(fake)
        let pump = try CapturePump(device: device, converter: CaptureConverter(input: device.format), frameLimit: 12_345)
        try pump.start()
        let wait = Self.runInBackground(pump)
        let audio = Self.deviceAudio()
        let actions = Self.deliver(audio, to: fake)
        // The tap says stop with the buffer that reaches the limit; the device stops calling it.
        #expect(actions.firstIndex(of: .stop) == 12_345 / 480)
        let (result, samples, _) = wait()
        let report = try result.get()
        #expect(report.framesKept == 12_345)
        #expect(samples == (try Self.converted(Array(audio.prefix(12_345 * 2)), format: device.format)))
    }

    @Test func aFullRingDropsWholeBuffersAndCountsThem() throws {
        let fake = FakeAudioDevice(name: "mic", format: Self.format)
        let device = try CaptureDevice(fake)
        // A ring of 0.1 s (4 096 frames at least) and no consumer yet: 0.5 s cannot all fit.
        let pump = try CapturePump(device: device, converter: CaptureConverter(input: device.format), ringSeconds: 0.1, whenFull: .drop)
        try pump.start()
        let audio = Self.deviceAudio()
        _ = Self.deliver(audio, to: fake)
        let wait = Self.runInBackground(pump)
        pump.stop()
        let (result, samples, _) = wait()
        let report = try result.get()
        #expect(report.framesKept == 4_800, "ten 480-frame buffers fit in 4 800 frames of ring")
        #expect(report.framesDropped == 24_000 - 4_800)
        // What was kept is the start of the stream, whole buffers, converted as one stream.
        #expect(samples == (try Self.converted(Array(audio.prefix(4_800 * 2)), format: device.format)))
    }

    @Test func aFullRingMakesTheTapWaitForRoomAndNothingIsLost() throws {
        let fake = FakeAudioDevice(name: "null", format: Self.format)
        let device = try CaptureDevice(fake)
        // The same 0.1 s ring, now with a converter draining it: the device is paced to it.
        let pump = try CapturePump(device: device, converter: CaptureConverter(input: device.format), ringSeconds: 0.1)
        try pump.start()
        let wait = Self.runInBackground(pump)
        let audio = Self.deviceAudio()
        _ = Self.deliver(audio, to: fake)
        pump.stop()
        let (result, samples, _) = wait()
        let report = try result.get()
        #expect(report.framesKept == 24_000 && report.framesDropped == 0)
        #expect(samples == (try Self.converted(audio, format: device.format)))
    }

    @Test func aDeviceLostMidStreamDeliversWhatCameBeforeThenReportsTheLoss() throws {
        let fake = FakeAudioDevice(name: "usb", format: Self.format)
        let device = try CaptureDevice(fake)
        let pump = try CapturePump(device: device, converter: CaptureConverter(input: device.format))
        try pump.start()
        let wait = Self.runInBackground(pump)
        let audio = Self.deviceAudio(frames: 9_600)
        _ = Self.deliver(audio, to: fake)
        let unplugged = SystemErrorCode(.alsa, -19, message: "No such device")
        fake.fail(unplugged)
        let (result, samples, _) = wait()
        guard case .failure(CapturePumpError.deviceLost(.deviceLost(device: "usb", unplugged, framesBefore: 9_600), let framesKept)) = result else {
            Issue.record("expected deviceLost, got \(result)")
            return
        }
        #expect(framesKept == 9_600)
        #expect(samples == (try Self.converted(audio, format: device.format)))
    }

    /// Delivers `samples` in 480-frame buffers with `overruns` overruns after every `every`-th
    /// buffer; returns the overruns injected.
    static func deliverWithOverruns(_ samples: [Int16], to fake: FakeAudioDevice, overruns: Int, every: Int) -> Int {
        var injected = 0
        for (index, start) in stride(from: 0, to: samples.count, by: 480 * 2).enumerated() {
            _ = samples[start..<min(start + 960, samples.count)].withUnsafeBytes { fake.deliver($0) }
            if index % every == every - 1 {
                for _ in 0..<overruns { fake.overrun() }
                injected += overruns
            }
        }
        return injected
    }

    @Test func repeatedOverrunsAreRecoveredAndCountedAndEveryFrameAroundThemIsDelivered() throws {
        let fake = FakeAudioDevice(name: "mic", format: Self.format)
        let device = try CaptureDevice(fake)
        let pump = try CapturePump(device: device, converter: CaptureConverter(input: device.format))
        try pump.start()
        let wait = Self.runInBackground(pump)
        let audio = Self.deviceAudio()
        let injected = Self.deliverWithOverruns(audio, to: fake, overruns: 3, every: 5)
        #expect(injected == 30)
        #expect(fake.isStreaming)  // recovered: the stream goes on after each one
        pump.stop()
        let (result, samples, _) = wait()
        let report = try result.get()
        #expect(report.device.overruns == injected)
        #expect(report.device.frames == 24_000)
        #expect(report.framesKept == 24_000 && report.framesDropped == 0)
        #expect(samples == (try Self.converted(audio, format: device.format)))
    }

    @Test func overrunsThenALossDeliverEveryFrameCapturedBeforeTheLoss() throws {
        let fake = FakeAudioDevice(name: "usb", format: Self.format)
        let device = try CaptureDevice(fake)
        let pump = try CapturePump(device: device, converter: CaptureConverter(input: device.format), ringSeconds: 0.1)
        try pump.start()
        let wait = Self.runInBackground(pump)
        let audio = Self.deviceAudio(frames: 14_400)
        _ = Self.deliverWithOverruns(audio, to: fake, overruns: 1, every: 1)
        let lost = SystemErrorCode(.alsa, -5, message: "Input/output error")
        fake.fail(lost)
        // After the loss the device takes nothing more.
        #expect(Self.deliver(Self.deviceAudio(frames: 480), to: fake) == [.stop])
        let (result, samples, _) = wait()
        guard case .failure(CapturePumpError.deviceLost(.deviceLost(device: "usb", lost, framesBefore: 14_400), let framesKept)) = result else {
            Issue.record("expected deviceLost, got \(result)")
            return
        }
        #expect(framesKept == 14_400)
        #expect(samples == (try Self.converted(audio, format: device.format)))
    }

    @Test func aStreamsEndHandlerRunsOnceHoweverItIsStopped() throws {
        let fake = FakeAudioDevice(name: "mic", format: Self.format)
        let device = try CaptureDevice(fake)
        let ends = Guarded(0)
        try device.installTap({ _ in .proceed }, onEnd: { ends.withLock { $0 += 1 } })
        fake.requestStop()
        fake.requestStop()
        _ = try device.waitUntilStopped()
        #expect(ends.withLock { $0 } == 1, "the end handler runs once, however the stream is told to stop")
    }

    @Test func aFailingConsumerStopsTheDeviceAndItsErrorComesBack() throws {
        struct DiskFull: Error {}
        let fake = FakeAudioDevice(name: "mic", format: Self.format)
        let device = try CaptureDevice(fake)
        let pump = try CapturePump(device: device, converter: CaptureConverter(input: device.format))
        try pump.start()
        _ = Self.deliver(Self.deviceAudio(frames: 4_800), to: fake)
        #expect(throws: DiskFull.self) { try pump.run { _ in throw DiskFull() } }
        #expect(!device.isStreaming)
    }

    @Test func aConverterForAnotherFormatIsRefused() throws {
        let fake = FakeAudioDevice(name: "mic", format: Self.format)
        let device = try CaptureDevice(fake)
        let other = try FormatGuard.validate(AudioFormat(sampleRate: 44_100, channelCount: 2, sampleType: .int16))
        #expect(throws: CapturePumpError.self) { try CapturePump(device: device, converter: CaptureConverter(input: other)) }
        #expect(fake.tapInstallations == 0)
    }
}
