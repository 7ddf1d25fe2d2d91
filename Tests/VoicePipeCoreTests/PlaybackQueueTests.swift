import Foundation
import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// The playback queue: order, pre-roll, underruns, end of stream, interruption with a fade.
struct PlaybackQueueTests {
    static let rate = 24_000

    /// Queues `frames` frames of a constant (or a ramp when `ramp` is set) on every channel.
    static func enqueue(_ queue: PlaybackQueue, frames: Int, value: Float = 0.5, ramp: Float? = nil, start: Int = 0) throws {
        let channels = queue.format.channelCount
        var planar = [Float](repeating: 0, count: frames * channels)
        for c in 0..<channels {
            for i in 0..<frames { planar[c * frames + i] = ramp.map { Float(start + i) * $0 } ?? value }
        }
        try planar.withUnsafeBufferPointer { p in
            try queue.enqueue(PlaybackBuffer(base: p.baseAddress!, frameCount: frames, channelCount: channels, channelStride: frames))
        }
    }

    /// Renders `frames` frames and returns channel 0.
    static func render(_ queue: PlaybackQueue, frames: Int) -> [Float] {
        var out = [Float](repeating: .nan, count: frames * queue.format.channelCount)
        out.withUnsafeMutableBufferPointer { _ = queue.render(into: $0.baseAddress!, channelStride: frames, frameCount: frames) }
        return Array(out[0..<frames])
    }

    @Test func chunksPlayInArrivalOrderAfterThePreRoll() throws {
        let queue = try PlaybackQueue()
        #expect(queue.preRollFrames == 1_440, "60 ms at 24 kHz")
        try Self.enqueue(queue, frames: 1_000, ramp: 1e-5, start: 0)
        // 1000 frames < 60 ms of pre-roll: silence.
        #expect(Self.render(queue, frames: 240) == [Float](repeating: 0, count: 240))
        try Self.enqueue(queue, frames: 1_000, ramp: 1e-5, start: 1_000)
        let out = Self.render(queue, frames: 2_000)
        #expect(out == (0..<2_000).map { Float($0) * 1e-5 })
        let stats = queue.statistics
        #expect(stats.playedFrames == 2_000)
        #expect(stats.silenceFrames == 240)
        #expect(stats.underruns == 0)
    }

    @Test func runningDryMidReplyIsAnUnderrunOnceMoreOfTheReplyComes() throws {
        let queue = try PlaybackQueue()
        try Self.enqueue(queue, frames: 2_400)
        let out = Self.render(queue, frames: 3_000)
        #expect(out[0..<2_400].allSatisfy { $0 == 0.5 })
        #expect(out[2_400...].allSatisfy { $0 == 0 })
        #expect(queue.statistics.silenceFrames == 600)
        // The reply may simply have ended: only more of it makes the silence a hole.
        #expect(queue.statistics.underruns == 0)
        try Self.enqueue(queue, frames: 480)
        #expect(queue.statistics.underruns == 1)
        // After an underrun, playback waits for the pre-roll again.
        #expect(Self.render(queue, frames: 240).allSatisfy { $0 == 0 })
        try Self.enqueue(queue, frames: 480)
        #expect(queue.statistics.underruns == 1, "waiting for pre-roll is not another underrun")
    }

    @Test func aDrySpellAtACutOrAtTheEndIsNoUnderrun() throws {
        let queue = try PlaybackQueue()
        try Self.enqueue(queue, frames: 2_400)
        _ = Self.render(queue, frames: 3_000)
        queue.markEndOfStream()
        try Self.enqueue(queue, frames: 2_400)
        _ = Self.render(queue, frames: 3_000)
        queue.interrupt()
        try Self.enqueue(queue, frames: 2_400)
        _ = Self.render(queue, frames: 3_000)
        // A converter's tail queued as the reply ends, after it ran dry, is its end too.
        queue.replyEnding()
        try Self.enqueue(queue, frames: 24)
        queue.markEndOfStream()
        #expect(queue.statistics.underruns == 0)
    }

    /// Audio shorter than the pre-roll is not held back forever: it starts once it has waited as
    /// long as the pre-roll lasts, so a short reply plays (and drains) without an end mark.
    @Test func audioThatWaitedAsLongAsThePreRollStarts() throws {
        let queue = try PlaybackQueue()
        queue.setPreRoll(frames: 960)
        #expect(queue.preRollFrames == 960)
        try Self.enqueue(queue, frames: 480)
        // Rendered in 10 ms periods, as a render thread does: four periods wait, the fifth plays.
        let out = (0..<6).flatMap { _ in Self.render(queue, frames: 240) }
        #expect(out[0..<960].allSatisfy { $0 == 0 } && out[960..<1_440].allSatisfy { $0 == 0.5 })
        #expect(queue.statistics.silenceFrames == 960)
        #expect(queue.statistics.playedFrames == 480)
        queue.setPreRoll(frames: 1_000_000)
        #expect(queue.preRollFrames == 24_000, "at most a second")
    }

    @Test func theEndOfAReplyPlaysOutWithoutPreRollOrUnderrun() throws {
        let queue = try PlaybackQueue()
        try Self.enqueue(queue, frames: 500)
        queue.markEndOfStream()
        let out = Self.render(queue, frames: 1_000)
        #expect(out[0..<500].allSatisfy { $0 == 0.5 })
        #expect(out[500...].allSatisfy { $0 == 0 })
        #expect(queue.statistics.underruns == 0)
        #expect(queue.statistics.playedFrames == 500)
    }

    @Test func interruptDropsEverythingQueuedAndFadesWithoutAClick() throws {
        let queue = try PlaybackQueue()
        #expect(queue.fadeFrames == 120, "5 ms at 24 kHz")
        try Self.enqueue(queue, frames: 24_000)
        _ = Self.render(queue, frames: 2_400)
        queue.interrupt()
        let out = Self.render(queue, frames: 480)
        let fade = out[0..<120]
        #expect(fade.first! > 0.49 && fade.first! <= 0.5)
        #expect(fade.last! == 0)
        #expect(zip(fade, fade.dropFirst()).allSatisfy { $0 >= $1 }, "the fade only falls")
        let steepest = zip(fade, fade.dropFirst()).map { abs($0 - $1) }.max() ?? 0
        #expect(steepest < 0.01, "a cut of 0.5 would click; the fade steps at most \(steepest)")
        #expect(out[120...].allSatisfy { $0 == 0 })
        #expect(queue.queuedFrames == 0)
        let stats = queue.statistics
        #expect(stats.playedFrames == 2_400 + 120)
        #expect(stats.droppedFrames == 24_000 - 2_520)
        #expect(stats.interruptions == 1)
        // The next reply starts with a fresh pre-roll.
        try Self.enqueue(queue, frames: 1_000, value: 0.25)
        #expect(Self.render(queue, frames: 100).allSatisfy { $0 == 0 })
        try Self.enqueue(queue, frames: 1_000, value: 0.25)
        #expect(Self.render(queue, frames: 100).allSatisfy { $0 == 0.25 })
    }

    @Test func interruptWhilePreRollingDropsSilently() throws {
        let queue = try PlaybackQueue()
        try Self.enqueue(queue, frames: 1_000)
        #expect(Self.render(queue, frames: 100).allSatisfy { $0 == 0 })
        queue.interrupt()
        try Self.enqueue(queue, frames: 2_000, value: 0.125)
        let out = Self.render(queue, frames: 2_000)
        #expect(out.allSatisfy { $0 == 0.125 }, "only the audio queued after the interruption plays")
        #expect(queue.statistics.droppedFrames == 1_000)
    }

    @Test func aFullQueueRefusesWithoutLosingWhatItHolds() throws {
        let queue = try PlaybackQueue(options: PlaybackQueueOptions(preRollMilliseconds: 0, capacitySeconds: 0.1))
        try Self.enqueue(queue, frames: 2_000, ramp: 1e-4)
        #expect(throws: PlaybackQueueError.full(frames: 1_000, free: 400)) { try Self.enqueue(queue, frames: 1_000) }
        #expect(Self.render(queue, frames: 2_000) == (0..<2_000).map { Float($0) * 1e-4 })
        #expect(throws: PlaybackQueueError.self) { try PlaybackQueue(options: PlaybackQueueOptions(fadeOutMilliseconds: 6)) }
    }

    @Test func multichannelAudioStaysPerChannel() throws {
        let format = try PlayerFormat(FormatGuard.validate(AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: false)))
        let queue = try PlaybackQueue(format: format, options: PlaybackQueueOptions(preRollMilliseconds: 0))
        let planar = [Float](repeating: 0.25, count: 100) + [Float](repeating: -0.75, count: 100)
        try planar.withUnsafeBufferPointer { try queue.enqueue(PlaybackBuffer(base: $0.baseAddress!, frameCount: 100, channelCount: 2, channelStride: 100)) }
        var out = [Float](repeating: .nan, count: 256)
        out.withUnsafeMutableBufferPointer { _ = queue.render(into: $0.baseAddress!, channelStride: 128, frameCount: 128) }
        #expect(out[0..<100].allSatisfy { $0 == 0.25 } && out[100..<128].allSatisfy { $0 == 0 })
        #expect(out[128..<228].allSatisfy { $0 == -0.75 } && out[228...].allSatisfy { $0 == 0 })
        #expect(throws: PlaybackQueueError.channelCountMismatch(expected: 2, received: 1)) {
            try planar.withUnsafeBufferPointer { try queue.enqueue(PlaybackBuffer(base: $0.baseAddress!, frameCount: 10, channelCount: 1, channelStride: 10)) }
        }
    }

    @Test func aProducerAndAConsumerOnTwoThreadsKeepEveryFrameInOrder() async throws {
        let queue = try PlaybackQueue(options: PlaybackQueueOptions(preRollMilliseconds: 10, capacitySeconds: 0.2))
        let total = 200_000
        let producer = Thread {
            var next = 0
            while next < total {
                let count = min(777, total - next)
                let values = (next..<(next + count)).map { Float($0 % 10_000) / 10_000 }
                do {
                    try values.withUnsafeBufferPointer { try queue.enqueue(PlaybackBuffer(base: $0.baseAddress!, frameCount: count, channelCount: 1, channelStride: count)) }
                    next += count
                } catch {
                    Thread.sleep(forTimeInterval: 0.0005)
                }
            }
            queue.markEndOfStream()
        }
        producer.start()
        var heard = [Float]()
        heard.reserveCapacity(total)
        var block = [Float](repeating: 0, count: 512)
        let deadline = Date().addingTimeInterval(30)
        while heard.count < total && Date() < deadline {
            let got = block.withUnsafeMutableBufferPointer { queue.render(into: $0.baseAddress!, channelStride: 512, frameCount: 512) }
            // Audio always comes first in a rendered block; silence (if any) follows.
            heard += block[0..<got]
        }
        #expect(heard.count == total)
        #expect(heard == (0..<total).map { Float($0 % 10_000) / 10_000 })
    }
}
