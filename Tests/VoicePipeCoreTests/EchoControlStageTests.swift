import Testing
import VoicePipeCore

/// The echo stage's framing and its failure rule, with cancellers whose output is known: however
/// the input is cut, every sample comes out once, in frames of the capture's length, with the
/// peak of what goes out; a block the backend fails on goes out unprocessed.
struct EchoControlStageTests {
    /// Passes the microphone through, or halves it, or fails every other block.
    final class KnownCanceller: EchoCanceller {
        enum Behaviour { case passThrough, halve, failEveryOther }
        let behaviour: Behaviour
        private(set) var calls = 0
        let name = "known"
        init(_ behaviour: Behaviour) { self.behaviour = behaviour }
        func process(near: UnsafeBufferPointer<Float>, far: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) throws(EchoControlError) {
            try checkBlock(near: near, far: far, output: output)
            calls += 1
            if behaviour == .failEveryOther, calls % 2 == 0 { throw .processingFailed(backend: name, code: -1) }
            for index in 0..<near.count { output[index] = behaviour == .halve ? near[index] / 2 : near[index] }
        }
        func reset() {}
    }

    static func stage(_ behaviour: KnownCanceller.Behaviour, frame: Int = 512) throws -> EchoControlStage {
        let aligner = try EchoReferenceAligner(playbackRate: 24_000)
        return try EchoControlStage(canceller: KnownCanceller(behaviour), reference: aligner, frameSamples: frame)
    }

    /// Runs `samples` through `stage` in pieces of `cut` (cycling), flushed; the frames it delivered.
    static func run(_ stage: EchoControlStage, _ samples: [Int16], cut: [Int]) -> [(samples: [Int16], level: PeakLevel)] {
        var frames: [(samples: [Int16], level: PeakLevel)] = []
        var start = 0, piece = 0
        samples.withUnsafeBufferPointer { all in
            while start < all.count {
                let end = min(all.count, start + cut[piece % cut.count])
                stage.process(UnsafeBufferPointer(rebasing: all[start..<end]), stamp: CapturedBlockStamp(framePosition: start, instant: Int64(start) * 62_500)) {
                    frames.append((Array($0), $1))
                }
                start = end
                piece += 1
            }
        }
        stage.flush { frames.append((Array($0), $1)) }
        return frames
    }

    static let speech: [Int16] = (0..<16_003).map { Int16(truncatingIfNeeded: ($0 &* 7_919) % 20_000 - 10_000) }

    @Test func everySampleComesOutOnceInFramesOfTheCapturesLengthHoweverTheInputIsCut() throws {
        let whole = Self.run(try Self.stage(.passThrough), Self.speech, cut: [Self.speech.count])
        #expect(whole.flatMap(\.samples) == Self.speech)
        #expect(whole.dropLast().allSatisfy { $0.samples.count == 512 })
        #expect(whole.last?.samples.count == 16_003 % 512)
        for cut in [[1], [7], [160], [320, 13, 512], [1_000]] {
            let pieces = Self.run(try Self.stage(.passThrough), Self.speech, cut: cut)
            #expect(pieces.map(\.samples) == whole.map(\.samples), "cut \(cut)")
        }
    }

    @Test func eachFramesPeakIsThePeakOfWhatGoesOut() throws {
        let frames = Self.run(try Self.stage(.halve), Self.speech, cut: [333])
        for (index, frame) in frames.enumerated() {
            let source = Self.speech[(index * 512)..<min(Self.speech.count, (index + 1) * 512)]
            #expect(frame.samples == source.map { SampleConversion.int16(SampleConversion.float($0) / 2) })
            #expect(frame.level.peak == frame.samples.map { abs(Int($0)) }.max())
        }
    }

    @Test func aBlockTheBackendFailsOnGoesOutUnprocessedAndIsCounted() throws {
        let stage = try Self.stage(.failEveryOther, frame: 160)
        let frames = Self.run(stage, Self.speech, cut: [160])
        #expect(frames.flatMap(\.samples) == Self.speech)
        #expect(stage.blocksPassedThrough == 50)
        #expect(stage.blocksProcessed == 51)
        #expect(stage.firstFailure == .processingFailed(backend: "known", code: -1))
    }

    @Test func aFrameLengthBelowOneIsRefused() throws {
        let aligner = try EchoReferenceAligner(playbackRate: 24_000)
        #expect(throws: EchoControlError.self) { try EchoControlStage(canceller: KnownCanceller(.passThrough), reference: aligner, frameSamples: 0) }
    }
}
