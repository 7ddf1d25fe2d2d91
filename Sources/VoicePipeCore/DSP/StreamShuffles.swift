/// The portable versions of the two shuffles a sharp stage does around its filter calls
/// (``DSPKernels/interleavePairs`` and ``DSPKernels/takeEvery``): SIMD code for the x86-64
/// baseline.
@usableFromInline
enum StreamShuffles {
    /// `output[2i] = even[i]`, `output[2i + 1] = odd[i]` for i < `pairs`, eight pairs per step.
    @usableFromInline
    static func interleave(even: UnsafePointer<Float>, odd: UnsafePointer<Float>, pairs: Int, into output: UnsafeMutablePointer<Float>) {
        var i = 0
        while i + 8 <= pairs {
            var both = SIMD16<Float>()
            both.evenHalf = UnsafeRawPointer(even + i).loadUnaligned(as: SIMD8<Float>.self)
            both.oddHalf = UnsafeRawPointer(odd + i).loadUnaligned(as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(output + 2 * i).storeBytes(of: both, as: SIMD16<Float>.self)
            i += 8
        }
        while i < pairs {
            output[2 * i] = even[i]
            output[2 * i + 1] = odd[i]
            i += 1
        }
    }

    /// `target[i] = source[stride · i]` for i < `count`. Strides 2 and 3 take several samples per
    /// vector step; a step's loads end a sample or two past the last sample it takes, so the
    /// vector loop stops a step early and never reads past `source[stride · (count − 1)]`.
    @usableFromInline
    static func takeEvery(_ stride: Int, from source: UnsafePointer<Float>, count: Int, into target: UnsafeMutablePointer<Float>) {
        var i = 0
        if stride == 2 {
            while i + 9 <= count {
                let pairs = UnsafeRawPointer(source + 2 * i).loadUnaligned(as: SIMD16<Float>.self)
                UnsafeMutableRawPointer(target + i).storeBytes(of: pairs.evenHalf, as: SIMD8<Float>.self)
                i += 8
            }
        } else if stride == 3 {
            while i + 5 <= count {
                let p = UnsafeRawPointer(source + 3 * i)
                let a = p.loadUnaligned(as: SIMD4<Float>.self)
                let b = p.loadUnaligned(fromByteOffset: 16, as: SIMD4<Float>.self)
                let c = p.loadUnaligned(fromByteOffset: 32, as: SIMD4<Float>.self)
                UnsafeMutableRawPointer(target + i).storeBytes(of: SIMD4(a[0], a[3], b[2], c[1]), as: SIMD4<Float>.self)
                i += 4
            }
        }
        while i < count {
            target[i] = source[i * stride]
            i += 1
        }
    }
}
