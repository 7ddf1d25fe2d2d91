import CSampleRate
import VoicePipeCore

/// A ``Resampler`` backed by libsamplerate (Secret Rabbit Code), the reference to compare with.
///
/// Same contract as the built-in resampler: mono Float32, state across buffers, time-aligned
/// output (libsamplerate compensates its own delay) and exactly
/// ``RationalRatio/outputFrames(forInputFrames:)`` frames per stream. libsamplerate itself ends a
/// stream a frame short (sinc converters) or long (linear) of that; so this wrapper never delivers
/// more than the rounded ratio of the input seen so far (the linear converter's one early frame
/// waits for the next call), and ``flush(into:)`` pads the input with silence and trims the output.
public final class LibsamplerateResampler: Resampler {
    /// libsamplerate's converters, best first.
    public enum Quality: String, Sendable, CaseIterable, CustomStringConvertible {
        /// `SRC_SINC_BEST_QUALITY`: 145 dB SNR, 97 % bandwidth; slowest.
        case sincBest
        /// `SRC_SINC_MEDIUM_QUALITY`: 121 dB SNR, 90 % bandwidth.
        case sincMedium
        /// `SRC_SINC_FASTEST`: 97 dB SNR, 80 % bandwidth.
        case sincFastest
        /// `SRC_LINEAR`: linear interpolation, no anti-aliasing filter; fast and poor.
        case linear

        var converterType: Int32 {
            switch self {
            case .sincBest: Int32(SRC_SINC_BEST_QUALITY)
            case .sincMedium: Int32(SRC_SINC_MEDIUM_QUALITY)
            case .sincFastest: Int32(SRC_SINC_FASTEST)
            case .linear: Int32(SRC_LINEAR)
            }
        }

        /// libsamplerate's own name for the converter.
        public var description: String {
            String(cString: src_get_name(converterType))
        }
    }

    public let inputRate: SampleRate
    public let outputRate: SampleRate
    public let quality: Quality
    public let ratio: RationalRatio
    public private(set) var latency: Double = 0

    private var state: OpaquePointer
    private let srcRatio: Double
    private let padding: UnsafeMutablePointer<Float>
    private let paddingFrames: Int
    private let tail: UnsafeMutablePointer<Float>
    private let tailCapacity: Int
    /// Frames libsamplerate produced that the length rule does not allow out yet.
    private let pending: UnsafeMutablePointer<Float>
    private var pendingCount = 0
    private static let pendingCapacity = 16
    /// A stream's lone first frame, held until the next call: libsamplerate's linear converter
    /// outputs 0 instead of the sample when a stream's first call carries exactly one frame.
    private var heldFirstFrame: Float?
    private let opening: UnsafeMutablePointer<Float>
    private var consumedFrames = 0
    private var producedFrames = 0

    /// Output libsamplerate may release in one call beyond the ratio's share (its held-back frames).
    private static let burstAllowance = 512

    /// Creates a libsamplerate converter.
    /// - Throws: ``ResamplerError/unsupportedRate(_:)`` for a rate outside 1 kHz … 768 kHz, or
    ///   ``ResamplerError/backendFailure(_:code:)`` with libsamplerate's error.
    public init(inputRate: SampleRate, outputRate: SampleRate, quality: Quality = .sincBest) throws(ResamplerError) {
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.quality = quality
        ratio = try RationalRatio(inputRate: inputRate, outputRate: outputRate)
        srcRatio = outputRate.hertz / inputRate.hertz
        guard src_is_valid_ratio(srcRatio) != 0 else {
            throw .backendFailure("libsamplerate converts by ratios from 1/256 to 256, not \(srcRatio)", code: nil)
        }
        state = try Self.makeState(quality)
        paddingFrames = Int((1 / srcRatio).rounded(.up)) + 4
        padding = .allocate(capacity: paddingFrames)
        padding.initialize(repeating: 0, count: paddingFrames)
        tailCapacity = Self.burstAllowance * 8 + paddingFrames * Int(srcRatio.rounded(.up))
        tail = .allocate(capacity: tailCapacity)
        pending = .allocate(capacity: Self.pendingCapacity)
        opening = .allocate(capacity: 2)
        opening.initialize(repeating: 0, count: 2)
        latency = try measureHoldBack() / outputRate.hertz
    }

    deinit {
        src_delete(state)
        padding.deallocate()
        tail.deallocate()
        pending.deallocate()
        opening.deallocate()
    }

    public func maxOutputFrames(forInputFrames count: Int) -> Int {
        Int((Double(count) * srcRatio).rounded(.up)) + Self.burstAllowance + Self.pendingCapacity
    }

    public var maxFlushFrames: Int {
        Int((latency * outputRate.hertz).rounded(.up)) + Self.pendingCapacity + 8
    }

    public func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) throws(ResamplerError) -> Int {
        let needed = maxOutputFrames(forInputFrames: input.count)
        guard output.count >= needed else { throw .outputBufferTooSmall(needed: needed, available: output.count) }
        guard var source = input.baseAddress, let destination = output.baseAddress, input.count > 0 else { return 0 }
        var count = input.count
        if consumedFrames == 0 && heldFirstFrame == nil && count == 1 {
            heldFirstFrame = source.pointee
            consumedFrames = 1
            return 0
        }
        destination.update(from: pending, count: pendingCount)
        var available = pendingCount
        if let first = heldFirstFrame {
            opening[0] = first
            opening[1] = source.pointee
            available += try run(opening, count: 2, endOfInput: false, into: destination + available, capacity: output.count - available)
            heldFirstFrame = nil
            source += 1
            count -= 1
        }
        available += try run(source, count: count, endOfInput: false, into: destination + available, capacity: output.count - available)
        consumedFrames += input.count
        let allowed = max(ratio.outputFrames(forInputFrames: consumedFrames) - producedFrames, 0)
        let delivered = min(available, allowed)
        pendingCount = min(available - delivered, Self.pendingCapacity)
        pending.update(from: destination + delivered, count: pendingCount)
        producedFrames += delivered
        return delivered
    }

    public func flush(into output: UnsafeMutableBufferPointer<Float>) throws(ResamplerError) -> Int {
        guard output.count >= maxFlushFrames else { throw .outputBufferTooSmall(needed: maxFlushFrames, available: output.count) }
        defer { reset() }
        // Silence after the stream, then end of input: enough output to reach the exact length.
        tail.update(from: pending, count: pendingCount)
        var made = pendingCount
        if let first = heldFirstFrame {
            opening[0] = first
            made += try run(opening, count: 1, endOfInput: false, into: tail + made, capacity: tailCapacity - made)
        }
        made += try run(padding, count: paddingFrames, endOfInput: false, into: tail + made, capacity: tailCapacity - made)
        made += try run(padding, count: 0, endOfInput: true, into: tail + made, capacity: tailCapacity - made)
        let owed = max(ratio.outputFrames(forInputFrames: consumedFrames) - producedFrames, 0)
        let written = min(owed, made, output.count)
        if let destination = output.baseAddress {
            destination.update(from: tail, count: written)
        }
        return written
    }

    public func reset() {
        src_reset(state)
        pendingCount = 0
        heldFirstFrame = nil
        consumedFrames = 0
        producedFrames = 0
    }

    /// Feeds `count` frames (all of them) and collects the output.
    private func run(_ source: UnsafePointer<Float>, count: Int, endOfInput: Bool, into destination: UnsafeMutablePointer<Float>, capacity: Int) throws(ResamplerError) -> Int {
        var data = SRC_DATA()
        data.src_ratio = srcRatio
        var used = 0
        var produced = 0
        repeat {
            data.data_in = source + used
            data.input_frames = count - used
            data.data_out = destination + produced
            data.output_frames = capacity - produced
            data.end_of_input = endOfInput ? 1 : 0
            let code = src_process(state, &data)
            guard code == 0 else { throw .backendFailure("libsamplerate refused the block", code: Self.code(code)) }
            used += data.input_frames_used
            produced += data.output_frames_gen
            if data.output_frames_gen == 0 && data.input_frames_used == 0 { break }
        } while used < count || (endOfInput && produced < capacity)
        guard used == count else {
            throw .backendFailure("libsamplerate released more output than the buffer sized for it holds", code: nil)
        }
        return produced
    }

    /// Frames libsamplerate holds back in steady state, measured by streaming silence.
    private func measureHoldBack() throws(ResamplerError) -> Double {
        let probeFrames = 8_192
        let input = UnsafeMutablePointer<Float>.allocate(capacity: probeFrames)
        input.initialize(repeating: 0, count: probeFrames)
        let outputCapacity = maxOutputFrames(forInputFrames: probeFrames)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: outputCapacity)
        defer {
            input.deallocate()
            output.deallocate()
            src_reset(state)
        }
        let produced = try run(input, count: probeFrames, endOfInput: false, into: output, capacity: outputCapacity)
        return Double(max(ratio.outputFrames(forInputFrames: probeFrames) - produced, 0))
    }

    private static func makeState(_ quality: Quality) throws(ResamplerError) -> OpaquePointer {
        var error: Int32 = 0
        guard let state = src_new(quality.converterType, 1, &error) else {
            throw .backendFailure("libsamplerate could not create a converter", code: Self.code(error))
        }
        return state
    }

    /// A libsamplerate error number with its own text.
    private static func code(_ error: Int32) -> SystemErrorCode {
        SystemErrorCode(.libsamplerate, error, message: src_strerror(error).map { String(cString: $0) } ?? "unknown error")
    }
}
