/// Why a playback converter could not be built.
public enum PlaybackConverterError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fewer than one or more than 64 output channels.
    case channelCountOutOfRange(Int)
    /// The resampler to the device rate could not be built.
    case resampler(ResamplerError)
    /// A byte buffer that does not hold whole frames of the source format; nothing was consumed.
    case partialFrame(byteCount: Int, bytesPerFrame: Int)

    public var description: String {
        switch self {
        case .channelCountOutOfRange(let count):
            "a player needs 1 to 64 channels, not \(count)"
        case .resampler(let error):
            error.description
        case .partialFrame(let bytes, let frame):
            "a buffer of \(bytes) bytes does not hold whole frames of \(frame) bytes"
        }
    }
}

/// Turns the runtime's 24 kHz Int16 reply audio into the deinterleaved Float32 buffers players take.
/// One stream at one source rate; following a reply whose rate changes is ``ReplyPlayer``'s job.
///
/// ```
///  Int16 samples ─▶ x / 32768 (exact) ─▶ [resample to the device rate] ─▶ copy to each channel ─▶ PlaybackBuffer
/// ```
///
/// Without a rate change the conversion is exact (every Int16 value maps to x / 32768). Memory is
/// allocated in `init`; processing allocates nothing.
public final class PlaybackConverter {
    /// The format of the incoming samples (mono Int16 at the source rate).
    public let sourceRate: SampleRate
    /// The format of the buffers delivered: Float32, deinterleaved, at the output rate.
    public let outputFormat: PlayerFormat
    private let resampler: BuiltInResampler?
    private static let blockFrames = 1024
    private let mono: UnsafeMutablePointer<Float>
    private let planar: UnsafeMutablePointer<Float>
    private let planarStride: Int
    private let convertToFloat: DSPKernels.ConvertToFloat

    /// - Parameters:
    ///   - sourceRate: rate of the incoming samples (24 kHz on the wire).
    ///   - outputRate: the player's rate; a different rate goes through the built-in resampler.
    ///   - channelCount: player channels; mono is copied to each.
    ///   - kernels: the conversion and resampler inner loops (``DSPKernels/best`` by default).
    /// - Throws: ``PlaybackConverterError`` for a channel count outside 1 … 64 or an unsupported rate.
    public init(sourceRate: SampleRate = .reply, outputRate: SampleRate = .reply, channelCount: Int = 1, kernels: DSPKernels = .best) throws(PlaybackConverterError) {
        guard (1...64).contains(channelCount) else { throw .channelCountOutOfRange(channelCount) }
        for rate in [sourceRate, outputRate] where !(rate.hertz.isFinite && rate >= RationalRatio.minimumRate && rate <= RationalRatio.maximumRate) {
            throw .resampler(.unsupportedRate(rate))
        }
        do {
            let format = try FormatGuard.validate(AudioFormat(sampleRate: outputRate, channelCount: channelCount, sampleType: .float32, isInterleaved: false))
            outputFormat = try PlayerFormat(format)
        } catch {
            // Unreachable: the rate and channel count were checked above, and the format is Float32 deinterleaved.
            throw .resampler(.unsupportedRate(outputRate))
        }
        do {
            resampler = sourceRate == outputRate ? nil : try BuiltInResampler(inputRate: sourceRate, outputRate: outputRate, kernels: kernels)
        } catch {
            throw .resampler(error)
        }
        self.sourceRate = sourceRate
        convertToFloat = kernels.convertToFloat
        mono = .allocate(capacity: Self.blockFrames)
        planarStride = max(resampler.map { max($0.maxOutputFrames(forInputFrames: Self.blockFrames), $0.maxFlushFrames) } ?? Self.blockFrames, Self.blockFrames)
        planar = .allocate(capacity: planarStride * channelCount)
    }

    deinit {
        mono.deallocate()
        planar.deallocate()
    }

    /// Converts Int16 samples (host order, already decoded from the wire's little-endian bytes).
    /// - Parameter deliver: called with each converted block, before `process` returns.
    /// - Throws: a ``PlaybackConverterError/resampler(_:)`` failure or whatever `deliver` throws.
    public func process(_ samples: UnsafeBufferPointer<Int16>, _ deliver: (borrowing PlaybackBuffer) throws -> Void) throws {
        try process(samples, converterError: { $0 }, deliver)
    }

    /// ``process(_:_:)`` with typed errors: a converter failure is thrown as `converterError(error)`,
    /// so one error type carries both it and `deliver`'s failures whole.
    public func process<E: Error>(_ samples: UnsafeBufferPointer<Int16>, converterError: (PlaybackConverterError) -> E, _ deliver: (borrowing PlaybackBuffer) throws(E) -> Void) throws(E) {
        guard let base = samples.baseAddress else { return }
        var done = 0
        while done < samples.count {
            let count = min(Self.blockFrames, samples.count - done)
            let source = base + done
            done += count
            guard let resampler else {
                convertToFloat(source, planar, count)
                try emit(frames: count, deliver)
                continue
            }
            convertToFloat(source, mono, count)
            let produced: Int
            do {
                produced = try resampler.process(UnsafeBufferPointer(start: mono, count: count), into: UnsafeMutableBufferPointer(start: planar, count: planarStride))
            } catch {
                throw converterError(.resampler(error))
            }
            try emit(frames: produced, deliver)
        }
    }

    /// Converts Int16 samples held in an array, exactly as the pointer form does.
    public func process(_ samples: [Int16], _ deliver: (borrowing PlaybackBuffer) throws -> Void) throws {
        try samples.withUnsafeBufferPointer { try process($0, deliver) }
    }

    /// Converts Int16 samples lent as a `Span` (a ``CaptureFrame``'s, an array's), exactly as the
    /// pointer form does.
    public func process(_ samples: Span<Int16>, _ deliver: (borrowing PlaybackBuffer) throws -> Void) throws {
        try samples.withUnsafeBufferPointer { try process($0, deliver) }
    }

    /// Ends the stream: delivers the resampler's tail (nothing when there is no rate change).
    public func flush(_ deliver: (borrowing PlaybackBuffer) throws -> Void) throws {
        try flush(converterError: { $0 }, deliver)
    }

    /// ``flush(_:)`` with typed errors, as ``process(_:converterError:_:)``.
    public func flush<E: Error>(converterError: (PlaybackConverterError) -> E, _ deliver: (borrowing PlaybackBuffer) throws(E) -> Void) throws(E) {
        guard let resampler else { return }
        let produced: Int
        do {
            produced = try resampler.flush(into: UnsafeMutableBufferPointer(start: planar, count: planarStride))
        } catch {
            throw converterError(.resampler(error))
        }
        try emit(frames: produced, deliver)
    }

    /// Abandons the stream (after an interruption) and starts a new one.
    public func reset() {
        resampler?.reset()
    }

    /// Copies channel 0 to the other channels and hands out the block.
    private func emit<E: Error>(frames: Int, _ deliver: (borrowing PlaybackBuffer) throws(E) -> Void) throws(E) {
        guard frames > 0 else { return }
        for channel in 1..<max(outputFormat.channelCount, 1) {
            (planar + channel * planarStride).update(from: planar, count: frames)
        }
        try deliver(PlaybackBuffer(base: planar, frameCount: frames, channelCount: outputFormat.channelCount, channelStride: planarStride))
    }
}
