import Foundation
import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// Whether this CPU runs the AVX2 + FMA kernels; the tests of that set are skipped (not passed) when not.
private let avx2Available = DSPKernels.avx2 != nil

/// The kernel sets to check on this CPU: the portable set, and the AVX2 set where it runs.
private let kernelSets: [DSPKernels] = [.portable] + (DSPKernels.avx2.map { [$0] } ?? [])

/// The kernel set is chosen from the CPU, once.
struct KernelChoiceTests {
    /// The flags the kernel reports for this CPU, from /proc/cpuinfo.
    static func cpuFlags() throws -> Set<Substring> {
        let info = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        guard let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags") }) else { return [] }
        return Set(line.split(separator: " "))
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/cpuinfo"), "no /proc/cpuinfo to compare with"))
    func theAVX2SetIsOfferedExactlyWhenTheCPUHasAVX2AndFMA() throws {
        let flags = try Self.cpuFlags()
        let expected = flags.contains("avx2") && flags.contains("fma")
        #expect((DSPKernels.avx2 != nil) == expected, "cpuinfo flags avx2=\(flags.contains("avx2")) fma=\(flags.contains("fma"))")
        #expect(DSPKernels.best.name == (expected ? DSPKernels.avx2?.name : DSPKernels.portable.name))
    }

    @Test func convertersUseTheKernelsTheyAreGiven() throws {
        let format = try FormatGuard.validate(AudioFormat(sampleRate: 44_100, channelCount: 1, sampleType: .float32))
        let converter = try CaptureConverter(input: format, kernels: .portable)
        #expect((converter.resampler as? BuiltInResampler)?.kernels.name == DSPKernels.portable.name)
        let defaulted = try CaptureConverter(input: format)
        #expect((defaulted.resampler as? BuiltInResampler)?.kernels.name == DSPKernels.best.name)
    }
}

/// The AVX2 + FMA kernels agree bit for bit with their C references, keep the streaming rules,
/// and differ from the portable Swift kernels only by rounding.
struct AVX2KernelTests {
    static let ratePairs: [(Double, Double)] = [
        (48_000, 16_000), (44_100, 16_000), (8_000, 16_000), (22_050, 16_000), (32_000, 16_000),
        (96_000, 16_000), (64_000, 16_000), (24_000, 48_000), (24_000, 44_100), (11_025, 16_000), (192_000, 16_000),
    ]

    static func signal(rate: Double, frames: Int) -> [Float] {
        zip(Signals.sweep(from: 50, to: rate / 2 * 0.95, amplitude: 0.6, sampleRate: rate, frames: frames), Signals.noise(amplitude: 0.3, frames: frames, seed: 17)).map { Float($0 + $1) }
    }

    @Test(.enabled(if: avx2Available, "this CPU has no AVX2 + FMA"), arguments: ratePairs)
    func avx2KernelsMatchTheirReferenceBitForBit(inputRate: Double, outputRate: Double) throws {
        let avx2 = try #require(DSPKernels.avx2)
        let input = Self.signal(rate: inputRate, frames: Int(inputRate * 0.2) + 13)
        let fast = try ResamplerHarness.stream(BuiltInResampler(inputRate: inputRate, outputRate: outputRate, kernels: avx2), input, chunkSizes: [480])
        let reference = try ResamplerHarness.stream(BuiltInResampler(inputRate: inputRate, outputRate: outputRate, kernels: DSPKernels.fmaReference), input, chunkSizes: [input.count])
        #expect(fast == reference)
    }

    @Test(.enabled(if: avx2Available, "this CPU has no AVX2 + FMA"), arguments: ratePairs)
    func avx2OutputIsIdenticalHoweverTheInputIsCut(inputRate: Double, outputRate: Double) throws {
        let kernels = try #require(DSPKernels.avx2)
        let input = Self.signal(rate: inputRate, frames: Int(inputRate * 0.15) + 5)
        let resampler = try BuiltInResampler(inputRate: inputRate, outputRate: outputRate, kernels: kernels)
        let whole = try ResamplerHarness.stream(resampler, input, chunkSizes: [input.count])
        #expect(whole.count == Int((Double(input.count) * outputRate / inputRate).rounded()))
        for cuts in [[1], [7], [441], ResamplerHarness.randomCuts(count: 60, maximum: 2_000, seed: 3)] {
            #expect(try ResamplerHarness.stream(resampler, input, chunkSizes: cuts) == whole, "\(kernels.name), cuts \(cuts.prefix(2))")
        }
    }

    @Test(.enabled(if: avx2Available, "this CPU has no AVX2 + FMA"), arguments: ratePairs)
    func avx2AndPortableKernelsDifferOnlyByRounding(inputRate: Double, outputRate: Double) throws {
        let avx2 = try #require(DSPKernels.avx2)
        let input = Self.signal(rate: inputRate, frames: Int(inputRate * 0.1))
        let fast = try ResamplerHarness.stream(BuiltInResampler(inputRate: inputRate, outputRate: outputRate, kernels: avx2), input, chunkSizes: [480])
        let portable = try ResamplerHarness.stream(BuiltInResampler(inputRate: inputRate, outputRate: outputRate, kernels: .portable), input, chunkSizes: [480])
        #expect(fast.count == portable.count)
        let difference = zip(fast, portable).map { $0 - $1 }
        #expect(Measurement.dB(Measurement.rms(difference) / Measurement.rms(portable)) < -120)
    }
}

/// The conversion kernels round, saturate and measure exactly as the scalar rule does.
struct ConversionKernelTests {
    @Test func everyKernelSetConvertsToInt16ExactlyAndMeasuresThePeaks() {
        var generator = SplitMix64(seed: 21)
        var input: [Float] = (0..<10_003).map { _ in Float(generator.nextUnit() * 2.2 - 1.1) }
        // Every edge: NaN, infinities, exact ties, full scale both ways, values past it.
        input += [.nan, .infinity, -.infinity, 0.5 / 32768, 1.5 / 32768, 2.5 / 32768, -1.5 / 32768, 1, -1, 32767.5 / 32768, -32768.5 / 32768, 3e9, -3e9, -.nan, 0, -0.0]
        // ... and copies of them scattered, so that each lands in a vector lane as well as the tail.
        let edges = input.suffix(16)
        for _ in 0..<4 { for value in edges { input.insert(value, at: Int(generator.next() % UInt64(input.count))) } }
        let expected = input.map(SampleConversion.int16)
        let floatPeak = input.filter { !$0.isNaN }.map(\.magnitude).max() ?? 0
        let intPeak = expected.map { Int($0.magnitude) }.max() ?? 0
        for kernels in kernelSets {
            for count in [0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 100, input.count] {
                var output = [Int16](repeating: 99, count: count)
                var peaks = ConversionPeaks(input: -1, output: -1)
                input.withUnsafeBufferPointer { i in output.withUnsafeMutableBufferPointer { o in
                    kernels.convertToInt16(i.baseAddress!, o.baseAddress!, count, &peaks)
                } }
                #expect(output == Array(expected.prefix(count)), "\(kernels.name), \(count) samples")
                if count == input.count {
                    #expect(peaks.input == floatPeak && peaks.output == Float(intPeak), "\(kernels.name)")
                }
            }
        }
    }

    @Test func everyKernelSetConvertsEveryInt16ToFloatExactly() {
        let input = (Int(Int16.min)...Int(Int16.max)).map { Int16($0) }
        let expected = input.map { Float($0) / 32768 }
        for kernels in kernelSets + [DSPKernels.fmaReference] {
            for count in [0, 1, 15, 16, 17, 100, input.count] {
                var output = [Float](repeating: .nan, count: count)
                input.withUnsafeBufferPointer { i in output.withUnsafeMutableBufferPointer { o in
                    kernels.convertToFloat(i.baseAddress!, o.baseAddress!, count)
                } }
                #expect(output == Array(expected.prefix(count)), "\(kernels.name), \(count) samples")
            }
        }
    }
}
