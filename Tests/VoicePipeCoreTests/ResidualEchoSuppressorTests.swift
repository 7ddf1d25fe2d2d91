import AllocationCounting
import Foundation
import Testing
@testable import VoicePipeCore
import VoicePipeTestSupport

/// The residual echo suppressor on signals whose parts are known exactly: its FFT, its exact
/// pass-through where there is no echo, how deep it takes a residual that follows the echo
/// estimate, and what it leaves of a near-end talker beside that residual.
struct ResidualEchoSuppressorTests {
    static let block = EchoBlock.frameCount

    @Test func theFourierTransformAgreesWithTheDefinitionAndItsInverseReturnsNTimesTheInput() {
        let size = 256
        let fft = EchoFourierTransform(size: size)
        let signal = Signals.noise(amplitude: 0.5, frames: 2 * size, seed: 3).map(Float.init)
        var real = Array(signal[0..<size]), imaginary = Array(signal[size...])
        real.withUnsafeMutableBufferPointer { r in
            imaginary.withUnsafeMutableBufferPointer { i in fft.transform(real: r.baseAddress!, imaginary: i.baseAddress!) }
        }
        var worst = 0.0
        for k in 0..<size {
            var sumReal = 0.0, sumImaginary = 0.0
            for n in 0..<size {
                let angle = -2 * Double.pi * Double(k * n % size) / Double(size)
                let xr = Double(signal[n]), xi = Double(signal[size + n])
                sumReal += xr * cos(angle) - xi * sin(angle)
                sumImaginary += xr * sin(angle) + xi * cos(angle)
            }
            worst = max(worst, abs(sumReal - Double(real[k])), abs(sumImaginary - Double(imaginary[k])))
        }
        #expect(worst < 1e-4, "largest difference from the DFT's definition: \(worst)")
        real.withUnsafeMutableBufferPointer { r in
            imaginary.withUnsafeMutableBufferPointer { i in fft.transform(real: r.baseAddress!, imaginary: i.baseAddress!, inverse: true) }
        }
        var roundTrip: Float = 0
        for n in 0..<size {
            let realError = abs(real[n] / Float(size) - signal[n])
            let imaginaryError = abs(imaginary[n] / Float(size) - signal[size + n])
            roundTrip = max(roundTrip, realError, imaginaryError)
        }
        #expect(roundTrip < 1e-6)
    }

    /// Runs `suppressor` over whole signals block by block (the estimate standing in for the
    /// reference, whose level is all the suppressor reads of it), noting each block's judgement.
    static func run(_ suppressor: ResidualEchoSuppressor, error: [Float], estimate: [Float], far: [Float]? = nil) throws -> (output: [Float], nearEnd: [Bool]) {
        let far = far ?? estimate
        var output = [Float](repeating: 0, count: error.count)
        var judged: [Bool] = []
        try error.withUnsafeBufferPointer { e in
            try estimate.withUnsafeBufferPointer { y in
              try far.withUnsafeBufferPointer { x in
                try output.withUnsafeMutableBufferPointer { out in
                    for start in stride(from: 0, to: e.count - block + 1, by: block) {
                        try suppressor.process(error: UnsafeBufferPointer(rebasing: e[start..<(start + block)]),
                                               echoEstimate: UnsafeBufferPointer(rebasing: y[start..<(start + block)]),
                                               farEnd: UnsafeBufferPointer(rebasing: x[start..<(start + block)]),
                                               into: UnsafeMutableBufferPointer(rebasing: out[start..<(start + block)]))
                        judged.append(suppressor.nearEndPresent)
                    }
                }
              }
            }
        }
        return (output, judged)
    }

    /// `seconds` of a bundled speech sample at 16 kHz, looped, as Float.
    static func speech(_ name: String, seconds: Int, reversed: Bool = false) throws -> [Float] {
        let clip = try SpeechSamples.capture(name).map(SampleConversion.float)
        try #require(!clip.isEmpty)
        let ordered = reversed ? Array(clip.reversed()) : clip
        return (0..<(seconds * 16_000)).map { ordered[$0 % ordered.count] }
    }

    /// The far end's echo estimate: one talker.
    static func farEnd(seconds: Int) throws -> [Float] {
        try speech("speech-22k05-mono-s16.wav", seconds: seconds)
    }

    /// The estimate is a small copy of the microphone (what a DC filter takes off it: perfectly
    /// coherent with it), and the reference is silent: nothing is echo.
    @Test func withTheFarEndSilentTheErrorPassesThroughExactlyLatencyFramesLate() throws {
        let error = Signals.noise(amplitude: 0.3, frames: 16_000, seed: 11).map(Float.init)
        let (output, judged) = try Self.run(ResidualEchoSuppressor(), error: error, estimate: error.map { $0 * 0.01 },
                                            far: [Float](repeating: 0, count: error.count))
        let lag = ResidualEchoSuppressor.latencyFrames
        #expect(lag == 96)
        let worst = (lag..<error.count).map { abs(output[$0] - error[$0 - lag]) }.max() ?? 1
        #expect(worst < 1e-5, "largest difference from the delayed input: \(worst)")
        #expect(judged.allSatisfy { $0 }, "with the far end silent, every block is the near end's")
    }

    /// A residual that follows the echo estimate 20 dB down through a 0.6 s reverberant tail, as
    /// a linear filter too short for its room leaves it.
    static func residual(of estimate: [Float]) -> [Float] {
        EchoPath(reverberationTime: 0.6, delayMilliseconds: 0, echoLossDB: 20).echo(of: estimate)
    }

    @Test func inFarEndSingleTalkTheResidualGoesAtLeast35DecibelsDownAfterOneSecond() throws {
        let estimate = try Self.farEnd(seconds: 6)
        let error = Self.residual(of: estimate)
        let (output, judged) = try Self.run(ResidualEchoSuppressor(), error: error, estimate: estimate)
        let settled = 16_000..<error.count
        let attenuation = 10 * log10(Measurement.power(error, settled) / max(Measurement.power(output, settled), 1e-30))
        let singleTalk = judged[100...].filter { !$0 }.count
        print("residual echo suppressor, single talk: \(attenuation) dB, \(singleTalk) of \(judged.count - 100) blocks judged single talk")
        #expect(attenuation >= 35)
        #expect(Double(singleTalk) >= 0.9 * Double(judged.count - 100))
    }

    /// Measured: level −1.0 dB, SDR 10.0 dB with the residual 15.5 dB below the talker (the
    /// talker's bands keep their sound between words; judged per block, blocks between words
    /// went to the floor: −1.9 dB, SDR 7.1 dB).
    @Test func aNearEndTalkerBesideTheResidualKeepsItsLevelWithinThreeDecibels() throws {
        let estimate = try Self.farEnd(seconds: 8)
        var error = Self.residual(of: estimate)
        // Another talker, time-reversed (speech-like, uncorrelated with the far end), as loud as the echo.
        let near = try Self.speech("speech-48k-stereo-f32.wav", seconds: 8, reversed: true)
        let talk = (5 * 16_000)..<(8 * 16_000)
        for n in talk { error[n] += near[n] }
        let (output, _) = try Self.run(ResidualEchoSuppressor(), error: error, estimate: estimate)
        let lag = ResidualEchoSuppressor.latencyFrames
        let window = (talk.lowerBound + 1_600)..<(talk.upperBound - lag)
        let delayedNear = [Float](repeating: 0, count: lag) + near
        let fit = Measurement.linearFit(estimate: output, reference: delayedNear, window, lags: 0...8)
        let residualLevel = 10 * log10(Measurement.power(Self.residual(of: estimate), window) / Measurement.power(delayedNear, window))
        print("residual echo suppressor, double talk: near end \(fit.levelDB) dB, SDR \(fit.signalToDistortionDB) dB (residual \(residualLevel) dB against it)")
        #expect(fit.levelDB >= -3)
        #expect(fit.signalToDistortionDB >= 5)
    }

    @Test func resetMakesTheSuppressorAsFresh() throws {
        let estimate = try Self.farEnd(seconds: 2)
        let error = Self.residual(of: estimate)
        let fresh = try Self.run(ResidualEchoSuppressor(), error: error, estimate: estimate).output
        let suppressor = ResidualEchoSuppressor()
        _ = try Self.run(suppressor, error: Array(error.reversed()), estimate: Array(estimate.reversed()))
        suppressor.reset()
        #expect(try Self.run(suppressor, error: error, estimate: estimate).output == fresh)
    }

    @Test func aBlockThatIsNotTenMillisecondsIsRefusedWithItsLengths() {
        let suppressor = ResidualEchoSuppressor()
        let short = [Float](repeating: 0, count: 159), full = [Float](repeating: 0, count: 160)
        var output = full
        #expect(throws: EchoControlError.wrongBlockLength(near: 159, far: 160, output: 160)) {
            try short.withUnsafeBufferPointer { e in
                try full.withUnsafeBufferPointer { y in
                    try output.withUnsafeMutableBufferPointer { try suppressor.process(error: e, echoEstimate: y, farEnd: y, into: $0) }
                }
            }
        }
    }

    @Test func aBlockAllocatesNothing() throws {
        let estimate = try Self.farEnd(seconds: 1)
        let error = Self.residual(of: estimate)
        let suppressor = ResidualEchoSuppressor()
        var output = [Float](repeating: 0, count: Self.block)
        var allocations: UInt64 = 0
        try error.withUnsafeBufferPointer { e in
            try estimate.withUnsafeBufferPointer { y in
                try output.withUnsafeMutableBufferPointer { out in
                    for start in stride(from: 0, to: e.count, by: Self.block) {
                        let eb = UnsafeBufferPointer(rebasing: e[start..<(start + Self.block)])
                        let yb = UnsafeBufferPointer(rebasing: y[start..<(start + Self.block)])
                        allocations += try countAllocations { try suppressor.process(error: eb, echoEstimate: yb, farEnd: yb, into: out) }
                    }
                }
            }
        }
        #expect(allocations == 0)
    }
}
