/// A sample encoding VoicePipe reads: converts itself to Float32 at full scale 1.0.
///
/// The conventions, written once (and tested exhaustively):
/// - Int16 → Float is x / 32768 (exact); Int32 → Float is x / 2³¹.
/// - Float input passes through; NaN becomes 0 and values past full scale (±∞ included) are clamped
///   to ±1, so nothing non-finite or unbounded ever reaches a filter.
/// - Float → Int16 (``SampleConversion/int16(_:)``) scales by 32768, rounds to nearest-even and
///   saturates; NaN becomes 0.
public protocol PCMSample: Sendable {
    /// The ``SampleType`` this Swift type stores.
    static var sampleType: SampleType { get }
    /// The sample as Float32 at full scale 1.0, sanitised as described on ``PCMSample``.
    var normalized: Float { get }
}

extension Int16: PCMSample {
    public static var sampleType: SampleType { .int16 }
    @inlinable public var normalized: Float { Float(self) * (1 / 32768) }
}

extension Int32: PCMSample {
    public static var sampleType: SampleType { .int32 }
    @inlinable public var normalized: Float { Float(self) * (1 / 2_147_483_648) }
}

extension Float: PCMSample {
    public static var sampleType: SampleType { .float32 }
    @inlinable public var normalized: Float {
        if isNaN { return 0 }
        return Swift.min(Swift.max(self, -1), 1)
    }
}

extension Double: PCMSample {
    public static var sampleType: SampleType { .float64 }
    @inlinable public var normalized: Float {
        if isNaN { return 0 }
        return Float(Swift.min(Swift.max(self, -1), 1))
    }
}

/// Bulk sample conversions between Float32 and Int16.
public enum SampleConversion {
    /// Float (full scale 1.0) to Int16: ×32768, round to nearest-even, saturate; NaN → 0.
    @inlinable
    public static func int16(_ x: Float) -> Int16 {
        let scaled = (x * 32768).rounded(.toNearestOrEven)
        if scaled >= 32767 { return 32767 }
        if scaled <= -32768 { return -32768 }
        if scaled.isNaN { return 0 }
        return Int16(scaled)
    }

    /// Int16 to Float (full scale 1.0): x / 32768, exact.
    @inlinable
    public static func float(_ x: Int16) -> Float {
        Float(x) * (1 / 32768)
    }

    /// Converts `source` to Int16 into `destination` (which must be at least as long).
    @inlinable
    public static func int16(_ source: UnsafeBufferPointer<Float>, into destination: UnsafeMutableBufferPointer<Int16>) {
        precondition(destination.count >= source.count, "destination shorter than source")
        for i in source.indices {
            destination[i] = int16(source[i])
        }
    }

    /// Converts `source` to Float into `destination` (which must be at least as long).
    @inlinable
    public static func float(_ source: UnsafeBufferPointer<Int16>, into destination: UnsafeMutableBufferPointer<Float>) {
        precondition(destination.count >= source.count, "destination shorter than source")
        for i in source.indices {
            destination[i] = float(source[i])
        }
    }
}
