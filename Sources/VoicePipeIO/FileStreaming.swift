import VoicePipeCore

/// How reading a file to its end went, when it did not fail.
public enum FileReadEnding: Sendable, Hashable {
    /// Every frame the file holds was read.
    case endOfFile
    /// The header declares more frames than the file holds; every frame present was delivered
    /// (``AudioFileError/truncated(path:framesRead:framesDeclared:)`` as an outcome, not a failure).
    case truncated(framesRead: Int, framesDeclared: Int)
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
    public func convert(_ file: AudioFileReader, progress: (Int) -> Void = { _ in }, _ deliver: (CaptureFrame) throws -> Void) throws -> FileReadEnding {
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
