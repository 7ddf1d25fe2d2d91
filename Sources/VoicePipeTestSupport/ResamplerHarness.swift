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
