/// What one output frame of the built-in resampler costs in filter arithmetic: a cost model that
/// turns a measured throughput into multiply-adds per second, to compare with the CPU's peak.
public struct ResamplerArithmetic: Sendable, Equatable {
    /// Taps applied to samples per output frame: the filters' own count, however computed.
    public var multiplyAdds: Double
    /// Multiply-adds the kernels execute per output frame, one per vector lane: a symmetric stage
    /// adds the two samples that share a tap first (one multiply-add for two taps, plus one
    /// multiplication for the centre tap), and polyphase rows run padded to whole vectors.
    public var executedMultiplyAdds: Double

    public init(multiplyAdds: Double, executedMultiplyAdds: Double) {
        self.multiplyAdds = multiplyAdds
        self.executedMultiplyAdds = executedMultiplyAdds
    }

    /// Nothing: a rate that does not change copies.
    public static let none = ResamplerArithmetic(multiplyAdds: 0, executedMultiplyAdds: 0)

    /// Both counts times `factor` (outputs of one stage per output of the chain).
    func scaled(by factor: Double) -> ResamplerArithmetic {
        ResamplerArithmetic(multiplyAdds: multiplyAdds * factor, executedMultiplyAdds: executedMultiplyAdds * factor)
    }

    static func + (a: ResamplerArithmetic, b: ResamplerArithmetic) -> ResamplerArithmetic {
        ResamplerArithmetic(multiplyAdds: a.multiplyAdds + b.multiplyAdds, executedMultiplyAdds: a.executedMultiplyAdds + b.executedMultiplyAdds)
    }
}
