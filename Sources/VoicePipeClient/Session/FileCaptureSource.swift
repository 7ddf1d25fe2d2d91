import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

extension AudioFrame {
    /// Copies a converter's frame, which is valid only inside its callback.
    public init(copying frame: borrowing CaptureFrame) {
        self.init(samples: frame.copySamples(), level: frame.level)
    }
}

/// An audio file as a session's microphone: its frames, one at a time, through the capture
/// converter, with the converter flushed at the end so the last words are sent.
///
/// Pull-based, so the session driver decides when each frame is "captured" (at real-time pace, or
/// as fast as the runtime takes them) on its own thread, with no thread of its own.
public final class FileCaptureSource {
    public let reader: AudioFileReader
    public let converter: CaptureConverter
    /// Frames converted and not yet taken, oldest first.
    private var ready: [AudioFrame] = []
    private var readyHead = 0
    private let block: UnsafeMutableRawBufferPointer
    /// How reading ended, once it has.
    public private(set) var ending: FileReadEnding?
    /// Frames handed out so far.
    public private(set) var framesDelivered = 0

    /// Frame duration at the capture rate (the last frame may be shorter).
    public var frameDuration: Duration { AudioFormat.captureTarget.sampleRate.duration(ofFrames: converter.frameLength) }

    /// Reads `reader` through `converter` (built for the reader's format).
    /// - Throws: ``FileCaptureSourceError/formatMismatch(file:converter:)`` when the formats differ.
    public init(reader: AudioFileReader, converter: CaptureConverter, blockFrames: Int = 4_096) throws(FileCaptureSourceError) {
        guard converter.inputFormat == reader.format else {
            throw .formatMismatch(file: reader.format.description, converter: converter.inputFormat.description)
        }
        self.reader = reader
        self.converter = converter
        block = .allocate(byteCount: max(blockFrames, 1) * reader.format.bytesPerFrame, alignment: 16)
    }

    deinit {
        block.deallocate()
    }

    /// The next frame, or nil once the file (and the converter's tail) is used up.
    /// - Throws: ``AudioFileError`` when reading fails (frames before it were delivered); a
    ///   truncated file is not an error: it ends early and ``ending`` says so.
    public func next() throws -> AudioFrame? {
        while readyHead == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyHead = 0
            guard ending == nil else { return nil }
            try fill()
        }
        let frame = ready[readyHead]
        readyHead += 1
        framesDelivered += 1
        return frame
    }

    /// Converts one more block, or flushes the converter at the end of the file.
    private func fill() throws {
        let frames: Int
        do {
            frames = try reader.read(into: block)
        } catch {
            guard case .truncated(_, let read, let declared) = error else { throw error }
            try converter.flush { ready.append(AudioFrame(copying: $0)) }
            ending = .truncated(framesRead: read, framesDeclared: declared)
            return
        }
        if frames == 0 {
            try converter.flush { ready.append(AudioFrame(copying: $0)) }
            ending = .endOfFile
            return
        }
        try converter.process(UnsafeRawBufferPointer(rebasing: block[0..<(frames * reader.format.bytesPerFrame)])) {
            ready.append(AudioFrame(copying: $0))
        }
    }
}

/// Why a file cannot be a session's capture source.
public enum FileCaptureSourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The converter was built for another format than the file's.
    case formatMismatch(file: String, converter: String)

    public var description: String {
        switch self {
        case .formatMismatch(let file, let converter):
            "the capture converter was built for \(converter), but the file is \(file)"
        }
    }
}
