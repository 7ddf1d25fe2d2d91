import Glibc
import VoicePipeCore
import VoicePipeIO

/// The raw samples on one FIFO of a ``FIFORoom``: what an ALSA `file` PCM reads from its `infile`
/// or writes to its `file`, with no header. The plugin converts nothing, so this is exactly the
/// format the program on the other end negotiated.
public struct FIFOStreamFormat: Sendable, Hashable, CustomStringConvertible {
    /// A sample encoding, by its ALSA name.
    public enum Encoding: String, Sendable, Hashable, CaseIterable {
        /// Signed 16-bit little-endian: Int16→Float is x/32768, Float→Int16 rounds to nearest-even and saturates.
        case s16LE = "S16_LE"
        /// 32-bit float little-endian.
        case floatLE = "FLOAT_LE"

        /// Bytes per sample.
        public var bytes: Int { self == .s16LE ? 2 : 4 }
    }

    /// What a VoicePipe device negotiates on a `file` PCM over `null`, which accepts every format:
    /// its first choices, Float32, 48 kHz, stereo (`voicepipe session --mic/--speaker`, `record`, `play`).
    public static let voicePipeDevice = FIFOStreamFormat(sampleRate: 48_000, channelCount: 2, encoding: .floatLE)
    /// Rates a FIFO stream may have.
    public static let sampleRates: ClosedRange<Int> = 8_000...192_000
    /// Channel counts a FIFO stream may have.
    public static let channelCounts: ClosedRange<Int> = 1...8

    /// Frames per second.
    public var sampleRate: Int
    /// Interleaved channels per frame.
    public var channelCount: Int
    /// The sample encoding.
    public var encoding: Encoding

    public init(sampleRate: Int, channelCount: Int, encoding: Encoding) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.encoding = encoding
    }

    /// Bytes per interleaved frame.
    public var bytesPerFrame: Int { channelCount * encoding.bytes }

    /// "48000 Hz, 2 channels, FLOAT_LE".
    public var description: String {
        "\(sampleRate) Hz, \(channelCount) channel\(channelCount == 1 ? "" : "s"), \(encoding.rawValue)"
    }
}

/// Why a ``FIFORoom`` cannot run, each with a sentence that says what to do.
public enum FIFORoomError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing exists at the path (the role is "microphone" or "speaker").
    case fifoMissing(role: String, path: String)
    /// The path exists but is not a FIFO (named pipe): what it is instead.
    case notAFIFO(role: String, path: String, kind: String)
    /// The microphone and speaker paths name the same FIFO.
    case sameFIFO(path: String)
    /// A FIFO could not be opened or configured.
    case cannotOpen(role: String, path: String, code: SystemErrorCode)
    /// A stream format outside what the room moves.
    case unusableFormat(role: String, reason: String)
    /// A period too long to write into a pipe in one piece, so a reader could see part of it.
    case periodTooLarge(bytes: Int)
    /// The room's configuration disagrees with the FIFO formats.
    case rateMismatch(String)
    /// The room itself refused an option.
    case room(RoomError)
    /// The talker's audio file cannot be used.
    case talker(String)
    /// The microphone's resampler refused the rates.
    case resampler(String)
    /// Reading or writing a FIFO failed with something other than its other end closing.
    case ioFailed(role: String, code: SystemErrorCode)

    public var description: String {
        switch self {
        case .fifoMissing(let role, let path):
            "there is no \(role) FIFO at '\(path)'; create it with 'mkfifo \(path)'"
        case .notAFIFO(let role, let path, let kind):
            "'\(path)' is \(kind), not a FIFO; give the \(role) a named pipe made with 'mkfifo'"
        case .sameFIFO(let path):
            "the microphone and the speaker are both '\(path)'; give each its own FIFO"
        case .cannotOpen(let role, let path, let code):
            "cannot open the \(role) FIFO '\(path)': \(code.messageInSentence)"
        case .unusableFormat(let role, let reason):
            "the \(role) stream cannot be used: \(reason)"
        case .periodTooLarge(let bytes):
            "a period of \(bytes) bytes is more than a pipe writes in one piece (\(PIPE_BUF) bytes), so the reader could get part of one; use a shorter period, fewer channels or a lower rate"
        case .rateMismatch(let detail):
            "the room does not match its FIFOs: \(detail)"
        case .room(let error):
            "\(error)"
        case .talker(let reason):
            "the talker cannot be used: \(reason)"
        case .resampler(let reason):
            "the microphone's resampler cannot be built: \(reason)"
        case .ioFailed(let role, let code):
            "moving audio on the \(role) FIFO failed: \(code.messageInSentence)"
        }
    }
}

/// One end of a FIFO that the room holds: the descriptor, closed on deinit.
final class FIFODescriptor {
    let descriptor: Int32
    let role: String
    let path: String

    private init(descriptor: Int32, role: String, path: String) {
        self.descriptor = descriptor
        self.role = role
        self.path = path
    }

    deinit {
        close(descriptor)
    }

    /// Refuses a path that is missing or is not a FIFO.
    static func check(_ path: String, role: String) throws(FIFORoomError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let error = errno
            if error == ENOENT { throw .fifoMissing(role: role, path: path) }
            throw .cannotOpen(role: role, path: path, code: .posix(error))
        }
        let type = info.st_mode & S_IFMT
        guard type != S_IFIFO else { return }
        let kind = switch type {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFSOCK: "a socket"
        default: "not a named pipe"
        }
        throw .notAFIFO(role: role, path: path, kind: kind)
    }

    /// The read end, opened without waiting for a writer (a non-blocking open of a FIFO for
    /// reading succeeds at once), so a program opening the other end for writing does not block.
    static func openReader(_ path: String, role: String) throws(FIFORoomError) -> FIFODescriptor {
        try check(path, role: role)
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw .cannotOpen(role: role, path: path, code: .posix(errno)) }
        return FIFODescriptor(descriptor: descriptor, role: role, path: path)
    }

    /// The write end if a reader has the FIFO open (or is waiting in its own open), else nil: a
    /// non-blocking open for writing fails with ENXIO while nobody reads.
    static func openWriterIfRead(_ path: String, role: String) throws(FIFORoomError) -> FIFODescriptor? {
        let descriptor = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        if descriptor >= 0 { return FIFODescriptor(descriptor: descriptor, role: role, path: path) }
        let error = errno
        if error == ENXIO || error == EINTR { return nil }
        throw .cannotOpen(role: role, path: path, code: .posix(error))
    }

    /// Asks the kernel for a pipe buffer of at least `bytes` (it rounds up to a power of two
    /// pages, at least one page).
    /// - Returns: the buffer's size as set.
    func setCapacity(_ bytes: Int) throws(FIFORoomError) -> Int {
        // F_SETPIPE_SZ and F_GETPIPE_SZ (Linux), which Glibc's module does not export by name.
        let setPipeSize: Int32 = 1031, getPipeSize: Int32 = 1032
        guard fcntl(descriptor, setPipeSize, Int32(clamping: bytes)) >= 0 else {
            throw .cannotOpen(role: role, path: path, code: .posix(errno))
        }
        return Int(fcntl(descriptor, getPipeSize))
    }

    /// Bytes waiting in the pipe.
    var bytesInPipe: Int {
        var count: Int32 = 0
        guard ioctl(descriptor, UInt(FIONREAD), &count) == 0 else { return 0 }
        return Int(count)
    }
}
