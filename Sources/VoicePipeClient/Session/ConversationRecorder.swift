import VoicePipeCore
import VoicePipeIO

/// `--record`: both sides of a session in one stereo 16 kHz WAV file as it runs (captured audio
/// left, the reply as played right, aligned by ``ConversationMix``), written as the timeline
/// moves on so a long session holds only the reply audio ahead of it in memory.
public final class ConversationRecorder {
    public let path: String
    private let mix = ConversationMix()
    private let writer: AudioFileWriter
    /// The first write failure: the session goes on, the recording stops, and the summary says so.
    public private(set) var failure: AudioFileError?
    /// Stereo frames written.
    public var framesWritten: Int { writer.framesWritten }

    /// Creates (or replaces) the file.
    /// - Throws: ``AudioFileError`` when it cannot be created.
    public init(path: String) throws(AudioFileError) {
        self.path = path
        writer = try AudioFileWriter(path: path, sampleRate: ConversationMix.sampleRate, channelCount: 2, encoding: .int16)
    }

    /// A captured frame, as fed to the session.
    public func captured(_ samples: [Int16]) {
        mix.captured(samples)
        if mix.position - mix.emitted >= 4_096 { flush(all: false) }
    }

    /// A reply chunk handed to the player.
    public func reply(_ chunk: AudioChunk) { mix.reply(chunk) }
    /// The player was cut (an interruption, a drop).
    public func cut() { mix.cut() }
    /// The reply is over.
    public func replyEnded() { mix.replyEnded() }

    /// Writes the rest (the reply past the end of the capture too) and closes the file.
    public func finish() {
        flush(all: true)
        do { try writer.close() } catch { failure = failure ?? error }
    }

    private func flush(all: Bool) {
        let frames = mix.takeFinished(all: all)
        guard failure == nil, !frames.isEmpty else { return }
        do {
            try frames.withUnsafeBufferPointer { buffer throws(AudioFileError) in try writer.write(buffer) }
        } catch {
            failure = error
        }
    }
}
