import AllocationCounting
import Foundation
import Synchronization
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// Real ALSA, no sound card: the `null` device, and `type file` PCMs defined in memory that read
/// capture audio from a raw file and write playback audio to one. These plugins do not pace in
/// real time, and past the end of `infile` reads succeed without writing: the code zeroes its buffer.
struct ALSADeviceTests {
    /// A capture PCM `cap` reading `infile` and a playback PCM `play` writing `outfile`.
    static func configuration(infile: String = "/dev/null", outfile: String = "/dev/null") throws -> ALSAConfiguration {
        try ALSAConfiguration("""
        pcm.cap { type file slave.pcm { type null } file "/dev/null" infile "\(infile)" format raw }
        pcm.play { type file slave.pcm { type null } file "\(outfile)" format raw }
        """)
    }

    @Test func theSystemListsNullForCaptureAndPlaybackWithAFormatTheGuardAccepts() throws {
        let devices = AudioDevices.list()
        let null = try #require(devices.first { $0.name == "null" }, "devices: \(devices.map(\.name))")
        let capture = try #require(null.capture).get()
        let playback = try #require(null.playback).get()
        for capabilities in [capture, playback] {
            #expect(capabilities.sampleFormats.contains("S16_LE") && capabilities.sampleFormats.contains("FLOAT_LE"))
            #expect(capabilities.commonRates.contains(48_000) && capabilities.commonRates.contains(8_000))
            #expect(capabilities.channelCounts.contains(1) && capabilities.channelCounts.contains(2))
            #expect((try? capabilities.verdict.get()) != nil)
        }
        // Unconstrained, null negotiates 48 kHz stereo; playback is always deinterleaved Float32.
        #expect(capture.negotiated == AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: true))
        #expect(playback.negotiated == AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: false))
    }

    @Test func aMissingDeviceIsUnavailableWithNoDeviceAndALSAsCodeForBothDirections() {
        // alsa-lib's own result for an unknown PCM name: -ENOENT, kept beside the reason.
        let code = SystemErrorCode(.alsa, -ENOENT, message: "No such file or directory")
        #expect(throws: AudioUnavailable(device: "voicepipe_missing", direction: .capture, reason: .noDevice, code: code)) {
            try CaptureDevice.open(name: "voicepipe_missing")
        }
        #expect(throws: AudioUnavailable(device: "voicepipe_missing", direction: .playback, reason: .noDevice, code: code)) {
            try PlaybackDevice.open(name: "voicepipe_missing")
        }
    }

    @Test func aRefusedRateIsUnavailableAndSaysWhy() throws {
        let fixed = try ALSAConfiguration("pcm.fixed { type plug slave { pcm { type null } rate 44100 } }")
        #expect(throws: AudioUnavailable(device: "fixed", direction: .capture, reason: .formatRefused(
            "it does not run at 48000 Hz (it takes only 44100 Hz); leave the rate to the device, VoicePipe converts any rate"))) {
            try CaptureDevice.open(name: "fixed", preferences: DevicePreferences(sampleRate: 48_000), configuration: fixed)
        }
        // Left to itself the device runs at its own rate, which the converter takes as it is.
        let native = try CaptureDevice.open(name: "fixed", configuration: fixed)
        #expect(native.format.sampleRate == 44_100)
        #expect(throws: ALSAConfigurationError.self) { try ALSAConfiguration("pcm.broken { type file ") }
    }

    @Test func aTapInAnyFormatButTheDevicesIsRefusedAndAClosedDeviceStaysClosed() throws {
        let hardware = try ALSACapture(name: "cap", preferences: DevicePreferences(sampleRate: 48_000, channelCount: 2, sampleType: .float32),
                                       configuration: try Self.configuration())
        let other = try FormatGuard.validate(AudioFormat(sampleRate: 8_000, channelCount: 1, sampleType: .int16))
        #expect(throws: AudioDeviceError.formatMismatch(device: "cap", expected: "48000 Hz, stereo, Float32, interleaved", received: "8000 Hz, mono, Int16")) {
            try hardware.installTap(format: other) { _ in .proceed }
        }
        #expect(!hardware.isStreaming)
        // A stop requested before the stream starts ends it at once.
        let own = try FormatGuard.validate(hardware.reportedFormat)
        hardware.requestStop()
        try hardware.installTap(format: own) { _ in .proceed }
        #expect(try hardware.waitUntilStopped().frames == 0)
        hardware.close()
        #expect(throws: AudioDeviceError.closed(device: "cap")) {
            try hardware.installTap(format: own) { _ in .proceed }
        }
    }

    /// A file PCM reading a FIFO nobody writes blocks in its open: the bounded probe lists it as
    /// not answering when its time is up, and the probe left behind finishes once a writer comes.
    @Test func aDeviceWhoseOpenBlocksIsListedAsNotAnsweringWithinTheTimeout() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.path("capture.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let configuration = try Self.configuration(infile: fifo)
        let started = ContinuousClock.now
        let probe = AudioDevices.probe("cap", .capture, configuration: configuration, timeout: .milliseconds(300))
        let waited = ContinuousClock.now - started
        #expect(probe == .failure(AudioUnavailable(device: "cap", direction: .capture, reason: .notAnswering(.milliseconds(300)))))
        #expect(waited >= .milliseconds(300) && waited < .seconds(5), "\(waited)")
        if case .failure(let error) = probe {
            #expect(error.message == "audio capture on 'cap' is unavailable: it did not answer within 0.3 s (its open blocks, as a file PCM on a FIFO nobody has open does)")
        }
        // A device that answers in time is probed as before.
        #expect((try? AudioDevices.probe("play", .playback, configuration: configuration, timeout: .seconds(5)).get()) != nil)
        // Unblock the probe left behind: a writer opens the FIFO and goes.
        let writer = open(fifo, O_WRONLY)
        #expect(writer >= 0)
        close(writer)
    }

    @Test func captureFromAFileBackedPCMGivesExactlyTheConvertersFrames() throws {
        let directory = try TemporaryDirectory()
        let frames = 48_000 * 3 / 2
        let samples = Signals.int16(Fixtures.signal(frames: frames, channels: 2, sampleRate: 48_000).map { $0 * 0.8 })
        let infile = try directory.file("in.raw", Fixtures.int16LE(samples))
        let device = try CaptureDevice.open(name: "cap", preferences: DevicePreferences(sampleRate: 48_000, channelCount: 2, sampleType: .int16),
                                            configuration: try Self.configuration(infile: infile))
        #expect(device.format.audioFormat == AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .int16))

        // Read the file and 0.1 s past its end (the plugin goes on "reading"; the tail must be zeros).
        let wanted = frames + 4_800
        let ring = AudioRing(capacity: (wanted + 48_000) * 4)
        let delivered = Atomic<Int>(0)
        try device.installTap { bytes in
            #expect(ring.write(bytes))
            let total = delivered.add(bytes.count / 4, ordering: .relaxed).newValue
            return total >= wanted ? .stop : .proceed
        }
        let report = try device.waitUntilStopped()
        #expect(report.frames >= wanted && report.overruns == 0)

        let capture = try CaptureConverter(input: device.format)
        var captured: [Int16] = []
        var bytes = [UInt8](repeating: 0, count: 1 << 16)
        while case let count = bytes.withUnsafeMutableBytes({ ring.read(into: $0, granularity: 4) }), count > 0 {
            try bytes.withUnsafeBytes { try capture.process(UnsafeRawBufferPointer(rebasing: $0[0..<count])) { captured += $0.copySamples() } }
        }
        let direct = try CaptureConverter(input: device.format)
        var expected: [Int16] = []
        try (samples + [Int16](repeating: 0, count: (report.frames - frames) * 2)).withUnsafeBytes { try direct.process($0) { expected += $0.copySamples() } }
        #expect(captured.count == expected.count && captured.count >= wanted / 3 - 512)
        #expect(captured == expected)
        #expect(captured[(frames / 3 + 100)...].allSatisfy { $0 == 0 }, "past the end of the file the capture is silence")
    }

    @Test func aStampedTapGetsConsecutiveFramePositionsAndInstantsBeforeItRuns() throws {
        let directory = try TemporaryDirectory()
        let infile = try directory.file("in.raw", [UInt8](repeating: 1, count: 48_000 * 4))
        let device = try CaptureDevice.open(name: "cap", preferences: DevicePreferences(sampleRate: 48_000, channelCount: 2, sampleType: .int16),
                                            configuration: try Self.configuration(infile: infile))
        #expect(device.stampsBuffers)
        let seen = Locked<[(stamp: CapturedBlockStamp, frames: Int, now: Int64)]>([])
        try device.installTap(stamped: { bytes, stamp in
            let now = MonotonicClock.nanoseconds()
            let count = seen.withLock { $0.append((stamp, bytes.count / 4, now)); return $0.count }
            return count >= 50 ? .stop : .proceed
        })
        _ = try device.waitUntilStopped()
        let buffers = seen.value
        #expect(buffers.count == 50)
        var position = 0
        for buffer in buffers {
            #expect(buffer.stamp.framePosition == position)
            // Captured before it was read: at least the buffer's own length before the tap ran.
            #expect(buffer.stamp.instant <= buffer.now - Int64(buffer.frames) * 1_000_000_000 / 48_000)
            position += buffer.frames
        }
    }

    @Test func theAudioThreadAllocatesNothingPerBuffer() throws {
        let directory = try TemporaryDirectory()
        let infile = try directory.file("in.raw", [UInt8](repeating: 1, count: 48_000 * 4))
        let device = try CaptureDevice.open(name: "cap", preferences: DevicePreferences(sampleRate: 48_000, channelCount: 2, sampleType: .int16),
                                            configuration: try Self.configuration(infile: infile))
        let ring = AudioRing(capacity: 1 << 22)
        let buffers = Atomic<Int>(0)
        let allocations = Atomic<Int>(-1)
        try device.installTap { bytes in
            let index = buffers.add(1, ordering: .relaxed).newValue
            if index == 10 { ThreadAllocations.begin() }
            if index == 210 { allocations.store(Int(ThreadAllocations.end()), ordering: .relaxed) }
            ring.write(bytes)
            return index >= 210 ? .stop : .proceed
        }
        _ = try device.waitUntilStopped()
        #expect(allocations.load(ordering: .relaxed) == 0, "heap allocations on the audio thread over 200 buffers")
    }

    @Test func playbackOfA24kHzChunkStreamWritesExactlyTheFloat32Samples() throws {
        let directory = try TemporaryDirectory()
        let outfile = directory.path("out.raw")
        let device = try PlaybackDevice.open(name: "play", preferences: DevicePreferences(sampleRate: 24_000, channelCount: 1),
                                             configuration: try Self.configuration(outfile: outfile))
        #expect(device.format.audioFormat == AudioFormat(sampleRate: 24_000, channelCount: 1, sampleType: .float32, isInterleaved: false))
        // Twenty 20 ms chunks as they come off the wire, every Int16 edge value among them.
        var wire = (0..<9_600).map { Int16(truncatingIfNeeded: $0 &* 7_919) }
        wire[0..<4] = [Int16.min, Int16.max, 0, -1]
        try device.connect()
        let converter = try PlaybackConverter()
        for start in stride(from: 0, to: wire.count, by: 480) {
            try wire[start..<start + 480].withUnsafeBufferPointer { chunk in
                try converter.process(chunk) { try device.play($0) }
            }
        }
        try device.disconnect()
        let written = try Data(contentsOf: URL(fileURLWithPath: outfile))
        let expected = Fixtures.littleEndianBytes(wire.map { Float($0) / 32768 })
        #expect(written.count == wire.count * 4)
        #expect(Array(written) == expected)
        #expect(device.underruns == 0)
    }

    @Test func stereoPlaybackAt48kHzWritesEveryChannelOfTheConvertedStream() throws {
        let directory = try TemporaryDirectory()
        let outfile = directory.path("out.raw")
        let device = try PlaybackDevice.open(name: "play", preferences: DevicePreferences(sampleRate: 48_000, channelCount: 2),
                                             configuration: try Self.configuration(outfile: outfile))
        try device.connect()
        let wire = Signals.int16(Signals.sine(frequency: 440, amplitude: 0.5, sampleRate: 24_000, frames: 24_000))
        let converter = try PlaybackConverter(outputRate: 48_000, channelCount: 2)
        var left: [Float] = []
        let collect: (borrowing PlaybackBuffer) throws -> Void = { buffer in
            left += buffer.copyChannel(0)
            try device.play(buffer)
        }
        try wire.withUnsafeBufferPointer { try converter.process($0, collect) }
        try converter.flush(collect)
        try device.disconnect()
        #expect(left.count == 48_000)
        // The file plugin stores frames interleaved: L R L R …, both channels the upmixed mono.
        let written = try Data(contentsOf: URL(fileURLWithPath: outfile))
        #expect(Array(written) == Fixtures.littleEndianBytes(Signals.interleave([left, left])))
    }

    @Test func aDeviceThatRefusesFloat32IsUnavailableAndSaysSoInsteadOfConnecting16Bits() throws {
        // The linear plugin converts between integer formats only: it takes no Float32.
        let integerOnly = try ALSAConfiguration("pcm.integer { type linear slave { pcm { type null } format S16_LE } }")
        #expect {
            try PlaybackDevice.open(name: "integer", configuration: integerOnly)
        } throws: { error in
            guard let unavailable = error as? AudioUnavailable, case .formatRefused(let detail) = unavailable.reason else { return false }
            return unavailable.direction == .playback && detail.contains("FLOAT_LE")
        }
        // Capture from it still works, in an integer format.
        let capture = try CaptureDevice.open(name: "integer", configuration: integerOnly)
        #expect(capture.format.sampleType == .int32 || capture.format.sampleType == .int16)
    }
}
