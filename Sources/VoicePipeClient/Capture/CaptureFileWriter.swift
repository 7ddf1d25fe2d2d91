import VoicePipeCore
import VoicePipeIO

/// Where capture frames (16 kHz mono Int16) are written, and what they added up to: a 16-bit
/// WAV, or the `audio.chunk` messages a session would send, one per line.
public final class CaptureFileWriter {
    /// The two kinds of capture file.
    public enum Destination: Sendable, Hashable {
        /// A 16 kHz mono Int16 WAV file.
        case wav(path: String)
        /// `audio.chunk` JSON Lines; "-" is standard output.
        case jsonLines(path: String)

        /// The path as given.
        public var path: String {
            switch self {
            case .wav(let path), .jsonLines(let path): path
            }
        }

        /// How messages name it: "'out.wav'", or "standard output".
        public var name: String { path == "-" ? "standard output" : "'\(path)'" }
    }

    public let destination: Destination
    /// The frames written so far, summed up.
    public private(set) var statistics = CaptureStatistics()
    private let wav: AudioFileWriter?
    private let lines: JSONLinesWriter?
    private static let target = AudioFormat.captureTarget

    /// Creates (or truncates) the file.
    /// - Throws: ``AudioFileError`` for a WAV, ``JSONLinesError`` for JSON Lines.
    public init(_ destination: Destination) throws {
        self.destination = destination
        switch destination {
        case .wav(let path):
            wav = try AudioFileWriter(path: path, sampleRate: Int(Self.target.sampleRate), channelCount: Self.target.channelCount, encoding: .int16)
            lines = nil
        case .jsonLines(let path):
            lines = try JSONLinesWriter(path: path)
            wav = nil
        }
    }

    /// Writes one frame and counts it.
    /// - Throws: the writer's error; what was written before stays written.
    public func write(_ frame: CaptureFrame) throws {
        try wav?.write(frame.samples)
        try lines?.appendAudioChunk(frame.samples, sampleRate: Int(Self.target.sampleRate))
        statistics.add(frame)
    }

    /// Finishes the file: the WAV header gets its length, buffered lines are written out.
    public func finish() throws {
        try wav?.close()
        try lines?.flush()
    }
}
