/// An in-place radix-2 complex FFT of one fixed power-of-two size on split real and imaginary
/// arrays, with its bit-reversal and twiddle tables built once in `init` (the residual echo
/// suppressor's spectra; nothing is allocated per transform).
///
/// Forward is X[k] = Σ x[n]·e^(−2πikn/N); inverse is the same with +i and no 1/N scaling, so
/// inverse(forward(x)) = N·x.
final class EchoFourierTransform {
    /// Points per transform.
    let size: Int
    private let levels: Int
    private let reversed: UnsafeMutablePointer<Int32>
    private let cosines: UnsafeMutablePointer<Float>
    private let sines: UnsafeMutablePointer<Float>

    /// A transform of `size` points.
    /// - Precondition: `size` is a power of two of at least 2 (a constant chosen by the caller).
    init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0, "the FFT size is a power of two")
        self.size = size
        levels = size.trailingZeroBitCount
        reversed = .allocate(capacity: size)
        cosines = .allocate(capacity: size / 2)
        sines = .allocate(capacity: size / 2)
        for n in 0..<size {
            var value = 0
            for bit in 0..<levels where n & (1 << bit) != 0 { value |= 1 << (levels - 1 - bit) }
            reversed[n] = Int32(value)
        }
        for k in 0..<(size / 2) {
            let angle = -2 * Double.pi * Double(k) / Double(size)
            cosines[k] = Float(Elementary.cos(angle))
            sines[k] = Float(Elementary.sin(angle))
        }
    }

    deinit {
        reversed.deallocate()
        cosines.deallocate()
        sines.deallocate()
    }

    /// Transforms `real` and `imaginary` (each `size` values) in place.
    /// - Parameter inverse: the +i kernel (unscaled).
    func transform(real: UnsafeMutablePointer<Float>, imaginary: UnsafeMutablePointer<Float>, inverse: Bool = false) {
        for n in 0..<size {
            let m = Int(reversed[n])
            if m > n {
                let r = real[n], i = imaginary[n]
                real[n] = real[m]; imaginary[n] = imaginary[m]
                real[m] = r; imaginary[m] = i
            }
        }
        let sign: Float = inverse ? -1 : 1
        var half = 1
        while half < size {
            let step = size / (2 * half)
            var start = 0
            while start < size {
                for j in 0..<half {
                    let wr = cosines[j &* step], wi = sign * sines[j &* step]
                    let a = start &+ j, b = a &+ half
                    let tr = real[b] * wr - imaginary[b] * wi
                    let ti = real[b] * wi + imaginary[b] * wr
                    real[b] = real[a] - tr; imaginary[b] = imaginary[a] - ti
                    real[a] += tr; imaginary[a] += ti
                }
                start &+= 2 * half
            }
            half &*= 2
        }
    }
}
