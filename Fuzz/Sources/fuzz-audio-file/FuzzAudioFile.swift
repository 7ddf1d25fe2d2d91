import FuzzSupport
import VoicePipeCore
import VoicePipeIO

@_cdecl("fuzz_audio_file_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

/// Converters by input format, reset and reused across inputs (the capture-converter target
/// checks reuse): designing the resampler's filter for each input took over half of each
/// execution.
nonisolated(unsafe) var converters: [ValidatedFormat: CaptureConverter] = [:]

func converter(for format: ValidatedFormat) throws -> CaptureConverter {
    if let built = converters[format] {
        built.reset()
        return built
    }
    let converter = try CaptureConverter(input: format)
    if converters.count >= 256 { converters.removeAll() }
    converters[format] = converter
    return converter
}

/// Arbitrary bytes as an audio file (libsndfile recognises the container from the bytes: WAV,
/// AIFF, FLAC, Ogg, CAF, AU, MP3, …) read from memory by `AudioFileReader` through libsndfile's
/// virtual I/O (a regular file differs only in where the bytes come from) and converted by
/// `CaptureConverter.convert(_:)`, as `voicepipe convert` does. Properties: every failure is a
/// typed `AudioFileError` or `CaptureConverterError` (a trap is a crash); when the conversion
/// ends, the 16 kHz samples delivered are exactly the rational length of the frames read
/// (`RationalRatio.outputFrames`), frames come numbered in order and no longer than the frame
/// length, a truncated ending names the frames read, and `measureLength()` on a fresh reader finds
/// the same number of frames.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let bytes = Array(input.remaining())
    do {
        let reader = try AudioFileReader(bytes: bytes, name: "input")
        let converter = try converter(for: reader.format)
        var produced = 0
        var nextIndex = 0
        let ending = try converter.convert(reader) { frame in
            fuzzRequire(frame.index == nextIndex && frame.startSample == produced, "frame \(frame.index) at \(frame.startSample) after \(nextIndex) frames, \(produced) samples")
            fuzzRequire(frame.sampleCount <= converter.frameLength && (frame.sampleCount > 0 || produced == 0), "a frame of \(frame.sampleCount) samples")
            nextIndex += 1
            produced += frame.sampleCount
        }
        let ratio = try RationalRatio(inputRate: reader.format.sampleRate, outputRate: AudioFormat.captureTarget.sampleRate)
        let expected = ratio.outputFrames(forInputFrames: reader.framesRead)
        fuzzRequire(produced == expected, "\(reader.framesRead) frames at \(reader.format.sampleRate) gave \(produced) samples, not \(expected)")
        if case .truncated(let framesRead, _) = ending {
            fuzzRequire(framesRead == reader.framesRead, "truncated after \(framesRead) frames but \(reader.framesRead) were read")
        }
        let length = try AudioFileReader(bytes: bytes, name: "input").measureLength()
        fuzzRequire(length.frames == reader.framesRead, "measureLength found \(length.frames) frames, conversion read \(reader.framesRead)")
    } catch is AudioFileError {
    } catch is CaptureConverterError {
    } catch is ResamplerError {
    } catch {
        fuzzRequire(false, "an untyped error: \(error)")
    }
    return 0
}
