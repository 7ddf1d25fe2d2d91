import VoicePipeCore
import VoicePipeIO

/// Where capture frames (16 kHz mono Int16) are written, and what they added up to: a 16-bit
/// audio file (WAV, FLAC, AIFF or headerless), or the `audio.chunk` messages a session would
/// send, one per line. "-" is standard output for either.
public final class CaptureFileWriter {
    /// The two kinds of capture file.
    public enum Destination: Sendable, Hashable {
        /// A 16 kHz mono Int16 audio file in `container`.
        case audioFile(path: String, container: AudioContainer)
        /// `audio.chunk` JSON Lines.
        case jsonLines(path: String)

        /// The path as given.
        public var path: String {
            switch self {
            case .audioFile(let path, _), .jsonLines(let path): path
            }
        }

        /// How messages name it: "'out.wav'", or "standard output".
        public var name: String { path == "-" ? "standard output" : "'\(path)'" }
    }

    public let destination: Destination
    /// The frames written so far, summed up.
    public private(set) var statistics = CaptureStatistics()
    private let audio: AudioFileWriter?
    private let lines: JSONLinesWriter?
    private static let target = AudioFormat.captureTarget

    /// Creates (or truncates) the file.
    /// - Throws: ``AudioFileError`` for an audio file, ``JSONLinesError`` for JSON Lines.
    public init(_ destination: Destination) throws {
        self.destination = destination
        switch destination {
        case .audioFile(let path, let container):
            audio = try AudioFileWriter(path: path, sampleRate: Self.target.sampleRate, channelCount: Self.target.channelCount, encoding: .int16, container: container)
            lines = nil
        case .jsonLines(let path):
            lines = try JSONLinesWriter(path: path)
            audio = nil
        }
    }

    /// Writes one frame and counts it.
    /// - Throws: the writer's error; what was written before stays written.
    public func write(_ frame: borrowing CaptureFrame) throws {
        try frame.withSamples { samples in
            try samples.withUnsafeBufferPointer { samples in
                try audio?.write(samples)
                try lines?.appendAudioChunk(samples, sampleRate: Self.target.sampleRate)
            }
        }
        statistics.add(frame)
    }

    /// Finishes the file: the header gets its length, buffered lines are written out.
    public func finish() throws {
        try audio?.close()
        try lines?.flush()
    }
}
