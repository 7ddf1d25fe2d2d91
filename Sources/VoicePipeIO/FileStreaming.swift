import VoicePipeCore

/// How reading a file to its end went, when it did not fail.
public enum FileReadEnding: Sendable, Hashable {
    /// Every frame the file holds was read.
    case endOfFile
    /// The file's data ends early; every frame present was delivered
    /// (``AudioFileError/truncated(path:framesRead:framesDeclared:)`` as an outcome, not a failure).
    /// `framesDeclared` is what the header declares, nil when the container declares no length (an
    /// Ogg stream that stops without its end-of-stream page).
    case truncated(framesRead: Int, framesDeclared: Int?)
    /// The caller stopped before the end.
    case stopped
}

extension AudioFileReader {
    /// Reads the rest of the file in blocks of at most `blockFrames` frames and hands each block
    /// (whole frames in the file's native sample type, interleaved) to `body`, until the file ends
    /// or `body` returns `false`.
    ///
    /// A truncated file is read as far as it goes and reported as
    /// ``FileReadEnding/truncated(framesRead:framesDeclared:)``; every other read error is thrown
    /// after the frames before it were delivered.
    /// - Throws: ``AudioFileError`` from the read, or whatever `body` throws.
    public func forEachBlock(blockFrames: Int = 4_096, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws -> FileReadEnding {
        let bytesPerFrame = format.bytesPerFrame
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(blockFrames, 1) * bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let frames: Int
            do {
                frames = try read(into: buffer)
            } catch {
                guard case .truncated(_, let read, let declared) = error else { throw error }
                return .truncated(framesRead: read, framesDeclared: declared)
            }
            if frames == 0 { return .endOfFile }
            guard try body(UnsafeRawBufferPointer(rebasing: buffer[0..<(frames * bytesPerFrame)])) else { return .stopped }
        }
    }
}

/// How long a file is, as reading it to its end finds: what a conversion of the whole file reads.
public struct AudioFileLength: Sendable, Hashable {
    /// The frames the file delivers, from its first frame to where reading ends.
    public let frames: Int
    /// How reading ends: ``FileReadEnding/endOfFile``, or ``FileReadEnding/truncated(framesRead:framesDeclared:)``
    /// when the data ends early.
    public let ending: FileReadEnding
    /// Whether the file was decoded to count ``frames`` (the header's count is not exact for its
    /// format); `false` when the count is the header's, exact by ``AudioFileInfo/frameCountIsExact``.
    public let wasCounted: Bool

    public init(frames: Int, ending: FileReadEnding, wasCounted: Bool) {
        self.frames = frames
        self.ending = ending
        self.wasCounted = wasCounted
    }
}

extension AudioFileReader {
    /// The frames the file delivers and how reading it ends, without converting anything: what
    /// ``CaptureConverter/convert(_:progress:_:)`` reads from a fresh reader.
    ///
    /// Where the header's count is exact (``AudioFileInfo/frameCountIsExact``) nothing is read.
    /// Otherwise (FLAC, Ogg, MPEG, compressed encodings) the rest of the file is decoded and
    /// counted, and the reader is left at its end: libsndfile's count for an MP3 without a Xing
    /// header is an estimate from the file's size, and a FLAC or Ogg file cut short or damaged
    /// delivers fewer frames than its header says.
    /// - Parameter blockFrames: frames decoded per read while counting.
    /// - Throws: the ``AudioFileError`` reading ends with, other than truncation:
    ///   ``AudioFileError/corrupt(path:code:)`` for a stream damaged part-way (``framesRead`` then
    ///   says how many frames come before the damage).
    public func measureLength(blockFrames: Int = 4_096) throws(AudioFileError) -> AudioFileLength {
        if info.frameCountIsExact, let frames = info.frameCount {
            if let declared = info.declaredFrameCount, frames < declared {
                return AudioFileLength(frames: frames, ending: .truncated(framesRead: frames, framesDeclared: declared), wasCounted: false)
            }
            return AudioFileLength(frames: frames, ending: .endOfFile, wasCounted: false)
        }
        let bytesPerFrame = format.bytesPerFrame
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(blockFrames, 1) * bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            do {
                if try read(into: buffer) == 0 {
                    return AudioFileLength(frames: framesRead, ending: .endOfFile, wasCounted: true)
                }
            } catch {
                guard case .truncated(_, let read, let declared) = error else { throw error }
                return AudioFileLength(frames: read, ending: .truncated(framesRead: read, framesDeclared: declared), wasCounted: true)
            }
        }
    }
}

extension CaptureConverter {
    /// Converts the rest of `file` (which must be in the converter's input format) and ends the
    /// stream, delivering every frame: what `voicepipe convert` and `encode` do.
    ///
    /// A truncated file is converted as far as it goes and flushed; the ending says so.
    /// - Parameters:
    ///   - progress: called after each block with the frames read from the file so far.
    ///   - deliver: called for every 16 kHz frame, on this thread.
    /// - Throws: ``AudioFileError`` from the read (the frames before it were delivered, the
    ///   stream is not flushed), a conversion error, or whatever `deliver` throws.
    public func convert(_ file: AudioFileReader, progress: (Int) -> Void = { _ in }, _ deliver: (borrowing CaptureFrame) throws -> Void) throws -> FileReadEnding {
        let ending = try file.forEachBlock { block in
            try process(block, deliver)
            progress(file.framesRead)
            return true
        }
        try flush(deliver)
        return ending
    }
}

extension PCMPlaybackConverter {
    /// Plays the rest of `file` (in the converter's source format) into `sink`, which must be
    /// connected in the converter's player format, and plays out the resampler's tail.
    ///
    /// - Parameters:
    ///   - progress: called after each block with the frames read from the file so far.
    ///   - shouldStop: asked before each block; `true` ends playback early (what was converted
    ///     is played, the tail included).
    /// - Throws: ``AudioFileError`` from the read, ``PlayerSinkError`` from the sink, or a
    ///   conversion error.
    public func play(_ file: AudioFileReader, into sink: any PlayerSink, progress: (Int) -> Void = { _ in }, shouldStop: () -> Bool = { false }) throws -> FileReadEnding {
        let ending = try file.forEachBlock(blockFrames: Self.blockFrames) { block in
            guard !shouldStop() else { return false }
            try process(block) { try sink.play($0) }
            progress(file.framesRead)
            return true
        }
        try flush { try sink.play($0) }
        return ending
    }
}
