/// Why a capture converter could not be built or refused a buffer.
public enum CaptureConverterError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The frame duration is outside 10 … 100 ms.
    case frameDurationOutOfRange(milliseconds: Int)
    /// A downmix channel that the input does not have.
    case downmixChannelOutOfRange(channel: Int, channelCount: Int)
    /// A typed buffer whose sample type is not the input format's.
    case sampleTypeMismatch(expected: SampleType, received: SampleType)
    /// A byte buffer that does not hold whole frames.
    case partialFrame(byteCount: Int, bytesPerFrame: Int)
    /// A resampler supplied for the wrong rates.
    case resamplerRatesMismatch(expectedInput: SampleRate, expectedOutput: SampleRate, inputRate: SampleRate, outputRate: SampleRate)
    /// The resampler failed.
    case resampler(ResamplerError)

    public var description: String {
        switch self {
        case .frameDurationOutOfRange(let ms):
            "a frame of \(ms) ms is outside the supported 10 … 100 ms"
        case .downmixChannelOutOfRange(let channel, let count):
            "channel \(channel) was chosen for the downmix, but the input has \(count) channel\(count == 1 ? "" : "s") (numbered from 0)"
        case .sampleTypeMismatch(let expected, let received):
            "the converter was built for \(expected) samples but was given \(received) samples"
        case .partialFrame(let bytes, let frame):
            "a buffer of \(bytes) bytes does not hold whole frames of \(frame) bytes"
        case .resamplerRatesMismatch(let expectedInput, let expectedOutput, let input, let output):
            "the resampler converts \(input) to \(output), but this converter needs \(expectedInput) to \(expectedOutput)"
        case .resampler(let error):
            error.description
        }
    }
}

/// Options of a ``CaptureConverter``.
public struct CaptureOptions: Sendable, Hashable {
    /// Length of each output frame in milliseconds, 10 … 100 (default 32 ms = 512 samples).
    public var frameMilliseconds: Int
    /// How the input's channels become mono.
    public var downmix: DownmixMode

    public init(frameMilliseconds: Int = 32, downmix: DownmixMode = .average) {
        self.frameMilliseconds = frameMilliseconds
        self.downmix = downmix
    }
}

/// Converts captured audio of any validated format into 16 kHz mono Int16 frames with their peak.
///
/// ```
///  bytes (any type, layout, rate, channels) ─▶ downmix to Float32 ─▶ resample to 16 kHz
///      ─▶ frame assembly ─▶ Int16 (×32768, nearest-even, saturate) + peak ─▶ your closure
/// ```
///
/// All memory is allocated in `init`; a buffer of any size is processed in internal blocks, so
/// the steady state allocates nothing. Output is identical however the input is cut into buffers.
public final class CaptureConverter {
    /// The input format the converter was built for.
    public let inputFormat: ValidatedFormat
    /// The options it was built with.
    public let options: CaptureOptions
    /// Samples per full output frame (16 per millisecond).
    public var frameLength: Int { assembler.frameLength }
    /// The resampler in use.
    public let resampler: any Resampler

    /// Input frames per internal block.
    private static let blockFrames = 1024
    private let mono: UnsafeMutablePointer<Float>
    private let resampled: UnsafeMutablePointer<Float>
    private let resampledCapacity: Int
    private let assembler: FrameAssembler
    /// The resampler when it is the built-in one, which takes interleaved stereo Float32 and Int16
    /// itself (downmixed into its first stage's input in one pass, with its own kernel set).
    /// Unretained, since `resampler` keeps it alive, and borrowed per block without the retain
    /// and release a call through `resampler` costs (1-2 % of a 10 ms conversion).
    private let builtIn: Unmanaged<BuiltInResampler>?
    /// The set whose stereo downmix kernels serve interleaved stereo input when the resampler is
    /// not the built-in one.
    private let kernels: DSPKernels
    /// Input frames consumed in this stream.
    @exclusivity(unchecked) public private(set) var inputFrames = 0
    /// 16 kHz samples produced in this stream.
    @exclusivity(unchecked) public private(set) var outputSamples = 0

    /// Builds a converter for `input`.
    /// - Parameters:
    ///   - input: the validated input format (any rate 1 kHz … 768 kHz, any channel count).
    ///   - options: frame length and downmix.
    ///   - resampler: a resampler from `input.sampleRate` to 16 kHz; `nil` builds a ``BuiltInResampler``
    ///     with `kernels`.
    ///   - kernels: the inner loops of the built-in resampler and of the Int16 conversion with peaks;
    ///     the fastest set this CPU runs by default.
    /// - Throws: ``CaptureConverterError`` for options out of range, a mismatched resampler, or an
    ///   unsupported rate.
    public init(input: ValidatedFormat, options: CaptureOptions = CaptureOptions(), resampler: (any Resampler)? = nil, kernels: DSPKernels = .best) throws(CaptureConverterError) {
        guard (10...100).contains(options.frameMilliseconds) else {
            throw .frameDurationOutOfRange(milliseconds: options.frameMilliseconds)
        }
        if case .channel(let index) = options.downmix, !(0..<input.channelCount).contains(index) {
            throw .downmixChannelOutOfRange(channel: index, channelCount: input.channelCount)
        }
        let target = AudioFormat.captureTarget.sampleRate
        if let resampler {
            guard resampler.inputRate == input.sampleRate, resampler.outputRate == target else {
                throw .resamplerRatesMismatch(expectedInput: input.sampleRate, expectedOutput: target, inputRate: resampler.inputRate, outputRate: resampler.outputRate)
            }
            self.resampler = resampler
        } else {
            do {
                self.resampler = try BuiltInResampler(inputRate: input.sampleRate, outputRate: target, kernels: kernels)
            } catch {
                throw .resampler(error)
            }
        }
        builtIn = (self.resampler as? BuiltInResampler).map { .passUnretained($0) }
        inputFormat = input
        self.options = options
        self.kernels = kernels
        let frameLength = options.frameMilliseconds * Int(target.hertz) / 1000
        assembler = FrameAssembler(frameLength: frameLength, kernels: kernels)
        mono = .allocate(capacity: Self.blockFrames)
        resampledCapacity = max(self.resampler.maxOutputFrames(forInputFrames: Self.blockFrames), self.resampler.maxFlushFrames)
        resampled = .allocate(capacity: resampledCapacity)
    }

    deinit {
        mono.deallocate()
        resampled.deallocate()
    }

    /// Converts a buffer of raw bytes in the input format (native endianness). A deinterleaved
    /// buffer holds each channel's frames as one contiguous block, channel 0 first.
    /// - Parameter deliver: called for every completed frame, on this thread, before `process` returns.
    /// - Throws: ``CaptureConverterError/partialFrame(byteCount:bytesPerFrame:)`` (nothing consumed),
    ///   a resampler failure, or whatever `deliver` throws.
    public func process(_ bytes: UnsafeRawBufferPointer, _ deliver: (borrowing CaptureFrame) throws -> Void) throws {
        let frameBytes = inputFormat.bytesPerFrame
        guard bytes.count % frameBytes == 0 else {
            throw CaptureConverterError.partialFrame(byteCount: bytes.count, bytesPerFrame: frameBytes)
        }
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let frames = bytes.count / frameBytes
        switch inputFormat.sampleType {
        case .int16: try convert(base.assumingMemoryBound(to: Int16.self), frames: frames, deliver)
        case .int32: try convert(base.assumingMemoryBound(to: Int32.self), frames: frames, deliver)
        case .float32: try convert(base.assumingMemoryBound(to: Float.self), frames: frames, deliver)
        case .float64: try convert(base.assumingMemoryBound(to: Double.self), frames: frames, deliver)
        }
    }

    /// Converts a typed buffer of samples (`count` = frames × channels) in the input format's layout.
    /// - Throws: ``CaptureConverterError/sampleTypeMismatch(expected:received:)`` or
    ///   ``CaptureConverterError/partialFrame(byteCount:bytesPerFrame:)`` (nothing consumed), a
    ///   resampler failure, or whatever `deliver` throws.
    public func process<T: PCMSample>(_ samples: UnsafeBufferPointer<T>, _ deliver: (borrowing CaptureFrame) throws -> Void) throws {
        guard T.sampleType == inputFormat.sampleType else {
            throw CaptureConverterError.sampleTypeMismatch(expected: inputFormat.sampleType, received: T.sampleType)
        }
        guard samples.count % inputFormat.channelCount == 0 else {
            throw CaptureConverterError.partialFrame(byteCount: samples.count * T.sampleType.byteCount, bytesPerFrame: inputFormat.bytesPerFrame)
        }
        guard let base = samples.baseAddress else { return }
        try convert(base, frames: samples.count / inputFormat.channelCount, deliver)
    }

    /// Ends the stream: drains the resampler and delivers the last, possibly partial, frame.
    /// The converter is then ready for a new stream.
    public func flush(_ deliver: (borrowing CaptureFrame) throws -> Void) throws {
        let count: Int
        do {
            count = try resampler.flush(into: UnsafeMutableBufferPointer(start: resampled, count: resampledCapacity))
        } catch {
            throw CaptureConverterError.resampler(error)
        }
        outputSamples += count
        defer { startNewStream() }
        try assembler.append(UnsafeBufferPointer(start: resampled, count: count), deliver)
        try assembler.flush(deliver)
    }

    /// Abandons the stream (nothing more is delivered) and starts a new one.
    public func reset() {
        resampler.reset()
        startNewStream()
    }

    private func startNewStream() {
        assembler.reset()
        inputFrames = 0
        outputSamples = 0
    }

    /// Runs `body` on the built-in resampler, borrowed: no retain and release around the call.
    @inline(__always) private static func borrowing(_ builtIn: Unmanaged<BuiltInResampler>, _ body: (BuiltInResampler) throws(ResamplerError) -> Int) throws(ResamplerError) -> Int {
        try builtIn._withUnsafeGuaranteedRef { resampler in Result { () throws(ResamplerError) in try body(resampler) } }.get()
    }

    private func convert<T: PCMSample>(_ base: UnsafePointer<T>, frames: Int, _ deliver: (borrowing CaptureFrame) throws -> Void) throws {
        let channels = inputFormat.channelCount
        let interleaved = inputFormat.isInterleaved || channels == 1
        let frameStride = interleaved ? channels : 1
        let channelStride = interleaved ? 1 : frames
        var done = 0
        var producedTotal = 0
        // The counters are updated once per call: class properties cost an exclusivity check per access.
        defer {
            inputFrames += done
            outputSamples += producedTotal
        }
        let mode = options.downmix
        // Interleaved stereo averaged (the usual capture format) goes to the built-in resampler as
        // stereo, or through the kernel set's downmix; both compute exactly what Downmix does.
        // Other sample types and layouts go through Downmix.
        let stereoAverage = mode == .average && channels == 2 && frameStride == 2 && channelStride == 1
        while done < frames {
            let count = min(Self.blockFrames, frames - done)
            let resampledBuffer = UnsafeMutableBufferPointer(start: resampled, count: resampledCapacity)
            let stereo = stereoAverage ? InterleavedStereo(base + done * 2) : nil
            let produced: Int
            do {
                if let stereo, let builtIn {
                    produced = try Self.borrowing(builtIn) { resampler throws(ResamplerError) in try resampler.processStereo(stereo, frames: count, into: resampledBuffer) }
                } else {
                    if let stereo {
                        stereo.downmix(frames: count, into: mono, kernels: kernels)
                    } else {
                        Downmix.mono(base + done * frameStride, frames: count, channels: channels, frameStride: frameStride, channelStride: channelStride, mode: mode, into: mono)
                    }
                    let block = UnsafeBufferPointer(start: UnsafePointer(mono), count: count)
                    if let builtIn {
                        produced = try Self.borrowing(builtIn) { resampler throws(ResamplerError) in try resampler.process(block, into: resampledBuffer) }
                    } else {
                        produced = try resampler.process(block, into: resampledBuffer)
                    }
                }
            } catch {
                throw CaptureConverterError.resampler(error)
            }
            done += count
            producedTotal += produced
            try assembler.append(UnsafeBufferPointer(start: resampled, count: produced), deliver)
        }
    }
}

extension InterleavedStereo {
    /// The samples at `pointer` when `T` is Float or Int16, else nil.
    init?<T: PCMSample>(_ pointer: UnsafePointer<T>) {
        if T.self == Float.self {
            self = .float32(UnsafeRawPointer(pointer).assumingMemoryBound(to: Float.self))
        } else if T.self == Int16.self {
            self = .int16(UnsafeRawPointer(pointer).assumingMemoryBound(to: Int16.self))
        } else {
            return nil
        }
    }
}
