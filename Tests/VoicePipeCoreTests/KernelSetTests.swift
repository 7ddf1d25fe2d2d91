import Foundation
import Testing
@testable import VoicePipeCore
import VoicePipeTestSupport

/// Whether this CPU runs the AVX2 + FMA kernels; the tests of that set are skipped (not passed) when not.
private let avx2Available = DSPKernels.avx2 != nil

/// The kernel sets to check on this CPU: the portable set, and the AVX2 and AVX-512 sets where they run.
private let kernelSets: [DSPKernels] = [.portable] + [DSPKernels.avx2, DSPKernels.avx512].compactMap { $0 }

/// The C vector sets this CPU runs, each checked against the scalar C references.
private let vectorSets: [DSPKernels] = [DSPKernels.avx2, DSPKernels.avx512].compactMap { $0 }

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
        #expect((DSPKernels.avx512 != nil) == (expected && flags.contains("avx512f")))
        // With a vector set the choice is measured between the vector sets, each calibrated loop
        // from the one that wins it; without one it is the portable set.
        if expected {
            #expect(KernelChoices.possibleBestNames.contains(DSPKernels.best.name), "\(DSPKernels.best.name)")
            #expect(!KernelChoices.possibleBestNames.contains(DSPKernels.portable.name))
        } else {
            #expect(DSPKernels.best.name == DSPKernels.portable.name)
        }
    }

    @Test func theCalibrationTimesEveryCandidateWhenThereIsAChoice() {
        let calibration = DSPKernels.calibration
        let candidates = [DSPKernels.avx512, DSPKernels.avx2].compactMap { $0?.name }
        #expect(calibration.chosen.name == DSPKernels.best.name)
        if candidates.count > 1 {
            #expect(calibration.timings.map(\.name) == candidates)
            #expect(calibration.timings.allSatisfy { $0.nanoseconds > 0 })
            #expect(calibration.costNanoseconds > 0)
        } else {
            #expect(calibration.timings.isEmpty)
        }
        #expect(calibration.summary.contains(calibration.chosen.name))
    }

    @Test func aWiderSetWinsOnlyByMoreThanTheMargin() {
        // Candidates widest first; a tie within 3 % goes to the later, narrower one.
        #expect(KernelCalibration.fastest([100, 99]) == 1)
        #expect(KernelCalibration.fastest([98, 100]) == 1)
        #expect(KernelCalibration.fastest([96, 100]) == 0)
        #expect(KernelCalibration.fastest([120, 100]) == 1)
        #expect(KernelCalibration.fastest([50, 60, 100]) == 0)
        #expect(KernelCalibration.fastest([100]) == 0)
    }

    /// A combined set runs each loop from the set it names: 48 → 16 kHz (decimators only) gives
    /// the decimators' set's bits, 8 → 16 kHz (the interpolator only) the interpolator's, and
    /// 44.1 → 16 kHz (the polyphase stage, then a decimator) changes with the polyphase set alone.
    @Test(.enabled(if: DSPKernels.avx2 != nil, "this CPU has no AVX2 + FMA"))
    func aCombinedSetTakesEachLoopFromItsSet() throws {
        guard let avx2 = DSPKernels.avx2 else { return }
        let polyphaseInput = AVX2KernelTests.signal(rate: 44_100, frames: 11_025)
        let avx2Polyphase = try ResamplerHarness.stream(BuiltInResampler(inputRate: 44_100, outputRate: 16_000, kernels: avx2), polyphaseInput, chunkSizes: [441])
        for polyphase in [avx2, DSPKernels.portable] {
            let mixed = DSPKernels.combining(decimators: avx2, polyphase: polyphase, interpolator: avx2)
            let output = try ResamplerHarness.stream(BuiltInResampler(inputRate: 44_100, outputRate: 16_000, kernels: mixed), polyphaseInput, chunkSizes: [441])
            #expect((output.map(\.bitPattern) == avx2Polyphase.map(\.bitPattern)) == (polyphase.name == avx2.name), "polyphase from \(polyphase.name)")
        }
        #expect(DSPKernels.combining(decimators: avx2, polyphase: avx2, interpolator: avx2).name == avx2.name)
        if let avx512 = DSPKernels.avx512 {
            // The column layout goes with the polyphase loop that reads it; the bits are the same.
            let mixed = DSPKernels.combining(decimators: avx2, polyphase: avx512, interpolator: avx2)
            #expect(mixed.polyphaseTakesColumns && !DSPKernels.combining(decimators: avx512, polyphase: avx2, interpolator: avx512).polyphaseTakesColumns)
            let output = try ResamplerHarness.stream(BuiltInResampler(inputRate: 44_100, outputRate: 16_000, kernels: mixed), polyphaseInput, chunkSizes: [441])
            #expect(output.map(\.bitPattern) == avx2Polyphase.map(\.bitPattern))
        }
        for (decimators, interpolator) in [(avx2, DSPKernels.portable), (DSPKernels.portable, avx2)] {
            let combined = DSPKernels.combining(decimators: decimators, polyphase: decimators, interpolator: interpolator)
            #expect(combined.name == "\(decimators.name) decimators, \(decimators.name) polyphase, \(interpolator.name) interpolator")
            for (rate, owner) in [(48_000.0, decimators), (8_000.0, interpolator)] {
                let input = AVX2KernelTests.signal(rate: rate, frames: Int(rate / 4))
                let expected = try ResamplerHarness.stream(BuiltInResampler(inputRate: SampleRate(hertz: rate), outputRate: 16_000, kernels: owner), input, chunkSizes: [480])
                let other = owner.name == avx2.name ? DSPKernels.portable : avx2
                let output = try ResamplerHarness.stream(BuiltInResampler(inputRate: SampleRate(hertz: rate), outputRate: 16_000, kernels: combined), input, chunkSizes: [480])
                let otherOutput = try ResamplerHarness.stream(BuiltInResampler(inputRate: SampleRate(hertz: rate), outputRate: 16_000, kernels: other), input, chunkSizes: [480])
                #expect(output.map(\.bitPattern) == expected.map(\.bitPattern), "\(combined.name) at \(rate) Hz")
                // The two sets differ in rounding here, so the comparison above tells them apart.
                #expect(otherOutput.map(\.bitPattern) != expected.map(\.bitPattern), "\(rate) Hz")
            }
        }
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
        let input = Self.signal(rate: inputRate, frames: Int(inputRate * 0.2) + 13)
        let reference = try ResamplerHarness.stream(BuiltInResampler(inputRate: SampleRate(hertz: inputRate), outputRate: SampleRate(hertz: outputRate), kernels: DSPKernels.fmaReference), input, chunkSizes: [input.count])
        for kernels in vectorSets {
            for chunk in [480, 80] {
                let fast = try ResamplerHarness.stream(BuiltInResampler(inputRate: SampleRate(hertz: inputRate), outputRate: SampleRate(hertz: outputRate), kernels: kernels), input, chunkSizes: [chunk])
                #expect(fast == reference, "\(kernels.name), chunks of \(chunk)")
            }
        }
    }

    /// Every output count a kernel call may see (whole steps, a tail of one to four blocks, a
    /// partial last vector) against the scalar references, for each C vector set.
    @Test(.enabled(if: avx2Available, "this CPU has no AVX2 + FMA"))
    func vectorKernelsMatchTheReferencesAtEveryCount() {
        var generator = SplitMix64(seed: 31)
        let x: [Float] = (0..<1200).map { _ in Float(generator.nextUnit() * 2 - 1) }
        let taps: [Float] = (0..<96).map { _ in Float(generator.nextUnit() - 0.5) }
        let splats = taps.map { SIMD4(repeating: $0) }
        let classes = [
            DecimatorTapClass(tapStart: 0, tapCount: 17, forwardStream: 1, forwardOffset: -20, backwardStream: 3, backwardOffset: 21),
            DecimatorTapClass(tapStart: 17, tapCount: 16, forwardStream: 2, forwardOffset: -19, backwardStream: 2, backwardOffset: 20),
            DecimatorTapClass(tapStart: 33, tapCount: 0, forwardStream: 3, forwardOffset: 0, backwardStream: 1, backwardOffset: 0),
        ]
        x.withUnsafeBufferPointer { xs in taps.withUnsafeBufferPointer { t in splats.withUnsafeBufferPointer { sp in classes.withUnsafeBufferPointer { c in
            let base = xs.baseAddress!
            let streams: [UnsafePointer<Float>] = [base + 100, base + 300, base + 500, base + 700]
            streams.withUnsafeBufferPointer { s in
                for count in 0...140 {
                    var expected = [Float](repeating: .nan, count: 2 * count)
                    DSPKernels.fmaReference.decimate(s.baseAddress!, c.baseAddress!, 3, t.baseAddress!, sp.baseAddress!, 0.3, &expected, count)
                    var expectedPairs = [Float](repeating: .nan, count: 2 * count)
                    DSPKernels.fmaReference.interpolate(base + 900, t.baseAddress!, t.baseAddress! + 40, sp.baseAddress!, sp.baseAddress!, 0.7, &expectedPairs, count)
                    for kernels in vectorSets {
                        var output = [Float](repeating: .nan, count: 2 * count)
                        kernels.decimate(s.baseAddress!, c.baseAddress!, 3, t.baseAddress!, sp.baseAddress!, 0.3, &output, count)
                        #expect(output.prefix(count) == expected.prefix(count), "\(kernels.name) decimate, \(count) outputs")
                        let untouched = output.dropFirst(count).allSatisfy { $0.isNaN }
                        #expect(untouched, "\(kernels.name) decimate wrote past \(count) outputs")
                        var pairs = [Float](repeating: .nan, count: 2 * count + 32)
                        kernels.interpolate(base + 900, t.baseAddress!, t.baseAddress! + 40, sp.baseAddress!, sp.baseAddress!, 0.7, &pairs, count)
                        #expect(pairs.prefix(2 * count) == expectedPairs[...], "\(kernels.name) interpolate, \(count) inputs")
                        let pairsUntouched = pairs.dropFirst(2 * count).allSatisfy { $0.isNaN }
                        #expect(pairsUntouched, "\(kernels.name) interpolate wrote past \(count) inputs")
                    }
                }
            }
        } } } }
    }

    /// Every class length 0 … 40 (whole groups of eight or sixteen taps, partial groups, one tap)
    /// and output counts around the block sizes, against the scalar reference bit for bit. Each
    /// stream ends on an unreadable page right after the last sample a kernel may read (the
    /// newest one the outputs need, plus ``DSPKernels/readSlack``), so a read past it crashes.
    @Test(.enabled(if: avx2Available, "this CPU has no AVX2 + FMA"))
    func decimateKernelsMatchTheReferenceForEveryClassLengthAndReadNoFurtherThanTheSlack() throws {
        var generator = SplitMix64(seed: 43)
        let taps: [Float] = (0..<96).map { _ in Float(generator.nextUnit() - 0.5) }
        let splats = taps.map { SIMD4(repeating: $0) }
        let history = 60
        for tapCount in 0...40 {
            // Stream 1 forwards and stream 2 backwards, then the reverse with a different offset.
            let classes = [
                DecimatorTapClass(tapStart: 0, tapCount: tapCount, forwardStream: 1, forwardOffset: -tapCount, backwardStream: 2, backwardOffset: history - 1),
                DecimatorTapClass(tapStart: 48, tapCount: min(tapCount, 23), forwardStream: 2, forwardOffset: 3, backwardStream: 1, backwardOffset: -1),
            ]
            for count in [1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 48, 49, 63, 64, 65, 80, 97, 113, 128, 129, 130] {
                // Streams 0 and 1 start `history` samples into their buffers (class 1 reads stream 1
                // forwards from −tapCount, class 2 backwards down to −1 − 22); stream 2 at its
                // buffer's start (class 1 reads it down to history − tapCount). The newest samples
                // the outputs need are n + history − 1 + [0, −1, −1] from each buffer's start,
                // n < count: on stream 1 both classes' windows end there, so the forward windows'
                // reads meet the guard page as well as the backward ones.
                let needed = [history + count, history + count - 1, history + count - 1]
                let buffers = try needed.map { try GuardedSamples(count: $0 + DSPKernels.readSlack) }
                for buffer in buffers {
                    for i in 0..<buffer.count { buffer.samples[i] = Float(generator.nextUnit() * 2 - 1) }
                }
                let streams: [UnsafePointer<Float>] = [UnsafePointer(buffers[0].samples + history), UnsafePointer(buffers[1].samples + history), UnsafePointer(buffers[2].samples)]
                var expected = [Float](repeating: .nan, count: count)
                DSPKernels.fmaReference.decimate(streams, classes, 2, taps, splats, 0.3, &expected, count)
                for kernels in vectorSets {
                    var output = [Float](repeating: .nan, count: count + 16)
                    kernels.decimate(streams, classes, 2, taps, splats, 0.3, &output, count)
                    #expect(output.prefix(count).elementsEqual(expected), "\(kernels.name) decimate, classes of \(tapCount) taps, \(count) outputs")
                    #expect(output.dropFirst(count).allSatisfy { $0.isNaN }, "\(kernels.name) decimate wrote past \(count) outputs")
                }
            }
        }
    }

    /// The sixteen-lane polyphase loop (column layout) against the scalar reference (rows), for
    /// every end position 0 … 60 (so every output count up to 40 and more) and long runs (where a
    /// step first stops at a place that is a multiple of sixteen, and again after each wrap of the
    /// period), from several phases, with the input ending on a guard page right after the last
    /// sample the last output needs; and the position it leaves.
    @Test(.enabled(if: DSPKernels.avx512 != nil, "this CPU has no AVX-512"),
          arguments: [(320, 441, 20), (2, 3, 12), (147, 160, 24), (640, 441, 36), (160, 147, 28), (3, 2, 16)])
    func theColumnPolyphaseKernelMatchesTheReferenceAtEveryCount(up: Int, down: Int, rowLength: Int) throws {
        let avx512 = try #require(DSPKernels.avx512)
        let ratio = RationalRatio(up: up, down: down)
        var generator = SplitMix64(seed: UInt64(up * 1_000 + rowLength))
        let rows: [Float] = (0..<(ratio.up * rowLength)).map { _ in Float(generator.nextUnit() - 0.5) }
        let columns = try #require(rows.withUnsafeBufferPointer { PolyphaseColumnTable(rows: $0.baseAddress!, rowLength: rowLength, ratio: ratio) })
        // Sixteen places from a multiple of sixteen are one aligned vector of each row.
        #expect(columns.columns.pointee.stride % 16 == 0 && Int(bitPattern: columns.columns.pointee.taps) % 64 == 0)
        let stepWhole = ratio.down / ratio.up, stepPhase = ratio.down % ratio.up
        for startPhase in Set([0, 1, ratio.up / 2, ratio.up - 1]) {
            for end in Array(0...60) + [250, 333, 517, 1_000, 2_049] {
                let readable = max(end + rowLength - 1, 1)
                let input = try GuardedSamples(count: readable)
                for i in 0..<readable { input.samples[i] = Float(generator.nextUnit() * 2 - 1) }
                let plainWalk = PolyphaseWalk(phaseCount: ratio.up, stepWhole: stepWhole, stepPhase: stepPhase, end: end, columns: nil)
                var columnWalk = plainWalk
                columnWalk.columns = UnsafePointer(columns.columns)
                var expected = [Float](repeating: .nan, count: end * up / down + 128), output = expected
                var expectedPosition = PolyphasePosition(base: 0, phase: startPhase), position = expectedPosition
                let expectedCount = rows.withUnsafeBufferPointer { table in
                    withUnsafePointer(to: plainWalk) { DSPKernels.fmaReference.polyphase(input.samples, table.baseAddress!, rowLength, $0, &expectedPosition, &expected) }
                }
                let count = rows.withUnsafeBufferPointer { table in
                    withUnsafePointer(to: columnWalk) { avx512.polyphase(input.samples, table.baseAddress!, rowLength, $0, &position, &output) }
                }
                let label = "\(ratio), \(rowLength) taps, phase \(startPhase), end \(end), \(expectedCount) outputs"
                #expect(count == expectedCount, "\(label)")
                let firstDifference = output.indices.first { output[$0].bitPattern != expected[$0].bitPattern }
                #expect(firstDifference == nil, "\(label): first different output")
                #expect(position.base == expectedPosition.base && position.phase == expectedPosition.phase, "\(label): position")
            }
        }
    }

    @Test(.enabled(if: avx2Available, "this CPU has no AVX2 + FMA"), arguments: ratePairs)
    func avx2OutputIsIdenticalHoweverTheInputIsCut(inputRate: Double, outputRate: Double) throws {
        let kernels = try #require(DSPKernels.avx2)
        let input = Self.signal(rate: inputRate, frames: Int(inputRate * 0.15) + 5)
        let resampler = try BuiltInResampler(inputRate: SampleRate(hertz: inputRate), outputRate: SampleRate(hertz: outputRate), kernels: kernels)
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
        let fast = try ResamplerHarness.stream(BuiltInResampler(inputRate: SampleRate(hertz: inputRate), outputRate: SampleRate(hertz: outputRate), kernels: avx2), input, chunkSizes: [480])
        let portable = try ResamplerHarness.stream(BuiltInResampler(inputRate: SampleRate(hertz: inputRate), outputRate: SampleRate(hertz: outputRate), kernels: .portable), input, chunkSizes: [480])
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
        for kernels in kernelSets {
            for count in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, input.count] {
                // Sixteen slots more than the samples: they must keep their 99s.
                var output = [Int16](repeating: 99, count: count + 16)
                var peaks = ConversionPeaks(input: -1, output: -1)
                input.withUnsafeBufferPointer { i in output.withUnsafeMutableBufferPointer { o in
                    kernels.convertToInt16(i.baseAddress!, o.baseAddress!, count, &peaks)
                } }
                #expect(output.prefix(count).elementsEqual(expected.prefix(count)), "\(kernels.name), \(count) samples")
                #expect(output.dropFirst(count).allSatisfy { $0 == 99 }, "\(kernels.name) wrote past \(count) samples")
                let inputPeak = input.prefix(count).filter { !$0.isNaN }.map(\.magnitude).max() ?? 0
                let outputPeak = expected.prefix(count).map { Int($0.magnitude) }.max() ?? 0
                #expect(peaks.input == inputPeak && peaks.output == Float(outputPeak), "\(kernels.name), peaks of \(count) samples")
            }
        }
    }

    @Test func everyKernelSetDownmixesStereoExactlyAsDownmixDoes() {
        var generator = SplitMix64(seed: 23)
        var floats: [Float] = (0..<2_006).map { _ in Float(generator.nextUnit() * 2.4 - 1.2) }
        for (i, value) in [Float.nan, .infinity, -.infinity, 1, -1, 3e9, -3e9, -0.0, .leastNonzeroMagnitude, -.nan].enumerated() {
            floats[37 * i + 5] = value
            floats[floats.count - 1 - i] = value
        }
        let ints: [Int16] = (0..<2_006).map { _ in Int16(truncatingIfNeeded: generator.next()) } + [.min, .max, .min, .min, .max, .max]
        for kernels in kernelSets {
            for frames in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 64, 65, 1_003] {
                var expected = [Float](repeating: .nan, count: frames), output = expected
                floats.withUnsafeBufferPointer { input in
                    for f in 0..<frames { expected[f] = (input[2 * f].normalized + input[2 * f + 1].normalized) * 0.5 }
                    kernels.downmixStereoFloat(input.baseAddress!, &output, frames)
                }
                #expect(output.map(\.bitPattern) == expected.map(\.bitPattern), "\(kernels.name), \(frames) Float32 frames")
                ints.withUnsafeBufferPointer { input in
                    for f in 0..<frames { expected[f] = (input[2 * f].normalized + input[2 * f + 1].normalized) * 0.5 }
                    kernels.downmixStereoInt16(input.baseAddress!, &output, frames)
                }
                #expect(output.map(\.bitPattern) == expected.map(\.bitPattern), "\(kernels.name), \(frames) Int16 frames")
            }
            // The last frames, with the edge values, land in the scalar tail and in vector lanes.
            var output = [Float](repeating: .nan, count: 1_003)
            floats.withUnsafeBufferPointer { input in kernels.downmixStereoFloat(input.baseAddress! + 2, &output, 1_002) }
            #expect(!output.prefix(1_002).contains { $0.isNaN || abs($0) > 1 }, "\(kernels.name)")
        }
    }

    @Test func everyKernelSetDealsTheStereoDownmixesOutToTwoStreamsExactly() {
        var generator = SplitMix64(seed: 29)
        // 2 × 1 056 samples of each type: the longest run reads all of them. The first half stays
        // within full scale, apart from the edge values, so blocks with nothing to sanitise occur.
        var floats: [Float] = (0..<2_112).map { i in Float(generator.nextUnit() * 2.4 - 1.2) * (i < 1_056 ? 0.8 : 1) }
        for (i, value) in [Float.nan, .infinity, -.infinity, 1, -1, 3e9, -3e9, -0.0, .leastNonzeroMagnitude, -.nan].enumerated() {
            floats[41 * i + 3] = value
            floats[floats.count - 1 - 2 * i] = value
        }
        let ints: [Int16] = (0..<2_106).map { _ in Int16(truncatingIfNeeded: generator.next()) } + [.min, .max, .min, .min, .max, .max]
        for kernels in kernelSets {
            for type in ["Float32", "Int16"] {
                for frames in [0, 1, 2, 15, 16, 17, 31, 32, 33, 64, 65, 1_000, 1_049, 1_056] {
                    var mono = [Float](repeating: .nan, count: frames)
                    // Streams one sample longer than they should fill: the extra sample must stay untouched.
                    var first = [Float](repeating: .nan, count: (frames + 1) / 2 + 1), second = [Float](repeating: .nan, count: frames / 2 + 1)
                    if type == "Float32" {
                        floats.withUnsafeBufferPointer { input in
                            kernels.downmixStereoFloat(input.baseAddress!, &mono, frames)
                            kernels.downmixStereoFloatSplit(input.baseAddress!, &first, &second, frames)
                        }
                    } else {
                        // The last frames carry the extreme values: the vector lanes get them at 16 and
                        // 1 056 frames, the scalar tail at 1 049.
                        ints.withUnsafeBufferPointer { input in
                            let start = input.baseAddress! + input.count - 2 * max(frames, 1)
                            kernels.downmixStereoInt16(start, &mono, frames)
                            kernels.downmixStereoInt16Split(start, &first, &second, frames)
                        }
                    }
                    let even = stride(from: 0, to: frames, by: 2).map { mono[$0].bitPattern }
                    let odd = stride(from: 1, to: frames, by: 2).map { mono[$0].bitPattern }
                    #expect(first.dropLast().map(\.bitPattern) == even, "\(kernels.name), \(frames) \(type) frames: first stream")
                    #expect(second.dropLast().map(\.bitPattern) == odd, "\(kernels.name), \(frames) \(type) frames: second stream")
                    #expect(first.last!.isNaN && second.last!.isNaN, "\(kernels.name), \(frames) \(type) frames: wrote past the streams")
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

/// The shuffles around a sharp stage's filter calls, exact in every set.
struct StreamShuffleTests {
    @Test func everyKernelSetInterleavesPairsExactly() {
        var generator = SplitMix64(seed: 47)
        let even: [Float] = (0..<300).map { _ in Float(generator.nextUnit()) }
        let odd: [Float] = (0..<300).map { _ in -Float(generator.nextUnit()) }
        for kernels in kernelSets {
            for pairs in Array(0...40) + [255, 300] {
                // One slot more than the pairs fill: it must stay untouched.
                var output = [Float](repeating: .nan, count: 2 * pairs + 1)
                kernels.interleavePairs(even, odd, &output, pairs)
                let expected = (0..<pairs).flatMap { [even[$0], odd[$0]] }
                #expect(output.dropLast().elementsEqual(expected), "\(kernels.name), \(pairs) pairs")
                #expect(output.last!.isNaN, "\(kernels.name) wrote past \(pairs) pairs")
            }
        }
    }

    /// Strides 2 and 3 (the vector paths) and 5; the source ends on an unreadable page right after
    /// the last sample taken, so a read past it crashes.
    @Test func everyKernelSetTakesEveryStrideThSampleAndReadsNothingPastTheLast() throws {
        var generator = SplitMix64(seed: 53)
        for kernels in kernelSets {
            for stride in [2, 3, 5] {
                for count in Array(1...40) + [160, 341] {
                    let source = try GuardedSamples(count: stride * (count - 1) + 1)
                    for i in 0..<source.count { source.samples[i] = Float(generator.nextUnit() * 2 - 1) }
                    var target = [Float](repeating: .nan, count: count + 1)
                    kernels.takeEvery(source.samples, stride, &target, count)
                    let expected = (0..<count).map { source.samples[stride * $0] }
                    #expect(target.dropLast().elementsEqual(expected), "\(kernels.name), stride \(stride), \(count) samples")
                    #expect(target.last!.isNaN, "\(kernels.name) wrote past \(count) samples")
                }
            }
        }
    }
}

/// Float samples that end where an unreadable page begins: a read past the last one faults.
private final class GuardedSamples {
    let samples: UnsafeMutablePointer<Float>
    let count: Int
    private let mapping: UnsafeMutableRawPointer
    private let mappedBytes: Int

    struct MappingFailed: Error {}

    init(count: Int) throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let dataPages = (count * MemoryLayout<Float>.stride + page - 1) / page
        mappedBytes = (dataPages + 1) * page
        guard let mapped = mmap(nil, mappedBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), mapped != MAP_FAILED else { throw MappingFailed() }
        mapping = mapped
        guard mprotect(mapped + dataPages * page, page, PROT_NONE) == 0 else {
            munmap(mapped, mappedBytes)
            throw MappingFailed()
        }
        self.count = count
        samples = (mapped + dataPages * page - count * MemoryLayout<Float>.stride).assumingMemoryBound(to: Float.self)
    }

    deinit {
        munmap(mapping, mappedBytes)
    }
}
