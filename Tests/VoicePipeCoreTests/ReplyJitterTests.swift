import Testing
import VoicePipeCore

/// The jitter buffer's pre-roll: the spread of chunk offsets plus a margin, bounded, following
/// the network up and, after calm replies, down again.
struct ReplyJitterTests {
    /// Feeds a reply of `count` 20 ms chunks, chunk k arriving at `start` + 20 ms × k + `delay(k)`
    /// (and never before the one ahead of it).
    static func reply(_ jitter: inout ReplyJitter, start: Duration, count: Int = 50, delay: (Int) -> Duration) {
        var previous = Duration.zero
        for k in 0..<count {
            let arrival = max(previous, start + .milliseconds(20 * k) + delay(k))
            previous = arrival
            jitter.chunkArrived(at: arrival, audio: .milliseconds(20))
        }
        jitter.replyEnded()
    }

    @Test func aReplyPacedInRealTimeNeedsOnlyTheMinimum() {
        var jitter = ReplyJitter()
        #expect(jitter.preRoll == .milliseconds(40))
        Self.reply(&jitter, start: .seconds(1)) { _ in .zero }
        #expect(jitter.preRoll == .milliseconds(40))
        // A reply sent faster than real time (all at once) is early, never late.
        Self.reply(&jitter, start: .seconds(3)) { k in .zero - .milliseconds(20 * k) }
        #expect(jitter.preRoll == .milliseconds(40))
    }

    @Test func burstsWithGapsRaiseThePreRollToTheLongestGapAndNoFurther() {
        var jitter = ReplyJitter()
        // Held back in bursts: chunks 10-19 wait until 180 ms after chunk 10 was due.
        Self.reply(&jitter, start: .seconds(1)) { k in (10..<20).contains(k) ? .milliseconds(180 - 20 * (k - 10)) : .zero }
        #expect(jitter.preRoll == .milliseconds(210))
        // Within a reply the pre-roll follows at once.
        var within = ReplyJitter()
        within.chunkArrived(at: .seconds(1), audio: .milliseconds(20))
        within.chunkArrived(at: .seconds(1) + .milliseconds(150), audio: .milliseconds(20))
        #expect(within.preRoll == .milliseconds(160))
        // Seconds of delay are bounded.
        Self.reply(&jitter, start: .seconds(10)) { k in k == 25 ? .seconds(2) : .zero }
        #expect(jitter.preRoll == ReplyJitter.maximum)
        #expect(jitter.largestPreRoll == ReplyJitter.maximum)
    }

    @Test func calmRepliesBringThePreRollDownAgain() {
        var jitter = ReplyJitter()
        Self.reply(&jitter, start: .seconds(1)) { k in k == 20 ? .milliseconds(120) : .zero }
        #expect(jitter.preRoll == .milliseconds(150))
        for index in 0..<ReplyJitter.window - 1 {
            Self.reply(&jitter, start: .seconds(5 + index)) { _ in .zero }
            #expect(jitter.preRoll == .milliseconds(150), "still remembered after \(index + 1) calm replies")
        }
        Self.reply(&jitter, start: .seconds(20)) { _ in .zero }
        #expect(jitter.preRoll == .milliseconds(40))
        #expect(jitter.largestPreRoll == .milliseconds(150))
    }
}
