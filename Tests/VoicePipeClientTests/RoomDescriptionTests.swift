import Foundation
import Testing
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// `--room` as text: presets, options over them, and what is refused.
struct RoomDescriptionTests {
    @Test func aPresetIsThePresetsRoom() throws {
        #expect(try RoomDescription.configuration("kitchen") == RoomPreset.kitchen.configuration())
        #expect(try RoomDescription.configuration("office") == RoomPreset.office.configuration())
    }

    @Test func optionsChangeThePresetAndOnlyWhatTheyName() throws {
        let room = try RoomDescription.configuration("car, drift=100,echo=-12,noise=babble:-50,clip=3,latency=0.1")
        var expected = try RoomPreset.car.configuration()
        expected.clockDriftPPM = 100
        expected.echoGainDB = -12
        expected.noise = RoomNoise(.babble(talkers: 6), levelDBFS: -50)
        expected.loudspeakerDrive = 3
        expected.latency = 0.1
        #expect(room == expected)
        var unreported = try RoomPreset.office.configuration()
        unreported.unreportedLatency = 0.15
        #expect(try RoomDescription.configuration("office,unreported=0.15") == unreported)
        #expect(try RoomDescription.configuration("kitchen,clip=off,noise=off").loudspeakerDrive == nil)
    }

    @Test func aReverberationTimeAndDistanceGenerateTheResponseWithTheSeed() throws {
        let room = try RoomDescription.configuration("rt60=0.3,distance=2,seed=7")
        #expect(room.impulseResponse == (try RoomImpulseResponse(reverberationTime: 0.3, distance: 2, sampleRate: 16_000, seed: 7)))
        #expect(room.latency == (try RoomPreset.office.configuration()).latency)
    }

    @Test func aMeasuredResponseIsReadAtAnyRateAndResampledToTheMicrophones() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("ir.wav")
        var response = [Float](repeating: 0, count: 4_800)
        response[48] = 0.9
        response[480] = -0.3
        let writer = try AudioFileWriter(path: path, sampleRate: 48_000, channelCount: 1, encoding: .float32)
        try response.withUnsafeBufferPointer { try writer.write($0) }
        try writer.close()
        let room = try RoomDescription.configuration("ir=\(path)")
        #expect(room.impulseResponse == (try RoomImpulseResponse(samples: response, sampleRate: 48_000).resampled(to: 16_000)))
        #expect(room.impulseResponse.sampleRate == 16_000)
    }

    @Test(arguments: [
        ("attic", "'attic' is not a room: give a preset (car, office, kitchen) or option=value (rt60, distance, ir, latency, echo, clip, noise, drift, unreported, seed)"),
        ("office,colour=blue", "'colour' is not a room option; the options are rt60, distance, ir, latency, echo, clip, noise, drift, unreported, seed"),
        ("latency=fast", "the room's 'latency' takes a number, not 'fast'"),
        ("drift=5000", "clock drift (ppm)"),
        ("unreported=0.5", "the room's unreported latency (s) is 0.5, outside the range it models (-0.1 ... 0.4)"),
        ("rt60=9", "reverberation"),
        ("noise=pink", "the room's 'noise' takes white, pink, brown, babble or file:PATH, then :LEVEL in dBFS (pink:-55), or off, not 'pink'"),
        ("noise=pink:-120", "noise level (dBFS)"),
        ("seed=-1", "the room's 'seed' takes a whole number, not '-1'"),
        ("ir=/nonexistent/ir.wav", "cannot use '/nonexistent/ir.wav' as the room's impulse response"),
    ])
    func aDescriptionThatIsNotARoomIsRefusedWithWhatIsWrong(text: String, message: String) {
        #expect {
            try RoomDescription.configuration(text)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test func aFileThatIsNotAudioIsRefusedAsTheResponseItWasMeantToBe() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.wav")
        try "not audio at all".write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            try RoomDescription.configuration("office,ir=\(path)")
        } throws: { error in
            guard case RoomDescription.Failure.file(let option, let failed, _) = error else { return false }
            return option == "impulse response" && failed == path
        }
    }
}
