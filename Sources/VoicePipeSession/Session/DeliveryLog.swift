/// What the session's connections wrote of its audio, and the newest of it, so that when a
/// connection drops and the runtime says how much of the session it read (`session.resumed`),
/// the audio it never read is sent again on the new connection instead of being lost unseen.
///
/// A frame a transport wrote may still die on the way: in the peer's socket when the runtime
/// aborts, a kernel having acknowledged it. No socket query can tell; only the runtime's count
/// can. The count is of `audio.chunk` messages, captured frames and keep-alive silences alike,
/// in the order they were written; the newest up to the reconnection hold limit are kept to
/// be sent again, older ones that were not read count as dropped.
///
/// ```
///  frameSent / keep-alive ─▶ written (count) ─▶ recent: [frame, frame, keep-alive, frame, …]
///                                                        └── the last (written − read) go again
/// ```
struct DeliveryLog: Sendable {
    /// One `audio.chunk` written.
    enum Written: Sendable {
        case frame(AudioFrame)
        case keepAlive
    }

    /// `audio.chunk` messages the transports took and did not hand back, over the session.
    private(set) var written = 0
    /// The newest written, oldest first, up to the sample limit (keep-alives count no samples):
    /// `kept[oldest...]`. The oldest leaves by moving the index, not the elements (shifting a
    /// second's worth of frames after every frame was a session's largest copy); the array is
    /// compacted once the gap is as long as what it keeps.
    private var kept: [Written] = []
    private var oldest = 0
    var recent: ArraySlice<Written> { kept[oldest...] }
    private(set) var recentSamples = 0
    /// The length of the last frame that fell out of ``recent``: unread frames older than that
    /// are counted at it (a capture's frames are all of one length but the last).
    private var evictedFrameSamples = 0
    /// Whether the runtime answers a continuing `session.start` with `session.resumed`: nil until
    /// the first reconnection tells. A runtime that does not is not waited for again, and no
    /// audio is kept for it.
    var runtimeConfirms: Bool?

    /// Keeps nothing once the runtime is known not to confirm what it read.
    private var keeps: Bool { runtimeConfirms != false }

    mutating func recordFrame(_ frame: AudioFrame, limit: Int) {
        written += 1
        guard keeps else { return }
        kept.append(.frame(frame))
        recentSamples += frame.samples.count
        while recentSamples > limit, oldest < kept.count {
            if case .frame(let evicted) = kept[oldest] {
                recentSamples -= evicted.samples.count
                evictedFrameSamples = evicted.samples.count
            }
            // The slot lets go of its samples now, not at the next compaction.
            kept[oldest] = .keepAlive
            oldest += 1
        }
        if oldest >= 64, oldest * 2 >= kept.count {
            kept.removeFirst(oldest)
            oldest = 0
        }
    }

    mutating func recordKeepAlive() {
        written += 1
        if keeps { kept.append(.keepAlive) }
    }

    /// A transport handed these frames back unwritten (the newest it took; after a rotation the
    /// old connection's, which frames on the new one may follow).
    mutating func forget(_ frames: [AudioFrame]) {
        written -= frames.count
        for frame in frames.reversed() {
            guard let index = recent.lastIndex(where: { if case .frame(let logged) = $0 { logged == frame } else { false } }) else { continue }
            kept.remove(at: index)
            recentSamples -= frame.samples.count
        }
    }

    /// A keep-alive silence the transport refused.
    mutating func forgetKeepAlive() {
        written -= 1
        if let index = recent.lastIndex(where: { if case .keepAlive = $0 { true } else { false } }) { kept.remove(at: index) }
    }

    /// The runtime read `read` of the `audio.chunk` messages written: the rest are taken back
    /// (no longer written). Returns the frames among them still kept, oldest first, to be sent
    /// again, how many unread messages were too old to be kept, and the samples those held.
    mutating func takeUnread(runtimeRead read: Int) -> (frames: [AudioFrame], tooOld: Int, tooOldSamples: Int) {
        let unread = max(0, written - read)
        written -= unread
        let resent = min(unread, recent.count)
        let frames = recent.suffix(resent).compactMap { written -> AudioFrame? in if case .frame(let frame) = written { frame } else { nil } }
        kept.removeLast(resent)
        recentSamples -= frames.reduce(0) { $0 + $1.samples.count }
        return (frames, unread - resent, (unread - resent) * evictedFrameSamples)
    }

    /// The runtime does not confirm: nothing more is kept.
    mutating func runtimeDoesNotConfirm() {
        runtimeConfirms = false
        kept = []
        oldest = 0
        recentSamples = 0
    }
}
