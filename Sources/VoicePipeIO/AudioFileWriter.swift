import CSndFile
import Glibc
import VoicePipeCore

/// Writes interleaved frames to a WAV, FLAC, AIFF or headerless file, 16-bit PCM or 32-bit float.
///
/// ```swift
/// let writer = try AudioFileWriter(path: "out.wav", sampleRate: 16_000, channelCount: 1, encoding: .int16)
/// try samples.withUnsafeBufferPointer { try writer.write($0) }
/// try writer.close()                                           // finalises the header; reports failures
/// ```
///
/// The path "-" is standard output: the file is built in an unlinked temporary file (a header
/// needs its final sizes, which a pipe cannot be rewound to write) and copied out on ``close()``.
///
/// Either input type may be written to either encoding. Samples are converted with VoicePipe's
/// conventions (``SampleConversion``: Int16 → Float is x / 32768; Float → Int16 scales by 32768, rounds
/// to nearest-even and saturates), not libsndfile's, so writing and reading back is exact whenever the
/// input type matches the encoding. Float samples written as float are stored as given.
///
/// Call ``close()`` to learn whether the header was written; `deinit` closes a writer that was not
/// closed, but can only drop an error.
public final class AudioFileWriter {
    /// How samples are stored in the file.
    public enum Encoding: Sendable {
        /// Signed 16-bit PCM.
        case int16
        /// IEEE 32-bit float.
        case float32
    }

    /// The output path ("-" for standard output).
    public let path: String
    /// The container written.
    public let container: AudioContainer
    /// Rate and channel count of the file; `sampleType` is the encoding's.
    public let format: ValidatedFormat
    /// How samples are stored.
    public let encoding: Encoding
    /// Frames written so far.
    public private(set) var framesWritten: Int = 0

    /// The libsndfile handle, which owns the file descriptor; nil once closed.
    private var handle: OpaquePointer?
    /// For standard output: the temporary file the handle writes, copied out on close.
    private var spool: Int32?
    /// Conversion scratch, in the encoding's sample type, allocated once.
    private let scratch: UnsafeMutableRawBufferPointer
    private static let scratchBytes = 16_384

    /// Creates (or replaces) an audio file.
    /// - Parameters:
    ///   - path: the file to write; "-" for standard output.
    ///   - sampleRate: frames per second; positive and a whole number of hertz (file headers store integers).
    ///   - channelCount: samples per frame; must be positive.
    ///   - encoding: 16-bit PCM or 32-bit float.
    ///   - container: WAV (the default), FLAC (16-bit only), AIFF or headerless little-endian.
    /// - Throws: ``AudioFileError/unusableFormat(path:_:)`` for a rate or channel count the
    ///   ``FormatGuard`` refuses; ``AudioFileError/cannotCreate(path:reason:code:)`` when the file cannot be
    ///   created (missing directory, permission) or the container cannot hold the format.
    public init(path: String, sampleRate: SampleRate, channelCount: Int, encoding: Encoding, container: AudioContainer = .wav) throws(AudioFileError) {
        let sampleType: SampleType = encoding == .int16 ? .int16 : .float32
        let validated: ValidatedFormat
        switch FormatGuard.verdict(for: AudioFormat(sampleRate: sampleRate, channelCount: channelCount, sampleType: sampleType)) {
        case .failure(let rejection): throw .unusableFormat(path: path, rejection)
        case .success(let format): validated = format
        }
        guard let whole = sampleRate.wholeHertz else {
            throw .cannotCreate(path: path, reason: "a \(container) file stores a whole number of hertz, not \(sampleRate); round the rate", code: nil)
        }
        guard let rate = Int32(exactly: whole), let channels = Int32(exactly: channelCount) else {
            throw .cannotCreate(path: path, reason: "\(sampleRate) with \(channelCount) channels is beyond what a \(container) file can hold; use a smaller rate or fewer channels", code: nil)
        }
        guard container.canStore(encoding) else {
            throw .cannotCreate(path: path, reason: "\(container) stores integer samples only, and this output is 32-bit float; choose .wav, .aif or .raw", code: nil)
        }
        var request = SF_INFO()
        request.samplerate = rate
        request.channels = channels
        request.format = container.major | SndFileFormat.pcmSubtype(for: sampleType)
        guard sf_format_check(&request) != 0 else {
            throw .cannotCreate(path: path, reason: "libsndfile cannot write a \(container) file of \(validated); use fewer channels", code: nil)
        }

        let descriptor: Int32
        if path == "-" {
            let spooled = try POSIXFile.temporaryFile(for: path)
            spool = spooled
            descriptor = dup(spooled)
        } else {
            descriptor = try POSIXFile.createForWriting(path)
        }
        switch SndFile.open(consuming: descriptor, mode: Int32(SFM_WRITE), info: &request) {
        case .failure(let failure):
            if let spool { _ = Glibc.close(spool) }
            throw .cannotCreate(path: path, reason: "the file could not be started: \(failure.message); check free space and the path", code: failure.code)
        case .success(let handle):
            self.handle = handle
        }
        self.path = path
        self.container = container
        self.format = validated
        self.encoding = encoding
        self.scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: max(Self.scratchBytes, validated.bytesPerFrame), alignment: 16)
    }

    deinit {
        if let handle { sf_close(handle) }
        if let spool { _ = Glibc.close(spool) }
        scratch.deallocate()
    }

    /// Appends interleaved Int16 frames.
    /// - Parameter interleaved: whole frames (a multiple of the channel count) of full-scale-32768 samples.
    /// - Throws: ``AudioFileError/writeFailed(path:reason:code:)`` for a partial frame (nothing is written),
    ///   a closed writer, or a short write (disk full); ``framesWritten`` counts what did get written.
    public func write(_ interleaved: UnsafeBufferPointer<Int16>) throws(AudioFileError) {
        let handle = try writableHandle(sampleCount: interleaved.count)
        guard let base = interleaved.baseAddress, !interleaved.isEmpty else { return }
        switch encoding {
        case .int16:
            try writeFrames(handle, frames: interleaved.count / format.channelCount) { sf_writef_short(handle, base, $0) }
        case .float32:
            try writeConverted(handle, interleaved) { source, destination in
                SampleConversion.float(source, into: destination.assumingMemoryBound(to: Float.self))
            } write: { pointer, frames in
                sf_writef_float(handle, pointer.assumingMemoryBound(to: Float.self), frames)
            }
        }
    }

    /// Appends interleaved Float frames (full scale 1.0).
    /// - Parameter interleaved: whole frames (a multiple of the channel count).
    /// - Throws: as ``write(_:)-(UnsafeBufferPointer<Int16>)``.
    public func write(_ interleaved: UnsafeBufferPointer<Float>) throws(AudioFileError) {
        let handle = try writableHandle(sampleCount: interleaved.count)
        guard let base = interleaved.baseAddress, !interleaved.isEmpty else { return }
        switch encoding {
        case .float32:
            try writeFrames(handle, frames: interleaved.count / format.channelCount) { sf_writef_float(handle, base, $0) }
        case .int16:
            try writeConverted(handle, interleaved) { source, destination in
                SampleConversion.int16(source, into: destination.assumingMemoryBound(to: Int16.self))
            } write: { pointer, frames in
                sf_writef_short(handle, pointer.assumingMemoryBound(to: Int16.self), frames)
            }
        }
    }

    /// Finalises the header and closes the file. Closing twice is harmless.
    /// - Throws: ``AudioFileError/writeFailed(path:reason:code:)`` when the header or the file could not be
    ///   finished; the file is closed either way.
    public func close() throws(AudioFileError) {
        guard let handle else { return }
        self.handle = nil
        // sf_close rewrites the header with the final sizes and closes the descriptor.
        let status = sf_close(handle)
        if status != 0 {
            let code = SndFile.code(status)
            throw .writeFailed(path: path, reason: "the header could not be finished or the file closed: \(code.messageInSentence); the file is incomplete, check free space and write it again", code: code)
        }
        if let spool {
            self.spool = nil
            defer { _ = Glibc.close(spool) }
            try POSIXFile.copy(spool, toStandardOutputFor: path)
        }
    }

    // MARK: Internals

    private func writableHandle(sampleCount: Int) throws(AudioFileError) -> OpaquePointer {
        guard let handle else {
            throw .writeFailed(path: path, reason: "the writer is already closed; create a new writer to write more", code: nil)
        }
        guard sampleCount % format.channelCount == 0 else {
            throw .writeFailed(path: path, reason: "the buffer holds \(sampleCount) samples, not a whole number of \(format.channelCount)-channel frames; nothing was written, pass whole frames", code: nil)
        }
        return handle
    }

    /// Calls `write` for `frames` frames and checks that libsndfile took them all.
    private func writeFrames(_ handle: OpaquePointer, frames: Int, _ write: (sf_count_t) -> sf_count_t) throws(AudioFileError) {
        let written = Int(max(write(sf_count_t(frames)), 0))
        framesWritten += written
        guard written == frames else {
            let code = SndFile.lastError(handle)
            throw .writeFailed(path: path, reason: "only \(written) of \(frames) frames were written: \(code.messageInSentence); check free disk space", code: code)
        }
    }

    /// Converts `source` chunk by chunk into the scratch buffer and writes each chunk.
    private func writeConverted<Source>(
        _ handle: OpaquePointer,
        _ source: UnsafeBufferPointer<Source>,
        convert: (UnsafeBufferPointer<Source>, UnsafeMutableRawBufferPointer) -> Void,
        write: (UnsafeMutableRawPointer, sf_count_t) -> sf_count_t
    ) throws(AudioFileError) {
        guard let scratchBase = scratch.baseAddress else { return }
        let channels = format.channelCount
        let bytesPerFrame = channels * format.sampleType.byteCount
        let chunkFrames = max(1, scratch.count / bytesPerFrame)
        var frame = 0
        let totalFrames = source.count / channels
        while frame < totalFrames {
            let frames = min(chunkFrames, totalFrames - frame)
            let slice = UnsafeBufferPointer(rebasing: source[(frame * channels)..<((frame + frames) * channels)])
            convert(slice, UnsafeMutableRawBufferPointer(start: scratchBase, count: frames * bytesPerFrame))
            try writeFrames(handle, frames: frames) { write(scratchBase, $0) }
            frame += frames
        }
    }
}

/// A writer is one output stream over one C handle: use it from one task at a time.
@available(*, unavailable)
extension AudioFileWriter: Sendable {}
