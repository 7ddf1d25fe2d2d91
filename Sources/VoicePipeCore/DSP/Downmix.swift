/// How several channels become the one channel VoicePipe sends.
public enum DownmixMode: Sendable, Hashable, CustomStringConvertible {
    /// The average of all channels (a stereo source keeps its level when both sides agree).
    case average
    /// One channel, zero-based (for a device whose microphone is on one side only).
    case channel(Int)

    public var description: String {
        switch self {
        case .average: "average of channels"
        case .channel(let index): "channel \(index)"
        }
    }
}

/// Turns frames of any sample type and layout into mono Float32 at full scale 1.0.
///
/// One kernel serves both layouts through strides: sample (frame f, channel c) is at
/// `f · frameStride + c · channelStride` (interleaved: frameStride = channels, channelStride = 1;
/// deinterleaved: frameStride = 1, channelStride = frames per channel).
public enum Downmix {
    /// Writes `frames` mono samples to `destination`.
    /// - Parameters:
    ///   - source: the first frame's first channel.
    ///   - channels: channels per frame (≥ 1).
    ///   - mode: average, or a channel index below `channels`.
    @inlinable
    public static func mono<T: PCMSample>(
        _ source: UnsafePointer<T>, frames: Int, channels: Int, frameStride: Int, channelStride: Int,
        mode: DownmixMode, into destination: UnsafeMutablePointer<Float>
    ) {
        // Vector paths for the common layouts; each computes exactly what the loops below compute.
        if mode == .average && channelStride == 1 {
            if channels == 2 && frameStride == 2 {
                if T.self == Float.self {
                    return stereoFloat(UnsafeRawPointer(source).assumingMemoryBound(to: Float.self), frames: frames, into: destination)
                }
                if T.self == Int16.self {
                    return stereoInt16(UnsafeRawPointer(source).assumingMemoryBound(to: Int16.self), frames: frames, into: destination)
                }
            }
            if channels == 1 && frameStride == 1 && T.self == Int16.self {
                return SampleConversion.float(UnsafeBufferPointer(start: UnsafeRawPointer(source).assumingMemoryBound(to: Int16.self), count: frames), into: UnsafeMutableBufferPointer(start: destination, count: frames))
            }
        }
        switch mode {
        case .channel(let index):
            let first = source + index * channelStride
            for f in 0..<frames {
                destination[f] = first[f * frameStride].normalized
            }
        case .average:
            if channels == 1 {
                for f in 0..<frames {
                    destination[f] = source[f * frameStride].normalized
                }
            } else if channels == 2 {
                let second = source + channelStride
                for f in 0..<frames {
                    destination[f] = (source[f * frameStride].normalized + second[f * frameStride].normalized) * 0.5
                }
            } else {
                let scale = 1 / Float(channels)
                for f in 0..<frames {
                    let frame = source + f * frameStride
                    var sum: Float = 0
                    for c in 0..<channels {
                        sum += frame[c * channelStride].normalized
                    }
                    destination[f] = sum * scale
                }
            }
        }
    }

    /// ``stereoFloat(_:frames:into:)`` dealt out to two streams: mono sample 2k to `first[k]`,
    /// 2k + 1 to `second[k]`.
    @usableFromInline
    static func stereoFloatSplit(_ source: UnsafePointer<Float>, frames: Int, into first: UnsafeMutablePointer<Float>, _ second: UnsafeMutablePointer<Float>) {
        var f = 0
        while f + 16 <= frames {
            let low = UnsafeRawPointer(source + 2 * f).loadUnaligned(as: SIMD16<Float>.self)
            let high = UnsafeRawPointer(source + 2 * f + 16).loadUnaligned(as: SIMD16<Float>.self)
            let mixed = mix(low, high)
            UnsafeMutableRawPointer(first + f / 2).storeBytes(of: mixed.evenHalf, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(second + f / 2).storeBytes(of: mixed.oddHalf, as: SIMD8<Float>.self)
            f += 16
        }
        while f < frames {
            let mono = (source[2 * f].normalized + source[2 * f + 1].normalized) * 0.5
            if f & 1 == 0 { first[f / 2] = mono } else { second[f / 2] = mono }
            f += 1
        }
    }

    /// ``stereoInt16(_:frames:into:)`` dealt out to two streams: mono sample 2k to `first[k]`,
    /// 2k + 1 to `second[k]`.
    @usableFromInline
    static func stereoInt16Split(_ source: UnsafePointer<Int16>, frames: Int, into first: UnsafeMutablePointer<Float>, _ second: UnsafeMutablePointer<Float>) {
        var f = 0
        while f < frames {
            let mono = (source[2 * f].normalized + source[2 * f + 1].normalized) * 0.5
            if f & 1 == 0 { first[f / 2] = mono } else { second[f / 2] = mono }
            f += 1
        }
    }

    /// (L.normalized + R.normalized) · 0.5 for interleaved stereo Float32, sixteen frames at a time.
    @inlinable
    static func stereoFloat(_ source: UnsafePointer<Float>, frames: Int, into destination: UnsafeMutablePointer<Float>) {
        var f = 0
        while f + 16 <= frames {
            let low = UnsafeRawPointer(source + 2 * f).loadUnaligned(as: SIMD16<Float>.self)
            let high = UnsafeRawPointer(source + 2 * f + 16).loadUnaligned(as: SIMD16<Float>.self)
            UnsafeMutableRawPointer(destination + f).storeBytes(of: mix(low, high), as: SIMD16<Float>.self)
            f += 16
        }
        while f < frames {
            destination[f] = (source[2 * f].normalized + source[2 * f + 1].normalized) * 0.5
            f += 1
        }
    }

    /// (L.normalized + R.normalized) · 0.5 for interleaved stereo Int16, eight frames at a time.
    @inlinable
    static func stereoInt16(_ source: UnsafePointer<Int16>, frames: Int, into destination: UnsafeMutablePointer<Float>) {
        var f = 0
        while f + 8 <= frames {
            let pair = UnsafeRawPointer(source + 2 * f).loadUnaligned(as: SIMD16<Int16>.self)
            let mixed = (SampleConversion.float(pair.evenHalf) + SampleConversion.float(pair.oddHalf)) * 0.5
            UnsafeMutableRawPointer(destination + f).storeBytes(of: mixed, as: SIMD8<Float>.self)
            f += 8
        }
        while f < frames {
            destination[f] = (source[2 * f].normalized + source[2 * f + 1].normalized) * 0.5
            f += 1
        }
    }

    /// (L.normalized + R.normalized) · 0.5 for sixteen interleaved stereo Float frames, `low`
    /// holding the first eight. Almost always every sample is within full scale (NaN fails both
    /// tests) and needs no sanitising: one test for the sixteen keeps ``sanitized(_:)``, which the
    /// split downmix calls out of line, off the common path (it was 17 % of the portable 48 kHz
    /// capture when every block went through it).
    @inlinable @inline(__always)
    static func mix(_ low: SIMD16<Float>, _ high: SIMD16<Float>) -> SIMD16<Float> {
        var mixed = SIMD16<Float>()
        if all((low .>= -1) .& (low .<= 1) .& (high .>= -1) .& (high .<= 1)) {
            mixed.lowHalf = (low.evenHalf + low.oddHalf) * 0.5
            mixed.highHalf = (high.evenHalf + high.oddHalf) * 0.5
        } else {
            mixed.lowHalf = (sanitized(low.evenHalf) + sanitized(low.oddHalf)) * 0.5
            mixed.highHalf = (sanitized(high.evenHalf) + sanitized(high.oddHalf)) * 0.5
        }
        return mixed
    }

    /// ``PCMSample/normalized`` for eight Float samples: NaN → 0, clamped to ±1.
    @inlinable
    static func sanitized(_ x: SIMD8<Float>) -> SIMD8<Float> {
        var y = x.replacing(with: 0, where: x .!= x)
        y = y.replacing(with: -1, where: y .< -1)
        return y.replacing(with: 1, where: y .> 1)
    }
}

extension Downmix {
    /// ``mono(_:frames:channels:frameStride:channelStride:mode:into:)`` for interleaved raw bytes
    /// of `sampleType` (host byte order): one channel, or the average of all, as Float32.
    public static func mono(interleaved bytes: UnsafeRawPointer, sampleType: SampleType, frames: Int, channels: Int,
                            mode: DownmixMode, into destination: UnsafeMutablePointer<Float>) {
        switch sampleType {
        case .int16:
            mono(bytes.assumingMemoryBound(to: Int16.self), frames: frames, channels: channels, frameStride: channels, channelStride: 1, mode: mode, into: destination)
        case .int32:
            mono(bytes.assumingMemoryBound(to: Int32.self), frames: frames, channels: channels, frameStride: channels, channelStride: 1, mode: mode, into: destination)
        case .float32:
            mono(bytes.assumingMemoryBound(to: Float.self), frames: frames, channels: channels, frameStride: channels, channelStride: 1, mode: mode, into: destination)
        case .float64:
            mono(bytes.assumingMemoryBound(to: Double.self), frames: frames, channels: channels, frameStride: channels, channelStride: 1, mode: mode, into: destination)
        }
    }
}
