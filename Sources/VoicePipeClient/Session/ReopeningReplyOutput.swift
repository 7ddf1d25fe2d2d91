import Synchronization
import VoicePipeCore
import VoicePipeIO

/// A speaker that is opened again when it fails mid-session: while it is gone, reply audio is
/// let go (each chunk counts as played, so the session goes on as text: transcripts, tools,
/// cards), and each chunk after the retry interval tries the device again; back, it is guarded
/// anew (``PlaybackDevice`` refuses a format no player may take) and plays the next reply.
///
/// The device is only needed when there is reply audio, so the attempts ride on the chunks;
/// `onChange` hears each loss and return, in a sentence, for the timeline.
public final class ReopeningReplyOutput: ReplyOutput {
    /// What the output is, for the timeline ("speaker 'default'").
    public let name: String
    public let sampleRate: SampleRate
    private let open: () throws -> any ReplyOutput
    private let interval: Duration
    private let now: () -> ContinuousClock.Instant
    private let onChange: @Sendable (String) -> Void
    private var current: (any ReplyOutput)?
    /// Chunks given before the current output opened: its drained reports count from there.
    private var chunksBefore = 0
    /// Seconds played by outputs that failed.
    private var secondsBefore = 0.0
    private var framesCutBefore = 0
    private var underrunsBefore = 0
    private var lastReport: JitterBufferReport?
    private var retryAt: ContinuousClock.Instant?
    private var drained: (@Sendable (Int) -> Void)?
    private var heard: (@Sendable (Int, Duration) -> Void)?
    public private(set) var chunksQueued = 0
    /// Times the device failed.
    public private(set) var losses = 0

    /// - Parameters:
    ///   - name: the device, for sentences.
    ///   - first: the output as opened for the session.
    ///   - interval: time between attempts to open it again.
    ///   - open: opens the device again (throws while it is not there).
    ///   - onChange: told, on the driver's thread, when the device is lost and when it is back.
    public init(name: String, first: any ReplyOutput, interval: Duration = .seconds(2),
                now: @escaping () -> ContinuousClock.Instant = { ContinuousClock.now },
                open: @escaping () throws -> any ReplyOutput, onChange: @escaping @Sendable (String) -> Void = { _ in }) {
        self.name = name
        self.sampleRate = first.sampleRate
        self.interval = interval
        self.now = now
        self.open = open
        self.onChange = onChange
        current = first
    }

    public var framesPlayed: Int {
        let now = current.map { Double($0.framesPlayed) / $0.sampleRate.hertz } ?? 0
        return Int(((secondsBefore + now) * sampleRate.hertz).rounded())
    }

    public var framesCut: Int { framesCutBefore + (current?.framesCut ?? 0) }

    /// The current device's jitter buffer, its underruns added to those of the devices lost.
    public var jitterReport: JitterBufferReport? {
        guard var report = current?.jitterReport ?? lastReport else { return nil }
        report.underruns += underrunsBefore
        return report
    }

    public func play(_ chunk: AudioChunk) throws(ReplyPlayerError) -> Bool {
        chunksQueued += 1
        if current == nil { reopenIfDue() }
        guard let output = current else { return true }
        do {
            return try output.play(chunk)
        } catch {
            if case .unplayableChunk = error { throw error }
            lose(output, error)
            return true
        }
    }

    public func cut() throws(ReplyPlayerError) {
        guard let output = current else { return }
        do { try output.cut() } catch { lose(output, error) }
    }

    public func replyEnded() throws(ReplyPlayerError) {
        guard let output = current else { return }
        do { try output.replyEnded() } catch { lose(output, error) }
    }

    public func reportDrained(to handler: @escaping @Sendable (Int) -> Void) {
        drained = handler
        hook(current)
    }

    public func markNextChunk(_ token: Int) { current?.markNextChunk(token) }

    public func reportHeard(to handler: @escaping @Sendable (_ token: Int, _ delay: Duration) -> Void) {
        heard = handler
        current?.reportHeard(to: handler)
    }

    public func finish() throws(ReplyPlayerError) {
        guard let output = current else { return }
        do { try output.finish() } catch { lose(output, error) }
    }

    private func hook(_ output: (any ReplyOutput)?) {
        guard let output, let drained else { return }
        let base = chunksBefore
        output.reportDrained { chunks in drained(base + chunks) }
    }

    private func lose(_ output: any ReplyOutput, _ error: ReplyPlayerError) {
        secondsBefore += Double(output.framesPlayed) / output.sampleRate.hertz
        framesCutBefore += output.framesCut
        if let report = output.jitterReport {
            underrunsBefore += report.underruns
            lastReport = JitterBufferReport(underruns: 0, preRoll: report.preRoll, largestPreRoll: report.largestPreRoll)
        }
        try? output.finish()
        current = nil
        losses += 1
        retryAt = now() + interval
        onChange("\(name) lost: \(error.message); replies are text only until it is back (tried again every \(Self.seconds(interval)))")
    }

    private func reopenIfDue() {
        guard let retryAt, now() >= retryAt else { return }
        do {
            let output = try open()
            chunksBefore = chunksQueued - 1
            current = output
            self.retryAt = nil
            hook(output)
            if let heard { output.reportHeard(to: heard) }
            onChange("\(name) is back")
        } catch {
            self.retryAt = now() + interval
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        let value = (duration.seconds * 1000).rounded() / 1000
        return value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
