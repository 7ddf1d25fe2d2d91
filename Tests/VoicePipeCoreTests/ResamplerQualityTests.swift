import Foundation
import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// Measured quality of the built-in resampler for the four capture inputs and the playback path:
/// passband flatness, stopband rejection (aliases and images), SINAD after Int16 rounding, and
/// time alignment. Levels are measured on the Float32 output unless a test says Int16.
struct ResamplerQualityTests {
    /// The capture inputs the specification names.
    enum Input: String, CaseIterable, CustomTestStringConvertible {
        case stereo48kFloat32, stereo44k1Int16, mono8kInt16, mono22k05Int16
        var rate: Double {
            switch self {
            case .stereo48kFloat32: 48_000
            case .stereo44k1Int16: 44_100
            case .mono8kInt16: 8_000
            case .mono22k05Int16: 22_050
            }
        }
        var format: AudioFormat {
            switch self {
            case .stereo48kFloat32: AudioFormat(sampleRate: SampleRate(hertz: rate), channelCount: 2, sampleType: .float32)
            case .stereo44k1Int16: AudioFormat(sampleRate: SampleRate(hertz: rate), channelCount: 2, sampleType: .int16)
            case .mono8kInt16, .mono22k05Int16: AudioFormat(sampleRate: SampleRate(hertz: rate), channelCount: 1, sampleType: .int16)
            }
        }
        var testDescription: String { rawValue }
    }

    static let outputRate = 16_000.0
    static let seconds = 0.6
    /// Output samples skipped at each end (the tone's onset and end are not steady state).
    static let margin = 1_600

    /// Streams a mono signal through the resampler alone (Float32 output, no rounding).
    static func resampleFloat(_ signal: [Double], from rate: Double, to outputRate: Double = outputRate) throws -> [Float] {
        let resampler = try BuiltInResampler(inputRate: SampleRate(hertz: rate), outputRate: SampleRate(hertz: outputRate))
        return try ResamplerHarness.stream(resampler, signal.map(Float.init), chunkSizes: [480])
    }

    /// Streams a signal through the whole capture converter in the input's format (identical on
    /// every channel), returning the Int16 output.
    static func capture(_ signal: [Double], input: Input) throws -> [Int16] {
        let format = try FormatGuard.validate(input.format)
        let converter = try CaptureConverter(input: format)
        var out = [Int16]()
        let collect: (borrowing CaptureFrame) -> Void = { out += $0.copySamples() }
        switch format.sampleType {
        case .float32:
            let samples = Signals.interleave([[Float]](repeating: signal.map(Float.init), count: format.channelCount))
            try samples.withUnsafeBufferPointer { try converter.process($0, collect) }
        default:
            let samples = Signals.interleave([[Int16]](repeating: Signals.int16(signal), count: format.channelCount))
            try samples.withUnsafeBufferPointer { try converter.process($0, collect) }
        }
        try converter.flush(collect)
        return out
    }

    static func steady<T>(_ x: [T]) -> ArraySlice<T> { x[margin..<(x.count - margin)] }

    @Test(arguments: Input.allCases)
    func passbandIsFlatWithinATenthOfADecibel(input: Input) throws {
        let amplitude = Signals.amplitude(dBFS: -6)
        for frequency in [100.0, 1_000, 3_400, 6_000, 7_000] where frequency < 0.875 * min(input.rate, Self.outputRate) / 2 {
            let signal = Signals.sine(frequency: frequency, amplitude: amplitude, sampleRate: input.rate, frames: Int(input.rate * Self.seconds))
            let output = try Self.resampleFloat(signal, from: input.rate)
            let fit = Measurement.fitTone(Self.steady(output), frequency: frequency, sampleRate: Self.outputRate)
            let gain = Measurement.dB(fit.amplitude / amplitude)
            #expect(abs(gain) <= 0.1, "\(input) \(frequency) Hz: gain \(gain) dB")
        }
    }

    @Test(arguments: Input.allCases)
    func everythingFromTheLowerNyquistUpIs100DecibelsDown(input: Input) throws {
        let amplitude = Signals.amplitude(dBFS: -1)
        for frequency in [8_500.0, 9_000, 10_000, 12_000, 16_000, 20_000] where frequency < input.rate / 2 {
            let signal = Signals.sine(frequency: frequency, amplitude: amplitude, sampleRate: input.rate, frames: Int(input.rate * Self.seconds))
            let output = try Self.resampleFloat(signal, from: input.rate)
            let level = Measurement.dB(Measurement.rms(Self.steady(output)) / (amplitude / 2.0.squareRoot()))
            #expect(level <= -100, "\(input) \(frequency) Hz comes out at \(level) dB")
            // And after Int16 rounding it is (near) silence: nothing beyond ±1 LSB.
            let rounded = try Self.capture(signal, input: input)
            let loudest = Self.steady(rounded).map { Int($0).magnitude }.max() ?? 0
            #expect(loudest <= 1, "\(input) \(frequency) Hz leaves Int16 samples of \(loudest)")
        }
    }

    @Test(arguments: Input.allCases)
    func sinadAfterInt16RoundingIsAtLeast90Decibels(input: Input) throws {
        let signal = Signals.sine(frequency: 997, amplitude: Signals.amplitude(dBFS: -1), sampleRate: input.rate, frames: Int(input.rate * Self.seconds))
        let output = try Self.capture(signal, input: input)
        let fit = Measurement.fitTone(Self.steady(output).map { Double($0) / 32768 }, frequency: 997, sampleRate: Self.outputRate)
        #expect(fit.sinad >= 90, "\(input): SINAD \(fit.sinad) dB")
    }

    @Test(arguments: [32_000.0, 64_000, 96_000, 192_000, 11_025, 12_000])
    func otherInputRatesMeetTheSameSpecification(rate: Double) throws {
        // Whole factors (2, 4, 6) take the one-stage decimator, 192 kHz the two-stage path,
        // 11.025 and 12 kHz the upsampling path with a polyphase stage after the interpolator.
        let passAmplitude = Signals.amplitude(dBFS: -6)
        let nyquist = min(rate, Self.outputRate) / 2
        for frequency in [100.0, 1_000, 3_400, 6_000, 7_000] where frequency < 0.875 * nyquist {
            let output = try Self.resampleFloat(Signals.sine(frequency: frequency, amplitude: passAmplitude, sampleRate: rate, frames: Int(rate * Self.seconds)), from: rate)
            let gain = Measurement.dB(Measurement.fitTone(Self.steady(output), frequency: frequency, sampleRate: Self.outputRate).amplitude / passAmplitude)
            #expect(abs(gain) <= 0.1, "\(rate) Hz, \(frequency) Hz: gain \(gain) dB")
        }
        let stopAmplitude = Signals.amplitude(dBFS: -1)
        for frequency in [8_500.0, 12_000, 20_000, 40_000, 90_000] where frequency < rate / 2 {
            let output = try Self.resampleFloat(Signals.sine(frequency: frequency, amplitude: stopAmplitude, sampleRate: rate, frames: Int(rate * Self.seconds)), from: rate)
            let level = Measurement.dB(Measurement.rms(Self.steady(output)) / (stopAmplitude / 2.0.squareRoot()))
            #expect(level <= -100, "\(rate) Hz, \(frequency) Hz comes out at \(level) dB")
        }
        if rate < Self.outputRate {
            // Upsampling: the image of a 997 Hz tone (at rate − 997 Hz) is 100 dB down.
            let output = try Self.resampleFloat(Signals.sine(frequency: 997, amplitude: stopAmplitude, sampleRate: rate, frames: Int(rate * Self.seconds)), from: rate)
            let fits = Measurement.fitTones(Self.steady(output), frequencies: [997, rate - 997], sampleRate: Self.outputRate)
            #expect(Measurement.dB(fits[1].amplitude / stopAmplitude) <= -100)
        }
        #expect(try BuiltInResampler(inputRate: SampleRate(hertz: rate), outputRate: SampleRate(hertz: Self.outputRate)).latency <= 0.004 + 1e-12)
    }

    @Test func upsamplingImagesAre100DecibelsDown() throws {
        // 8 kHz → 16 kHz: a tone at f has its image at 8 kHz − f.
        for frequency in [997.0, 2_000, 3_400] {
            let amplitude = Signals.amplitude(dBFS: -1)
            let signal = Signals.sine(frequency: frequency, amplitude: amplitude, sampleRate: 8_000, frames: 4_800)
            let output = try Self.resampleFloat(signal, from: 8_000)
            let fits = Measurement.fitTones(Self.steady(output), frequencies: [frequency, 8_000 - frequency], sampleRate: 16_000)
            let image = Measurement.dB(fits[1].amplitude / amplitude)
            #expect(image <= -100, "image of \(frequency) Hz at \(image) dB")
        }
    }

    @Test(arguments: [48_000.0, 44_100, 96_000])
    func playbackUpsamplingImagesAre100DecibelsDown(deviceRate: Double) throws {
        // 24 kHz → device rate: the lower Nyquist frequency is 12 kHz; images sit at 24 kHz − f.
        let amplitude = Signals.amplitude(dBFS: -1)
        for frequency in [997.0, 5_000, 10_000] {
            let signal = Signals.sine(frequency: frequency, amplitude: amplitude, sampleRate: 24_000, frames: 14_400)
            let output = try Self.resampleFloat(signal, from: 24_000, to: deviceRate)
            let skip = Int(deviceRate / 10)
            let window = output[skip..<(output.count - skip)]
            let fits = Measurement.fitTones(window, frequencies: [frequency, 24_000 - frequency], sampleRate: deviceRate)
            #expect(abs(Measurement.dB(fits[0].amplitude / amplitude)) <= 0.1, "\(deviceRate) Hz: \(frequency) Hz gain")
            let image = Measurement.dB(fits[1].amplitude / amplitude)
            #expect(image <= -100, "\(deviceRate) Hz: image of \(frequency) Hz at \(image) dB")
            // Nothing else above the 12 kHz band either: the residual after the tone is tiny.
            #expect(Measurement.dB(fits[0].residualRMS / amplitude) <= -100)
        }
    }

    @Test(arguments: Input.allCases)
    func aBandLimitedPulseLandsWithinATenthOfASampleOfItsTime(input: Input) throws {
        let bandwidth = min(input.rate, Self.outputRate) / 2 * 0.6
        // Centre deliberately between samples of both rates.
        let centre = 0.2 + 0.37 / input.rate
        let signal = Signals.bandLimitedPulse(at: centre, bandwidth: bandwidth, amplitude: 0.5, sampleRate: input.rate, frames: Int(input.rate * 0.4))
        let output = try Self.resampleFloat(signal, from: input.rate)
        // Least-squares delay: the shift d that best explains the output as the ideal pulse at centre + d.
        func misfit(_ d: Double) -> Double {
            var sum = 0.0
            for n in 3_000..<3_400 {
                let ideal = 0.5 * Signals.pulseShape(Double(n) / Self.outputRate - centre - d / Self.outputRate, bandwidth: bandwidth)
                sum += (Double(output[n]) - ideal) * (Double(output[n]) - ideal)
            }
            return sum
        }
        var best = 0.0
        var step = 0.5
        while step > 1e-4 {
            let candidates = [best - step, best, best + step]
            best = candidates.min { misfit($0) < misfit($1) } ?? best
            step /= 2
        }
        #expect(abs(best) <= 0.1, "\(input): pulse off by \(best) output samples")
    }
}
