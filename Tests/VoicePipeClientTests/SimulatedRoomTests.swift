import Synchronization
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// The simulated room's two virtual devices: what the loudspeaker is given is what the microphone
/// delivers after the room, both stamped on one timeline, through the same device contracts as ALSA.
struct SimulatedRoomTests {
    static func room(latency: Double = 0.06, distance: Double = 2) throws -> RoomConfiguration {
        RoomConfiguration(playbackRate: 24_000, captureRate: 16_000, latency: latency,
                          impulseResponse: try RoomImpulseResponse(reverberationTime: 0.05, distance: distance, sampleRate: 16_000),
                          echoGainDB: -10, noise: RoomNoise(.pink, levelDBFS: -60))
    }

    /// Everything a tap was given, as Float32 samples.
    final class Collected: Sendable {
        let samples = Guarded<[Float]>([])
        let limit: Int
        init(limit: Int) { self.limit = limit }
        func tap(_ bytes: UnsafeRawBufferPointer) -> CaptureTapAction {
            let count = samples.withLock { samples in
                samples += bytes.bindMemory(to: Float.self)
                return samples.count
            }
            return count >= limit ? .stop : .proceed
        }
    }

    static func play(_ samples: [Float], on device: PlaybackDevice, period: Int = 240) throws {
        var start = 0
        while start < samples.count {
            let count = min(period, samples.count - start)
            try samples.withUnsafeBufferPointer { buffer in
                try device.play(PlaybackBuffer(base: buffer.baseAddress! + start, frameCount: count, channelCount: 1, channelStride: count))
            }
            start += count
        }
    }

    @Test func theDevicesReportTheRoomsRatesInTheFormatsTheGuardAccepts() throws {
        let room = try SimulatedRoom(Self.room(), clock: .manual)
        let microphone = try CaptureDevice(room.microphone)
        let loudspeaker = try PlaybackDevice(room.loudspeaker)
        #expect(microphone.format.audioFormat == AudioFormat(sampleRate: 16_000, channelCount: 1, sampleType: .float32))
        #expect(loudspeaker.format == .playback)
    }

    @Test func onAManualClockTheMicrophoneDeliversWhatTheRoomMakesOfThePlayback() throws {
        let configuration = try Self.room()
        let periods = Mutex<[RoomCaptureReport]>([])
        let echo = Mutex<[Float]>([])
        let room = try SimulatedRoom(configuration, clock: .manual, onPeriod: { period in
            periods.withLock { $0.append(period.report) }
            echo.withLock { $0 += period.echo }
        })
        let loudspeaker = try PlaybackDevice(room.loudspeaker)
        try loudspeaker.connect()
        let reply = Signals.program(sampleRate: 24_000, frames: 12_000, channel: 0).map { Float($0) * 0.5 }
        try Self.play(reply, on: loudspeaker)
        #expect(room.lastPlaybackTimestamp == RoomTimestamp(frame: 11_760, time: 0.49, latency: 0.06))

        let microphone = try CaptureDevice(room.microphone)
        let collected = Collected(limit: .max)
        try microphone.installTap { collected.tap($0) }
        for _ in 0..<50 { room.step() }
        microphone.stop()
        #expect(try microphone.waitUntilStopped() == CaptureReport(frames: 8_000, overruns: 0))

        var offline = try RoomSimulator(configuration)
        offline.play(reply)
        let expected = offline.capture(frames: 8_000)
        #expect(collected.samples.withLock { $0 } == expected.microphone)
        #expect(echo.withLock { $0 } == expected.echo)
        let stamps = periods.withLock { $0.map(\.timestamp) }
        #expect(stamps.count == 50)
        #expect(stamps[10] == RoomTimestamp(frame: 1_600, time: 0.1, latency: 0))
        #expect(room.lastCaptureTimestamp == RoomTimestamp(frame: 7_840, time: 0.49, latency: 0))
    }

    @Test func theTimestampsPutAPlayedClickWhereTheMicrophoneHearsIt() throws {
        let playStamps = Mutex<[RoomTimestamp]>([])
        let room = try SimulatedRoom(Self.room(latency: 0.08, distance: 1), clock: .asFastAsPossible,
                                     onPlayback: { stamp, _ in playStamps.withLock { $0.append(stamp) } })
        let loudspeaker = try PlaybackDevice(room.loudspeaker)
        try loudspeaker.connect()
        var reply = [Float](repeating: 0, count: 4_800)
        reply[2_400] = 1
        try Self.play(reply, on: loudspeaker)

        let microphone = try CaptureDevice(room.microphone)
        let collected = Collected(limit: 6_400)
        try microphone.installTap { collected.tap($0) }
        _ = try microphone.waitUntilStopped()
        let captured = collected.samples.withLock { $0 }
        #expect(captured.count == 6_400)
        // The click is frame 2 400 - 2 400 = 0 of the block stamped at 0.1 s; it is heard 80 ms
        // later and reaches the microphone 1 m / 343 m/s after that (47 frames at 16 kHz).
        let block = try #require(playStamps.withLock { $0 }.first { $0.frame == 2_400 })
        #expect(block.time == 0.1 && block.latency == 0.08)
        let heard = Measurement.peakPosition(captured)
        #expect(abs(heard - ((block.time + block.latency) * 16_000 + 47)) < 0.5)
    }

    @Test func theLoudspeakerCountsTheUnderrunsOfAReplyThatRanOut() throws {
        let room = try SimulatedRoom(Self.room(), clock: .manual)
        let loudspeaker = try PlaybackDevice(room.loudspeaker)
        try loudspeaker.connect()
        try Self.play([Float](repeating: 0.25, count: 2_400), on: loudspeaker)
        let microphone = try CaptureDevice(room.microphone)
        try microphone.installTap { _ in .proceed }
        // 100 ms of reply after 60 ms of latency lasts the microphone's first 150 ms, less the
        // resampler's look-ahead.
        for _ in 0..<10 { room.step() }
        #expect(loudspeaker.underruns == 0)
        for _ in 0..<20 { room.step() }
        #expect(loudspeaker.underruns > 0 && loudspeaker.underruns <= 16)
        #expect(room.capturedFrames == 4_800 && room.playedFrames == 2_400)
    }

    @Test func aRealTimeMicrophoneDeliversPeriodsUntilItsTapStops() throws {
        let room = try SimulatedRoom(Self.room(), clock: .realTime)
        let microphone = try CaptureDevice(room.microphone)
        let collected = Collected(limit: 480)
        try microphone.installTap { collected.tap($0) }
        #expect(try microphone.waitUntilStopped() == CaptureReport(frames: 480, overruns: 0))
        #expect(room.lastCaptureTimestamp == RoomTimestamp(frame: 320, time: 0.02, latency: 0))
        #expect(!microphone.isStreaming)
    }

    @Test func stoppingARunningMicrophoneEndsItOnceAfterItsLastPeriod() throws {
        struct Counts { var taps = 0, tapsAfterEnd = 0, ends = 0 }
        let counts = Mutex(Counts())
        let room = try SimulatedRoom(Self.room(), clock: .asFastAsPossible)
        let microphone = try CaptureDevice(room.microphone)
        try microphone.installTap({ _ in
            counts.withLock { counts in
                counts.taps += 1
                if counts.ends > 0 { counts.tapsAfterEnd += 1 }
            }
            return .proceed
        }, onEnd: { counts.withLock { $0.ends += 1 } })
        while counts.withLock({ $0.taps }) < 10 {}
        microphone.stop()
        let report = try microphone.waitUntilStopped()
        let final = counts.withLock { $0 }
        #expect(final.ends == 1 && final.tapsAfterEnd == 0)
        #expect(report.frames == final.taps * 160)
        // The device can stream again, and counts on from where it was.
        try microphone.installTap { _ in .stop }
        #expect(try microphone.waitUntilStopped().frames == report.frames + 160)
    }
}
