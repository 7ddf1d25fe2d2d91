import Testing
@testable import VoicePipeCore
import VoicePipeTestSupport

/// Every portable vector kernel equals its plain scalar reference bit for bit, whatever the count
/// (full vectors, and the partial last vector whose extra lanes are discarded).
struct KernelReferenceTests {
    static func randomSamples(_ count: Int, seed: UInt64) -> [Float] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in Float(generator.nextUnit() * 2 - 1) }
    }

    @Test(arguments: [0, 1, 5, 15, 16, 17, 31, 33, 100])
    func decimateEqualsItsReference(count: Int) {
        // Three streams, two residue classes reading forwards and backwards, and a centre tap.
        let streams = (0..<3).map { Self.randomSamples(400, seed: UInt64($0 + 1)) }
        let taps = Self.randomSamples(12, seed: 9)
        let classes = [
            DecimatorTapClass(tapStart: 0, tapCount: 7, forwardStream: 1, forwardOffset: 5, backwardStream: 2, backwardOffset: 60),
            DecimatorTapClass(tapStart: 7, tapCount: 5, forwardStream: 2, forwardOffset: 8, backwardStream: 1, backwardOffset: 70),
        ]
        streams[0].withUnsafeBufferPointer { s0 in streams[1].withUnsafeBufferPointer { s1 in streams[2].withUnsafeBufferPointer { s2 in
            let pointers = [s0.baseAddress! + 100, s1.baseAddress! + 100, s2.baseAddress! + 100]
            let splats = taps.map { SIMD4(repeating: $0) }
            var output = [Float](repeating: .nan, count: count)
            pointers.withUnsafeBufferPointer { p in classes.withUnsafeBufferPointer { c in taps.withUnsafeBufferPointer { t in splats.withUnsafeBufferPointer { sp in
                output.withUnsafeMutableBufferPointer { o in
                    PortableKernels.decimate(p.baseAddress!, c.baseAddress!, 2, t.baseAddress!, sp.baseAddress!, 0.37, o.baseAddress!, count)
                }
                for n in 0..<count {
                    #expect(output[n] == PortableKernels.decimateReference(p.baseAddress!, c.baseAddress!, 2, t.baseAddress!, 0.37, n), "output \(n)")
                }
            } } } }
        } } }
    }

    @Test(arguments: [0, 1, 7, 8, 9, 23])
    func interpolateEqualsItsReference(count: Int) {
        let x = Self.randomSamples(200, seed: 4)
        let even = Self.randomSamples(32, seed: 5), odd = Self.randomSamples(32, seed: 6)
        let evenSplats = even.map { SIMD4(repeating: $0) }, oddSplats = odd.map { SIMD4(repeating: $0) }
        var output = [Float](repeating: .nan, count: 2 * count)
        x.withUnsafeBufferPointer { xs in even.withUnsafeBufferPointer { e in odd.withUnsafeBufferPointer { o in
            evenSplats.withUnsafeBufferPointer { es in oddSplats.withUnsafeBufferPointer { os in
                output.withUnsafeMutableBufferPointer { out in
                    PortableKernels.interpolate(xs.baseAddress! + 60, e.baseAddress!, o.baseAddress!, es.baseAddress!, os.baseAddress!, 0.61, out.baseAddress!, count)
                }
            } }
            for i in 0..<count {
                #expect(output[2 * i] == PortableKernels.interpolateEven(xs.baseAddress! + 60 + i, e.baseAddress!, 0.61))
                #expect(output[2 * i + 1] == PortableKernels.interpolateOdd(xs.baseAddress! + 60 + i, o.baseAddress!))
            }
        } } }
    }

    @Test(arguments: [4, 8, 20, 24, 36])
    func dotProductsEqualTheirReference(length: Int) {
        let x = Self.randomSamples(100, seed: 7), c = Self.randomSamples(100, seed: 8)
        x.withUnsafeBufferPointer { xs in c.withUnsafeBufferPointer { cs in
            let reference = (0..<4).map { PortableKernels.referenceDot(xs.baseAddress! + $0, cs.baseAddress! + 3 * $0, length) }
            #expect((0..<4).map { PortableKernels.dot(xs.baseAddress! + $0, cs.baseAddress! + 3 * $0, length) } == reference)
            let four = PortableKernels.dot4((xs.baseAddress!, xs.baseAddress! + 1, xs.baseAddress! + 2, xs.baseAddress! + 3), (cs.baseAddress!, cs.baseAddress! + 3, cs.baseAddress! + 6, cs.baseAddress! + 9), length)
            #expect([four[0], four[1], four[2], four[3]] == reference)
        } }
    }
}
