import VoicePipeCore

/// Drives any ``Resampler`` the way a stream would, for the shared streaming tests.
public enum ResamplerHarness {
    /// Streams `input` in chunks of the given sizes (cycled), then flushes.
    /// - Returns: everything the resampler produced, in order.
    public static func stream(_ resampler: any Resampler, _ input: [Float], chunkSizes: [Int]) throws -> [Float] {
        var output = [Float]()
        var scratch = [Float](repeating: .nan, count: resampler.maxOutputFrames(forInputFrames: input.count) + resampler.maxFlushFrames)
        var offset = 0
        var chunk = 0
        try input.withUnsafeBufferPointer { all in
            while offset < all.count {
                let size = min(max(chunkSizes[chunk % chunkSizes.count], 1), all.count - offset)
                chunk += 1
                let produced = try scratch.withUnsafeMutableBufferPointer { out in
                    try resampler.process(UnsafeBufferPointer(rebasing: all[offset..<(offset + size)]), into: out)
                }
                output.append(contentsOf: scratch[0..<produced])
                offset += size
            }
        }
        let tail = try scratch.withUnsafeMutableBufferPointer { try resampler.flush(into: $0) }
        output.append(contentsOf: scratch[0..<tail])
        return output
    }

    /// Random chunk sizes 1 … `maximum`, reproducible from `seed`.
    public static func randomCuts(count: Int, maximum: Int, seed: UInt64) -> [Int] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in 1 + Int(generator.next() % UInt64(maximum)) }
    }
}

/// What another process may report as its kernel choice.
public enum KernelChoices {
    /// Every name ``DSPKernels/best`` can take on this CPU: the portable set without AVX2, else any
    /// mix of the vector sets. Each process calibrates on its own and may take each calibrated
    /// loop from a different set, so a command under test can report another choice than the
    /// test's own process made.
    public static var possibleBestNames: Set<String> {
        let candidates = [DSPKernels.avx512, DSPKernels.avx2].compactMap { $0 }
        guard !candidates.isEmpty else { return [DSPKernels.portable.name] }
        return Set(candidates.flatMap { decimators in candidates.flatMap { polyphase in candidates.map { interpolator in
            DSPKernels.combining(decimators: decimators, polyphase: polyphase, interpolator: interpolator).name
        } } })
    }

    /// The kernel name a program printed on a line starting with `prefix`; nil without one.
    public static func reported(in output: String, after prefix: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }
}
