import Testing
import VoicePipeTestSupport

/// The shared test and benchmark maths that is more than a formula: the programme signal the
/// benchmark streams, and the clamped analysis windows its quality figures are measured on.
struct TestSupportTests {
    @Test func theProgramSignalHasTheLevelItsDocumentationStates() {
        let rate = 16_000.0
        let signal = Signals.program(sampleRate: rate, frames: 10 * Int(rate), channel: 0)
        let level = Measurement.dB(Measurement.rms(signal))
        #expect(abs(level - -18.5) < 0.5, "RMS \(level) dBFS")
        let peak = signal.map(abs).max() ?? 0
        #expect(peak > 0.3 && peak < 0.5, "peak \(peak): never clipping, never near silence")
        #expect(signal.allSatisfy { $0.isFinite && !$0.isSubnormal })
    }

    @Test func theProgramSignalIsReproducibleAndDiffersPerChannel() {
        let left = Signals.program(sampleRate: 48_000, frames: 4_800, channel: 0)
        #expect(left == Signals.program(sampleRate: 48_000, frames: 4_800, channel: 0))
        let right = Signals.program(sampleRate: 48_000, frames: 4_800, channel: 1)
        let difference = zip(left, right).map { $0 - $1 }
        #expect(Measurement.rms(difference) > 0.05, "the channels are not copies of each other")
    }

    @Test func windowsAreClampedToTheSamplesThatExist() {
        let samples: [Float] = [0.5, 1, 1.5, 2, 2.5]
        #expect(Measurement.window(samples, from: 1, to: 3) == [1, 1.5])
        #expect(Measurement.window(samples, from: -4, to: 99) == [0.5, 1, 1.5, 2, 2.5])
        #expect(Measurement.window(samples, from: 4, to: 2).isEmpty)
        #expect(Measurement.window(samples, from: 7, to: 9).isEmpty)
    }

    @Test func int16WindowsAreAtFullScaleOne() {
        let samples: [Int16] = [.min, -16_384, 0, 16_384, .max]
        #expect(Measurement.window(samples, from: 0, to: 5) == [-1, -0.5, 0, 0.5, 32_767.0 / 32_768])
        #expect(Measurement.window(samples, from: 3, to: 10) == [0.5, 32_767.0 / 32_768])
    }
}
