import Testing
import VoicePipeCore

/// The sample conventions, checked exhaustively where the domain is small.
struct SampleConversionTests {
    @Test func everyInt16SurvivesFloatAndBack() {
        for value in Int16.min...Int16.max {
            let float = SampleConversion.float(value)
            #expect(float == Float(value) / 32768)
            #expect(SampleConversion.int16(float) == value)
            #expect(value.normalized == float)
        }
    }

    @Test func floatToInt16RoundsToNearestEven() {
        #expect(SampleConversion.int16(0.5 / 32768) == 0)
        #expect(SampleConversion.int16(1.5 / 32768) == 2)
        #expect(SampleConversion.int16(2.5 / 32768) == 2)
        #expect(SampleConversion.int16(-0.5 / 32768) == 0)
        #expect(SampleConversion.int16(-1.5 / 32768) == -2)
        #expect(SampleConversion.int16(0.49 / 32768) == 0)
        #expect(SampleConversion.int16(0.51 / 32768) == 1)
    }

    @Test func nonFiniteAndOverRangeValuesSaturate() {
        #expect(SampleConversion.int16(.nan) == 0)
        #expect(SampleConversion.int16(.infinity) == 32767)
        #expect(SampleConversion.int16(-.infinity) == -32768)
        #expect(SampleConversion.int16(1.0) == 32767)
        #expect(SampleConversion.int16(-1.0) == -32768)
        #expect(SampleConversion.int16(7.5) == 32767)
        #expect(SampleConversion.int16(-1e30) == -32768)
        #expect(SampleConversion.int16(32767.4 / 32768) == 32767)
        // Input sanitising: what reaches a filter is finite and within full scale.
        #expect(Float.nan.normalized == 0)
        #expect(Float.infinity.normalized == 1)
        #expect((-Float.infinity).normalized == -1)
        #expect(Float(3).normalized == 1)
        #expect(Double.nan.normalized == 0)
        #expect(Double(-2).normalized == -1)
        #expect(Float(0.25).normalized == 0.25)
    }

    @Test func int32UsesTwoToTheThirtyOne() {
        #expect(Int32.min.normalized == -1)
        #expect(Int32(1 << 30).normalized == 0.5)
        #expect(Int32(1 << 16).normalized == SampleConversion.float(1))
    }

    @Test func bulkConversionMatchesTheScalarRule() {
        let source: [Float] = [0, 0.25, -0.25, 1, -1, 2, .nan, 1.5 / 32768, 2.5 / 32768]
        var destination = [Int16](repeating: 99, count: source.count)
        source.withUnsafeBufferPointer { s in destination.withUnsafeMutableBufferPointer { SampleConversion.int16(s, into: $0) } }
        #expect(destination == source.map(SampleConversion.int16))
    }
}
