/// The level of one frame of capture output: how loud it is, and whether it is digital silence.
///
/// A dead microphone delivers exact zeros; a quiet room delivers small non-zero noise. The two
/// differ in ``isDigitalSilence`` even when the noise is too quiet to survive Int16 rounding,
/// because silence is judged on the converter's Float32 output before rounding (which is exactly
/// zero only when the input it came from was exactly zero).
public struct PeakLevel: Sendable, Hashable, CustomStringConvertible {
    /// Largest |sample| of the Int16 output, 0 … 32768 (computed wider than Int16).
    public let peak: Int
    /// Largest |sample| before rounding, full scale 1.0.
    public let floatPeak: Float

    public init(peak: Int, floatPeak: Float) {
        self.peak = peak
        self.floatPeak = floatPeak
    }

    /// The largest |sample| before rounding in dB relative to full scale (1.0 = 0 dBFS); −∞ only
    /// for digital silence. Above 0 means the output clipped. Computed on demand: a logarithm per
    /// frame would cost more than the rest of the frame's metering.
    public var dBFS: Double { Elementary.decibels(amplitudeRatio: Double(floatPeak)) }

    /// Every sample of the frame was exactly zero before rounding.
    public var isDigitalSilence: Bool { floatPeak == 0 }

    /// Measures a frame from its Float32 samples and their Int16 rounding.
    @inlinable
    public init(float samples: UnsafeBufferPointer<Float>, int16 rounded: UnsafeBufferPointer<Int16>) {
        var floatPeak: Float = 0
        for i in 0..<samples.count {
            let magnitude = samples[i].magnitude
            if magnitude > floatPeak { floatPeak = magnitude }
        }
        var intPeak: UInt16 = 0
        for i in 0..<rounded.count {
            let magnitude = rounded[i].magnitude
            if magnitude > intPeak { intPeak = magnitude }
        }
        self.init(peak: Int(intPeak), floatPeak: floatPeak)
    }

    public var description: String {
        isDigitalSilence ? "digital silence" : "peak \(peak) (\(PeakLevel.format(dBFS)) dBFS)"
    }

    /// A dB value with one decimal, "-inf" for −∞, without Foundation.
    public static func format(_ dB: Double) -> String {
        guard dB.isFinite else { return dB < 0 ? "-inf" : "inf" }
        let tenths = (dB * 10).rounded()
        let sign = tenths < 0 ? "-" : ""
        let magnitude = Int(tenths.magnitude)
        return "\(sign)\(magnitude / 10).\(magnitude % 10)"
    }
}
