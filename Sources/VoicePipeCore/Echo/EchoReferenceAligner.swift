import Synchronization

/// Why an echo reference aligner could not be built.
public enum EchoReferenceError: SystemCodedError, Sendable, Hashable {
    /// The speaker's rate cannot be converted to the capture rate by the built-in resampler.
    case unsupportedRate(SampleRate, ResamplerError)
    /// An option out of range: which one, and what it must be.
    case invalidOption(String)

    public var code: SystemErrorCode? { nil }

    public var message: String {
        switch self {
        case .unsupportedRate(let rate, let error):
            "the speaker's audio at \(rate) cannot be used as an echo reference: \(error)"
        case .invalidOption(let detail):
            "the echo reference aligner cannot be set up: \(detail)"
        }
    }
}

/// How an ``EchoReferenceAligner`` keeps and aligns its reference.
public struct EchoReferenceOptions: Sendable, Hashable {
    /// Seconds of reference kept for a capture block to look back on (at least 0.5).
    public var historySeconds: Double
    /// Seconds of (frame position, instant) pairs each clock's line is fitted over: the longer,
    /// the less the stamps' jitter moves the reference (two minutes of ±2 ms keeps it within
    /// about half a sample at 16 kHz, one standard deviation).
    public var clockWindowSeconds: Double
    /// Seconds a clock's pairs must span before its measured rate replaces the nominal one.
    public var minimumClockSpanSeconds: Double
    /// Whether the reference follows the measured drift between the two clocks; off, it keeps the
    /// offset of the first aligned block and advances one sample per captured sample.
    public var compensatesDrift: Bool
    /// The longest period the render thread hands over in one piece; longer ones are split.
    public var maximumPeriodFrames: Int
    /// Seconds of periods the handoff holds while the capture side has not collected them.
    public var handoffSeconds: Double

    public init(historySeconds: Double = 1, clockWindowSeconds: Double = 120, minimumClockSpanSeconds: Double = 5,
                compensatesDrift: Bool = true, maximumPeriodFrames: Int = 4_096, handoffSeconds: Double = 2) {
        self.historySeconds = historySeconds
        self.clockWindowSeconds = clockWindowSeconds
        self.minimumClockSpanSeconds = minimumClockSpanSeconds
        self.compensatesDrift = compensatesDrift
        self.maximumPeriodFrames = maximumPeriodFrames
        self.handoffSeconds = handoffSeconds
    }
}

/// The far-end reference on the capture's timeline: for each captured block, the samples the
/// speaker was playing when that block was captured, at the capture rate, mono.
///
/// ```
///  render thread:   PlayedPeriod (device rate, stamp: frame position, instant heard)
///                     │ submit: copy header + samples, never waits
///                     ▼
///                  AudioRing (single producer, single consumer; full: the period is dropped, counted)
///                     │
///  capture thread:    ▼ reference(for:into:), once per captured block
///                  drain ─▶ playback clock line (instant ↔ speaker frame)
///                       └▶ BuiltInResampler (speaker rate → capture rate) ─▶ history ring (≥ 0.5 s)
///                  block stamp ─▶ capture clock line (capture frame ↔ instant)
///                  capture frame n ─▶ instant ─▶ speaker frame ─▶ history position
///                     ─▶ windowed-sinc read at that fractional position, one step per captured
///                        sample, the step = speaker rate / capture rate as measured (the drift)
/// ```
///
/// Both clocks are least-squares lines (``DeviceClockEstimator``) through their own stamps, so
/// jitter of a few milliseconds in the instants does not move the reference, and the drift between
/// the two devices is their measured rates' ratio (``driftPPM``). Nothing played (before the first
/// period, in a gap, beyond what has arrived or older than the history) reads as silence. Gaps in
/// the speaker's frame positions (dropped periods) are filled with silence; a position that goes
/// back (a new stream) or a period at another rate (a speaker opened again, at the rate it came
/// back in) starts the reference afresh; a capture position that goes back (a microphone opened
/// again) starts the capture's clock line afresh.
///
/// Why a fractional reader of its own and not libsamplerate's varying ratio: this type is Core
/// (no C libraries), and the read position comes from the clocks for every block, so the
/// reference cannot slip even if a ratio were integrated with rounding; the fixed conversion to
/// the capture rate is the package's `BuiltInResampler`, and the drift (parts per million) is a
/// 16-tap Kaiser-windowed sinc between its samples, exact at whole-sample positions.
///
/// Everything is allocated in `init`; neither side allocates per period or per block (only a
/// speaker's change of rate builds a new converter, once).
public final class EchoReferenceAligner: @unchecked Sendable {
    // Safety: `submit` (the producer) uses only `staging`, the ring's producer side and the
    // atomic counters; every other stored property is used by the consumer (`reference(for:into:)`
    // and the queries), which runs on one thread at a time. The ring publishes records whole.

    /// The speaker's rate it was built for. A speaker opened again at another rate (a headset
    /// switching profile) is followed: its periods restart the reference at their own rate.
    public let playbackRate: SampleRate
    /// The rate of the captured blocks and of the reference.
    public let captureRate: SampleRate
    /// The options it was built with.
    public let options: EchoReferenceOptions

    private let ring: AudioRing
    private let staging: UnsafeMutableRawPointer
    private let stagingBytes: Int
    private let droppedCount = Atomic<Int>(0)
    private let rejectedCount = Atomic<Int>(0)

    /// The rate of the speaker's current stream, and its conversion to the capture rate.
    private var streamRate: SampleRate
    private var resampler: BuiltInResampler
    private var resampled: UnsafeMutablePointer<Float>
    private var resampledCapacity: Int
    /// A rate the built-in resampler refused; its periods read as silence.
    private var refusedRate: SampleRate?
    /// The last capture block's frame position: a block before it is a new capture stream.
    private var lastCaptureFrame: Int?
    private let periodBuffer: UnsafeMutablePointer<Float>
    private let zeros: UnsafeMutablePointer<Float>
    private let history: UnsafeMutablePointer<Float>
    private let historyCapacity: Int
    /// Reference samples produced so far (the absolute index of the next one).
    private var historyEnd = 0
    /// The first index of the current stream; earlier indices read as silence.
    private var segmentStart = 0
    /// The current stream: speaker frame `segmentFrame` is reference index `segmentStart`.
    private var segmentFrame = 0
    private var expectedFrame: Int?
    private var playbackClock: DeviceClockEstimator
    private var captureClock: DeviceClockEstimator
    /// Without drift compensation: reference index minus capture frame, fixed at the first block.
    private var lockedOffset: Double?
    private let table: UnsafeMutablePointer<Float>
    private static let halfTaps = 8
    private static let taps = 16
    private static let phases = 256
    private var gapFrames = 0
    private var restarts = 0
    private var rateSwitches = 0
    private var captureRestartCount = 0

    /// An aligner for a speaker at `playbackRate` and capture blocks at `captureRate`.
    /// - Throws: ``EchoReferenceError/unsupportedRate(_:_:)`` when the built-in resampler cannot
    ///   convert between the rates; ``EchoReferenceError/invalidOption(_:)`` for options out of range.
    public init(playbackRate: SampleRate, captureRate: SampleRate = 16_000, options: EchoReferenceOptions = EchoReferenceOptions()) throws(EchoReferenceError) {
        guard options.historySeconds >= 0.5, options.historySeconds <= 60 else {
            throw .invalidOption("the history must be 0.5 to 60 seconds, not \(options.historySeconds)")
        }
        guard options.maximumPeriodFrames >= 1, options.maximumPeriodFrames <= 1 << 20 else {
            throw .invalidOption("the longest period must be 1 to 1048576 frames, not \(options.maximumPeriodFrames)")
        }
        guard options.handoffSeconds > 0, options.handoffSeconds <= 60 else {
            throw .invalidOption("the handoff must hold more than 0 and at most 60 seconds, not \(options.handoffSeconds)")
        }
        guard options.clockWindowSeconds >= 1, options.minimumClockSpanSeconds >= 0 else {
            throw .invalidOption("the clock window must be at least 1 second and the minimum span not negative")
        }
        do {
            resampler = try BuiltInResampler(inputRate: playbackRate, outputRate: captureRate)
        } catch {
            throw .unsupportedRate(playbackRate, error)
        }
        self.playbackRate = playbackRate
        streamRate = playbackRate
        self.captureRate = captureRate
        self.options = options
        let periodFrames = options.maximumPeriodFrames
        stagingBytes = Self.headerBytes + periodFrames * MemoryLayout<Float>.size
        staging = .allocate(byteCount: stagingBytes, alignment: 16)
        // Sized for 48 kHz at least, so a speaker that comes back faster still has the handoff's time.
        let handoffFrames = Int((options.handoffSeconds * max(playbackRate.hertz, 48_000)).rounded(.up))
        ring = AudioRing(capacity: handoffFrames * MemoryLayout<Float>.size + (handoffFrames / 16 + 2) * Self.headerBytes + stagingBytes)
        resampledCapacity = resampler.maxOutputFrames(forInputFrames: periodFrames)
        resampled = .allocate(capacity: resampledCapacity)
        periodBuffer = .allocate(capacity: periodFrames)
        zeros = .allocate(capacity: periodFrames)
        zeros.initialize(repeating: 0, count: periodFrames)
        historyCapacity = Int((options.historySeconds * captureRate.hertz).rounded(.up))
        history = .allocate(capacity: historyCapacity)
        history.initialize(repeating: 0, count: historyCapacity)
        playbackClock = DeviceClockEstimator(nominalRate: playbackRate, windowSeconds: options.clockWindowSeconds,
                                             minimumSpanSeconds: options.minimumClockSpanSeconds)
        captureClock = DeviceClockEstimator(nominalRate: captureRate, windowSeconds: options.clockWindowSeconds,
                                            minimumSpanSeconds: options.minimumClockSpanSeconds)
        table = Self.makeTable()
    }

    deinit {
        staging.deallocate()
        resampled.deallocate()
        periodBuffer.deallocate()
        zeros.deallocate()
        history.deallocate()
        table.deallocate()
    }

    // MARK: Render thread

    /// Render thread: hands over one period the speaker plays. Copies it and returns at once;
    /// never waits, never allocates. A period at a rate other than the stream's starts a new stream
    /// at that rate when the capture side collects it (one the built-in resampler cannot convert
    /// is refused there, counted in ``rejectedPeriods``); one that does not fit the handoff is
    /// dropped (counted in ``droppedPeriods``) and reads as silence.
    public func submit(_ period: PlayedPeriod) {
        let rate = period.sampleRate.hertz
        guard rate.isFinite, rate > 0 else {
            rejectedCount.add(1, ordering: .relaxed)
            return
        }
        guard let base = period.samples.baseAddress else { return }
        let limit = options.maximumPeriodFrames
        var offset = 0
        while offset < period.samples.count {
            let count = min(limit, period.samples.count - offset)
            let instant = period.stamp.instant + Int64((Double(offset) / rate * 1e9).rounded())
            let header = staging.assumingMemoryBound(to: Int64.self)
            header[0] = Int64(period.stamp.framePosition + offset)
            header[1] = instant
            header[2] = Int64(count)
            header[3] = Int64(bitPattern: rate.bitPattern)
            (staging + Self.headerBytes).copyMemory(from: base + offset, byteCount: count * MemoryLayout<Float>.size)
            let bytes = Self.headerBytes + count * MemoryLayout<Float>.size
            if !ring.write(UnsafeRawBufferPointer(start: staging, count: bytes)) {
                droppedCount.add(1, ordering: .relaxed)
            }
            offset += count
        }
    }

    /// Periods (or pieces of them) dropped because the capture side had not collected the handoff.
    public var droppedPeriods: Int { droppedCount.load(ordering: .relaxed) }
    /// Periods refused for a rate the built-in resampler cannot convert to ``captureRate``.
    public var rejectedPeriods: Int { rejectedCount.load(ordering: .relaxed) }

    // MARK: Capture thread

    /// Capture thread: writes the reference for the block stamped `stamp` (frame position and
    /// capture instant, at ``captureRate``) into `output`, one sample per captured sample.
    /// Collects the periods handed over since the last call first.
    public func reference(for stamp: CapturedBlockStamp, into output: UnsafeMutableBufferPointer<Float>) {
        collectPeriods()
        if let last = lastCaptureFrame, stamp.framePosition < last {
            // A capture device opened again counts its frames from nothing: a new capture line.
            captureRestartCount += 1
            captureClock.reset()
            lockedOffset = nil
        }
        lastCaptureFrame = stamp.framePosition
        captureClock.add(framePosition: stamp.framePosition, instant: stamp.instant)
        guard let start = output.baseAddress, output.count > 0 else { return }
        guard !playbackClock.isEmpty else {
            start.update(repeating: 0, count: output.count)
            return
        }
        let block = Double(stamp.framePosition)
        let shift = delayCorrection * captureRate.hertz
        let position: Double
        let step: Double
        let aligned = alignedPosition(ofCaptureFrame: block)
        if options.compensatesDrift {
            position = aligned - shift
            step = playbackClock.measuredRate() / streamRate.hertz / (captureClock.measuredRate() / captureRate.hertz)
        } else {
            let offset = lockedOffset ?? (aligned - block)
            lockedOffset = offset
            position = block + offset - shift
            step = 1
        }
        for index in 0..<output.count {
            start[index] = read(at: position + Double(index) * step)
        }
    }

    /// Seconds the reference is moved later than the stamps put it (negative: earlier), because
    /// the echo was measured that much later than the devices report (``EchoDelayEstimator``);
    /// capture thread. Kept within the history, less a quarter second for the canceller's filter.
    public var delayCorrection: Double = 0 {
        didSet {
            let limit = max(0, options.historySeconds - 0.25)
            delayCorrection = min(max(delayCorrection, -limit), limit)
        }
    }

    /// Drift of the speaker's clock against the capture clock in parts per million (positive: the
    /// speaker runs fast), once both clocks' pairs span ``EchoReferenceOptions/minimumClockSpanSeconds``.
    public var driftPPM: Double? {
        guard playbackClock.hasMeasuredRate, captureClock.hasMeasuredRate else { return nil }
        return (playbackClock.measuredRate() / streamRate.hertz / (captureClock.measuredRate() / captureRate.hertz) - 1) * 1e6
    }

    /// The speaker's frames per second measured against the monotonic clock.
    public var measuredPlaybackRate: Double { playbackClock.measuredRate() }
    /// The capture device's frames per second (at ``captureRate``) measured against the monotonic clock.
    public var measuredCaptureRate: Double { captureClock.measuredRate() }
    /// Speaker frames of silence put in for gaps between periods so far.
    public var gapFramesFilled: Int { gapFrames }
    /// Times the speaker's frame position went back (or its rate changed) and the reference started afresh.
    public var streamRestarts: Int { restarts }
    /// Times the speaker came back at another rate and the reference followed it.
    public var rateChanges: Int { rateSwitches }
    /// Times the capture's frame position went back (a microphone opened again) and its clock line started afresh.
    public var captureRestarts: Int { captureRestartCount }
    /// The rate of the speaker's current stream.
    public var currentPlaybackRate: SampleRate { streamRate }

    /// The reference index (fractional) of capture frame `frame`, through both clock lines.
    private func alignedPosition(ofCaptureFrame frame: Double) -> Double {
        let instant = captureClock.instant(ofFrame: frame)
        let speakerFrame = playbackClock.framePosition(atInstant: instant)
        return Double(segmentStart) + (speakerFrame - Double(segmentFrame)) * captureRate.hertz / streamRate.hertz
    }

    /// Moves every period in the handoff into the clock line and the history.
    private func collectPeriods() {
        var header: (Int64, Int64, Int64, Int64) = (0, 0, 0, 0)
        while ring.availableBytes >= Self.headerBytes {
            let got = withUnsafeMutableBytes(of: &header) { ring.read(into: $0) }
            guard got == Self.headerBytes else { return }
            let frames = Int(header.2)
            let framePosition = Int(header.0)
            let rate = SampleRate(hertz: Double(bitPattern: UInt64(bitPattern: header.3)))
            _ = ring.read(into: UnsafeMutableRawBufferPointer(start: periodBuffer, count: frames * MemoryLayout<Float>.size))
            guard rate == streamRate || follow(rate) else {
                rejectedCount.add(1, ordering: .relaxed)
                continue
            }
            accept(framePosition: framePosition, instant: header.1, samples: UnsafeBufferPointer(start: periodBuffer, count: frames))
        }
    }

    private func accept(framePosition: Int, instant: Int64, samples: UnsafeBufferPointer<Float>) {
        if let expected = expectedFrame {
            if framePosition < expected {
                restart(at: framePosition)
            } else if framePosition > expected {
                let gap = framePosition - expected
                if Double(gap) * captureRate.hertz / streamRate.hertz > Double(historyCapacity) {
                    // Longer than the history: nothing of the old stream would stay readable anyway.
                    gapFrames += gap
                    startSegment(at: framePosition)
                } else {
                    gapFrames += gap
                    var left = gap
                    while left > 0 {
                        let count = min(left, options.maximumPeriodFrames)
                        append(UnsafeBufferPointer(start: zeros, count: count))
                        left -= count
                    }
                }
            }
        } else {
            startSegment(at: framePosition)
        }
        playbackClock.add(framePosition: framePosition, instant: instant)
        append(samples)
        expectedFrame = framePosition + samples.count
    }

    /// A speaker opened again at `rate`: a new converter (allocated here, once per change) and a
    /// new stream. False, and the rate remembered, when the built-in resampler cannot convert it.
    private func follow(_ rate: SampleRate) -> Bool {
        guard rate != refusedRate else { return false }
        let converter: BuiltInResampler
        do {
            converter = try BuiltInResampler(inputRate: rate, outputRate: captureRate)
        } catch {
            refusedRate = rate
            return false
        }
        resampler = converter
        let capacity = converter.maxOutputFrames(forInputFrames: options.maximumPeriodFrames)
        if capacity > resampledCapacity {
            resampled.deallocate()
            resampled = .allocate(capacity: capacity)
            resampledCapacity = capacity
        }
        streamRate = rate
        rateSwitches += 1
        playbackClock = DeviceClockEstimator(nominalRate: rate, windowSeconds: options.clockWindowSeconds,
                                             minimumSpanSeconds: options.minimumClockSpanSeconds)
        expectedFrame = nil
        restarts += 1
        lockedOffset = nil
        return true
    }

    /// A new stream: its frame count has nothing to do with the old one's.
    private func restart(at framePosition: Int) {
        restarts += 1
        playbackClock.reset()
        lockedOffset = nil
        startSegment(at: framePosition)
    }

    private func startSegment(at framePosition: Int) {
        resampler.reset()
        segmentStart = historyEnd
        segmentFrame = framePosition
    }

    /// Converts speaker samples to the capture rate and appends them to the history.
    private func append(_ samples: UnsafeBufferPointer<Float>) {
        let produced: Int
        do {
            produced = try resampler.process(samples, into: UnsafeMutableBufferPointer(start: resampled, count: resampledCapacity))
        } catch {
            // Sized by maxOutputFrames in init, so the resampler cannot refuse: keep time with silence.
            produced = Int((Double(samples.count) * captureRate.hertz / streamRate.hertz).rounded())
            for index in 0..<min(produced, resampledCapacity) { resampled[index] = 0 }
        }
        for index in 0..<min(produced, resampledCapacity) {
            history[(historyEnd + index) % historyCapacity] = resampled[index]
        }
        historyEnd += produced
    }

    /// The reference sample at absolute index `index`, silence where there is none.
    @inline(__always)
    private func sample(_ index: Int) -> Float {
        guard index >= segmentStart, index < historyEnd, index >= historyEnd - historyCapacity else { return 0 }
        return history[index % historyCapacity]
    }

    /// The reference at fractional index `position`: the sample itself at whole positions,
    /// otherwise the windowed sinc over 16 samples around it.
    private func read(at position: Double) -> Float {
        var whole = position.rounded(.down)
        var fraction = position - whole
        if fraction < 1e-6 {
            fraction = 0
        } else if fraction > 1 - 1e-6 {
            whole += 1
            fraction = 0
        }
        guard whole.magnitude < 1e15 else { return 0 }
        let base = Int(whole)
        if fraction == 0 { return sample(base) }
        if base + Self.halfTaps < segmentStart || base - Self.halfTaps >= historyEnd { return 0 }
        let phase = fraction * Double(Self.phases)
        let row = min(Int(phase), Self.phases - 1)
        let weight = Float(phase - Double(row))
        let lower = table + row * Self.taps
        let upper = lower + Self.taps
        var sum: Float = 0
        for tap in 0..<Self.taps {
            let coefficient = lower[tap] + weight * (upper[tap] - lower[tap])
            sum += coefficient * sample(base - Self.halfTaps + 1 + tap)
        }
        return sum
    }

    /// Rows of 16 taps for fractions 0, 1/256, …, 1: a Kaiser-windowed sinc (β = 7), each row
    /// summing to 1, row 0 the unit impulse on the sample itself and row 256 on the next one.
    private static func makeTable() -> UnsafeMutablePointer<Float> {
        let table = UnsafeMutablePointer<Float>.allocate(capacity: (phases + 1) * taps)
        let beta = 7.0
        let norm = Elementary.besselI0(beta)
        for row in 0...phases {
            let fraction = Double(row) / Double(phases)
            var coefficients = [Double](repeating: 0, count: taps)
            for tap in 0..<taps {
                // Tap `tap` weighs the sample at offset (tap - halfTaps + 1) from the whole position.
                let distance = Double(tap - halfTaps + 1) - fraction
                if distance == 0 {
                    coefficients[tap] = 1
                } else if row == 0 || row == phases {
                    coefficients[tap] = 0
                } else {
                    let x = Double.pi * distance
                    let ratio = distance / Double(halfTaps)
                    let window = ratio.magnitude >= 1 ? 0 : Elementary.besselI0(beta * (1 - ratio * ratio).squareRoot()) / norm
                    coefficients[tap] = Elementary.sin(x) / x * window
                }
            }
            let total = coefficients.reduce(0, +)
            for tap in 0..<taps { table[row * taps + tap] = Float(coefficients[tap] / total) }
        }
        return table
    }

    private static let headerBytes = 4 * MemoryLayout<Int64>.size
}
