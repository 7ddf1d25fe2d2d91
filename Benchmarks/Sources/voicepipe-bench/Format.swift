import Foundation

/// Number formatting for tables and plots.
enum Format {
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        return String(format: "%.\(digits)f", value)
    }

    /// Three significant digits, no exponent (24165, 5290, 113, 30.7, 1.47, 0.012).
    static func significant(_ value: Double) -> String {
        guard value.isFinite else { return fixed(value, 0) }
        let magnitude = abs(value)
        if magnitude >= 100 { return fixed(value, 0) }
        if magnitude >= 10 { return fixed(value, 1) }
        if magnitude >= 1 { return fixed(value, 2) }
        if magnitude == 0 { return "0" }
        let digits = min(6, 2 - Int(floor(log10(magnitude))))
        return fixed(value, digits)
    }

    /// Axis labels: 1, 10, 100, 1k, 10k, 100k, 1M.
    static func compact(_ value: Double) -> String {
        if value >= 1e6 { return trimmed(value / 1e6) + "M" }
        if value >= 1e3 { return trimmed(value / 1e3) + "k" }
        return trimmed(value)
    }

    /// A number without trailing zeros.
    static func trimmed(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : significant(value)
    }

    /// dB with `digits` decimals, `-inf` for −∞.
    static func dB(_ value: Double, _ digits: Int = 1) -> String { fixed(value, digits) }

    static func seconds(_ value: Double) -> String { value == value.rounded() ? "\(Int(value)) s" : "\(fixed(value, 1)) s" }

    static func bytes(_ count: Int) -> String {
        if count >= 1 << 20 { return "\(fixed(Double(count) / 1e6, 2)) MB" }
        if count >= 10_000 { return "\(fixed(Double(count) / 1e3, 1)) kB" }
        return "\(count) B"
    }

    /// `median (min–max)`.
    static func spread(_ s: Spread, _ f: (Double) -> String = significant) -> String { "\(f(s.median)) (\(f(s.min))–\(f(s.max)))" }
}
