import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// The guard stands before every tap: a device reporting an unusable format is unavailable, and
/// its tap (a trap on the fake, a crash on real hardware) is never reached.
struct DeviceGuardTests {
    static let invalidFormats: [(AudioFormat, FormatRejection)] = [
        (AudioFormat(sampleRate: 0, channelCount: 2, sampleType: .float32), .sampleRateNotPositive(0)),
        (AudioFormat(sampleRate: SampleRate(hertz: .nan), channelCount: 1, sampleType: .int16), .sampleRateNotFinite(SampleRate(hertz: .nan))),
        (AudioFormat(sampleRate: 48_000, channelCount: 0, sampleType: .float32), .noChannels(0)),
        (AudioFormat(sampleRate: -44_100, channelCount: 2, sampleType: .int16), .sampleRateNotPositive(-44_100)),
        (AudioFormat(sampleRate: SampleRate(hertz: .infinity), channelCount: 2, sampleType: .int32), .sampleRateNotFinite(SampleRate(hertz: .infinity))),
    ]

    @Test(arguments: invalidFormats)
    func captureWithAnInvalidFormatIsUnavailableAndNeverGetsATap(format: AudioFormat, rejection: FormatRejection) {
        let fake = FakeAudioDevice(name: "mic", format: format)
        #expect {
            let device = try CaptureDevice(fake)
            try device.installTap { _ in .proceed }
        } throws: { error in
            guard let unavailable = error as? AudioUnavailable, case .format(let reason) = unavailable.reason else { return false }
            // NaN never equals itself: compare the verdicts' descriptions.
            return unavailable.device == "mic" && unavailable.direction == .capture && reason.description == rejection.description
        }
        #expect(fake.tapInstallations == 0)
        #expect(fake.isClosed)
    }

    @Test(arguments: invalidFormats)
    func playbackWithAnInvalidFormatIsUnavailableAndNeverConnects(format: AudioFormat, rejection: FormatRejection) {
        let deinterleaved = AudioFormat(sampleRate: format.sampleRate, channelCount: format.channelCount, sampleType: .float32, isInterleaved: false)
        let fake = FakeAudioDevice(name: "speaker", format: deinterleaved)
        #expect {
            let device = try PlaybackDevice(fake)
            try device.connect()
        } throws: { error in
            guard let unavailable = error as? AudioUnavailable, case .format(let reason) = unavailable.reason else { return false }
            return unavailable.direction == .playback && reason.description == rejection.description
        }
        #expect(fake.playerStarts == 0)
        #expect(fake.isClosed)
    }

    @Test func theUnavailableMessageSaysWhatAndWhy() {
        let error = AudioUnavailable(device: "hw:1,0", direction: .capture, reason: .format(.sampleRateNotPositive(0)))
        #expect(error.description == "audio capture on 'hw:1,0' is unavailable: the sample rate is 0 Hz; audio needs a positive rate, so the device or file is unusable as reported; no tap was installed")
        #expect(AudioUnavailable(device: "x", direction: .playback, reason: .noDevice).description
            == "audio playback on 'x' is unavailable: there is no such device; see 'voicepipe devices' for the ones this system has")
        #expect(AudioUnavailable(device: "x", direction: .capture, reason: .deviceBusy, code: SystemErrorCode(.alsa, -16, message: "Device or resource busy")).description
            == "audio capture on 'x' is unavailable: the device is busy; another program is using it (ALSA error -16)")
    }

    @Test func aValidDeviceFeedsTheCaptureConverterThroughARing() throws {
        let fake = FakeAudioDevice(name: "mic", format: AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .int16))
        let device = try CaptureDevice(fake)
        // The recommended shape: the tap only copies into a ring; the converter runs elsewhere.
        let ring = AudioRing(capacity: 48_000 * 4)
        try device.installTap { bytes in
            ring.write(bytes)
            return .proceed
        }
        #expect(fake.tapInstallations == 1)
        // One second of a 1 kHz tone at −6 dBFS, both channels, in 10 ms buffers.
        let tone = Signals.int16(Signals.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 48_000, frames: 48_000))
        let interleaved = Signals.interleave([tone, tone])
        for start in stride(from: 0, to: interleaved.count, by: 960) {
            interleaved[start..<min(start + 960, interleaved.count)].withUnsafeBytes { _ = fake.deliver($0) }
        }
        let report = try device.waitUntilStopped()
        #expect(report.frames == 48_000)

        let converter = try CaptureConverter(input: device.format, options: CaptureOptions(frameMilliseconds: 20))
        var output: [Int16] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while case let count = chunk.withUnsafeMutableBytes({ ring.read(into: $0, granularity: 4) }), count > 0 {
            try chunk.withUnsafeBytes { try converter.process(UnsafeRawBufferPointer(rebasing: $0[0..<count])) { output += $0.copySamples() } }
        }
        try converter.flush { output += $0.copySamples() }
        #expect(output.count == 16_000)
        // Exactly what the converter gives for the same bytes handed to it directly.
        let direct = try CaptureConverter(input: device.format, options: CaptureOptions(frameMilliseconds: 20))
        var expected: [Int16] = []
        try interleaved.withUnsafeBytes { try direct.process($0) { expected += $0.copySamples() } }
        try direct.flush { expected += $0.copySamples() }
        #expect(output == expected)
        let peak = output[4_000..<12_000].map { Int($0.magnitude) }.max() ?? 0
        #expect(abs(Double(peak) / 32768 - 0.5) < 0.001)
    }

    @Test func theTapCanEndTheStream() throws {
        let fake = FakeAudioDevice(format: AudioFormat(sampleRate: 16_000, channelCount: 1, sampleType: .int16))
        let device = try CaptureDevice(fake)
        let calls = FrameCollector()
        try device.installTap { _ in
            calls.add([0])
            return calls.samples.count == 3 ? .stop : .proceed
        }
        let buffer = [Int16](repeating: 1, count: 160)
        var actions: [CaptureTapAction] = []
        for _ in 0..<5 { buffer.withUnsafeBytes { actions.append(fake.deliver($0)) } }
        #expect(actions == [.proceed, .proceed, .stop, .stop, .stop])
        #expect(calls.samples.count == 3)
        #expect(try device.waitUntilStopped().frames == 480)
    }

    @Test func aDeviceLostMidStreamEndsWithATypedErrorAndKeepsWhatWasCaptured() throws {
        let fake = FakeAudioDevice(name: "usb", format: AudioFormat(sampleRate: 16_000, channelCount: 1, sampleType: .int16))
        let device = try CaptureDevice(fake)
        let collected = FrameCollector()
        try device.installTap { bytes in
            collected.add(Array(bytes.bindMemory(to: Int16.self)))
            return .proceed
        }
        let buffer = (0..<320).map { Int16($0) }
        for _ in 0..<4 { buffer.withUnsafeBytes { _ = fake.deliver($0) } }
        let unplugged = SystemErrorCode(.alsa, -19, message: "No such device")
        fake.fail(unplugged)
        #expect(throws: AudioDeviceError.deviceLost(device: "usb", unplugged, framesBefore: 1_280)) {
            try device.waitUntilStopped()
        }
        #expect(collected.samples == Array((0..<4).map { _ in buffer }.joined()))
    }

    @Test func aSecondTapIsRefused() throws {
        let fake = FakeAudioDevice(format: AudioFormat(sampleRate: 44_100, channelCount: 2, sampleType: .float32))
        let device = try CaptureDevice(fake)
        try device.installTap { _ in .proceed }
        #expect(throws: AudioDeviceError.alreadyStarted(device: "fake")) { try device.installTap { _ in .proceed } }
    }

    @Test(arguments: [
        AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .int16, isInterleaved: false),
        AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: true),
    ])
    func aPlaybackDeviceThatIsNotDeinterleavedFloat32IsUnavailable(format: AudioFormat) {
        let fake = FakeAudioDevice(name: "speaker", format: format)
        #expect {
            _ = try PlaybackDevice(fake)
        } throws: { error in
            guard let unavailable = error as? AudioUnavailable, case .formatRefused = unavailable.reason else { return false }
            return true
        }
        #expect(fake.playerStarts == 0)
    }

    @Test func aPlaybackDevicePlaysOnlyItsOwnFormat() throws {
        let fake = FakeAudioDevice(name: "speaker", format: AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: false))
        let device = try PlaybackDevice(fake)
        #expect(device.format.sampleRate == 48_000 && device.format.channelCount == 2)
        let samples: [Float] = [0.25, -0.5]
        _ = samples.withUnsafeBufferPointer { pointer in
            #expect(throws: PlayerSinkError.notConnected) {
                try device.play(PlaybackBuffer(base: pointer.baseAddress!, frameCount: 1, channelCount: 2, channelStride: 1))
            }
        }
        #expect(throws: PlayerSinkError.self) { try device.connect(format: .playback) }
        #expect(fake.playerStarts == 0)
        try device.connect()
        // Reply audio converted to the device's rate and channels, then played.
        let converter = try PlaybackConverter(outputRate: 48_000, channelCount: 2)
        let chunk = (0..<2_400).map { Int16(truncatingIfNeeded: $0 &* 37) }
        try chunk.withUnsafeBufferPointer { source in
            try converter.process(source) { try device.play($0) }
        }
        try converter.flush { try device.play($0) }
        try device.disconnect()
        #expect(fake.drained)
        #expect(fake.played.count == 2 && fake.played[0].count == 4_800 && fake.played[0] == fake.played[1])
    }
}

/// Collects samples from a tap (which is `@Sendable`): the fake calls it on the test's thread.
final class FrameCollector: @unchecked Sendable {
    private(set) var samples: [Int16] = []
    func add(_ more: some Sequence<Int16>) { samples += more }
}
