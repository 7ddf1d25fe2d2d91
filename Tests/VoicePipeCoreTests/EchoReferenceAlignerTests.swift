import AllocationCounting
import Foundation
import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// A speaker and a microphone on their own clocks, simulated on the monotonic clock: the speaker
/// plays `signal(frame)`; period k of `periodFrames` is heard at `speakerStart + k·periodFrames / speakerRate`;
/// capture block m of `blockFrames` (16 kHz) is captured at `captureStart + m·blockFrames / captureRate`.
private struct TwoClocks {
    var speakerNominal: SampleRate = 48_000
    var speakerPPM = 0.0
    var capturePPM = 0.0
    var speakerStart = 1_000.0
    var captureStart = 1_000.0
    var jitterSeconds = 0.0
    var seed: UInt64 = 24

    var speakerRate: Double { speakerNominal.hertz * (1 + speakerPPM * 1e-6) }
    var captureRate: Double { 16_000 * (1 + capturePPM * 1e-6) }

    func heardInstant(ofSpeakerFrame frame: Int) -> Double { speakerStart + Double(frame) / speakerRate }
    func capturedInstant(ofFrame frame: Int) -> Double { captureStart + Double(frame) / captureRate }
    /// The reference index (16 kHz samples of the speaker's stream) the speaker plays when capture frame `frame` is captured.
    func trueReferencePosition(ofCaptureFrame frame: Int) -> Double {
        (capturedInstant(ofFrame: frame) - speakerStart) * speakerRate * 16_000 / speakerNominal.hertz
    }
}

private func nanoseconds(_ seconds: Double) -> Int64 { Int64((seconds * 1e9).rounded()) }

/// Submits speaker periods and asks for capture blocks in time order (a period is submitted once
/// its first frame is due to be heard within `lookahead` seconds after the block's capture
/// instant), and returns what the aligner gave for every block.
private func run(_ clocks: TwoClocks, aligner: EchoReferenceAligner, signal: [Float], periodFrames: Int, blockFrames: Int,
                 blocks: Int, skippedPeriods: Range<Int> = 0..<0, lookahead: Double = 0.03) -> [Float] {
    var generator = SplitMix64(seed: clocks.seed)
    func jitter() -> Double { clocks.jitterSeconds * (2 * generator.nextUnit() - 1) }
    var output = [Float](repeating: 0, count: blocks * blockFrames)
    var period = 0
    let periods = signal.count / periodFrames
    signal.withUnsafeBufferPointer { samples in
        output.withUnsafeMutableBufferPointer { out in
            for block in 0..<blocks {
                let frame = block * blockFrames
                let captured = clocks.capturedInstant(ofFrame: frame)
                while period < periods, clocks.heardInstant(ofSpeakerFrame: period * periodFrames) <= captured + lookahead {
                    if !skippedPeriods.contains(period) {
                        let stamp = PlayedPeriodStamp(framePosition: period * periodFrames,
                                                      instant: nanoseconds(clocks.heardInstant(ofSpeakerFrame: period * periodFrames) + jitter()))
                        aligner.submit(PlayedPeriod(samples: UnsafeBufferPointer(rebasing: samples[(period * periodFrames)..<((period + 1) * periodFrames)]),
                                                    sampleRate: clocks.speakerNominal, stamp: stamp))
                    }
                    period += 1
                }
                let stamp = CapturedBlockStamp(framePosition: frame, instant: nanoseconds(captured + jitter()))
                aligner.reference(for: stamp, into: UnsafeMutableBufferPointer(rebasing: out[frame..<(frame + blockFrames)]))
            }
        }
    }
    return output
}

/// The speaker's stream converted to 16 kHz in one piece, as the reference's samples must be.
private func resampled(_ signal: [Float], from rate: SampleRate) throws -> [Float] {
    let resampler = try BuiltInResampler(inputRate: rate, outputRate: 16_000)
    var output = [Float](repeating: 0, count: resampler.maxOutputFrames(forInputFrames: signal.count) + resampler.maxFlushFrames)
    let produced = try signal.withUnsafeBufferPointer { input in
        try output.withUnsafeMutableBufferPointer { out in try resampler.process(input, into: out) }
    }
    return Array(output[0..<produced])
}

private func program(rate: SampleRate, seconds: Double) -> [Float] {
    Signals.program(sampleRate: rate.hertz, frames: Int(seconds * rate.hertz), channel: 0).map { Float($0 * 0.5) }
}

struct EchoReferenceAlignerTests {
    @Test(arguments: [(SampleRate(48_000), 0.010), (SampleRate(48_000), 0.060), (SampleRate(44_100), 0.120), (SampleRate(16_000), 0.200), (SampleRate(24_000), 0.035)])
    func theReferenceIsExactlyWhatTheSpeakerPlayedWhenEachBlockWasCaptured(rate: SampleRate, latency: Double) throws {
        // Each period is written `latency` before it is heard, and a block is read 10 ms after its
        // first frame was captured, so a block sees the periods heard up to `latency` + 10 ms later.
        // Capture started 49 samples
        // (3.0625 ms) before the speaker's first frame was heard, so the first blocks are silence.
        let signal = program(rate: rate, seconds: 2)
        var clocks = TwoClocks(speakerNominal: rate)
        clocks.captureStart = clocks.speakerStart - 49.0 / 16_000
        let aligner = try EchoReferenceAligner(playbackRate: rate)
        let reference = run(clocks, aligner: aligner, signal: signal, periodFrames: Int(rate.hertz / 100), blockFrames: 160, blocks: 150, lookahead: latency + 0.010)
        let expected = try resampled(signal, from: rate)
        for frame in 0..<49 { #expect(reference[frame] == 0, "frame \(frame) is before anything played") }
        var mismatches = 0
        for frame in 49..<reference.count where reference[frame] != expected[frame - 49] { mismatches += 1 }
        #expect(mismatches == 0, "\(rate), \(latency * 1000) ms: \(mismatches) samples differ from what played")
        #expect(aligner.droppedPeriods == 0)
    }

    @Test func aGapBetweenPeriodsAndTheTimeBeforeTheFirstReadAsSilence() throws {
        let signal = program(rate: 48_000, seconds: 2)
        var clocks = TwoClocks()
        clocks.captureStart = clocks.speakerStart - 0.1
        let aligner = try EchoReferenceAligner(playbackRate: 48_000)
        // Periods 50 to 59 (0.5 s to 0.6 s of the speaker's stream) never arrive.
        let reference = run(clocks, aligner: aligner, signal: signal, periodFrames: 480, blockFrames: 160, blocks: 180, skippedPeriods: 50..<60)
        var withGap = signal
        for index in (50 * 480)..<(60 * 480) { withGap[index] = 0 }
        let expected = try resampled(withGap, from: 48_000)
        let lead = 1_600
        #expect(reference[0..<lead].allSatisfy { $0 == 0 }, "the 100 ms before the speaker's first frame")
        // Inside the gap, away from its edges by the converter's filter, exactly nothing.
        #expect(reference[(lead + 8_000 + 160)..<(lead + 9_600 - 160)].allSatisfy { $0 == 0 })
        // Around the gap's start the converter's last output waited for input that never came.
        let edge = (lead + 8_000 - 160)..<(lead + 8_000 + 160)
        var mismatches = 0
        for frame in lead..<reference.count where !edge.contains(frame) && reference[frame] != expected[frame - lead] { mismatches += 1 }
        #expect(mismatches == 0, "\(mismatches) samples differ from the stream with silence in the gap")
        #expect(aligner.gapFramesFilled == 4_800)
    }

    @Test(arguments: [(240, 80), (960, 320), (441, 7), (1_024, 160)])
    func periodSizesAndBlockSizesDoNotChangeTheReference(periodFrames: Int, blockFrames: Int) throws {
        let signal = program(rate: 48_000, seconds: 3)
        var clocks = TwoClocks()
        // 3.3 ms: not a whole number of 16 kHz samples, so the reference is read between samples
        // (the stamps' whole nanoseconds then move it by up to 1e-5 of a sample).
        clocks.captureStart = clocks.speakerStart + 0.0033
        let base = run(clocks, aligner: try EchoReferenceAligner(playbackRate: 48_000), signal: signal, periodFrames: 480, blockFrames: 160, blocks: 250)
        let blocks = 250 * 160 / blockFrames
        let other = run(clocks, aligner: try EchoReferenceAligner(playbackRate: 48_000), signal: signal, periodFrames: periodFrames,
                        blockFrames: blockFrames, blocks: blocks)
        let compared = blocks * blockFrames
        var worst: Float = 0
        for frame in 0..<compared { worst = max(worst, abs(base[frame] - other[frame])) }
        #expect(worst <= 1e-4, "periods of \(periodFrames), blocks of \(blockFrames): differs by up to \(worst)")
        #expect(base[1_000..<compared].contains { $0 != 0 })
    }

    @Test(arguments: [(150.0, 0.0, 150.0), (-30.0, 50.0, -79.996_000_2)])
    func driftBetweenTheClocksIsMeasuredWithinFivePPMAfterThirtySecondsOfJitteredStamps(speakerPPM: Double, capturePPM: Double, drift: Double) throws {
        var clocks = TwoClocks(speakerPPM: speakerPPM, capturePPM: capturePPM, jitterSeconds: 0.002)
        clocks.captureStart = clocks.speakerStart + 0.5
        let aligner = try EchoReferenceAligner(playbackRate: 48_000)
        #expect(aligner.driftPPM == nil)
        let silence = [Float](repeating: 0, count: 48_000 * 31)
        _ = run(clocks, aligner: aligner, signal: silence, periodFrames: 480, blockFrames: 160, blocks: 3_000)
        let measured = try #require(aligner.driftPPM)
        #expect(abs(measured - drift) <= 5, "measured \(measured) ppm, true \(drift) ppm")
    }

    @Test(arguments: [(150.0, 0.0, 0.0005, 1.0), (-30.0, 50.0, 0.0005, 1.0), (150.0, 0.0, 0.002, 2.0)])
    func withCompensationTheReferenceStaysAlignedForTenMinutes(speakerPPM: Double, capturePPM: Double, jitter: Double, tolerance: Double) throws {
        // Least squares over two minutes of stamps: ±0.5 ms of jitter leaves well under a sample;
        // ±2 ms leaves about half a sample (one standard deviation), so the worst of 20 looks is within 2.
        var clocks = TwoClocks(speakerPPM: speakerPPM, capturePPM: capturePPM, jitterSeconds: jitter)
        clocks.captureStart = clocks.speakerStart + 0.25
        let errors = try alignmentErrors(clocks, compensatesDrift: true, seconds: 600, everySeconds: 30)
        let worst = errors.filter { $0.second >= 30 }.map { abs($0.samples) }.max() ?? .infinity
        #expect(worst <= tolerance, "worst misalignment after 30 s: \(worst) samples; \(errors.map { ($0.second, ($0.samples * 100).rounded() / 100) })")
    }

    @Test(arguments: [(150.0, 0.0), (-30.0, 50.0)])
    func withoutCompensationTheReferenceSlipsByTheDriftOverTenMinutes(speakerPPM: Double, capturePPM: Double) throws {
        var clocks = TwoClocks(speakerPPM: speakerPPM, capturePPM: capturePPM, jitterSeconds: 0.002)
        clocks.captureStart = clocks.speakerStart + 0.25
        let errors = try alignmentErrors(clocks, compensatesDrift: false, seconds: 600, everySeconds: 60)
        let first = try #require(errors.first), last = try #require(errors.last)
        let drift = (1 + speakerPPM * 1e-6) / (1 + capturePPM * 1e-6) - 1
        let expected = -drift * Double(last.frame - first.frame)
        let slip = last.samples - first.samples
        #expect(abs(slip - expected) <= 1, "slipped \(slip) samples, expected \(expected)")
        #expect(abs(expected) > 600, "the drift moves the reference by hundreds of samples in nine minutes")
    }

    /// A headset that drops out and comes back in its hands-free profile: the speaker's second
    /// stream is at 24 kHz, its frames counted from 0 again, heard 0.5 s after the first ended.
    @Test func aSpeakerOpenedAgainAtAnotherRateIsFollowedSampleForSample() throws {
        let first = program(rate: 48_000, seconds: 1), second = program(rate: 24_000, seconds: 1)
        let speakerStart = 1_000.0, secondStart = 1_001.5, captureStart = 1_000.0 - 49.0 / 16_000
        let streams: [(signal: [Float], rate: SampleRate, start: Double)] = [(first, 48_000, speakerStart), (second, 24_000, secondStart)]
        let aligner = try EchoReferenceAligner(playbackRate: 48_000)
        let blocks = 260
        var reference = [Float](repeating: 0, count: blocks * 160)
        var next = [0, 0]
        reference.withUnsafeMutableBufferPointer { out in
            for block in 0..<blocks {
                let captured = captureStart + Double(block * 160) / 16_000
                for (index, stream) in streams.enumerated() {
                    let periodFrames = Int(stream.rate.hertz / 100)
                    while next[index] + periodFrames <= stream.signal.count, stream.start + Double(next[index]) / stream.rate.hertz <= captured + 0.04 {
                        stream.signal.withUnsafeBufferPointer { samples in
                            aligner.submit(PlayedPeriod(samples: UnsafeBufferPointer(rebasing: samples[next[index]..<(next[index] + periodFrames)]), sampleRate: stream.rate,
                                                        stamp: PlayedPeriodStamp(framePosition: next[index], instant: nanoseconds(stream.start + Double(next[index]) / stream.rate.hertz))))
                        }
                        next[index] += periodFrames
                    }
                }
                aligner.reference(for: CapturedBlockStamp(framePosition: block * 160, instant: nanoseconds(captured)),
                                  into: UnsafeMutableBufferPointer(rebasing: out[(block * 160)..<((block + 1) * 160)]))
            }
        }
        let expectedFirst = try resampled(first, from: 48_000), expectedSecond = try resampled(second, from: 24_000)
        // The second stream starts 1.5 s (24 000 samples) after the first, which starts 49 samples in.
        let secondOffset = 49 + 24_000
        var mismatches = 0
        for frame in 49..<(49 + expectedFirst.count - 160) where reference[frame] != expectedFirst[frame - 49] { mismatches += 1 }
        for frame in secondOffset..<min(reference.count, secondOffset + expectedSecond.count - 160)
        where reference[frame] != expectedSecond[frame - secondOffset] { mismatches += 1 }
        #expect(mismatches == 0, "\(mismatches) samples differ from what either stream played")
        #expect(reference[(49 + 16_000 + 160)..<secondOffset].allSatisfy { $0 == 0 }, "nothing played between the streams")
        #expect(reference[secondOffset..<(secondOffset + 1_600)].contains { $0 != 0 })
        #expect(aligner.rateChanges == 1 && aligner.currentPlaybackRate == 24_000 && aligner.rejectedPeriods == 0)
    }

    /// A microphone opened again counts its frames from 0 while the monotonic clock goes on: the
    /// reference of its blocks is what the speaker played when they were captured.
    @Test func aMicrophoneOpenedAgainIsAlignedFromItsFirstBlock() throws {
        let signal = program(rate: 48_000, seconds: 3)
        let speakerStart = 1_000.0
        // The first microphone from the speaker's start for 1 s; the second from 1.5 s on, frames from 0.
        let captures: [(start: Double, blocks: Int)] = [(speakerStart, 100), (speakerStart + 1.5, 100)]
        let aligner = try EchoReferenceAligner(playbackRate: 48_000)
        var nextPeriod = 0
        var references: [[Float]] = []
        for capture in captures {
            var reference = [Float](repeating: 0, count: capture.blocks * 160)
            reference.withUnsafeMutableBufferPointer { out in
                for block in 0..<capture.blocks {
                    let captured = capture.start + Double(block * 160) / 16_000
                    while nextPeriod * 480 + 480 <= signal.count, speakerStart + Double(nextPeriod * 480) / 48_000 <= captured + 0.04 {
                        signal.withUnsafeBufferPointer { samples in
                            aligner.submit(PlayedPeriod(samples: UnsafeBufferPointer(rebasing: samples[(nextPeriod * 480)..<(nextPeriod * 480 + 480)]), sampleRate: 48_000,
                                                        stamp: PlayedPeriodStamp(framePosition: nextPeriod * 480, instant: nanoseconds(speakerStart + Double(nextPeriod * 480) / 48_000))))
                        }
                        nextPeriod += 1
                    }
                    aligner.reference(for: CapturedBlockStamp(framePosition: block * 160, instant: nanoseconds(captured)),
                                      into: UnsafeMutableBufferPointer(rebasing: out[(block * 160)..<((block + 1) * 160)]))
                }
            }
            references.append(reference)
        }
        let expected = try resampled(signal, from: 48_000)
        var mismatches = 0
        for frame in 0..<references[0].count where references[0][frame] != expected[frame] { mismatches += 1 }
        for frame in 0..<references[1].count where references[1][frame] != expected[24_000 + frame] { mismatches += 1 }
        #expect(mismatches == 0, "\(mismatches) samples differ from what the speaker played when they were captured")
        #expect(aligner.captureRestarts == 1 && aligner.streamRestarts == 0)
    }

    @Test func steadyStateAllocatesNothingPerPeriodOrBlock() throws {
        let clocks = TwoClocks(speakerPPM: 100, jitterSeconds: 0.001)
        let aligner = try EchoReferenceAligner(playbackRate: 48_000)
        let period = Signals.sine(frequency: 440, amplitude: 0.5, sampleRate: 48_000, frames: 480).map { Float($0) }
        var block = [Float](repeating: 0, count: 160)
        var generator = SplitMix64(seed: 7)
        var index = 0
        func step() {
            let heard = clocks.heardInstant(ofSpeakerFrame: index * 480) + 0.001 * (2 * generator.nextUnit() - 1)
            period.withUnsafeBufferPointer { samples in
                aligner.submit(PlayedPeriod(samples: samples, sampleRate: 48_000, stamp: PlayedPeriodStamp(framePosition: index * 480, instant: nanoseconds(heard))))
            }
            let captured = clocks.capturedInstant(ofFrame: index * 160) + 0.001 * (2 * generator.nextUnit() - 1)
            block.withUnsafeMutableBufferPointer { out in
                aligner.reference(for: CapturedBlockStamp(framePosition: index * 160, instant: nanoseconds(captured)), into: out)
            }
            index += 1
        }
        // Warm-up past the clocks' minimum span, so the measured lines are in use.
        while index < 700 { step() }
        let allocations = countAllocations {
            while index < 900 { step() }
        }
        #expect(allocations == 0, "\(allocations) allocations in 200 periods and blocks")
        #expect(block.contains { $0 != 0 })
        #expect(aligner.driftPPM != nil)
    }
}

/// Where the reference sits against the truth, in 16 kHz samples (positive: ahead of what the
/// speaker plays), measured every `everySeconds` over one second of a 2 Hz tone: its phase in
/// the reference against its phase at the true position, with a Hann window.
private func alignmentErrors(_ clocks: TwoClocks, compensatesDrift: Bool, seconds: Int, everySeconds: Int) throws -> [(second: Int, frame: Int, samples: Double)] {
    var options = EchoReferenceOptions()
    options.compensatesDrift = compensatesDrift
    let aligner = try EchoReferenceAligner(playbackRate: clocks.speakerNominal, options: options)
    var generator = SplitMix64(seed: clocks.seed)
    func jitter() -> Double { clocks.jitterSeconds * (2 * generator.nextUnit() - 1) }
    let tone = 2.0
    let periodFrames = 480
    // One cycle of the tone at the speaker's rate (a whole number of frames), read by frame position.
    let cycle = Int(clocks.speakerNominal.hertz / tone)
    let toneCycle = (0..<cycle).map { Float(0.5 * sin(2 * Double.pi * Double($0) / Double(cycle))) }
    var periodSamples = [Float](repeating: 0, count: periodFrames)
    var window = [Float](repeating: 0, count: 16_000)
    var single = [Float](repeating: 0, count: 1)
    var results: [(second: Int, frame: Int, samples: Double)] = []
    var period = 0
    for block in 0..<(seconds * 100) {
        let frame = block * 160
        let captured = clocks.capturedInstant(ofFrame: frame)
        // 200 ms of speaker latency: what the speaker plays has arrived well before it is heard.
        while clocks.heardInstant(ofSpeakerFrame: period * periodFrames) <= captured + 0.2 {
            for index in 0..<periodFrames { periodSamples[index] = toneCycle[(period * periodFrames + index) % cycle] }
            let stamp = PlayedPeriodStamp(framePosition: period * periodFrames, instant: nanoseconds(clocks.heardInstant(ofSpeakerFrame: period * periodFrames) + jitter()))
            periodSamples.withUnsafeBufferPointer { aligner.submit(PlayedPeriod(samples: $0, sampleRate: clocks.speakerNominal, stamp: stamp)) }
            period += 1
        }
        let stamp = CapturedBlockStamp(framePosition: frame, instant: nanoseconds(captured + jitter()))
        let second = block / 100
        if second % everySeconds == 0 {
            let offset = (block % 100) * 160
            window.withUnsafeMutableBufferPointer { aligner.reference(for: stamp, into: UnsafeMutableBufferPointer(rebasing: $0[offset..<(offset + 160)])) }
            if block % 100 == 99 {
                let start = frame + 160 - 16_000
                var real = 0.0, imaginary = 0.0
                for index in 0..<16_000 {
                    let weight = 0.5 - 0.5 * cos(2 * Double.pi * (Double(index) + 0.5) / 16_000)
                    let phase = 2 * Double.pi * tone * clocks.trueReferencePosition(ofCaptureFrame: start + index) / 16_000
                    real += weight * Double(window[index]) * cos(phase)
                    imaginary -= weight * Double(window[index]) * sin(phase)
                }
                var error = atan2(imaginary, real) + Double.pi / 2
                if error > Double.pi { error -= 2 * Double.pi }
                results.append((second, start, error / (2 * Double.pi * tone) * 16_000))
            }
        } else {
            single.withUnsafeMutableBufferPointer { aligner.reference(for: stamp, into: $0) }
        }
    }
    return results
}
