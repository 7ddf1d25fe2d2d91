import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// The capture converter end to end: frames, lengths, levels, layouts, errors.
struct CaptureConverterTests {
    struct Collected: Equatable {
        var samples: [Int16] = []
        var frameLengths: [Int] = []
        var levels: [PeakLevel] = []
        var starts: [Int] = []
    }

    /// Feeds raw bytes to a converter in the given cut sizes (in frames) and flushes.
    static func run(_ converter: CaptureConverter, bytes: [UInt8], cutFrames: [Int]) throws -> Collected {
        var collected = Collected()
        let collect: (borrowing CaptureFrame) -> Void = {
            collected.samples += $0.copySamples()
            collected.frameLengths.append($0.sampleCount)
            collected.levels.append($0.level)
            collected.starts.append($0.startSample)
        }
        let frameBytes = converter.inputFormat.bytesPerFrame
        var offset = 0
        var cut = 0
        try bytes.withUnsafeBytes { all in
            while offset < all.count {
                let size = min(cutFrames[cut % cutFrames.count] * frameBytes, all.count - offset)
                cut += 1
                try converter.process(UnsafeRawBufferPointer(rebasing: all[offset..<(offset + size)]), collect)
                offset += size
            }
        }
        try converter.flush(collect)
        return collected
    }

    static func bytes<T>(_ samples: [T]) -> [UInt8] { samples.withUnsafeBytes { Array($0) } }

    static func stereoSpeechLike(rate: Double, frames: Int) -> (left: [Double], right: [Double]) {
        let left = zip(Signals.sine(frequency: 440, amplitude: 0.4, sampleRate: rate, frames: frames), Signals.noise(amplitude: 0.1, frames: frames, seed: 1)).map { $0 + $1 }
        let right = zip(Signals.sweep(from: 100, to: 7_000, amplitude: 0.3, sampleRate: rate, frames: frames), Signals.noise(amplitude: 0.1, frames: frames, seed: 2)).map { $0 + $1 }
        return (left, right)
    }

    @Test func framesAre32MillisecondsWithAPartialLastFrame() throws {
        let format = try FormatGuard.validate(AudioFormat(sampleRate: 48_000, channelCount: 1, sampleType: .float32))
        let converter = try CaptureConverter(input: format)
        #expect(converter.frameLength == 512)
        let input = Signals.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 48_000, frames: 48_000).map(Float.init)
        let out = try Self.run(converter, bytes: Self.bytes(input), cutFrames: [4_800])
        #expect(out.samples.count == 16_000)
        #expect(out.frameLengths == [Int](repeating: 512, count: 31) + [128])
        #expect(out.starts == (0..<32).map { $0 * 512 })
    }

    @Test(arguments: [10, 20, 100])
    func frameDurationIsConfigurable(milliseconds: Int) throws {
        let format = try FormatGuard.validate(AudioFormat(sampleRate: 16_000, channelCount: 1, sampleType: .int16))
        let converter = try CaptureConverter(input: format, options: CaptureOptions(frameMilliseconds: milliseconds))
        #expect(converter.frameLength == 16 * milliseconds)
        let out = try Self.run(converter, bytes: Self.bytes([Int16](repeating: 5, count: 16_000)), cutFrames: [1_000])
        #expect(out.frameLengths.dropLast().allSatisfy { $0 == 16 * milliseconds })
        #expect(out.samples.count == 16_000)
    }

    @Test(arguments: [9, 101, 0, -32])
    func frameDurationOutsideTenToAHundredIsRefused(milliseconds: Int) throws {
        let format = try FormatGuard.validate(AudioFormat.captureTarget)
        #expect(throws: CaptureConverterError.frameDurationOutOfRange(milliseconds: milliseconds)) {
            try CaptureConverter(input: format, options: CaptureOptions(frameMilliseconds: milliseconds))
        }
    }

    @Test func capturingTheTargetFormatIsTheIdentity() throws {
        let input = Signals.int16(Signals.noise(amplitude: 0.9, frames: 10_007, seed: 3))
        let converter = try CaptureConverter(input: .captureTarget)
        let out = try Self.run(converter, bytes: Self.bytes(input), cutFrames: [333])
        #expect(out.samples == input)
    }

    @Test(arguments: [
        AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: true),
        AudioFormat(sampleRate: 44_100, channelCount: 2, sampleType: .int16, isInterleaved: true),
        AudioFormat(sampleRate: 22_050, channelCount: 1, sampleType: .int32, isInterleaved: true),
        AudioFormat(sampleRate: 8_000, channelCount: 1, sampleType: .float64, isInterleaved: true),
    ])
    func outputIsIdenticalHoweverTheBytesAreCut(format: AudioFormat) throws {
        let frames = Int(format.sampleRate.hertz * 0.3) + 11
        let (left, right) = Self.stereoSpeechLike(rate: format.sampleRate.hertz, frames: frames)
        let channels = format.channelCount == 2 ? [left, right] : [left]
        let bytes: [UInt8]
        switch format.sampleType {
        case .float32: bytes = Self.bytes(Signals.interleave(channels.map { $0.map(Float.init) }))
        case .float64: bytes = Self.bytes(Signals.interleave(channels))
        case .int16: bytes = Self.bytes(Signals.interleave(channels.map(Signals.int16)))
        case .int32: bytes = Self.bytes(Signals.interleave(channels.map { $0.map { Int32(($0 * 2_147_483_647).rounded()) } }))
        }
        let converter = try CaptureConverter(input: FormatGuard.validate(format))
        let whole = try Self.run(converter, bytes: bytes, cutFrames: [frames])
        #expect(whole.samples.count == Int((Double(frames) * 16_000 / format.sampleRate.hertz).rounded()))
        for cuts in [[1], [7], [480], [4_410], ResamplerHarness.randomCuts(count: 100, maximum: 2_000, seed: 5)] {
            #expect(try Self.run(converter, bytes: bytes, cutFrames: cuts) == whole, "cuts \(cuts.prefix(2))")
        }
    }

    @Test func deinterleavedInputGivesTheSameFramesAsInterleaved() throws {
        let frames = 9_600
        let (left, right) = Self.stereoSpeechLike(rate: 48_000, frames: frames)
        let interleaved = Signals.interleave([left, right]).map(Float.init)
        let planar = (left + right).map(Float.init)
        let a = try CaptureConverter(input: FormatGuard.validate(AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: true)))
        let b = try CaptureConverter(input: FormatGuard.validate(AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: false)))
        // A deinterleaved buffer is one whole block per channel, so it is given whole.
        let reference = try Self.run(a, bytes: Self.bytes(interleaved), cutFrames: [frames])
        #expect(try Self.run(b, bytes: Self.bytes(planar), cutFrames: [frames]) == reference)
    }

    @Test func downmixAveragesOrPicksAChannel() throws {
        let frames = 16_000
        let tone = Signals.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 16_000, frames: frames)
        let silence = [Double](repeating: 0, count: frames)
        let bytes = Self.bytes(Signals.interleave([tone, silence]).map(Float.init))
        let format = try FormatGuard.validate(AudioFormat(sampleRate: 16_000, channelCount: 2, sampleType: .float32))

        let averaged = try Self.run(CaptureConverter(input: format), bytes: bytes, cutFrames: [1_000])
        let fit = Measurement.fitTone(averaged.samples.map { Double($0) / 32768 }, frequency: 1_000, sampleRate: 16_000)
        #expect(abs(Measurement.dB(fit.amplitude / 0.25)) < 0.01, "average of tone and silence is half the tone")

        let left = try Self.run(CaptureConverter(input: format, options: CaptureOptions(downmix: .channel(0))), bytes: bytes, cutFrames: [1_000])
        #expect(left.samples == Signals.int16(tone))

        let right = try Self.run(CaptureConverter(input: format, options: CaptureOptions(downmix: .channel(1))), bytes: bytes, cutFrames: [1_000])
        #expect(right.levels.allSatisfy { $0.isDigitalSilence })

        #expect(throws: CaptureConverterError.downmixChannelOutOfRange(channel: 2, channelCount: 2)) {
            try CaptureConverter(input: format, options: CaptureOptions(downmix: .channel(2)))
        }
    }

    @Test func aDeadMicrophoneIsDistinguishableFromAQuietRoom() throws {
        let format = try FormatGuard.validate(AudioFormat(sampleRate: 48_000, channelCount: 1, sampleType: .float32))
        let dead = [Float](repeating: 0, count: 48_000)
        let deadOut = try Self.run(CaptureConverter(input: format), bytes: Self.bytes(dead), cutFrames: [480])
        #expect(deadOut.levels.allSatisfy { $0.isDigitalSilence && $0.peak == 0 && $0.dBFS == -.infinity })

        // Room noise at about −110 dBFS: far below one Int16 step, yet not digital silence.
        let quiet = Signals.noise(amplitude: Signals.amplitude(dBFS: -110), frames: 48_000, seed: 8).map(Float.init)
        let quietOut = try Self.run(CaptureConverter(input: format), bytes: Self.bytes(quiet), cutFrames: [480])
        #expect(quietOut.samples.allSatisfy { $0 == 0 }, "the noise does not survive Int16 rounding")
        #expect(quietOut.levels.allSatisfy { !$0.isDigitalSilence && $0.peak == 0 })
        #expect(quietOut.levels.allSatisfy { $0.dBFS > -125 && $0.dBFS < -105 }, "\(quietOut.levels.map(\.dBFS).prefix(4))")
    }

    @Test func peakIsReportedInInt16UnitsAndDBFS() throws {
        let format = try FormatGuard.validate(AudioFormat(sampleRate: 16_000, channelCount: 1, sampleType: .float32))
        let amplitude = Signals.amplitude(dBFS: -1)
        let tone = Signals.sine(frequency: 1_000, amplitude: amplitude, sampleRate: 16_000, frames: 16_000, phase: 0.3).map(Float.init)
        let out = try Self.run(CaptureConverter(input: format), bytes: Self.bytes(tone), cutFrames: [512])
        // 16 kHz Float32 input is not resampled, so each frame's peak is exactly its input's.
        for (index, level) in out.levels.enumerated() {
            let frame = tone[(index * 512)..<min((index + 1) * 512, tone.count)]
            let floatPeak = frame.map(\.magnitude).max() ?? 0
            #expect(level.peak == Int(SampleConversion.int16(floatPeak)))
            #expect(abs(level.dBFS - Measurement.dB(Double(floatPeak))) < 1e-9)
            #expect(abs(level.dBFS - -1) < 0.05, "a −1 dBFS tone sampled 16 times a cycle peaks within 0.05 dB of −1")
        }
        // The most negative Int16 counts as 32768, not wrapped.
        let extreme = try Self.run(CaptureConverter(input: .captureTarget), bytes: Self.bytes([Int16](repeating: -32768, count: 512)), cutFrames: [512])
        #expect(extreme.levels == [PeakLevel(peak: 32768, floatPeak: 1)])
        #expect(extreme.levels[0].dBFS == 0 && !extreme.levels[0].isDigitalSilence)
    }

    @Test func nonFiniteAndOverRangeInputSaturatesWithoutTrapping() throws {
        let format = try FormatGuard.validate(AudioFormat(sampleRate: 48_000, channelCount: 1, sampleType: .float32))
        for (value, expected) in [(Float.infinity, Int16.max), (2.5, .max), (-Float.infinity, .min), (-9, .min), (.nan, 0)] {
            let out = try Self.run(CaptureConverter(input: format), bytes: Self.bytes([Float](repeating: value, count: 4_800)), cutFrames: [100])
            #expect(out.samples[200..<1_400].allSatisfy { $0 == expected }, "\(value) → \(out.samples[800])")
        }
    }

    @Test func badBuffersAreTypedErrors() throws {
        let stereo = try FormatGuard.validate(AudioFormat(sampleRate: 44_100, channelCount: 2, sampleType: .int16))
        let converter = try CaptureConverter(input: stereo)
        #expect(throws: CaptureConverterError.partialFrame(byteCount: 6, bytesPerFrame: 4)) {
            try [UInt8](repeating: 0, count: 6).withUnsafeBytes { try converter.process($0) { _ in } }
        }
        #expect(throws: CaptureConverterError.sampleTypeMismatch(expected: .int16, received: .float32)) {
            try [Float](repeating: 0, count: 8).withUnsafeBufferPointer { try converter.process($0) { _ in } }
        }
        #expect(throws: CaptureConverterError.partialFrame(byteCount: 6, bytesPerFrame: 4)) {
            try [Int16](repeating: 0, count: 3).withUnsafeBufferPointer { try converter.process($0) { _ in } }
        }
        let wrongRates = try BuiltInResampler(inputRate: 48_000, outputRate: 16_000)
        #expect(throws: CaptureConverterError.self) { try CaptureConverter(input: stereo, resampler: wrongRates) }
    }

    @Test func resetAbandonsTheStream() throws {
        let format = try FormatGuard.validate(AudioFormat(sampleRate: 44_100, channelCount: 2, sampleType: .int16))
        let converter = try CaptureConverter(input: format)
        let (left, right) = Self.stereoSpeechLike(rate: 44_100, frames: 20_000)
        let bytes = Self.bytes(Signals.interleave([Signals.int16(left), Signals.int16(right)]))
        let first = try Self.run(converter, bytes: bytes, cutFrames: [441])
        try bytes.withUnsafeBytes { try converter.process(UnsafeRawBufferPointer(rebasing: $0[0..<8_000])) { _ in } }
        converter.reset()
        #expect(converter.inputFrames == 0)
        #expect(try Self.run(converter, bytes: bytes, cutFrames: [441]) == first)
    }
}
