import AllocationCounting
import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// Steady state allocates nothing: after warm-up, buffers of any size go through the capture
/// converter without a single heap allocation.
struct AllocationTests {
    @Test func theAllocationCounterSeesAllocations() {
        let count = countAllocations {
            let array = [Int](repeating: 1, count: Int.random(in: 100...200))
            #expect(array.count >= 100)
        }
        #expect(count >= 1)
    }

    @Test(arguments: [
        AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32),
        AudioFormat(sampleRate: 44_100, channelCount: 2, sampleType: .int16),
        AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .int16),
        AudioFormat(sampleRate: 8_000, channelCount: 1, sampleType: .int16),
        AudioFormat(sampleRate: 22_050, channelCount: 1, sampleType: .int32),
        AudioFormat(sampleRate: 44_056, channelCount: 1, sampleType: .float64),
    ])
    func captureConverterSteadyStateAllocatesNothing(format: AudioFormat) throws {
        let converter = try CaptureConverter(input: FormatGuard.validate(format))
        let bytes = [UInt8](repeating: 0, count: 4_410 * format.bytesPerFrame)
        var frames = 0
        let sizes = [480, 1, 7, 4_410, 960, 4_410]
        try bytes.withUnsafeBytes { all in
            // Warm-up: one pass over the same sizes. A first call down a path may initialise type
            // metadata once per process (whether it already happened depends on the tests that ran before).
            var warm = 0
            while warm < sizes.count {
                try converter.process(UnsafeRawBufferPointer(rebasing: all[0..<(sizes[warm] * format.bytesPerFrame)])) { _ in frames += 1 }
                warm += 1
            }
            // (A while loop: a debug build's `for … in` over an array allocates an iterator per pass.)
            let allocations = try countAllocations {
                var index = 0
                while index < sizes.count {
                    try converter.process(UnsafeRawBufferPointer(rebasing: all[0..<(sizes[index] * format.bytesPerFrame)])) { _ in frames += 1 }
                    index += 1
                }
            }
            #expect(allocations == 0, "\(format): \(allocations) allocations")
        }
        #expect(frames > 0)
    }
}
