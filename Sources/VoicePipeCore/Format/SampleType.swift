/// How one sample is stored: the four encodings VoicePipe converts from.
public enum SampleType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Signed 16-bit integer, full scale 32768.
    case int16
    /// Signed 32-bit integer, full scale 2^31 (24-bit data is carried left-justified in it).
    case int32
    /// IEEE 754 single precision, full scale 1.0.
    case float32
    /// IEEE 754 double precision, full scale 1.0.
    case float64

    /// Bytes one sample of this type occupies.
    public var byteCount: Int {
        switch self {
        case .int16: 2
        case .int32, .float32: 4
        case .float64: 8
        }
    }

    /// Whether the samples are floating point (full scale 1.0) rather than integers.
    public var isFloatingPoint: Bool { self == .float32 || self == .float64 }

    public var description: String {
        switch self {
        case .int16: "Int16"
        case .int32: "Int32"
        case .float32: "Float32"
        case .float64: "Float64"
        }
    }
}
