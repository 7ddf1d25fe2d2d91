/// Converts interleaved PCM of any validated format into the deinterleaved Float32 blocks of a
/// player's format: what plays a file, or any other capture-style source, on a device.
///
/// ```
///  interleaved frames (Int16/Int32/Float32/Float64, any rate and channels)
///      ─▶ each channel to Float32 ─▶ [built-in resampler per channel] ─▶ PlaybackBuffer
/// ```
///
/// With as many channels as the player, channel k plays on player channel k; with a different
/// count, the average of the source's channels plays on every player channel. Float input is
/// sanitised as everywhere in VoicePipe (NaN → 0, clamped to ±1). Memory is allocated in `init`;
/// buffers of any size are processed in internal blocks, so the steady state allocates nothing.
public final class PCMPlaybackConverter {
    /// The source format.
    public let sourceFormat: ValidatedFormat
    /// The player's format, which every delivered buffer has.
    public let playerFormat: PlayerFormat
    /// Source frames per internal block.
    public static let blockFrames = 4_096
    private let channels: Int
    private let sameChannels: Bool
    private let resamplers: [BuiltInResampler]
    private let planar: UnsafeMutablePointer<Float>
    private let stride: Int
    private let staging: UnsafeMutablePointer<Float>

    /// - Throws: ``ResamplerError`` when the rates cannot be converted.
    public init(source: ValidatedFormat, player: PlayerFormat, kernels: DSPKernels = .best) throws(ResamplerError) {
        sourceFormat = source
        playerFormat = player
        channels = player.channelCount
        sameChannels = source.channelCount == player.channelCount
        let streams = sameChannels ? channels : 1
        resamplers = source.sampleRate == player.sampleRate ? [] : try (0..<streams).map { _ throws(ResamplerError) in
            try BuiltInResampler(inputRate: source.sampleRate, outputRate: player.sampleRate, kernels: kernels)
        }
        let most = resamplers.first.map { max($0.maxOutputFrames(forInputFrames: Self.blockFrames), $0.maxFlushFrames) } ?? Self.blockFrames
        stride = max(most, Self.blockFrames)
        planar = .allocate(capacity: stride * channels)
        staging = .allocate(capacity: Self.blockFrames)
    }

    deinit {
        planar.deallocate()
        staging.deallocate()
    }

    /// Converts whole interleaved frames of the source format (native endianness).
    /// - Parameter deliver: called with each converted block, before `process` returns.
    /// - Throws: ``PlaybackConverterError/partialFrame(byteCount:bytesPerFrame:)`` for bytes that
    ///   are not whole frames (nothing is consumed), a resampler failure, or what `deliver` throws.
    public func process(_ bytes: UnsafeRawBufferPointer, _ deliver: (borrowing PlaybackBuffer) throws -> Void) throws {
        let frameBytes = sourceFormat.bytesPerFrame
        guard bytes.count % frameBytes == 0 else {
            throw PlaybackConverterError.partialFrame(byteCount: bytes.count, bytesPerFrame: frameBytes)
        }
        guard let base = bytes.baseAddress else { return }
        let frames = bytes.count / frameBytes
        var done = 0
        while done < frames {
            let count = min(Self.blockFrames, frames - done)
            try convert(base + done * frameBytes, frames: count, deliver)
            done += count
        }
    }

    /// Ends the stream: delivers the resamplers' tails (nothing when the rates are equal).
    public func flush(_ deliver: (borrowing PlaybackBuffer) throws -> Void) throws {
        guard !resamplers.isEmpty else { return }
        var produced = 0
        for (stream, resampler) in resamplers.enumerated() {
            produced = try resampler.flush(into: UnsafeMutableBufferPointer(start: planar + stream * stride, count: stride))
        }
        try emit(produced, deliver)
    }

    /// Abandons the stream and starts a new one.
    public func reset() {
        resamplers.forEach { $0.reset() }
    }

    /// One block of at most ``blockFrames`` frames.
    private func convert(_ base: UnsafeRawPointer, frames: Int, _ deliver: (borrowing PlaybackBuffer) throws -> Void) throws {
        var produced = frames
        for stream in 0..<(sameChannels ? channels : 1) {
            let mode: DownmixMode = sameChannels ? .channel(stream) : .average
            let destination = resamplers.isEmpty ? planar + stream * stride : staging
            Downmix.mono(interleaved: base, sampleType: sourceFormat.sampleType, frames: frames, channels: sourceFormat.channelCount, mode: mode, into: destination)
            if !resamplers.isEmpty {
                produced = try resamplers[stream].process(UnsafeBufferPointer(start: staging, count: frames),
                                                          into: UnsafeMutableBufferPointer(start: planar + stream * stride, count: stride))
            }
        }
        try emit(produced, deliver)
    }

    /// Copies the mix to every player channel when the counts differ, and hands out the block.
    private func emit(_ frames: Int, _ deliver: (borrowing PlaybackBuffer) throws -> Void) throws {
        guard frames > 0 else { return }
        if !sameChannels {
            for channel in 1..<max(channels, 1) {
                (planar + channel * stride).update(from: planar, count: frames)
            }
        }
        try deliver(PlaybackBuffer(base: planar, frameCount: frames, channelCount: channels, channelStride: stride))
    }
}
