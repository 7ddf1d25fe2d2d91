import CSndFile
import VoicePipeCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Streams interleaved frames from an audio file (anything libsndfile reads) or a headerless raw file.
///
/// ```swift
/// let reader = try AudioFileReader(path: "speech.wav")   // throws before any audio if unusable
/// var buffer = [Int16](repeating: 0, count: 480 * reader.format.channelCount)  // if sampleType is .int16
/// while true {
///     let frames = try buffer.withUnsafeMutableBufferPointer { try reader.read(into: $0) }
///     if frames == 0 { break }
///     // use buffer[0 ..< frames * reader.format.channelCount]
/// }
/// ```
///
/// Samples come in the file's native type (``ValidatedFormat/sampleType``), never converted: 16-bit
/// and smaller PCM, µ-law, A-law and ADPCM as `Int16`; 24- and 32-bit PCM as `Int32` (24-bit
/// left-justified); float as `Float`; double as `Double`; lossy codecs (Vorbis, Opus, MP3) as `Float`.
///
/// The reader never loads the whole file; the caller chooses the buffer size, and the frames delivered
/// do not depend on it. The libsndfile handle and the file descriptor live in the reader and are
/// closed when it is released.
public final class AudioFileReader {
    /// What the header says.
    public let info: AudioFileInfo
    /// The format, validated: what ``read(into:)-(UnsafeMutableBufferPointer<T>)`` delivers.
    public let format: ValidatedFormat
    /// Frames delivered so far.
    public private(set) var framesRead: Int = 0

    /// The libsndfile handle; it owns the file descriptor.
    private let handle: OpaquePointer
    /// The bytes a reader opened from memory reads; the handle points at them.
    private let memory: MemoryAudioBytes?
    /// Set once the end was reached cleanly; further reads return 0.
    private var reachedEnd = false
    /// A truncation or read error found after frames were delivered; thrown by every later read.
    private var pendingError: AudioFileError?
    /// What the file's last bytes say about the end of its stream (FLAC and Ogg; `.unknown` otherwise).
    private let streamEnd: StreamEndProbe.Verdict
    /// Aligned bounce buffer for raw reads into unaligned memory, allocated on first need.
    private var bounce: UnsafeMutableRawBufferPointer?
    private static let bounceBytes = 16_384

    // MARK: Opening

    /// Reads the header of `path` without keeping the file open.
    ///
    /// Works for headers the guard refuses: a WAV or AIFF that says 0 Hz or 0 channels comes back with
    /// that format, so ``AudioFileInfo/verdict`` can say why it is unusable.
    /// - Throws: ``AudioFileError/fileNotFound(path:)``, ``AudioFileError/cannotOpen(path:reason:code:)``,
    ///   ``AudioFileError/unrecognizedFormat(path:detail:code:)``.
    public static func inspect(path: String) throws(AudioFileError) -> AudioFileInfo {
        switch try openFile(path: path, use: .seek) {
        case .opened(let handle, let info, _):
            sf_close(handle)
            return info
        case .refusedHeader(let info, _):
            return info
        }
    }

    /// Opens an audio file whose header describes its format.
    /// - Throws: ``AudioFileError/unusableFormat(path:_:)`` for a header that says 0 Hz or 0 channels,
    ///   and the errors of ``inspect(path:)``.
    public convenience init(path: String) throws(AudioFileError) {
        let descriptor = try POSIXFile.openForReading(path, use: .stream(headerless: false))
        try self.init(opening: .descriptor(descriptor), path: path)
    }

    /// Opens a source whose header describes its format; bytes in memory live as long as the handle.
    private init(opening source: ByteSource, path: String) throws(AudioFileError) {
        if case .memory(let memory) = source { self.memory = memory } else { self.memory = nil }
        switch try Self.open(source, path: path) {
        case .refusedHeader(_, let rejection):
            throw .unusableFormat(path: path, rejection)
        case .opened(let handle, let info, let streamEnd):
            switch info.verdict {
            case .failure(let rejection):
                sf_close(handle)
                throw .unusableFormat(path: path, rejection)
            case .success(let validated):
                self.handle = handle
                self.info = info
                self.format = validated
                self.streamEnd = streamEnd
            }
        }
    }

    /// Opens a headerless file: interleaved frames in the given encoding (little-endian where the
    /// encoding has more than one byte a sample).
    ///
    /// Samples arrive in the encoding's ``RawEncoding/decodedSampleType``: 8-bit, µ-law, A-law and
    /// 16-bit as `Int16`, 24- and 32-bit as `Int32` (24-bit left-justified), floats as stored.
    /// - Parameters:
    ///   - path: the file; its whole content is sample data.
    ///   - rawFormat: rate, channels and encoding of the data; the rate and channel count must pass
    ///     the ``FormatGuard`` and the rate must be a whole number of hertz.
    /// - Throws: ``AudioFileError/invalidRawFormat(path:problem:code:)`` for an unusable format (checked
    ///   before the file is touched), ``AudioFileError/fileNotFound(path:)``, ``AudioFileError/cannotOpen(path:reason:code:)``.
    public init(path: String, rawFormat: RawPCMFormat) throws(AudioFileError) {
        let validated: ValidatedFormat
        switch FormatGuard.verdict(for: rawFormat.decodedFormat) {
        case .failure(let rejection):
            throw .invalidRawFormat(path: path, problem: "\(rejection); give the rate and channel count the samples were recorded with", code: nil)
        case .success(let format):
            validated = format
        }
        guard let rate = Int32(exactly: validated.sampleRate.hertz) else {
            throw .invalidRawFormat(path: path, problem: "the sample rate \(validated.sampleRate.hertz) Hz is not a whole number of hertz that libsndfile can represent; give a whole-number rate", code: nil)
        }
        guard let channels = Int32(exactly: validated.channelCount) else {
            throw .invalidRawFormat(path: path, problem: "\(validated.channelCount) channels is more than libsndfile can read; check the channel count", code: nil)
        }

        let descriptor = try POSIXFile.openForReading(path, use: .stream(headerless: true))
        let major = Int32(SF_FORMAT_RAW)
        let subtype = rawFormat.encoding.sndfileSubtype
        var request = SF_INFO()
        request.samplerate = rate
        request.channels = channels
        request.format = major | subtype | Int32(SF_ENDIAN_LITTLE)
        switch SndFile.open(consuming: descriptor, mode: Int32(SFM_READ), info: &request) {
        case .failure(let failure):
            if failure.isSystemError {
                throw .cannotOpen(path: path, reason: failure.message, code: failure.code)
            }
            throw .invalidRawFormat(path: path, problem: "libsndfile refused \(rawFormat): \(failure.message); check the format", code: failure.code)
        case .success(let handle):
            let sndFormat = SndFileFormat(major: major, subtype: subtype)
            self.handle = handle
            self.memory = nil
            self.format = validated
            self.streamEnd = .unknown
            self.info = AudioFileInfo(
                path: path, container: sndFormat.containerName, encoding: sndFormat.encodingName, format: validated.audioFormat,
                frameCount: Self.knownFrameCount(request.frames), declaredFrameCount: nil,
                frameCountIsExact: Self.knownFrameCount(request.frames) != nil)
        }
    }

    /// Opens an audio file held in memory (a WAV received over the network, say), read through
    /// libsndfile's virtual I/O exactly as the same bytes would be read from a file.
    /// - Parameters:
    ///   - bytes: the whole file, header included.
    ///   - name: what errors and ``info`` call it, in place of a path.
    /// - Throws: the errors of ``init(path:)`` except the file-system ones.
    public convenience init(bytes: [UInt8], name: String = "audio data") throws(AudioFileError) {
        try self.init(opening: .memory(MemoryAudioBytes(bytes)), path: name)
    }

    deinit {
        sf_close(handle)  // closes the file descriptor too
        bounce?.deallocate()
    }

    // MARK: Reading

    /// Reads up to `buffer.count / channelCount` frames, interleaved, in the file's native sample type.
    ///
    /// - Parameter buffer: where the samples go; `T` must be the Swift type of ``format``'s
    ///   `sampleType` (`Int16`, `Int32`, `Float` or `Double`) and the buffer must hold at least one frame.
    /// - Returns: the frames read; 0 once the end is reached. Fewer than asked for means the end is near,
    ///   not that it was reached.
    /// - Throws: ``AudioFileError/incompatibleBuffer(path:detail:)`` (wrong type, less than one frame;
    ///   nothing is read); ``AudioFileError/truncated(path:framesRead:framesDeclared:)`` from the read
    ///   that reaches the end when the header declared more frames than were there or the stream was
    ///   cut (a FLAC file ending inside a frame, an Ogg stream without its last page), and
    ///   ``AudioFileError/corrupt(path:code:)`` from the read after any other libsndfile read error.
    ///   In both cases every frame that could be read was delivered first, and every later read
    ///   throws again.
    public func read<T: PCMSample>(into buffer: UnsafeMutableBufferPointer<T>) throws(AudioFileError) -> Int {
        guard Self.isSwiftType(T.self, of: format.sampleType) else {
            throw .incompatibleBuffer(path: info.path, detail: "the file delivers \(format.sampleType) samples but the buffer holds \(T.self); read into a buffer of the type format.sampleType names")
        }
        let frames = buffer.count / format.channelCount
        guard frames > 0, let base = buffer.baseAddress else {
            throw .incompatibleBuffer(path: info.path, detail: "the buffer holds \(buffer.count) samples, less than one frame of \(format.channelCount) channels")
        }
        return try readFrames(into: UnsafeMutableRawPointer(base), frames: frames)
    }

    /// Reads up to `buffer.count / bytesPerFrame` frames as raw bytes: interleaved samples of the native
    /// sample type in host byte order (little-endian here), exactly what the typed read delivers.
    ///
    /// The buffer may have any alignment. Returns and throws as the typed read does.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(AudioFileError) -> Int {
        let bytesPerFrame = format.bytesPerFrame
        let frames = buffer.count / bytesPerFrame
        guard frames > 0, let base = buffer.baseAddress else {
            throw .incompatibleBuffer(path: info.path, detail: "the buffer holds \(buffer.count) bytes, less than one \(bytesPerFrame)-byte frame")
        }
        if Int(bitPattern: base) % format.sampleType.byteCount == 0 {
            return try readFrames(into: base, frames: frames)
        }
        return try readUnaligned(into: base, frames: frames, bytesPerFrame: bytesPerFrame)
    }

    /// Unaligned destination: read into the aligned bounce buffer and copy, until the request is filled
    /// or the file ends. An error found after some frames were copied is thrown by the next call.
    @inline(never)
    private func readUnaligned(into base: UnsafeMutableRawPointer, frames: Int, bytesPerFrame: Int) throws(AudioFileError) -> Int {
        let bounce = self.bounce ?? UnsafeMutableRawBufferPointer.allocate(byteCount: max(Self.bounceBytes, bytesPerFrame), alignment: 16)
        self.bounce = bounce
        guard let bounceBase = bounce.baseAddress else { return 0 }
        let chunkFrames = bounce.count / bytesPerFrame
        var done = 0
        while done < frames {
            let asked = min(chunkFrames, frames - done)
            let got: Int
            do {
                got = try readFrames(into: bounceBase, frames: asked)
            } catch {
                if done > 0 { return done }
                throw error
            }
            (base + done * bytesPerFrame).copyMemory(from: bounceBase, byteCount: got * bytesPerFrame)
            done += got
            if got < asked { break }
        }
        return done
    }

    /// The one place libsndfile is read from: end-of-file, truncation and read errors are decided here.
    private func readFrames(into destination: UnsafeMutableRawPointer, frames: Int) throws(AudioFileError) -> Int {
        if let pendingError { throw pendingError }
        if reachedEnd { return 0 }
        let count = sf_count_t(frames)
        let got: sf_count_t
        switch format.sampleType {
        case .int16: got = sf_readf_short(handle, destination.assumingMemoryBound(to: Int16.self), count)
        case .int32: got = sf_readf_int(handle, destination.assumingMemoryBound(to: Int32.self), count)
        case .float32: got = sf_readf_float(handle, destination.assumingMemoryBound(to: Float.self), count)
        case .float64: got = sf_readf_double(handle, destination.assumingMemoryBound(to: Double.self), count)
        }
        let delivered = Int(max(got, 0))
        let failed = sf_error(handle) != 0
        if delivered > 0 {
            framesRead += delivered
            if failed { pendingError = readFailure() }
            return delivered
        }
        if failed {
            let error = readFailure()
            pendingError = error
            throw error
        }
        if let declared = info.declaredFrameCount, framesRead < declared {
            let error = AudioFileError.truncated(path: info.path, framesRead: framesRead, framesDeclared: declared)
            pendingError = error
            throw error
        }
        if streamEnd == .cutShort {
            // An Ogg stream declares no length; its last page shows it was cut.
            let error = AudioFileError.truncated(path: info.path, framesRead: framesRead, framesDeclared: info.declaredFrameCount)
            pendingError = error
            throw error
        }
        reachedEnd = true
        return 0
    }

    /// The error for a libsndfile read error, once the frames before it were counted.
    ///
    /// A decoder that stops in a stream whose file ends inside a frame (``StreamEndProbe``) stopped
    /// because the data ran out: the file is truncated, as a WAV file cut short is. Anywhere else
    /// the stream is damaged. libFLAC says "lost sync" in both cases, so its code cannot tell them
    /// apart; the file's last bytes can.
    private func readFailure() -> AudioFileError {
        if streamEnd == .cutShort {
            return .truncated(path: info.path, framesRead: framesRead, framesDeclared: info.declaredFrameCount)
        }
        return .corrupt(path: info.path, code: SndFile.lastError(handle))
    }

    private static func isSwiftType<T>(_ type: T.Type, of sampleType: SampleType) -> Bool {
        switch sampleType {
        case .int16: type == Int16.self
        case .int32: type == Int32.self
        case .float32: type == Float.self
        case .float64: type == Double.self
        }
    }

    // MARK: Opening, shared

    private enum OpenOutcome {
        /// libsndfile opened the file; the caller owns the handle (which owns the descriptor).
        case opened(OpaquePointer, AudioFileInfo, StreamEndProbe.Verdict)
        /// libsndfile refused the file and the header probe found a format the guard rejects; nothing is open.
        case refusedHeader(AudioFileInfo, FormatRejection)
    }

    /// Opens `path`, probes its header and asks libsndfile to open it, turning every failure into an
    /// ``AudioFileError`` except a header the guard refuses, which comes back as data.
    private static func openFile(path: String, use: SystemFile.StandardInputUse) throws(AudioFileError) -> OpenOutcome {
        try open(.descriptor(try POSIXFile.openForReading(path, use: use)), path: path)
    }

    /// Where a reader's bytes come from.
    private enum ByteSource {
        /// An open file, pipe or device; libsndfile takes the descriptor over.
        case descriptor(Int32)
        /// Bytes in memory, which the reader keeps alive beside the handle.
        case memory(MemoryAudioBytes)
    }

    /// Probes the source's header and asks libsndfile to open it; `path` names it in errors and info.
    private static func open(_ source: ByteSource, path: String) throws(AudioFileError) -> OpenOutcome {
        let isRegular: Bool
        let size: Int?
        let bytes: AudioHeaderProbe.ByteReader
        switch source {
        case .descriptor(let descriptor):
            isRegular = POSIXFile.isRegularFile(descriptor)
            size = POSIXFile.size(descriptor)
            bytes = POSIXFile.byteReader(descriptor)
        case .memory(let memory):
            isRegular = true
            size = memory.bytes.count
            bytes = memory.byteReader
        }
        let probe = isRegular ? AudioHeaderProbe.probe(bytes) : nil
        let streamEnd = isRegular ? size.map { StreamEndProbe.probe(bytes, size: $0) } ?? .unknown : .unknown
        let statesMPEGLength = isRegular && MPEGLengthProbe.statesFrameCount(bytes)

        var sfInfo = SF_INFO()
        let opened = switch source {
        case .descriptor(let descriptor): SndFile.open(consuming: descriptor, mode: Int32(SFM_READ), info: &sfInfo)
        case .memory(let memory): SndFile.open(reading: memory, info: &sfInfo)
        }
        switch opened {
        case .failure(let failure):
            if let probe {
                let info = refusedHeaderInfo(path: path, probe: probe)
                if case .failure(let rejection) = info.verdict { return .refusedHeader(info, rejection) }
            }
            if failure.isSystemError {
                throw .cannotOpen(path: path, reason: failure.message, code: failure.code)
            }
            if size == 0 {
                throw .unrecognizedFormat(path: path, detail: "the file is empty", code: nil)
            }
            throw .unrecognizedFormat(path: path, detail: failure.message, code: failure.code)
        case .success(let handle):
            let sndFormat = SndFileFormat(code: sfInfo.format)
            // Trust the probe only when libsndfile agrees on the container.
            let wavFamily = [SF_FORMAT_WAV, SF_FORMAT_WAVEX, SF_FORMAT_RF64].map { Int32($0) }
            let agreeingProbe = probe.flatMap { probe -> AudioHeaderProbe? in
                let matches = probe.container == .aiff ? sndFormat.major == Int32(SF_FORMAT_AIFF) : wavFamily.contains(sndFormat.major)
                return matches ? probe : nil
            }
            var format = AudioFormat(
                sampleRate: SampleRate(hertz: Double(sfInfo.samplerate)), channelCount: Int(sfInfo.channels),
                sampleType: sndFormat.nativeSampleType, isInterleaved: true)
            if let agreeingProbe {
                // libsndfile turns an AIFF rate below 1 Hz into 1 Hz; report what the header says when
                // the guard would refuse it.
                let reported = AudioFormat(
                    sampleRate: SampleRate(hertz: agreeingProbe.sampleRate), channelCount: agreeingProbe.channelCount,
                    sampleType: format.sampleType, isInterleaved: true)
                if case .failure = FormatGuard.verdict(for: reported) { format = reported }
            }
            // A stream (standard input from a pipe) has no length: its header holds placeholders.
            let frameCount = isRegular ? knownFrameCount(sfInfo.frames) : nil
            var declared = agreeingProbe?.declaredFrameCount
            if sndFormat.major == Int32(SF_FORMAT_FLAC), let frameCount, frameCount > 0 {
                // FLAC's STREAMINFO states the total; libsndfile reports it, and a damaged stream ends early.
                declared = frameCount
            }
            if sndFormat.major == Int32(SF_FORMAT_MPEG), statesMPEGLength, let frameCount, frameCount > 0 {
                // An MP3 whose first frame states its length: a decoder that stops before it was cut short.
                declared = frameCount
            }
            let info = AudioFileInfo(
                path: path, container: sndFormat.containerName, encoding: sndFormat.encodingName,
                format: format, frameCount: frameCount, declaredFrameCount: declared,
                frameCountIsExact: sndFormat.frameCountFollowsFromSize && frameCount.map { frames in
                    size.map { sndFormat.frameCount(frames, channelCount: Int(sfInfo.channels), fitsIn: $0) } ?? false
                } ?? false)
            return .opened(handle, info, streamEnd)
        }
    }

    /// The info for a header libsndfile refused, from the probe alone.
    private static func refusedHeaderInfo(path: String, probe: AudioHeaderProbe) -> AudioFileInfo {
        let container = SndFileFormat(major: probe.container.sndfileMajor, subtype: probe.subformat ?? 0)
        let sampleType = probe.subformat.map(SndFileFormat.nativeSampleType(subtype:)) ?? .float32
        let format = AudioFormat(sampleRate: SampleRate(hertz: probe.sampleRate), channelCount: probe.channelCount, sampleType: sampleType, isInterleaved: true)
        return AudioFileInfo(
            path: path, container: container.containerName,
            encoding: probe.subformat == nil ? probe.encodingFallbackName : container.encodingName,
            format: format, frameCount: nil, declaredFrameCount: probe.declaredFrameCount, frameCountIsExact: false)
    }

    /// libsndfile says `SF_COUNT_MAX` (or a negative count) when it does not know the length.
    private static func knownFrameCount(_ frames: sf_count_t) -> Int? {
        frames >= 0 && frames < sf_count_t.max ? Int(frames) : nil
    }
}

/// A reader is one stream position over one C handle: use it from one task at a time.
@available(*, unavailable)
extension AudioFileReader: Sendable {}
