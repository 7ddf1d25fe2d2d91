import Dispatch
import Foundation
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// The FIFO room against real ALSA `file` PCMs (alsa-lib's plugin over `null`, no sound card):
/// VoicePipe's own ALSA capture and playback open the PCMs the room's ALSA configuration
/// defines, in this process, while the room runs on a thread of its own.
///
/// Timing facts these tests rest on (measured on alsa-lib 1.2.8, Linux 6): the plugin's open of
/// its `infile` waits until the room opens the FIFO for writing, and its playback file is opened
/// (waiting for a reader) when the hardware parameters are set; capture reads wait in `read()` for
/// the room's next period, so the room is the microphone's clock; a short read is reported as a
/// full period with the rest of the buffer untouched, so the room writes whole periods in one
/// atomic write. Nothing here asserts a duration: the properties are samples and counts.
struct FIFORoomTests {
    /// Two FIFOs in a fresh directory, and the ALSA configuration that puts PCMs on them.
    final class Setup {
        let directory: TemporaryDirectory
        let microphone: String
        let speaker: String
        let alsa: ALSAConfiguration

        init() throws {
            directory = try TemporaryDirectory()
            microphone = directory.path("mic.fifo")
            speaker = directory.path("speaker.fifo")
            #expect(mkfifo(microphone, 0o600) == 0 && mkfifo(speaker, 0o600) == 0)
            alsa = try ALSAConfiguration(FIFORoom.alsaConfiguration(microphoneFIFO: microphone, speakerFIFO: speaker, includingSystemConfiguration: false))
        }
    }

    /// A room that passes the talker through untouched: 48 kHz on both sides (no resampling), a
    /// one-tap response, no noise; with nothing played, the echo is exactly zero.
    static func transparentRoom() throws -> RoomConfiguration {
        RoomConfiguration(playbackRate: 48_000, captureRate: 48_000, latency: 0.01,
                          impulseResponse: try RoomImpulseResponse(samples: [1], sampleRate: 48_000), echoGainDB: -80)
    }

    /// Runs `room` on its own thread; the result arrives through the returned wait.
    static func start(_ room: FIFORoom, onSpeaker: (@Sendable (UnsafeBufferPointer<Float>, Int) -> Void)? = nil) -> () -> Result<FIFORoomReport, FIFORoomError> {
        let outcome = Guarded<Result<FIFORoomReport, FIFORoomError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let result = Result { () throws(FIFORoomError) in try room.run(onSpeaker: onSpeaker) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        return {
            done.wait()
            return outcome.withLock { $0 } ?? .failure(.talker("the room thread gave no result"))
        }
    }

    /// Float32 samples a capture tap was given, until `limit` samples or `stop` is set.
    final class Collected: Sendable {
        let samples = Guarded<[Float]>([])
        let stop = Guarded(false)
        let limit: Int
        init(limit: Int) { self.limit = limit }
        func tap(_ bytes: UnsafeRawBufferPointer, _ stamp: CapturedBlockStamp) -> CaptureTapAction {
            let count = samples.withLock { samples in
                samples += bytes.bindMemory(to: Float.self)
                return samples.count
            }
            return count >= limit || stop.withLock({ $0 }) ? .stop : .proceed
        }
    }

    @Test func voicePipesCaptureReadsTheTalkerSampleForSampleAfterThePrefill() throws {
        let setup = try Setup()
        let tone = Signals.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 48_000, frames: 12_000, phase: 1).map(Float.init)
        let room = try FIFORoom(microphone: setup.microphone, format: .voicePipeDevice, speaker: setup.speaker, format: .voicePipeDevice,
                                room: Self.transparentRoom(), talker: RoomTalker(samples: tone, startFrame: 4_800),
                                options: FIFORoomOptions(pipePeriods: 16, duration: 0.5))
        let finished = Self.start(room)
        // Opening waits for the room's end of the FIFO; the format is what VoicePipe negotiates on
        // a file PCM over null, the room's default.
        let capture = try ALSACapture(name: "room_mic", configuration: setup.alsa)
        #expect(capture.reportedFormat == AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32))
        #expect(capture.periodFrames == room.microphonePeriodFrames)
        let prefill = 2 * 480, frames = prefill + 24_000
        let collected = Collected(limit: frames * 2)
        try capture.installTap(format: FormatGuard.validate(capture.reportedFormat), stamped: collected.tap)
        _ = try capture.waitUntilStopped()
        capture.close()
        let report = try finished().get()

        #expect(report.end == .durationReached)
        #expect(report.microphoneFrames == 24_000)
        #expect(report.droppedMicrophoneFrames == 0)
        let samples = collected.samples.withLock { $0 }
        let left = stride(from: 0, to: frames * 2, by: 2).map { samples[$0] }
        let right = stride(from: 1, to: frames * 2, by: 2).map { samples[$0] }
        #expect(left == right)
        // Two periods of silence, 100 ms of room, the tone exactly, then silence to 0.5 s.
        #expect(left[0..<(prefill + 4_800)].allSatisfy { $0 == 0 })
        #expect(Array(left[(prefill + 4_800)..<(prefill + 16_800)]) == tone)
        #expect(left[(prefill + 16_800)...].allSatisfy { $0 == 0 })
    }

    @Test func theRoomPlaysExactlyWhatVoicePipesPlaybackWroteAndEndsWhenTheSpeakerCloses() throws {
        let setup = try Setup()
        let room = try FIFORoom(microphone: setup.microphone, format: .voicePipeDevice, speaker: setup.speaker, format: .voicePipeDevice,
                                room: Self.transparentRoom(), options: FIFORoomOptions(pipePeriods: 16))
        let played = Guarded<[Float]>([])
        let finished = Self.start(room) { block, first in
            played.withLock { played in
                #expect(played.count == first)
                played += block
            }
        }
        // The room's timeline starts with the microphone's first read.
        let capture = try ALSACapture(name: "room_mic", configuration: setup.alsa)
        let listening = Collected(limit: .max)
        try capture.installTap(format: FormatGuard.validate(capture.reportedFormat), stamped: listening.tap)

        let speaker = try PlaybackDevice.open(name: "room_speaker", configuration: setup.alsa)
        #expect(speaker.format.audioFormat == AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: false))
        let signal = Signals.sine(frequency: 440, amplitude: 0.5, sampleRate: 48_000, frames: 14_400, phase: 1).map(Float.init)
        try speaker.connect()
        let period = 480
        for start in stride(from: 0, to: signal.count, by: period) {
            let count = min(period, signal.count - start)
            let planar = Array(signal[start..<(start + count)]) + Array(signal[start..<(start + count)])
            try planar.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                try speaker.play(PlaybackBuffer(base: base, frameCount: count, channelCount: 2, channelStride: count))
            }
        }
        try speaker.disconnect()
        speaker.hardware.close()
        let report = try finished().get()
        listening.stop.withLock { $0 = true }
        _ = try capture.waitUntilStopped()
        capture.close()

        #expect(report.end == .speakerClosed)
        #expect(report.speakerFrames == signal.count)
        #expect(report.speakerSoundFrames == signal.filter { $0 != 0 }.count)
        let heard = played.withLock { $0 }
        let first = try #require(report.firstSpeakerSoundFrame)
        // Stereo averaged to the loudspeaker's mono: (x + x) / 2 is x exactly.
        #expect(Array(heard[first..<(first + signal.count)]) == signal)
        #expect(heard[..<first].allSatisfy { $0 == 0 })
    }

    @Test func aMicrophoneAt16kHzInsideTheRoomIsHeardAtTheFIFOsRateAndLevel() throws {
        let setup = try Setup()
        let configuration = RoomConfiguration(playbackRate: 48_000, captureRate: 16_000, latency: 0.01,
                                              impulseResponse: try RoomImpulseResponse(samples: [1], sampleRate: 16_000), echoGainDB: -80)
        let tone = Signals.sine(frequency: 1_000, amplitude: 0.25, sampleRate: 16_000, frames: 8_000).map(Float.init)
        let format = FIFOStreamFormat(sampleRate: 48_000, channelCount: 1, encoding: .s16LE)
        let room = try FIFORoom(microphone: setup.microphone, format: format, speaker: setup.speaker, format: .voicePipeDevice,
                                room: configuration, talker: RoomTalker(samples: tone), options: FIFORoomOptions(pipePeriods: 16, duration: 0.6))
        let finished = Self.start(room)
        let capture = try ALSACapture(name: "room_mic", preferences: DevicePreferences(sampleRate: 48_000, channelCount: 1, sampleType: .int16), configuration: setup.alsa)
        let samples = Guarded<[Int16]>([])
        try capture.installTap(format: FormatGuard.validate(capture.reportedFormat)) { bytes in
            let count = samples.withLock { samples in
                samples += bytes.bindMemory(to: Int16.self)
                return samples.count
            }
            return count >= 960 + 28_800 ? .stop : .proceed
        }
        _ = try capture.waitUntilStopped()
        capture.close()
        let report = try finished().get()
        #expect(report.microphoneFrames == 28_800)
        // The middle of the half-second tone: 1 kHz at −12 dBFS (0.25), within the resampler's ±0.1 dB.
        let heard = samples.withLock { $0 }[(960 + 4_800)..<(960 + 19_200)].map { Double($0) / 32_768 }
        let level = Measurement.dB(Measurement.toneLevel(heard, frequency: 1_000, sampleRate: 48_000))
        #expect(abs(level - Measurement.dB(0.25)) < 0.1, "level \(level) dBFS")
    }

    @Test func theALSAConfigurationDefinesBothPCMsOnTheFIFOs() {
        let text = FIFORoom.alsaConfiguration(microphoneFIFO: "/tmp/a \"b\".fifo", speakerFIFO: "/tmp/speaker.fifo")
        #expect(text == """
        </usr/share/alsa/alsa.conf>
        # The microphone and speaker of 'voicepipe room': raw samples through two FIFOs, in the format
        # the program negotiates (a voicepipe device takes FLOAT_LE, 48000 Hz, 2 channels here).
        # Start 'voicepipe room' first or at the same time: opening a FIFO waits for its other end.
        pcm.room_mic {
            type file
            slave.pcm { type null }
            file "/dev/null"
            infile "/tmp/a \\"b\\".fifo"
            format raw
        }
        pcm.room_speaker {
            type file
            slave.pcm { type null }
            file "/tmp/speaker.fifo"
            format raw
        }

        """)
        #expect((try? ALSAConfiguration(text)) != nil)
    }

    @Test func pathsThatAreNotTwoFIFOsAreRefusedWithWhatToDo() throws {
        let setup = try Setup()
        let regular = setup.directory.path("plain.raw")
        #expect(FileManager.default.createFile(atPath: regular, contents: Data()))
        let room = try Self.transparentRoom()
        func refusal(_ microphone: String, _ speaker: String, _ format: FIFOStreamFormat = .voicePipeDevice, _ configuration: RoomConfiguration? = nil) -> String {
            do {
                _ = try FIFORoom(microphone: microphone, format: format, speaker: speaker, format: .voicePipeDevice, room: configuration ?? room)
                return "accepted"
            } catch {
                return error.description
            }
        }
        let missing = setup.directory.path("none.fifo")
        #expect(refusal(missing, setup.speaker) == "there is no microphone FIFO at '\(missing)'; create it with 'mkfifo \(missing)'")
        #expect(refusal(setup.microphone, regular) == "'\(regular)' is a regular file, not a FIFO; give the speaker a named pipe made with 'mkfifo'")
        #expect(refusal(setup.microphone, setup.directory.url.path) == "'\(setup.directory.url.path)' is a directory, not a FIFO; give the speaker a named pipe made with 'mkfifo'")
        #expect(refusal(setup.microphone, setup.microphone) == "the microphone and the speaker are both '\(setup.microphone)'; give each its own FIFO")
        #expect(refusal(setup.microphone, setup.speaker, FIFOStreamFormat(sampleRate: 96_000, channelCount: 2, encoding: .floatLE))
                == "a period of 7680 bytes is more than a pipe writes in one piece (4096 bytes), so the reader could get part of one; use a shorter period, fewer channels or a lower rate")
        #expect(refusal(setup.microphone, setup.speaker, FIFOStreamFormat(sampleRate: 4_000, channelCount: 1, encoding: .s16LE))
                == "the microphone stream cannot be used: 4000 Hz is outside 8000 ... 192000 Hz")
        var slow = room
        slow.playbackRate = 24_000
        #expect(refusal(setup.microphone, setup.speaker, .voicePipeDevice, slow) == "the room does not match its FIFOs: the loudspeaker runs at 24000 Hz but the speaker FIFO carries 48000 Hz")
        var late = room
        late.latency = 0.5
        #expect(refusal(setup.microphone, setup.speaker, .voicePipeDevice, late) == "the room's latency (s) is 0.5, outside the range it models (0.01 ... 0.2)")
    }

    @Test func aTalkerFileIsAveragedToMonoAndResampledToTheRoomsRate() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("talker.wav")
        let left = Signals.sine(frequency: 500, amplitude: 0.4, sampleRate: 48_000, frames: 48_000)
        try WAVBytes.pcm16(rate: 48_000, channels: 2, samples: Signals.int16(Signals.interleave([left, left.map { -$0 / 2 }])))
            .write(to: URL(fileURLWithPath: path))
        let talker = try RoomTalker.load(path: path, sampleRate: 16_000, startSeconds: 0.25, gainDB: -6)
        #expect(talker.samples.count == 16_000)
        #expect(talker.startFrame == 4_000)
        #expect(talker.gainDB == -6)
        // (0.4 − 0.2) / 2 = 0.1 of 500 Hz: −20 dBFS.
        let level = Measurement.dB(Measurement.toneLevel(talker.samples[2_000..<14_000], frequency: 500, sampleRate: 16_000))
        #expect(abs(level - Measurement.dB(0.1)) < 0.1, "level \(level) dBFS")

        let garbage = directory.path("notes.wav")
        try Data("not audio at all".utf8).write(to: URL(fileURLWithPath: garbage))
        #expect(throws: FIFORoomError.self) { try RoomTalker.load(path: garbage, sampleRate: 16_000) }
        do {
            _ = try RoomTalker.load(path: garbage, sampleRate: 16_000)
        } catch {
            #expect(error.description.hasPrefix("the talker cannot be used: "), "\(error)")
        }
    }
}
