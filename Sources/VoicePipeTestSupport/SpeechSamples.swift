import VoicePipeCore
import VoicePipeIO

/// The bundled speech samples as the capture path delivers them: 16 kHz mono Int16.
public enum SpeechSamples {
    /// Converts one file from Samples/Audio to the capture target with the library's converter.
    /// - Parameter name: a file name in Samples/Audio, such as `speech-22k05-mono-s16.wav`.
    /// - Returns: the converted samples, flushed.
    /// - Throws: the reader's or the converter's error.
    public static func capture(_ name: String) throws -> [Int16] {
        let reader = try AudioFileReader(path: CommandRunner.sample(name))
        var samples = [Int16]()
        _ = try CaptureConverter(input: reader.format).convert(reader) { frame in samples += frame.copySamples() }
        return samples
    }
}
