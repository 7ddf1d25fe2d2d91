import Synchronization
import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// A stamped tap gets each buffer with its frame position and capture instant; hardware that
/// cannot stamp refuses a stamped tap by name, and plain taps work as before on both.
struct StampedCaptureTests {
    private struct Seen: Sendable {
        var stamps: [CapturedBlockStamp] = []
        var bytes = 0
    }

    @Test func aStampedTapGetsEachBuffersPositionAndTheInstantItWasCaptured() throws {
        let fake = FakeAudioDevice(format: AudioFormat(sampleRate: 16_000, channelCount: 1, sampleType: .int16), captureStartInstant: 5_000_000_000)
        let device = try CaptureDevice(fake)
        #expect(device.stampsBuffers)
        let seen = Locked(Seen())
        try device.installTap(stamped: { bytes, stamp in
            seen.withLock { $0.stamps.append(stamp); $0.bytes += bytes.count }
            return .proceed
        })
        let block = [Int16](repeating: 3, count: 160)
        block.withUnsafeBytes { bytes in
            fake.deliver(bytes)
            fake.deliver(bytes)
            fake.deliver(bytes, capturedAt: 5_020_300_000)
            fake.deliver(UnsafeRawBufferPointer(rebasing: bytes[0..<160]))
            fake.deliver(bytes)
        }
        _ = try device.waitUntilStopped()
        #expect(seen.value.stamps == [
            CapturedBlockStamp(framePosition: 0, instant: 5_000_000_000),
            CapturedBlockStamp(framePosition: 160, instant: 5_010_000_000),
            CapturedBlockStamp(framePosition: 320, instant: 5_020_300_000),
            CapturedBlockStamp(framePosition: 480, instant: 5_030_000_000),
            CapturedBlockStamp(framePosition: 560, instant: 5_035_000_000),
        ])
        #expect(seen.value.bytes == 4 * 320 + 160)
    }

    @Test func hardwareThatCannotStampRefusesAStampedTapAndStartsNothing() throws {
        let hardware = UnstampedHardware()
        let device = try CaptureDevice(hardware)
        #expect(!device.stampsBuffers)
        #expect(throws: AudioDeviceError.noTimestamps(device: "plain")) {
            try device.installTap(stamped: { _, _ in .proceed })
        }
        #expect(hardware.taps.load(ordering: .relaxed) == 0)
        #expect(AudioDeviceError.noTimestamps(device: "plain").description
            == "'plain' cannot say when it captured each buffer; use a device that stamps its buffers (ALSA), or a tap without stamps")
        try device.installTap { _ in .proceed }
        #expect(hardware.taps.load(ordering: .relaxed) == 1)
    }

    @Test func theStampOfAConvertedStreamsFrameKeepsTheDevicesTime() {
        // Device block at 48 kHz: frame 4 800 captured at 2.1 s. The 16 kHz frame 1 700 is 48 kHz frame 5 100: 6.25 ms later.
        let device = CapturedBlockStamp(framePosition: 4_800, instant: 2_100_000_000)
        #expect(device.stamp(ofFrame: 1_700, atRate: 16_000, fromRate: 48_000) == CapturedBlockStamp(framePosition: 1_700, instant: 2_106_250_000))
    }
}

/// Capture hardware with no stamps: only what ``CaptureHardware`` requires.
private final class UnstampedHardware: CaptureHardware {
    let name = "plain"
    let reportedFormat = AudioFormat(sampleRate: 16_000, channelCount: 1, sampleType: .int16)
    let taps = Atomic<Int>(0)
    func installTap(format: ValidatedFormat, _ tap: @escaping CaptureTap, onEnd: @escaping @Sendable () -> Void) throws(AudioDeviceError) {
        taps.add(1, ordering: .relaxed)
    }
    func requestStop() {}
    var isStreaming: Bool { false }
    func waitUntilStopped() throws(AudioDeviceError) -> CaptureReport { CaptureReport(frames: 0, overruns: 0) }
    func close() {}
}
