/// A device's frame clock measured against the monotonic clock: a least-squares line through
/// (instant, frame position) pairs over a sliding window of seconds.
///
/// Pairs are pooled into bins of ``binSeconds`` (the mean instant and mean position of the pairs
/// in the bin, weighted by their count), so the window holds a bounded number of points whatever
/// the block size, and the fit is the same least-squares line the raw pairs would give within a
/// bin's width. Jitter of a few milliseconds in the instants averages out: the slope's error falls
/// as the window fills. Until the pairs span ``minimumSpanSeconds`` the line has the nominal rate through the mean pair.
///
/// A device whose stamps leave the line for good (a closed bin further than
/// ``restartResidualSeconds`` from it, ``restartBins`` bins in a row) starts the line again from
/// the newest of them: the stamps of a device without a clock of its own (ALSA's file plugin) settle
/// 30–40 ms away from where they began as its buffers fill, and a line through both would creep
/// by a millisecond a second for the whole window, moving the echo reference with it and reading
/// as drift (+55 ppm measured) that is not there.
///
/// Implementation notes: storage is allocated once in `init`; ``add(framePosition:instant:)``
/// and the queries never allocate. Times are seconds since the first pair, frames are counted
/// from the first pair's position, both as `Double` (exact to well under a nanosecond for days).
public struct DeviceClockEstimator: Sendable {
    /// The rate the device was opened at.
    public let nominalRate: SampleRate
    /// Width of a bin in seconds.
    public let binSeconds: Double
    /// Seconds of pairs the fit uses at most.
    public let windowSeconds: Double
    /// Seconds the pairs must span before the fitted slope replaces the nominal rate.
    public let minimumSpanSeconds: Double
    /// How far (seconds) a closed bin's mean pair may lie from the line before it counts against it.
    public let restartResidualSeconds: Double
    /// Closed bins in a row that lie off the line before it starts again from them.
    public let restartBins: Int
    /// Times the line started again because the stamps had left it.
    public private(set) var restarts = 0
    private var offLine = 0

    private var originInstant: Int64 = 0
    private var originFrame: Int = 0
    private var hasOrigin = false
    /// Bins, oldest first from `firstBin`; `binCount` of them are in use.
    private var binTime: [Double]
    private var binFrame: [Double]
    private var binWeight: [Double]
    private var binIndex: [Int]
    private var firstBin = 0
    private var binCount = 0
    /// The fitted line: frame = intercept + slope * (time - centre), in frames and seconds.
    private var slope: Double
    private var centreTime = 0.0
    private var centreFrame = 0.0
    private var fitBins = -1
    /// Sums over the closed bins (all but the newest), relative to the oldest bin's mean pair.
    private var closed: (weight: Double, time: Double, frame: Double, timeTime: Double, timeFrame: Double) = (0, 0, 0, 0, 0)
    private var closedBins = -1
    private var closedFirst = -1
    private var referenceTime = 0.0
    private var referenceFrame = 0.0

    /// A clock with no pairs yet.
    /// - Parameters:
    ///   - nominalRate: the device's rate; the line's slope until the window has two bins.
    ///   - windowSeconds: seconds of pairs the fit uses (at least one bin's width).
    ///   - minimumSpanSeconds: seconds the pairs must span before the fitted slope is used; until
    ///     then a few milliseconds of jitter over a short span would swing it by far more than any drift.
    ///   - binSeconds: width of a bin (0.1 s keeps 1 200 bins for two minutes).
    ///   - restartResidualSeconds: a closed bin this far off the line counts against it; 4 ms is
    ///     ten times what ±1 ms of jitter leaves in a 0.1 s bin of 10 ms stamps, and more than
    ///     1 000 ppm of drift moves the nominal line in the first 5 s.
    ///   - restartBins: closed bins in a row off the line before it starts again (one late
    ///     stamp moves one bin; three in a row are the stamps themselves).
    public init(nominalRate: SampleRate, windowSeconds: Double = 120, minimumSpanSeconds: Double = 5, binSeconds: Double = 0.1,
                restartResidualSeconds: Double = 0.004, restartBins: Int = 3) {
        self.nominalRate = nominalRate
        self.restartResidualSeconds = restartResidualSeconds
        self.restartBins = max(1, restartBins)
        self.minimumSpanSeconds = max(minimumSpanSeconds, 0)
        self.binSeconds = binSeconds > 0 ? binSeconds : 0.1
        self.windowSeconds = max(windowSeconds, self.binSeconds)
        let capacity = Int((self.windowSeconds / self.binSeconds).rounded(.up)) + 1
        binTime = Array(repeating: 0, count: capacity)
        binFrame = Array(repeating: 0, count: capacity)
        binWeight = Array(repeating: 0, count: capacity)
        binIndex = Array(repeating: 0, count: capacity)
        slope = nominalRate.hertz
    }

    /// Whether any pair has been added.
    public var isEmpty: Bool { !hasOrigin }

    /// Seconds the pairs in the window span (0 with fewer than two bins).
    public var spanSeconds: Double {
        guard binCount > 1 else { return 0 }
        return Double(bin(binCount - 1).index - bin(0).index) * binSeconds
    }

    /// Frames per second of the device measured against the monotonic clock (the nominal rate
    /// until the window has two bins).
    public mutating func measuredRate() -> Double {
        refit()
        return slope
    }

    /// The measured rate's departure from the nominal rate, in parts per million.
    public mutating func offsetPPM() -> Double {
        (measuredRate() / nominalRate.hertz - 1) * 1e6
    }

    /// Whether the pairs span ``minimumSpanSeconds``, so ``measuredRate()`` is a measurement.
    public var hasMeasuredRate: Bool { binCount > 1 && spanSeconds >= minimumSpanSeconds }

    /// Forgets every pair (a new stream, whose frame count starts again).
    public mutating func reset() {
        hasOrigin = false
        firstBin = 0
        binCount = 0
        fitBins = -1
        closedBins = -1
        offLine = 0
        slope = nominalRate.hertz
        centreTime = 0
        centreFrame = 0
    }

    /// Adds one (frame position, instant) pair.
    public mutating func add(framePosition: Int, instant: Int64) {
        if !hasOrigin {
            hasOrigin = true
            originInstant = instant
            originFrame = framePosition
        }
        let time = Double(instant - originInstant) * 1e-9
        let frame = Double(framePosition - originFrame)
        let index = Int((time / binSeconds).rounded(.down))
        let capacity = binTime.count
        if binCount > 0, bin(binCount - 1).index == index {
            let slot = (firstBin + binCount - 1) % capacity
            binTime[slot] += time
            binFrame[slot] += frame
            binWeight[slot] += 1
        } else {
            if binCount > 1 { checkLastClosedBin() }
            if binCount == capacity {
                firstBin = (firstBin + 1) % capacity
                binCount -= 1
            }
            let slot = (firstBin + binCount) % capacity
            binTime[slot] = time
            binFrame[slot] = frame
            binWeight[slot] = 1
            binIndex[slot] = index
            binCount += 1
        }
        // Bins older than the window leave it.
        let newest = index
        while binCount > 1, Double(newest - bin(0).index) * binSeconds > windowSeconds {
            firstBin = (firstBin + 1) % capacity
            binCount -= 1
        }
        fitBins = -1
    }

    /// Counts the newest bin (about to close) against the line through the bins before it, and
    /// starts the line again from that bin once ``restartBins`` in a row lie off it.
    private mutating func checkLastClosedBin() {
        let newest = bin(binCount - 1)
        // The line without the newest bin: the bins before it alone.
        binCount -= 1
        fitBins = -1
        refit()
        let expected = centreFrame + slope * (newest.time / newest.weight - centreTime)
        let residual = abs(newest.frame / newest.weight - expected) / nominalRate.hertz
        binCount += 1
        fitBins = -1
        offLine = residual > restartResidualSeconds ? offLine + 1 : 0
        guard offLine >= restartBins else { return }
        // Keep only the newest bin: the stamps may still be settling, and any bin of the way
        // there left in the window would tilt the line for as long as the window holds it.
        firstBin = (firstBin + binCount - 1) % binTime.count
        binCount = 1
        closedBins = -1
        offLine = 0
        restarts += 1
    }

    /// The device's frame position (fractional) at `instant` (monotonic nanoseconds) on the fitted line.
    public mutating func framePosition(atInstant instant: Double) -> Double {
        refit()
        let time = (instant - Double(originInstant)) * 1e-9
        return Double(originFrame) + centreFrame + slope * (time - centreTime)
    }

    /// The instant (monotonic nanoseconds, fractional) of frame `frame` on the fitted line.
    public mutating func instant(ofFrame frame: Double) -> Double {
        refit()
        let time = centreTime + (frame - Double(originFrame) - centreFrame) / slope
        return Double(originInstant) + time * 1e9
    }

    private func bin(_ offset: Int) -> (time: Double, frame: Double, weight: Double, index: Int) {
        let slot = (firstBin + offset) % binTime.count
        return (binTime[slot], binFrame[slot], binWeight[slot], binIndex[slot])
    }

    /// Recomputes the line when pairs were added since the last fit: weighted least squares over
    /// the bins' mean pairs. The closed bins' sums (relative to the oldest bin, for precision) are
    /// recomputed only when a bin closes or leaves the window; the open bin is added to them here.
    private mutating func refit() {
        guard fitBins < 0 else { return }
        fitBins = binCount
        guard binCount > 0 else { return }
        if closedBins != binCount - 1 || closedFirst != firstBin {
            closedBins = binCount - 1
            closedFirst = firstBin
            let oldest = bin(0)
            referenceTime = oldest.time / oldest.weight
            referenceFrame = oldest.frame / oldest.weight
            closed = (0, 0, 0, 0, 0)
            for offset in 0..<closedBins {
                let entry = bin(offset)
                let time = entry.time / entry.weight - referenceTime
                let frame = entry.frame / entry.weight - referenceFrame
                closed.weight += entry.weight
                closed.time += entry.weight * time
                closed.frame += entry.weight * frame
                closed.timeTime += entry.weight * time * time
                closed.timeFrame += entry.weight * time * frame
            }
        }
        let open = bin(binCount - 1)
        let openTime = open.time / open.weight - referenceTime
        let openFrame = open.frame / open.weight - referenceFrame
        let weight = closed.weight + open.weight
        let sumTime = closed.time + open.weight * openTime
        let sumFrame = closed.frame + open.weight * openFrame
        let meanTime = sumTime / weight
        let meanFrame = sumFrame / weight
        centreTime = referenceTime + meanTime
        centreFrame = referenceFrame + meanFrame
        guard hasMeasuredRate else {
            slope = nominalRate.hertz
            return
        }
        let sxx = closed.timeTime + open.weight * openTime * openTime - weight * meanTime * meanTime
        let sxy = closed.timeFrame + open.weight * openTime * openFrame - weight * meanTime * meanFrame
        slope = sxx > 0 ? sxy / sxx : nominalRate.hertz
        if !(slope > 0) || !slope.isFinite { slope = nominalRate.hertz }
    }
}
