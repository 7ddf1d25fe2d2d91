import VoicePipeCore
import VoicePipeIO

/// Reads audio files back whole through the library: what a command wrote, what a fixture holds.
public enum AudioFiles {
    /// Reads the rest of a file in calls of `bufferFrames` frames, keeping every sample delivered
    /// before an error.
    /// - Parameters:
    ///   - reader: an open reader; reading starts where it stands.
    ///   - bufferFrames: frames per `read(into:)` call (the chunking a test may vary; at least 1).
    ///   - type: the Swift type of the file's sample type (`Int16`, `Int32`, `Float`, `Double`).
    /// - Returns: the interleaved samples, and the error that ended the reading (nil for a clean end).
    public static func readAll<T: PCMSample & Numeric>(_ reader: AudioFileReader, bufferFrames: Int = 4_096, as type: T.Type = T.self) -> (samples: [T], error: AudioFileError?) {
        let channels = reader.format.channelCount
        var buffer = [T](repeating: 0, count: bufferFrames * channels)
        var out = [T]()
        while true {
            do throws(AudioFileError) {
                let frames = try buffer.withUnsafeMutableBufferPointer { pointer throws(AudioFileError) in
                    try reader.read(into: pointer)
                }
                if frames == 0 { return (out, nil) }
                out += buffer[0..<(frames * channels)]
            } catch {
                return (out, error)
            }
        }
    }

    /// Opens the file at `path` and reads it whole.
    /// - Parameters:
    ///   - path: the file.
    ///   - type: the Swift type of the file's sample type.
    /// - Returns: the file's format and its interleaved samples.
    /// - Throws: the ``AudioFileError`` that opening or reading ended with; a file that does not
    ///   read cleanly to its end is an error here, whatever was read before.
    public static func read<T: PCMSample & Numeric>(_ path: String, as type: T.Type = T.self) throws(AudioFileError) -> (format: AudioFormat, samples: [T]) {
        let reader = try AudioFileReader(path: path)
        let (samples, error) = readAll(reader, as: type)
        if let error { throw error }
        return (reader.format.audioFormat, samples)
    }
}
