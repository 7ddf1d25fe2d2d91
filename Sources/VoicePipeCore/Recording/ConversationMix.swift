/// Both sides of a conversation on one timeline, as stereo 16 kHz Int16: the captured audio
/// (what went to the runtime) on the left, exactly as captured, and the reply as it played on
/// the right, resampled to 16 kHz, with its cuts and fades.
///
/// The timeline is the capture's sample position, not a wall clock: a reply starts at the
/// capture position when it arrived (or where the reply before it ended, as a player queues
/// them) and plays at its own rate from there; an interruption cuts it at the capture position
/// of the cut with a 5 ms fade. Gaps are silence. So the two channels stay aligned however long
/// the session, however fast the input was read, and the same session recorded twice gives the
/// same file.
///
/// ```
///  captured frames ──────────────────────────────▶ left  ─┐
///  reply chunks ─▶ 16 kHz ─▶ placed at max(position, end of the last reply) ─▶ right ─┴─▶ stereo (finished part)
/// ```
/// Memory: audio not yet handed out, which is the reply audio ahead of the capture position.
public final class ConversationMix {
    /// The recording's rate.
    public static let sampleRate = SampleRate.capture
    /// The fade at a cut: 5 ms.
    public static let cutFadeFrames = 80

    /// Capture frames so far: the timeline's position.
    public private(set) var position = 0
    /// Stereo frames already handed out by ``takeFinished()``.
    public private(set) var emitted = 0

    private var left: [Int16] = []
    /// The reply channel from `rightBase` on (absolute positions).
    private var right: [Float] = []
    private var rightBase = 0
    /// The reply being placed: where its next sample goes, its resampler, and its rate.
    private var segment: (next: Int, resampler: (any Resampler)?, rate: SampleRate)?
    private var input: [Float] = []
    private var output: [Float] = []

    public init() {}

    /// The end of the reply audio placed so far (absolute position).
    public var replyEnd: Int { segment?.next ?? rightBase + right.count }

    /// Captured samples, in order: they advance the timeline.
    public func captured(_ samples: some Collection<Int16>) {
        left.append(contentsOf: samples)
        position += samples.count
    }

    /// A reply chunk given to the player: it plays on from the end of the reply before it, or
    /// from now if that has ended. A chunk at a rate no resampler takes is left out.
    public func reply(_ chunk: AudioChunk) {
        if segment == nil || segment?.rate != chunk.sampleRate || (segment?.next ?? 0) < position {
            endSegment()
            let resampler: (any Resampler)? = chunk.sampleRate == Self.sampleRate ? nil
                : try? BuiltInResampler(inputRate: chunk.sampleRate, outputRate: Self.sampleRate)
            guard chunk.sampleRate == Self.sampleRate || resampler != nil else { return }
            segment = (next: max(position, replyEnd), resampler: resampler, rate: chunk.sampleRate)
        }
        input.removeAll(keepingCapacity: true)
        input.append(contentsOf: chunk.samples.lazy.map { Float($0) / 32_768 })
        place(resampling: input)
    }

    /// The reply was cut at the current position: what is placed beyond it goes, with a fade
    /// over the 5 ms before it.
    public func cut() {
        endSegment()
        let cutAt = max(position, emitted)
        guard rightBase + right.count > cutAt else { return }
        let keep = cutAt - rightBase
        right.removeSubrange(max(keep, 0)...)
        let fadeStart = max(cutAt - Self.cutFadeFrames, emitted, rightBase)
        for index in fadeStart..<cutAt {
            right[index - rightBase] *= Float(cutAt - index) / Float(Self.cutFadeFrames + 1)
        }
    }

    /// The reply is over (nothing more of it will come): its resampler's last samples are placed.
    public func replyEnded() { endSegment() }

    /// Interleaved stereo frames (left, right) from the last call up to the capture position,
    /// where both channels are known; with `all`, up to the end of the reply too (the session is over).
    public func takeFinished(all: Bool = false) -> [Int16] {
        if all { endSegment() }
        var end = position
        if all { end = max(end, rightBase + right.count) }
        // An open reply's resampler still holds its last samples: hand out nothing past what it placed.
        if let segment, !all { end = min(end, max(segment.next, emitted)) }
        guard end > emitted else { return [] }
        var frames = [Int16]()
        frames.reserveCapacity(2 * (end - emitted))
        for index in emitted..<end {
            let leftIndex = index - (position - left.count)
            frames.append(leftIndex >= 0 && leftIndex < left.count ? left[leftIndex] : 0)
            let rightIndex = index - rightBase
            let value = rightIndex >= 0 && rightIndex < right.count ? right[rightIndex] : 0
            frames.append(Int16(clamping: Int((value * 32_768).rounded())))
        }
        let leftDone = max(0, min(left.count, end - (position - left.count)))
        left.removeFirst(leftDone)
        let rightDone = max(0, min(right.count, end - rightBase))
        right.removeFirst(rightDone)
        rightBase += rightDone
        if rightBase < end {
            rightBase = end
        }
        emitted = end
        return frames
    }

    private func place(resampling samples: [Float]) {
        guard var current = segment else { return }
        if let resampler = current.resampler {
            let needed = resampler.maxOutputFrames(forInputFrames: samples.count)
            if output.count < needed { output = [Float](repeating: 0, count: needed) }
            let made = samples.withUnsafeBufferPointer { source in
                output.withUnsafeMutableBufferPointer { (try? resampler.process(source, into: $0)) ?? 0 }
            }
            write(output.prefix(made), at: &current.next)
        } else {
            write(samples[...], at: &current.next)
        }
        segment = current
    }

    private func write(_ samples: ArraySlice<Float>, at next: inout Int) {
        if rightBase + right.count < next {
            right.append(contentsOf: repeatElement(0, count: next - rightBase - right.count))
        }
        var index = next - rightBase
        for sample in samples {
            if index < 0 {
                index += 1
                continue
            }
            if index < right.count { right[index] = sample } else { right.append(sample) }
            index += 1
        }
        next += samples.count
    }

    private func endSegment() {
        guard var current = segment else { return }
        if let resampler = current.resampler {
            if output.count < resampler.maxFlushFrames { output = [Float](repeating: 0, count: resampler.maxFlushFrames) }
            let made = output.withUnsafeMutableBufferPointer { (try? resampler.flush(into: $0)) ?? 0 }
            write(output.prefix(made), at: &current.next)
        }
        segment = nil
    }
}
