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
}
