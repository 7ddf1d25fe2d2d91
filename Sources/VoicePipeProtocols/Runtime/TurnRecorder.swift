import VoicePipeCore
import VoicePipeSession

/// What one turn's audio was, once the turn ended: its statistics and its reply audio.
struct RecordedTurnAudio: Sendable, Hashable {
    /// Samples received, at whatever rates they came.
    var sampleCount: Int
    /// Their duration, exact per rate (Σ samples / rate).
    var duration: Duration
    /// The rate of the turn's last chunk (every chunk's, unless the client changed it mid-turn).
    var sampleRate: Int
    /// Largest |sample|, 0 … 32768.
    var peak: Int
    /// Root mean square of the samples, full scale 1.0.
    var rms: Double
    /// The turn's audio at ``TurnRecorder/replyRate``: exactly round(n × 24 000 / rate) per
    /// stretch of one rate; empty when a rate could not be resampled.
    var reply: [Int16]
    /// A rate the resampler refused (outside 1 kHz … 768 kHz): the reply then has no audio.
    var unplayableRate: Int?

    /// True when every sample was zero.
    var isDigitalSilence: Bool { peak == 0 }
}

/// The audio of the turn in progress: counted, measured and resampled to the reply rate as it
/// arrives, so ending a turn only flushes the resampler.
///
/// A reference type because it owns a ``BuiltInResampler`` (itself a class) and scratch buffers;
/// the runtime core holds exactly one and never shares it.
final class TurnRecorder {
    /// The rate replies are sent at.
    static let replyRate = 24_000

    private var sampleCount = 0
    /// Duration of the stretches at earlier rates in this turn.
    private var earlierDuration: Duration = .zero
    /// Samples at ``currentRate`` in this turn.
    private var currentRateSamples = 0
    private var currentRate: Int?
    /// The rate of the last chunk this turn.
    private var lastRate: Int?
    private var peak = 0
    private var sumOfSquares = 0.0
    private var reply: [Int16] = []
    private var unplayableRate: Int?
    /// The resampler for ``currentRate``; kept across turns (a flush starts a new stream).
    private var resampler: BuiltInResampler?
    private var resamplerRate: Int?
    private var floats: [Float] = []
    private var resampled: [Float] = []

    /// Audio held for the turn so far.
    var duration: Duration { earlierDuration + .samples(currentRateSamples, at: SampleRate(hertz: Double(currentRate ?? 1))) }

    /// Bytes of the turn's audio held (resampled to the reply rate, as Int16).
    var heldBytes: Int { reply.count * MemoryLayout<Int16>.size }

    /// True when nothing is held.
    var isEmpty: Bool { sampleCount == 0 }

    /// Adds one chunk (a positive rate, as the codec guarantees) to the turn.
    /// - Returns: the chunk's peak, the largest |sample| (0 … 32768).
    func append(_ samples: [Int16], sampleRate: Int) -> Int {
        if sampleRate != currentRate {
            endStretch()
            currentRate = sampleRate
            prepareResampler(for: sampleRate)
        }
        lastRate = sampleRate
        var chunkPeak = 0
        var squares = 0.0
        for sample in samples {
            let value = Int(sample)
            chunkPeak = max(chunkPeak, abs(value))
            squares += Double(value * value)
        }
        peak = max(peak, chunkPeak)
        sumOfSquares += squares
        sampleCount += samples.count
        currentRateSamples += samples.count
        resample(samples)
        return chunkPeak
    }

    /// Ends the turn: flushes the resampler and returns what the turn held; the recorder is then
    /// empty, ready for the next turn.
    func finish() -> RecordedTurnAudio {
        endStretch()
        let rms = sampleCount > 0 ? (sumOfSquares / Double(sampleCount)).squareRoot() / 32_768 : 0
        let recorded = RecordedTurnAudio(
            sampleCount: sampleCount, duration: earlierDuration, sampleRate: lastRate ?? AudioFormat.captureTarget.sampleRate.roundedHertz,
            peak: peak, rms: rms, reply: unplayableRate == nil ? reply : [], unplayableRate: unplayableRate)
        clear()
        return recorded
    }

    /// Drops what the turn held (audio without speech past the turn limit).
    func discard() {
        resampler?.reset()
        clear()
    }

    /// Closes the stretch at the current rate: its duration is counted, its resampler flushed.
    private func endStretch() {
        guard let rate = currentRate else { return }
        earlierDuration += .samples(currentRateSamples, at: SampleRate(hertz: Double(rate)))
        currentRateSamples = 0
        currentRate = nil
        guard let resampler, unplayableRate == nil else { return }
        if resampled.count < resampler.maxFlushFrames { resampled = [Float](repeating: 0, count: resampler.maxFlushFrames) }
        let produced = resampled.withUnsafeMutableBufferPointer { output in
            (try? resampler.flush(into: output)) ?? 0
        }
        appendReply(produced)
    }

    private func prepareResampler(for rate: Int) {
        guard rate != resamplerRate || resampler == nil else { return }
        resampler = try? BuiltInResampler(inputRate: SampleRate(hertz: Double(rate)), outputRate: SampleRate(hertz: Double(Self.replyRate)))
        resamplerRate = rate
        if resampler == nil, unplayableRate == nil { unplayableRate = rate }
    }

    private func resample(_ samples: [Int16]) {
        guard let resampler, unplayableRate == nil, !samples.isEmpty else { return }
        if floats.count < samples.count { floats = [Float](repeating: 0, count: samples.count) }
        let capacity = resampler.maxOutputFrames(forInputFrames: samples.count)
        if resampled.count < capacity { resampled = [Float](repeating: 0, count: capacity) }
        let count = samples.count
        let produced = samples.withUnsafeBufferPointer { input in
            floats.withUnsafeMutableBufferPointer { converted in
                SampleConversion.float(input, into: converted)
                return resampled.withUnsafeMutableBufferPointer { output in
                    // Cannot throw: the output holds maxOutputFrames for this input.
                    (try? resampler.process(UnsafeBufferPointer(rebasing: converted[0..<count]), into: output)) ?? 0
                }
            }
        }
        appendReply(produced)
    }

    /// Appends the first `count` resampled frames to the reply as Int16.
    private func appendReply(_ count: Int) {
        guard count > 0 else { return }
        let start = reply.count
        reply.append(contentsOf: repeatElement(0, count: count))
        resampled.withUnsafeBufferPointer { source in
            reply.withUnsafeMutableBufferPointer { destination in
                SampleConversion.int16(UnsafeBufferPointer(rebasing: source[0..<count]),
                                       into: UnsafeMutableBufferPointer(rebasing: destination[start..<(start + count)]))
            }
        }
    }

    private func clear() {
        sampleCount = 0
        earlierDuration = .zero
        currentRateSamples = 0
        currentRate = nil
        lastRate = nil
        peak = 0
        sumOfSquares = 0
        reply = []
        unplayableRate = nil
    }
}
