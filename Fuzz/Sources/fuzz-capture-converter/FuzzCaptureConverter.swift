import FuzzSupport
import VoicePipeCore

@_cdecl("fuzz_capture_converter_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

/// Rates a device or a file header might report, the ordinary and the absurd.
let commonRates: [Double] = [8_000, 11_025, 16_000, 22_050, 44_100, 48_000, 96_000, 192_000, 768_000, 1_000, 999.999, 768_000.001, 44_100.5]

/// The sample rate chosen by the input: NaN, ±∞, zero, negative, common, any whole rate up to
/// 10^7 Hz, millihertz fractions, or any bit pattern.
func sampleRate(_ input: inout FuzzInput) -> Double {
    let kind = input.byte() % 9
    let payload = input.uint64()
    switch kind {
    case 0: return .nan
    case 1: return payload & 1 == 0 ? .infinity : -.infinity
    case 2: return payload & 1 == 0 ? 0 : -0.0
    case 3: return -Double(payload % 10_000_001)
    case 4: return commonRates[Int(payload % UInt64(commonRates.count))]
    case 5, 6: return Double(payload % 10_000_001)
    case 7: return Double(payload % 10_000_001) + Double((payload >> 32) % 1_000) / 1_000
    default: return Double(bitPattern: payload)
    }
}

/// What the format guard must say, from its contract.
func expectedVerdict(_ format: AudioFormat) -> FormatRejection? {
    if !format.sampleRate.hertz.isFinite { return .sampleRateNotFinite(format.sampleRate) }
    if format.sampleRate.hertz <= 0 { return .sampleRateNotPositive(format.sampleRate) }
    if format.channelCount <= 0 { return .noChannels(format.channelCount) }
    return nil
}

/// Rejections compared with NaN equal to itself (a NaN rate is refused as NaN).
func same(_ a: FormatRejection?, _ b: FormatRejection?) -> Bool {
    switch (a, b) {
    case (.sampleRateNotFinite(let x)?, .sampleRateNotFinite(let y)?): x == y || (x.hertz.isNaN && y.hertz.isNaN)
    default: a == b
    }
}

/// What building the converter must say for a valid format, from its contract (checked in this order).
func expectedBuildError(_ format: ValidatedFormat, _ options: CaptureOptions) -> CaptureConverterError? {
    if !(10...100).contains(options.frameMilliseconds) { return .frameDurationOutOfRange(milliseconds: options.frameMilliseconds) }
    if case .channel(let index) = options.downmix, !(0..<format.channelCount).contains(index) {
        return .downmixChannelOutOfRange(channel: index, channelCount: format.channelCount)
    }
    if !(RationalRatio.minimumRate...RationalRatio.maximumRate).contains(format.sampleRate) {
        return .resampler(.unsupportedRate(format.sampleRate))
    }
    return nil
}

/// Converters already built, by format and options: designing the resampler's filter is most of
/// the cost of a case, and a converter that was flushed starts a new stream, so reusing one also
/// checks that flush leaves nothing behind. Emptied when it grows past a few hundred.
struct ConverterKey: Hashable {
    let format: ValidatedFormat
    let options: CaptureOptions
}
nonisolated(unsafe) var converters: [ConverterKey: CaptureConverter] = [:]

/// A format description and sample bytes, all from the fuzzer:
///
/// ```
///  rate kind (1) rate payload (8)  channels (1, 0 … 64)  type+layout+downmix (1)  frame ms (1)
///  downmix channel (1)  cuts (1, 0 … 7)  cut sizes in frames (1 each)  sample bytes (the rest)
/// ```
///
/// Properties: the format guard refuses exactly the invalid formats (NaN or infinite rate, rate
/// not positive, no channels) with the right typed error; the converter refuses exactly what its
/// contract says (frame duration, downmix channel, rates outside 1 kHz … 768 kHz); a buffer of a
/// partial frame is refused and consumes nothing; otherwise, however the samples are cut, the
/// 16 kHz output has exactly the rational length of the input, the frames come in order and no
/// longer than the frame length, and every frame's level agrees with its samples (no NaN).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let rate = sampleRate(&input)
    let channels = Int(input.byte() % 65)
    let layout = input.byte()
    let sampleType = SampleType.allCases[Int(layout & 3) % SampleType.allCases.count]
    let format = AudioFormat(sampleRate: SampleRate(hertz: rate), channelCount: channels, sampleType: sampleType, isInterleaved: layout & 4 == 0)
    let millisecondsByte = Int(input.byte())
    let milliseconds = millisecondsByte < 200 ? 10 + millisecondsByte % 91 : millisecondsByte - 200
    let downmixChannel = Int(input.byte() % 70)
    let options = CaptureOptions(frameMilliseconds: milliseconds, downmix: layout & 8 == 0 ? .average : .channel(downmixChannel))
    let cuts = (0..<Int(input.byte() % 8)).map { _ in Int(input.byte()) + 1 }

    let validated: ValidatedFormat
    switch FormatGuard.verdict(for: format) {
    case .failure(let rejection):
        fuzzRequire(same(expectedVerdict(format), rejection), "\(format) refused as \(rejection), expected \(String(describing: expectedVerdict(format)))")
        return 0
    case .success(let format):
        fuzzRequire(expectedVerdict(format.audioFormat) == nil, "\(format) accepted, expected \(String(describing: expectedVerdict(format.audioFormat)))")
        validated = format
    }

    let converter: CaptureConverter
    do throws(CaptureConverterError) {
        let key = ConverterKey(format: validated, options: options)
        if let built = converters[key] {
            converter = built
        } else {
            converter = try CaptureConverter(input: validated, options: options)
            if converters.count >= 256 { converters.removeAll() }
            converters[key] = converter
        }
        fuzzRequire(expectedBuildError(validated, options) == nil, "\(validated) \(options) built, expected \(String(describing: expectedBuildError(validated, options)))")
    } catch {
        fuzzRequire(expectedBuildError(validated, options) == error, "\(validated) \(options) refused as \(error), expected \(String(describing: expectedBuildError(validated, options)))")
        return 0
    }

    // Whole frames of samples, in memory aligned for every sample type.
    let bytesPerFrame = validated.bytesPerFrame
    let sampleBytes = input.remaining()
    let frames = sampleBytes.count / bytesPerFrame
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(frames * bytesPerFrame, 1), alignment: 16)
    defer { buffer.deallocate() }
    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: sampleBytes[0..<(frames * bytesPerFrame)]))

    var produced = 0
    var nextIndex = 0
    let deliver = { (frame: borrowing CaptureFrame) in
        fuzzRequire(frame.index == nextIndex && frame.startSample == produced, "frame \(frame.index) at \(frame.startSample) after \(nextIndex) frames, \(produced) samples")
        fuzzRequire(frame.sampleCount <= converter.frameLength, "a frame of \(frame.sampleCount) samples, longer than \(converter.frameLength)")
        let peak = frame.copySamples().reduce(0) { max($0, Int($1.magnitude)) }
        fuzzRequire(frame.level.peak == peak, "level peak \(frame.level.peak), samples' peak \(peak)")
        fuzzRequire(!frame.level.floatPeak.isNaN && frame.level.floatPeak >= 0, "float peak \(frame.level.floatPeak)")
        fuzzRequire(!frame.level.isDigitalSilence || peak == 0, "digital silence with a peak of \(peak)")
        nextIndex += 1
        produced += frame.sampleCount
    }
    do {
        // A partial frame is refused before anything is consumed.
        do {
            try converter.process(UnsafeRawBufferPointer(rebasing: buffer[0..<(bytesPerFrame - 1)]), deliver)
            fuzzRequire(false, "a buffer of \(bytesPerFrame - 1) bytes was taken with \(bytesPerFrame)-byte frames")
        } catch let error as CaptureConverterError {
            fuzzRequire(error == .partialFrame(byteCount: bytesPerFrame - 1, bytesPerFrame: bytesPerFrame) && converter.inputFrames == 0, "a partial frame gave \(error)")
        }
        var done = 0
        for cut in cuts + [frames] where done < frames {
            let end = min(done + cut, frames)
            try converter.process(UnsafeRawBufferPointer(rebasing: buffer[(done * bytesPerFrame)..<(end * bytesPerFrame)]), deliver)
            done = end
        }
        fuzzRequire(converter.inputFrames == frames, "\(converter.inputFrames) input frames counted, \(frames) given")
        try converter.flush(deliver)
    } catch {
        fuzzRequire(false, "\(validated) with \(frames) frames failed: \(error)")
    }
    do throws(ResamplerError) {
        let expected = try RationalRatio(inputRate: validated.sampleRate, outputRate: AudioFormat.captureTarget.sampleRate).outputFrames(forInputFrames: frames)
        fuzzRequire(produced == expected, "\(frames) frames at \(validated.sampleRate) gave \(produced) samples, not \(expected)")
    } catch {
        fuzzRequire(false, "a rate the converter took has no ratio: \(error)")
    }
    return 0
}
