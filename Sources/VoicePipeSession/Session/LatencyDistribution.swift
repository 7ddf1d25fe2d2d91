/// The spread of a set of durations by the nearest-rank method (the ⌈p·n⌉-th smallest, so every
/// figure is one of the values, never an average of two): what a summary of many turns shows.
public struct LatencyDistribution: Sendable, Hashable {
    public let count: Int
    public let median: Duration
    public let p90: Duration
    public let p95: Duration
    public let p99: Duration
    public let max: Duration

    /// Nil for no values.
    public init?(_ values: [Duration]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        func rank(_ fraction: Double) -> Duration {
            let rank = Int((fraction * Double(sorted.count)).rounded(.up))
            return sorted[Swift.min(Swift.max(rank, 1), sorted.count) - 1]
        }
        count = sorted.count
        median = rank(0.5)
        p90 = rank(0.9)
        p95 = rank(0.95)
        p99 = rank(0.99)
        max = sorted[sorted.count - 1]
    }
}
