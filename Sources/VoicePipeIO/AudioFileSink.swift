import VoicePipeCore

/// A ``PlayerSink`` that plays into a Float32 audio file (WAV by default): what a player would have
/// heard, frame for frame.
///
/// Like every sink it takes only deinterleaved Float32 buffers; it interleaves them for the file.
public final class AudioFileSink: PlayerSink {
    /// The file written.
    public let path: String
    /// Frames written so far.
    public var framesWritten: Int { writer?.framesWritten ?? finalFrames }

    private var writer: AudioFileWriter?
    private var format: PlayerFormat?
    private var interleaved: UnsafeMutablePointer<Float>?
    private var interleavedCapacity = 0
    private var finalFrames = 0

    /// The container written.
    public let container: AudioContainer

    /// A sink that creates `path` ("-" for standard output) in `container` when connected and
    /// finishes it when disconnected.
    public init(path: String, container: AudioContainer = .wav) {
        self.path = path
        self.container = container
    }

    deinit {
        interleaved?.deallocate()
    }

    /// Creates the file (replacing one already there) for `format`.
    public func connect(_ format: PlayerFormat) throws(PlayerSinkError) {
        try disconnect()
        guard format.sampleRate.wholeHertz != nil else {
            throw .failed("a WAV file needs a whole-number rate, not \(format.sampleRate.hertz) Hz", code: nil)
        }
        do {
            writer = try AudioFileWriter(path: path, sampleRate: format.sampleRate, channelCount: format.channelCount, encoding: .float32, container: container)
        } catch {
            throw .failed(error.message, code: error.code)
        }
        self.format = format
        finalFrames = 0
    }

    public func play(_ buffer: borrowing PlaybackBuffer) throws(PlayerSinkError) {
        guard let writer, let format else { throw .notConnected }
        guard buffer.channelCount == format.channelCount else {
            throw .channelCountMismatch(expected: format.channelCount, received: buffer.channelCount)
        }
        let channels = buffer.channelCount
        do {
            if channels == 1 {
                try buffer.withChannel(0) { channel throws(AudioFileError) in
                    try channel.withUnsafeBufferPointer { samples throws(AudioFileError) in try writer.write(samples) }
                }
                return
            }
            let needed = buffer.frameCount * channels
            if needed > interleavedCapacity {
                interleaved?.deallocate()
                interleaved = .allocate(capacity: needed)
                interleavedCapacity = needed
            }
            guard let interleaved else { return }
            for c in 0..<channels {
                buffer.withChannel(c) { source in
                    for i in source.indices { interleaved[i * channels + c] = source[i] }
                }
            }
            try writer.write(UnsafeBufferPointer(start: interleaved, count: needed))
        } catch {
            throw .failed(error.message, code: error.code)
        }
    }

    /// Finishes the file (its header gets the final length).
    public func disconnect() throws(PlayerSinkError) {
        guard let writer else { return }
        self.writer = nil
        finalFrames = writer.framesWritten
        do {
            try writer.close()
        } catch {
            throw .failed(error.message, code: error.code)
        }
    }
}
