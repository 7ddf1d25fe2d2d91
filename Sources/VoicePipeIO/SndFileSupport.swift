import CSndFile
import Synchronization
import VoicePipeCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A libsndfile format code (`SF_INFO.format`) and what VoicePipe makes of it.
struct SndFileFormat: Equatable {
    /// The full code: major (container) | subtype (encoding) | endianness.
    let code: Int32

    init(code: Int32) { self.code = code }
    init(major: Int32, subtype: Int32) { self.code = major | subtype }

    /// The container, `SF_FORMAT_TYPEMASK` bits (`SF_FORMAT_WAV`, ...).
    var major: Int32 { code & Int32(SF_FORMAT_TYPEMASK) }
    /// The encoding, `SF_FORMAT_SUBMASK` bits (`SF_FORMAT_PCM_16`, ...).
    var subtype: Int32 { code & Int32(SF_FORMAT_SUBMASK) }

    /// The container's short name as libsndfile spells it: "WAV", "AIFF", "FLAC", "OGG", "RAW", ...
    var containerName: String {
        guard let name = Self.formatName(major) else { return "unknown container 0x\(String(major, radix: 16))" }
        // libsndfile says "WAV (Microsoft)", "OGG (OGG Container format)": keep the name before the gloss.
        return String(name.prefix { $0 != " " })
    }

    /// The encoding's name as libsndfile spells it: "Signed 16 bit PCM", "32 bit float", "Vorbis", ...
    var encodingName: String {
        Self.formatName(subtype) ?? "unknown encoding 0x\(String(subtype, radix: 16))"
    }

    /// The sample type the reader delivers for this encoding: the narrowest of Int16, Int32, Float32 and
    /// Float64 that holds every decoded value exactly (lossy codecs decode to Float32).
    var nativeSampleType: SampleType { Self.nativeSampleType(subtype: subtype) }

    static func nativeSampleType(subtype: Int32) -> SampleType {
        switch Int(subtype) {
        case SF_FORMAT_PCM_S8, SF_FORMAT_PCM_U8, SF_FORMAT_PCM_16, SF_FORMAT_ULAW, SF_FORMAT_ALAW,
             SF_FORMAT_IMA_ADPCM, SF_FORMAT_MS_ADPCM, SF_FORMAT_GSM610, SF_FORMAT_VOX_ADPCM,
             SF_FORMAT_NMS_ADPCM_16, SF_FORMAT_NMS_ADPCM_24, SF_FORMAT_NMS_ADPCM_32,
             SF_FORMAT_G721_32, SF_FORMAT_G723_24, SF_FORMAT_G723_40,
             SF_FORMAT_DWVW_12, SF_FORMAT_DWVW_16, SF_FORMAT_DPCM_8, SF_FORMAT_DPCM_16, SF_FORMAT_ALAC_16:
            .int16
        case SF_FORMAT_PCM_24, SF_FORMAT_PCM_32, SF_FORMAT_DWVW_24, SF_FORMAT_DWVW_N,
             SF_FORMAT_ALAC_20, SF_FORMAT_ALAC_24, SF_FORMAT_ALAC_32:
            .int32
        case SF_FORMAT_DOUBLE:
            .float64
        default:
            // SF_FORMAT_FLOAT, and the lossy codecs (Vorbis, Opus, MPEG), which decode to float.
            .float32
        }
    }

    /// Whether libsndfile derives this format's frame count from the data's size, so that a reader
    /// delivers exactly that many frames: uncompressed fixed-size encodings in a container that is
    /// not a codec stream. FLAC's and Ogg's counts come from headers, MPEG's is an estimate.
    var frameCountFollowsFromSize: Bool {
        let codecContainers = [SF_FORMAT_FLAC, SF_FORMAT_OGG, SF_FORMAT_MPEG].map { Int32($0) }
        guard !codecContainers.contains(major) else { return false }
        switch Int(subtype) {
        case SF_FORMAT_PCM_S8, SF_FORMAT_PCM_U8, SF_FORMAT_PCM_16, SF_FORMAT_PCM_24, SF_FORMAT_PCM_32,
             SF_FORMAT_FLOAT, SF_FORMAT_DOUBLE, SF_FORMAT_ULAW, SF_FORMAT_ALAW:
            return true
        default:
            return false
        }
    }

    /// Whether `frames` frames of `channelCount` channels fit in a file of `fileBytes` bytes after
    /// the smallest header this container can have (AU 24 bytes, WAV 44, AIFF 54; other containers
    /// 0). libsndfile computes an AU count from a data offset the header may put inside the header
    /// itself (0), and then reads from after the header: a count that does not fit is not exact.
    func frameCount(_ frames: Int, channelCount: Int, fitsIn fileBytes: Int) -> Bool {
        let bytesPerSample: Int
        switch Int(subtype) {
        case SF_FORMAT_PCM_S8, SF_FORMAT_PCM_U8, SF_FORMAT_ULAW, SF_FORMAT_ALAW: bytesPerSample = 1
        case SF_FORMAT_PCM_16: bytesPerSample = 2
        case SF_FORMAT_PCM_24: bytesPerSample = 3
        case SF_FORMAT_PCM_32, SF_FORMAT_FLOAT: bytesPerSample = 4
        case SF_FORMAT_DOUBLE: bytesPerSample = 8
        default: return true
        }
        let smallestHeader: Int
        switch Int(major) {
        case SF_FORMAT_AU: smallestHeader = 24
        case SF_FORMAT_WAV: smallestHeader = 44
        case SF_FORMAT_AIFF: smallestHeader = 54
        default: smallestHeader = 0
        }
        let (frameBytes, overflow) = frames.multipliedReportingOverflow(by: bytesPerSample * max(channelCount, 1))
        return !overflow && frameBytes <= fileBytes - smallestHeader
    }

    /// The libsndfile subtype VoicePipe uses to read or write a sample type as plain PCM.
    static func pcmSubtype(for type: SampleType) -> Int32 {
        switch type {
        case .int16: Int32(SF_FORMAT_PCM_16)
        case .int32: Int32(SF_FORMAT_PCM_32)
        case .float32: Int32(SF_FORMAT_FLOAT)
        case .float64: Int32(SF_FORMAT_DOUBLE)
        }
    }

    /// libsndfile's name for a major or subtype code, from `SFC_GET_FORMAT_INFO`.
    private static func formatName(_ code: Int32) -> String? {
        var query = SF_FORMAT_INFO(format: code, name: nil, extension: nil)
        let status = sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &query, Int32(MemoryLayout<SF_FORMAT_INFO>.size))
        guard status == 0, let name = query.name else { return nil }
        return String(cString: name)
    }
}

/// Why libsndfile refused to open a file: the code of the failing call (errno for a system error
/// inside libsndfile, else libsndfile's own number) and its own message.
struct SndFileFailure: Error {
    let code: SystemErrorCode
    /// Whether the failure was the system's (a read or write error, a descriptor problem) rather
    /// than the format's.
    let isSystemError: Bool

    /// - Parameters:
    ///   - value: `sf_error`'s number; `systemErrno` the errno seen right after a system error.
    init(_ value: Int32, message: String, systemErrno: Int32) {
        isSystemError = value == Int32(SF_ERR_SYSTEM)
        if isSystemError, systemErrno != 0 {
            code = .posix(systemErrno)
        } else {
            code = SystemErrorCode(.libsndfile, value, message: message)
        }
    }

    /// The reason in a few words, fitted inside a sentence ("no space left on device").
    var message: String { code.messageInSentence }
}

extension SystemErrorCode {
    /// An errno value with the system's text for it.
    public static func posix(_ value: Int32) -> SystemErrorCode {
        SystemErrorCode(.posix, value, message: strerror(value).map { String(cString: $0) } ?? "error \(value)")
    }
}

/// Opening files through libsndfile, with its global error state read under a lock.
enum SndFile {
    /// libsndfile reports a failed open through a process-wide error variable; the lock keeps another
    /// thread's open from overwriting it between `sf_open_fd` and `sf_strerror`.
    private static let openLock = Guarded<Void>(())

    /// Opens `descriptor` through libsndfile, which takes it over: `sf_close` closes it, and so does a
    /// failed open. The caller must not use or close the descriptor after this call.
    ///
    /// Implementation notes: libsndfile 1.2.0 closes the descriptor when `sf_open_fd` fails even if
    /// asked not to (`close_desc` = false), so keeping it and closing it again would close whatever
    /// file another thread opened under the same number meanwhile. Handing it over outright is the
    /// only contract that is safe whichever way a libsndfile version behaves.
    /// - Returns: the `SNDFILE*`, with `info` filled in (read) or as given (write).
    static func open(consuming descriptor: Int32, mode: Int32, info: inout SF_INFO) -> Result<OpaquePointer, SndFileFailure> {
        open(info: &info) { request in sf_open_fd(descriptor, mode, request, Int32(SF_TRUE)) }
    }

    /// Opens bytes in memory for reading through libsndfile's virtual I/O. `memory` must outlive
    /// the handle: libsndfile reads through an unretained pointer to it.
    static func open(reading memory: MemoryAudioBytes, info: inout SF_INFO) -> Result<OpaquePointer, SndFileFailure> {
        var callbacks = MemoryAudioBytes.callbacks
        let context = UInt(bitPattern: memory.context)
        return open(info: &info) { request in
            sf_open_virtual(&callbacks, Int32(SFM_READ), request, UnsafeMutableRawPointer(bitPattern: context))
        }
    }

    /// Runs one libsndfile open call under the lock, reading its error before another open can replace it.
    private static func open(info: inout SF_INFO, _ call: (UnsafeMutablePointer<SF_INFO>) -> OpaquePointer?) -> Result<OpaquePointer, SndFileFailure> {
        var request = info
        // The handle crosses the lock as a raw address: OpaquePointer is not Sendable.
        let opened = openLock.withLock { _ -> Result<UInt, SndFileFailure> in
            errno = 0
            guard let handle = call(&request) else {
                let systemErrno = errno
                return .failure(SndFileFailure(sf_error(nil), message: String(cString: sf_strerror(nil)), systemErrno: systemErrno))
            }
            return .success(UInt(bitPattern: UnsafeMutableRawPointer(handle)))
        }
        info = request
        return opened.flatMap { address in
            UnsafeMutableRawPointer(bitPattern: address).map { .success(OpaquePointer($0)) } ?? .failure(SndFileFailure(Int32(SF_ERR_SYSTEM), message: "libsndfile returned no handle", systemErrno: 0))
        }
    }

    /// The code and message of the last error on an open handle.
    static func lastError(_ handle: OpaquePointer) -> SystemErrorCode {
        SystemErrorCode(.libsndfile, sf_error(handle), message: String(cString: sf_strerror(handle)))
    }

    /// A status returned by `sf_close` and the like, with libsndfile's text for it.
    static func code(_ status: Int32) -> SystemErrorCode {
        SystemErrorCode(.libsndfile, status, message: String(cString: sf_error_number(status)))
    }
}

/// The few POSIX calls the file types need, with errno turned into sentences.
enum POSIXFile {
    /// Opens `path` read-only.
    /// - Throws: ``AudioFileError/fileNotFound(path:)`` when nothing is there,
    ///   ``AudioFileError/cannotOpen(path:reason:code:)`` for permissions, directories and other failures.
    /// - Parameter use: for "-" (standard input): streamed as it arrives, or made seekable.
    static func openForReading(_ path: String, use: SystemFile.StandardInputUse = .seek) throws(AudioFileError) -> Int32 {
        do {
            return path == "-" ? try SystemFile.openStandardInput(use) : try SystemFile.openForReading(path)
        } catch {
            if error.isMissing { throw .fileNotFound(path: path) }
            throw .cannotOpen(path: path, reason: error.reason, code: error.code)
        }
    }

    /// Creates (or truncates) `path` for writing.
    /// - Throws: ``AudioFileError/cannotCreate(path:reason:code:)`` with a reason that says what to do.
    static func createForWriting(_ path: String) throws(AudioFileError) -> Int32 {
        do {
            return try SystemFile.createForWriting(path)
        } catch {
            throw .cannotCreate(path: path, reason: error.reason, code: error.code)
        }
    }

    /// An unlinked temporary file in which the file for `path` (standard output) is built.
    static func temporaryFile(for path: String) throws(AudioFileError) -> Int32 {
        do {
            return try SystemFile.temporaryFile()
        } catch {
            throw .cannotCreate(path: path, reason: error.reason, code: error.code)
        }
    }

    /// Copies the finished temporary file to standard output.
    static func copy(_ spool: Int32, toStandardOutputFor path: String) throws(AudioFileError) {
        do {
            try SystemFile.copyToStandardOutput(spool)
        } catch {
            throw .writeFailed(path: path, reason: error.reason, code: error.code)
        }
    }

    /// Whether the descriptor is a regular file (the header probe reads by offset only from those).
    static func isRegularFile(_ descriptor: Int32) -> Bool {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return false }
        return status.st_mode & S_IFMT == S_IFREG
    }

    /// The file's size in bytes, or nil when it has none (a pipe, a device).
    static func size(_ descriptor: Int32) -> Int? {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(status.st_size)
    }

    /// A byte reader over a regular file for ``AudioHeaderProbe``; it never moves the file offset.
    static func byteReader(_ descriptor: Int32) -> AudioHeaderProbe.ByteReader {
        { offset, count in
            guard offset >= 0, count > 0 else { return [] }
            var bytes = [UInt8](repeating: 0, count: count)
            var filled = 0
            while filled < count {
                let got = bytes.withUnsafeMutableBytes { buffer in
                    pread(descriptor, buffer.baseAddress.map { $0 + filled }, count - filled, off_t(offset + filled))
                }
                if got > 0 {
                    filled += got
                } else if got < 0, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            return Array(bytes.prefix(filled))
        }
    }
}
