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

    /// Converts `source` to Int16 into `destination` (which must be at least as long), exactly as
    /// ``int16(_:)`` does each sample (every kernel set converts identically).
    public static func int16(_ source: UnsafeBufferPointer<Float>, into destination: UnsafeMutableBufferPointer<Int16>, kernels: DSPKernels = .best) {
        precondition(destination.count >= source.count, "destination shorter than source")
        guard let input = source.baseAddress, let output = destination.baseAddress else { return }
        var peaks = ConversionPeaks()
        kernels.convertToInt16(input, output, source.count, &peaks)
    }

    /// Converts to Int16 like ``int16(_:into:)`` and measures on the way: the largest |x| before
    /// rounding and the largest |sample| after it (0 … 32768).
    public static func int16Measuring(_ source: UnsafeBufferPointer<Float>, into destination: UnsafeMutableBufferPointer<Int16>, kernels: DSPKernels = .best) -> (floatPeak: Float, int16Peak: Int) {
        precondition(destination.count >= source.count, "destination shorter than source")
        guard let input = source.baseAddress, let output = destination.baseAddress else { return (0, 0) }
        var peaks = ConversionPeaks()
        kernels.convertToInt16(input, output, source.count, &peaks)
        return (peaks.input, Int(peaks.output))
    }

    /// The vector kernel behind the Float → Int16 conversions.
    ///
    /// Implementation notes: NaN lanes become 0, lanes are clamped to [−32768, 32767] and rounded
    /// to nearest-even by adding 1.5·2²³ (the default x86-64 target has no vector round
    /// instruction); the sum's bit pattern is then 0x4B40_0000 plus the integer, so a subtraction
    /// yields it without a float-to-integer conversion. Clamping before rounding gives the same
    /// result as ``int16(_:)``'s round-then-saturate for every input; the tail uses ``int16(_:)``.
    /// Only lane-wise operators appear: the generic SIMD conversions and `pointwiseMax` compile to
    /// scalar loops on this toolchain.
    @inlinable
    static func convertToInt16(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Int16>, count: Int, measuring: Bool) -> (floatPeak: Float, int16Peak: Int) {
        let scale = SIMD8<Float>(repeating: 32768)
        let low = SIMD8<Float>(repeating: -32768)
        let high = SIMD8<Float>(repeating: 32767)
        let magic = SIMD8<Float>(repeating: 12_582_912)
        let magicBits = SIMD8<Int32>(repeating: 0x4B40_0000)
        let signMask = SIMD8<UInt32>(repeating: 0x7FFF_FFFF)
        var floatPeak = SIMD8<Float>()
        var intPeak = SIMD8<Float>()
        var i = 0
        while i + 8 <= count {
            let x = UnsafeRawPointer(input + i).loadUnaligned(as: SIMD8<Float>.self)
            var scaled = (x * scale).replacing(with: 0, where: x .!= x)
            scaled = scaled.replacing(with: low, where: scaled .< low)
            scaled = scaled.replacing(with: high, where: scaled .> high)
            let biased = scaled + magic
            let integers = unsafeBitCast(biased, to: SIMD8<Int32>.self) &- magicBits
            UnsafeMutableRawPointer(output + i).storeBytes(of: SIMD8<Int16>(truncatingIfNeeded: integers), as: SIMD8<Int16>.self)
            if measuring {
                // NaN compares false, so it never becomes a peak.
                let magnitude = unsafeBitCast(unsafeBitCast(x, to: SIMD8<UInt32>.self) & signMask, to: SIMD8<Float>.self)
                floatPeak = floatPeak.replacing(with: magnitude, where: magnitude .> floatPeak)
                let rounded = biased - magic
                let roundedMagnitude = unsafeBitCast(unsafeBitCast(rounded, to: SIMD8<UInt32>.self) & signMask, to: SIMD8<Float>.self)
                intPeak = intPeak.replacing(with: roundedMagnitude, where: roundedMagnitude .> intPeak)
            }
            i += 8
        }
        var floatMax: Float = 0
        var intMax = 0
        if measuring {
            for lane in 0..<8 {
                if floatPeak[lane] > floatMax { floatMax = floatPeak[lane] }
                if Int(intPeak[lane]) > intMax { intMax = Int(intPeak[lane]) }
            }
        }
        while i < count {
            let value = int16(input[i])
            output[i] = value
            if measuring {
                let magnitude = input[i].magnitude
                if magnitude > floatMax { floatMax = magnitude }
                let integer = Int(value.magnitude)
                if integer > intMax { intMax = integer }
            }
            i += 1
        }
        return (floatMax, intMax)
    }

    /// Eight samples x / 32768, exactly as ``float(_:)-(Int16)``.
    ///
    /// Integer to float without a conversion instruction (the generic SIMD conversion compiles to
    /// a scalar loop): 0x4B40_0000 + x is the bit pattern of 1.5·2²³ + x, exact for |x| < 2²²;
    /// subtracting 1.5·2²³ leaves x exactly, and the scale by 2⁻¹⁵ is exact too.
    @inlinable @inline(__always)
    public static func float(_ x: SIMD8<Int16>) -> SIMD8<Float> {
        let biased = unsafeBitCast(SIMD8<Int32>(truncatingIfNeeded: x) &+ SIMD8<Int32>(repeating: 0x4B40_0000), to: SIMD8<Float>.self)
        return (biased - SIMD8<Float>(repeating: 12_582_912)) * SIMD8<Float>(repeating: 1 / 32768)
    }

    /// Converts `source` to Float into `destination` (which must be at least as long), exactly
    /// ``float(_:)-(Int16)`` (x / 32768) for every sample (every kernel set converts identically).
    public static func float(_ source: UnsafeBufferPointer<Int16>, into destination: UnsafeMutableBufferPointer<Float>, kernels: DSPKernels = .best) {
        precondition(destination.count >= source.count, "destination shorter than source")
        guard let input = source.baseAddress, let output = destination.baseAddress else { return }
        kernels.convertToFloat(input, output, source.count)
    }
}
