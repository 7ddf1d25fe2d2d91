import AllocationCounting
import Foundation
import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// The simulated room: delays, gains, decay, loudspeaker clipping, noise colours, clock drift, the
/// near-end path and chunking invariance, each measured on what the microphone captures.
struct RoomSimulatorTests {
    /// A room with one tap (no reverberation), so a test sees only the stage it measures.
    static func dryRoom(playbackRate: SampleRate = 16_000, captureRate: SampleRate = 16_000, latency: Double = 0.01,
                        drive: Double? = nil, echoGainDB: Double = 0, drift: Double = 0) throws -> RoomConfiguration {
        RoomConfiguration(playbackRate: playbackRate, captureRate: captureRate, latency: latency, loudspeakerDrive: drive,
                          impulseResponse: try RoomImpulseResponse(samples: [1], sampleRate: captureRate),
                          echoGainDB: echoGainDB, clockDriftPPM: drift)
    }

    static func tone(frequency: Double, amplitude: Double, rate: Double, frames: Int) -> [Float] {
        Signals.sine(frequency: frequency, amplitude: amplitude, sampleRate: rate, frames: frames).map(Float.init)
    }

    @Test func anImpulseArrivesAtLatencyPlusDistanceDelayWithTheDirectPathGain() throws {
        let response = try RoomImpulseResponse(reverberationTime: 0.1, distance: 2, sampleRate: 16_000)
        let configuration = RoomConfiguration(playbackRate: 16_000, captureRate: 16_000, latency: 0.06,
                                              impulseResponse: response, echoGainDB: 0)
        var room = try RoomSimulator(configuration)
        var played = [Float](repeating: 0, count: 8_000)
        played[0] = 1
        room.play(played)
        let microphone = room.capture(frames: 4_000).microphone
        // 60 ms is 960 frames; 2 m at 343 m/s is 5.83 ms, 93 frames.
        let arrival = 960 + 93
        #expect(response.directPathFrame == 93)
        #expect(microphone[..<arrival].allSatisfy { $0 == 0 })
        #expect(abs(Measurement.dB(Double(microphone[arrival])) - Measurement.dB(0.5)) < 0.1)
        #expect(Measurement.peakPosition(microphone).rounded() == Double(arrival))
    }

    @Test(arguments: [0.05, 0.1, 0.3, 0.6, 1.0, 2.0])
    func aGeneratedTailFallsSixtyDecibelsOverItsReverberationTime(t60: Double) throws {
        let response = try RoomImpulseResponse(reverberationTime: t60, distance: 1, sampleRate: 16_000, seed: 7)
        let tail = response.samples[(response.directPathFrame + 1)...]
        let measured = Measurement.reverberationTime(tail, sampleRate: 16_000)
        #expect(abs(measured / t60 - 1) < 0.1, "T60 \(t60) s measured as \(measured) s")
    }

    @Test func theMicrophoneHearsTheTailDecayAtTheRoomsReverberationTime() throws {
        let response = try RoomImpulseResponse(reverberationTime: 0.3, distance: 1, sampleRate: 16_000, seed: 3)
        var room = try RoomSimulator(RoomConfiguration(playbackRate: 16_000, captureRate: 16_000, latency: 0.02,
                                                       impulseResponse: response, echoGainDB: -6))
        var played = [Float](repeating: 0, count: 6_400)
        played[0] = 1
        room.play(played)
        let microphone = room.capture(frames: 6_400).microphone
        let tail = microphone[(320 + response.directPathFrame + 1)...]
        let measured = Measurement.reverberationTime(tail, sampleRate: 16_000)
        #expect(abs(measured / 0.3 - 1) < 0.1, "measured \(measured) s")
    }

    @Test(arguments: [-30.0, -10.0, 0.0, 6.0])
    func theEchoGainHoldsOnAToneAcrossTheRateChange(gain: Double) throws {
        var room = try RoomSimulator(Self.dryRoom(playbackRate: 24_000, captureRate: 16_000, echoGainDB: gain))
        room.play(Self.tone(frequency: 1_000, amplitude: 0.1, rate: 24_000, frames: 24_000))
        let echo = room.capture(frames: 16_000).echo
        let level = Measurement.toneLevel(Measurement.window(echo, from: 2_000, to: 14_000), frequency: 1_000, sampleRate: 16_000)
        #expect(abs(Measurement.dB(level / 0.1) - gain) < 0.2, "gain \(gain) dB measured \(Measurement.dB(level / 0.1)) dB")
    }

    /// The third harmonic of tanh(g·A·sin θ)/g, relative to its fundamental, by numerical Fourier series.
    static func tanhThirdHarmonicDB(drive: Double, amplitude: Double) -> Double {
        let points = 4_096
        var first = 0.0, third = 0.0
        for m in 0..<points {
            let theta = 2 * Double.pi * Double(m) / Double(points)
            let y = tanh(drive * amplitude * sin(theta)) / drive
            first += y * sin(theta)
            third += y * sin(3 * theta)
        }
        return Measurement.dB(abs(third) / abs(first))
    }

    @Test(arguments: [0.5, 1.0, 3.0])
    func softClippingGivesTheThirdHarmonicOfItsDrive(drive: Double) throws {
        var room = try RoomSimulator(Self.dryRoom(drive: drive))
        room.play(Self.tone(frequency: 500, amplitude: 0.5, rate: 16_000, frames: 16_000))
        let echo = Measurement.window(room.capture(frames: 16_000).echo, from: 1_000, to: 15_000)
        let fundamental = Measurement.toneLevel(echo, frequency: 500, sampleRate: 16_000)
        let third = Measurement.toneLevel(echo, frequency: 1_500, sampleRate: 16_000)
        let expected = Self.tanhThirdHarmonicDB(drive: drive, amplitude: 0.5)
        #expect(abs(Measurement.dB(third / fundamental) - expected) < 0.2, "drive \(drive): \(Measurement.dB(third / fundamental)) dB, tanh gives \(expected) dB")
    }

    @Test func aLinearLoudspeakerAddsNoHarmonics() throws {
        var room = try RoomSimulator(Self.dryRoom())
        room.play(Self.tone(frequency: 500, amplitude: 0.5, rate: 16_000, frames: 16_000))
        let echo = Measurement.window(room.capture(frames: 16_000).echo, from: 1_000, to: 15_000)
        let third = Measurement.toneLevel(echo, frequency: 1_500, sampleRate: 16_000)
        #expect(Measurement.dB(third / 0.5) < -120)
    }

    @Test(arguments: [(RoomNoise.Kind.white, 0.0), (.pink, -3.0), (.brown, -6.0)])
    func noiseHasTheSpectralSlopeOfItsColour(kind: RoomNoise.Kind, slope: Double) throws {
        var generator = try RoomNoiseGenerator(RoomNoise(kind, levelDBFS: -30), sampleRate: 16_000, seed: 11)
        let samples = (0..<160_000).map { _ in generator.next() }
        let octaves = [125.0, 250, 500, 1_000, 2_000]
        let levels = octaves.map { Measurement.spectralDensityDB(samples, at: $0, sampleRate: 16_000) }
        for (index, level) in levels.enumerated() {
            let relative = level - levels[0]
            #expect(abs(relative - slope * Double(index)) < 1, "\(kind) at \(octaves[index]) Hz: \(relative) dB, expected \(slope * Double(index)) dB")
        }
    }

    @Test(arguments: [RoomNoise.Kind.white, .pink, .brown, .babble(talkers: 6), .samples([0.5, -0.25, 0.125, 0])])
    func noiseComesOutAtItsLevel(kind: RoomNoise.Kind) throws {
        var generator = try RoomNoiseGenerator(RoomNoise(kind, levelDBFS: -40), sampleRate: 16_000, seed: 5)
        let samples = (0..<160_000).map { _ in generator.next() }
        #expect(abs(Measurement.dB(Measurement.rms(samples)) + 40) < 0.5, "\(kind): \(Measurement.dB(Measurement.rms(samples))) dBFS")
    }

    @Test func aDriftOfPlus100ppmDeliversExactlyThatManyMoreFramesOverAMinute() throws {
        var room = try RoomSimulator(Self.dryRoom(drift: 100))
        room.play(Self.tone(frequency: 1_000, amplitude: 0.5, rate: 16_000, frames: 960_000 + 160))
        var microphone: [Float] = []
        microphone.reserveCapacity(960_096)
        while room.time < 60 {
            microphone += room.capture(frames: 32).microphone
        }
        // The microphone's clock runs 100 ppm fast: 16 001.6 frames per second of the loudspeaker's clock.
        let framesBeforeAMinute = microphone.indices.last { Double($0) / 16_001.6 < 60 }.map { $0 + 1 }
        #expect(framesBeforeAMinute == 960_096)
        #expect(room.underrunFrames == 0)
        // Frame n reads the loudspeaker at n/(1 + 100 ppm) frames, after the 160 frames of latency.
        func expected(_ n: Int) -> Double { 0.5 * sin(2 * Double.pi * 1_000 * (Double(n) / 1.0001 - 160) / 16_000) }
        var errorEnergy = 0.0
        let checked = Array(200..<16_200) + Array(944_000..<960_000)
        for n in checked {
            let error = Double(microphone[n]) - expected(n)
            errorEnergy += error * error
        }
        let errorDB = Measurement.dB((errorEnergy / Double(checked.count)).squareRoot() / (0.5 / 2.squareRoot()))
        #expect(errorDB < -80, "resampling error \(errorDB) dB")
    }

    @Test(arguments: [(16_000.0, 16_003.2), (16_000.0, 15_996.8), (24_000.0, 16_000.0)], [250.0, 1_000.0, 4_000.0, 6_000.0])
    func theFractionalResamplerIsExactToMinus85Decibels(rates: (Double, Double), frequency: Double) {
        let resampler = FractionalResampler(inputRate: rates.0, outputRate: rates.1)
        let input = (0..<Int(rates.0 / 2)).map { Float(0.5 * sin(2 * Double.pi * frequency * Double($0) / rates.0)) }
        var errorEnergy = 0.0
        let frames = Int(rates.1 / 2) - 200
        input.withUnsafeBufferPointer { input in
            for n in 100..<frames {
                let position = resampler.position(ofOutputFrame: n)
                let error = Double(resampler.value(at: position, input: input, base: 0)) - 0.5 * sin(2 * Double.pi * frequency * position / rates.0)
                errorEnergy += error * error
            }
        }
        let errorDB = Measurement.dB((errorEnergy / Double(frames - 100)).squareRoot() / (0.5 / 2.squareRoot()))
        #expect(errorDB < -85, "\(rates.0) → \(rates.1) Hz at \(frequency) Hz: \(errorDB) dB")
    }

    @Test func theNearEndAppearsUnchangedWhenTheReplyIsSilent() throws {
        var configuration = try RoomPreset.kitchen.configuration()
        configuration.noise = nil
        configuration.impulseResponse = try RoomImpulseResponse(reverberationTime: 0.05, distance: 1.5, sampleRate: 16_000)
        let speech = Signals.program(sampleRate: 16_000, frames: 8_000, channel: 0).map { Float($0) * 0.5 }
        var room = try RoomSimulator(configuration, talker: RoomTalker(samples: speech, startFrame: 1_000))
        room.play([Float](repeating: 0, count: 24_000))
        let captured = room.capture(frames: 16_000)
        #expect(captured.echo.allSatisfy { $0 == 0 })
        #expect(captured.microphone == captured.nearEnd)
        #expect(Array(captured.microphone[1_000..<9_000]) == speech)
        #expect(captured.microphone[..<1_000].allSatisfy { $0 == 0 } && captured.microphone[9_000...].allSatisfy { $0 == 0 })
        #expect(captured.report.nearEndPeak == speech.map(\.magnitude).max())
    }

    /// Captures `frames` frames in periods cut as `periods` says (cycled), after playing `played` in `chunks`.
    static func run(_ configuration: RoomConfiguration, talker: RoomTalker, played: [Float], chunks: [Int], periods: [Int], frames: Int) throws -> [[Float]] {
        var room = try RoomSimulator(configuration, talker: talker)
        var start = 0, index = 0
        while start < played.count {
            let end = min(played.count, start + chunks[index % chunks.count])
            room.play(Array(played[start..<end]))
            start = end
            index += 1
        }
        var parts: [[Float]] = [[], [], [], []]
        index = 0
        while parts[0].count < frames {
            let count = min(frames - parts[0].count, periods[index % periods.count])
            let captured = room.capture(frames: count)
            parts[0] += captured.microphone
            parts[1] += captured.echo
            parts[2] += captured.nearEnd
            parts[3] += captured.noise
            index += 1
        }
        return parts
    }

    @Test func theRoomGivesTheSameOutputHoweverPeriodsAreCut() throws {
        var configuration = try RoomPreset.kitchen.configuration(seed: 9)
        configuration.impulseResponse = try RoomImpulseResponse(reverberationTime: 0.1, distance: 1.5, sampleRate: 16_000, seed: 9)
        configuration.clockDriftPPM = -150
        let speech = Signals.program(sampleRate: 16_000, frames: 6_000, channel: 1).map { Float($0) * 0.3 }
        let talker = RoomTalker(samples: speech, startFrame: 4_000, gainDB: -3)
        let played = Signals.program(sampleRate: 24_000, frames: 24_000, channel: 0).map { Float($0) * 0.8 }
        let reference = try Self.run(configuration, talker: talker, played: played, chunks: [24_000], periods: [160], frames: 16_000)
        let cut = try Self.run(configuration, talker: talker, played: played, chunks: [1, 7, 480, 1_031], periods: [1, 13, 333, 1_600, 2_049], frames: 16_000)
        #expect(cut == reference)
        #expect(Measurement.rms(reference[1]) > 0.01 && Measurement.rms(reference[3]) > 0.001)
    }

    @Test func aMeasuredResponseAtAnotherRateKeepsItsDelayAndItsGainWhenResampled() throws {
        // A 48 kHz response: a direct path 3 ms late at half gain and one reflection.
        var measured = [Float](repeating: 0, count: 2_400)
        measured[144] = 0.5
        measured[1_000] = -0.2
        let response = try RoomImpulseResponse(samples: measured, sampleRate: 48_000).resampled(to: 16_000)
        #expect(response.sampleRate == 16_000 && response.directPathFrame == 48)
        #expect(Measurement.peakPosition(response.samples).rounded() == 48)
        var room = try RoomSimulator(RoomConfiguration(playbackRate: 16_000, captureRate: 16_000, latency: 0.01,
                                                       impulseResponse: response, echoGainDB: 0))
        room.play(Self.tone(frequency: 1_000, amplitude: 0.1, rate: 16_000, frames: 16_000))
        let echo = Measurement.window(room.capture(frames: 16_000).echo, from: 2_000, to: 14_000)
        // The same tone through the 48 kHz response, computed directly: 0.5·x(t − 3 ms) − 0.2·x(t − 20.83 ms).
        let phase = 2 * Double.pi * 1_000 * (1_000.0 - 144) / 48_000
        let expected = 0.1 * ((0.5 - 0.2 * cos(phase)) * (0.5 - 0.2 * cos(phase)) + 0.04 * sin(phase) * sin(phase)).squareRoot()
        let level = Measurement.toneLevel(echo, frequency: 1_000, sampleRate: 16_000)
        #expect(abs(Measurement.dB(level / expected)) < 0.1, "\(Measurement.dB(level / expected)) dB")
        #expect(throws: RoomError.impulseResponseRate(impulse: 48_000, capture: 16_000)) {
            try RoomSimulator(RoomConfiguration(playbackRate: 16_000, captureRate: 16_000, latency: 0.01,
                                                impulseResponse: try RoomImpulseResponse(samples: measured, sampleRate: 48_000), echoGainDB: 0))
        }
    }

    @Test func aRunningRoomAllocatesNothingPerPeriod() throws {
        var configuration = try RoomPreset.kitchen.configuration()
        configuration.impulseResponse = try RoomImpulseResponse(reverberationTime: 0.05, distance: 1.5, sampleRate: 16_000)
        configuration.clockDriftPPM = 80
        let talker = RoomTalker(samples: [Float](repeating: 0.1, count: 40_000), startFrame: 500)
        var room = try RoomSimulator(configuration, talker: talker)
        let reply = [Float](repeating: 0.2, count: 240)
        var microphone = [Float](repeating: 0, count: 160)
        var echo = microphone, nearEnd = microphone, noise = microphone
        try reply.withUnsafeBufferPointer { reply in
            try microphone.withUnsafeMutableBufferPointer { microphone in
                try echo.withUnsafeMutableBufferPointer { echo in
                    try nearEnd.withUnsafeMutableBufferPointer { nearEnd in
                        try noise.withUnsafeMutableBufferPointer { noise in
                            // Warm-up: a second of periods, past the first drop of old loudspeaker output.
                            var period = 0
                            while period < 100 {
                                room.play(reply)
                                room.capture(into: microphone, echo: echo, nearEnd: nearEnd, noise: noise)
                                period += 1
                            }
                            let allocations = countAllocations {
                                var period = 0
                                while period < 200 {
                                    room.play(reply)
                                    room.capture(into: microphone, echo: echo, nearEnd: nearEnd, noise: noise)
                                    period += 1
                                }
                            }
                            #expect(allocations == 0, "\(allocations) allocations in 200 periods")
                            #expect(room.underrunFrames == 0)
                            try #require(room.capturedFrames == 48_000)
                        }
                    }
                }
            }
        }
    }

    @Test func optionsOutsideTheirRangeAreRefusedWithTheRange() throws {
        #expect(throws: RoomError.outOfRange(option: "reverberation time (s)", value: 3, range: 0.05...2)) {
            try RoomImpulseResponse(reverberationTime: 3, distance: 1, sampleRate: 16_000)
        }
        #expect(RoomError.outOfRange(option: "latency (s)", value: 0.5, range: 0.01...0.2).description
                == "the room's latency (s) is 0.5, outside the range it models (0.01 ... 0.2)")
        var configuration = try Self.dryRoom()
        configuration.latency = 0.5
        #expect(throws: RoomError.outOfRange(option: "latency (s)", value: 0.5, range: 0.01...0.2)) { try RoomSimulator(configuration) }
        configuration = try Self.dryRoom(captureRate: 48_000)
        configuration.captureRate = 16_000
        #expect(throws: RoomError.impulseResponseRate(impulse: 48_000, capture: 16_000)) { try RoomSimulator(configuration) }
        #expect(throws: RoomError.unusableImpulseResponse("it has no samples")) { try RoomImpulseResponse(samples: [], sampleRate: 16_000) }
        #expect(throws: RoomError.unusableImpulseResponse("sample 1 is not a finite number")) { try RoomImpulseResponse(samples: [1, .nan], sampleRate: 16_000) }
        #expect(throws: RoomError.unsupportedRate(0)) { try RoomImpulseResponse(samples: [1], sampleRate: 0) }
    }

    @Test func thePresetsHaveTheirDocumentedFigures() throws {
        let car = try RoomPreset.car.configuration()
        let office = try RoomPreset.office.configuration()
        let kitchen = try RoomPreset.kitchen.configuration()
        #expect([car.latency, office.latency, kitchen.latency] == [0.04, 0.06, 0.1])
        #expect([car.echoGainDB, office.echoGainDB, kitchen.echoGainDB] == [-6, -10, -8])
        #expect([car.noise, office.noise, kitchen.noise] == [RoomNoise(.brown, levelDBFS: -40), RoomNoise(.pink, levelDBFS: -55), RoomNoise(.babble(talkers: 6), levelDBFS: -45)])
        #expect([car.loudspeakerDrive, office.loudspeakerDrive, kitchen.loudspeakerDrive] == [nil, nil, 2])
        for (preset, t60) in [(car, 0.08), (office, 0.4), (kitchen, 0.6)] {
            let tail = preset.impulseResponse.samples[(preset.impulseResponse.directPathFrame + 1)...]
            #expect(abs(Measurement.reverberationTime(tail, sampleRate: 16_000) / t60 - 1) < 0.1)
        }
        // Echo at the microphone for white noise: the gain plus the response's energy.
        #expect(abs(office.echoGainDB + office.impulseResponse.energyDB + 7) < 0.5)
    }
}
