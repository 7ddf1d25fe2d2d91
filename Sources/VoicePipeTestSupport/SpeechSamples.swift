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

    /// Writes a person speaking the bundled samples at the given seconds (16 kHz mono Int16,
    /// silence between and after them) as a WAV file of `seconds`, for a room's talker.
    /// - Parameters:
    ///   - utterances: a sample's file name and where it starts, in seconds.
    ///   - seconds: the file's length; an utterance running past it is cut there.
    ///   - path: where the WAV file goes.
    /// - Returns: `path`.
    @discardableResult
    public static func writeTalker(_ utterances: [(name: String, start: Double)], seconds: Double, to path: String) throws -> String {
        let rate = 16_000
        var talker = [Int16](repeating: 0, count: Int(seconds * Double(rate)))
        for (name, start) in utterances {
            let speech = try capture(name)
            let offset = Int(start * Double(rate))
            for (index, sample) in speech.enumerated() where offset + index < talker.count { talker[offset + index] = sample }
        }
        let writer = try AudioFileWriter(path: path, sampleRate: 16_000, channelCount: 1, encoding: .int16)
        try talker.withUnsafeBufferPointer { try writer.write($0) }
        try writer.close()
        return path
    }
}
