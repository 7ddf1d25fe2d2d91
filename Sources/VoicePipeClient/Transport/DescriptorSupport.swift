import Glibc
import VoicePipeCore
import VoicePipeIO

/// A system call that failed, with its code: what the transports turn into a close reason.
struct SystemCallFailure: Error, Sendable {
    let code: SystemErrorCode

    /// The failure of the call that just set `errno`.
    static func errno() -> SystemCallFailure { SystemCallFailure(code: .posix(Glibc.errno)) }
}

/// The descriptor plumbing the JSON Lines transport and the runtime process share.
///
/// Implementation notes: glibc declares `pipe2` and `posix_spawn_file_actions_addclosefrom_np`
/// only under `_GNU_SOURCE`, which Swift's Glibc module does not define, so both are looked up
/// once by name; without them a pipe is made close-on-exec in a second call, and a child closes
/// only the descriptors it was told about.
enum DescriptorSupport {
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    private static let pipe2: Pipe2? = dlsym(nil, "pipe2").map { unsafeBitCast($0, to: Pipe2.self) }
    private static let addCloseFrom: AddCloseFrom? =
        dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map { unsafeBitCast($0, to: AddCloseFrom.self) }

    /// A pipe whose two ends are closed on exec, so no child started meanwhile by any thread
    /// (ours or Foundation's) inherits them and holds the pipe open. Neither end is 0, 1 or 2,
    /// even when this process has closed its standard streams, so a child's dup2 onto those
    /// numbers can never overwrite one end with another.
    static func makePipe() throws(SystemCallFailure) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        if let pipe2 {
            guard pipe2(&ends, O_CLOEXEC) == 0 else { throw .errno() }
        } else {
            guard pipe(&ends) == 0 else { throw .errno() }
            _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        }
        for index in ends.indices where ends[index] <= STDERR_FILENO {
            let moved = fcntl(ends[index], F_DUPFD_CLOEXEC, STDERR_FILENO + 1)
            let failure = SystemCallFailure.errno()
            _ = close(ends[index])
            ends[index] = moved
            guard moved >= 0 else {
                ends.filter { $0 >= 0 }.forEach { _ = close($0) }
                throw failure
            }
        }
        return (ends[0], ends[1])
    }

    /// Asks a spawned child to close every descriptor from `lowest` up (after its dup2 actions),
    /// so it inherits nothing of this process's but its standard streams.
    /// - Returns: false when this C library cannot (glibc before 2.34).
    @discardableResult
    static func closeFrom(_ lowest: Int32, in actions: inout posix_spawn_file_actions_t) -> Bool {
        guard let addCloseFrom else { return false }
        return addCloseFrom(&actions, lowest) == 0
    }

    /// Sets `O_NONBLOCK` on a descriptor this process created (never on one it was given: the
    /// flag belongs to the open file, which other processes may share).
    static func setNonBlocking(_ descriptor: Int32) {
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
    }

    /// True when writes to `descriptor` return EAGAIN instead of waiting.
    static func isNonBlocking(_ descriptor: Int32) -> Bool {
        let flags = fcntl(descriptor, F_GETFL)
        return flags >= 0 && flags & O_NONBLOCK != 0
    }

    /// Makes a write to a pipe or socket whose reader has gone fail with EPIPE instead of killing
    /// this process, which is what SIGPIPE does by default: a runtime that exits must become a
    /// close reason, not end the client. Done once per process, when the first transport opens.
    /// A handler the program installed itself is left in place (the write fails with EPIPE after
    /// it runs); children that ``RuntimeProcess`` starts get SIGPIPE's default action back.
    static let brokenPipesIgnored: Void = {
        var current = sigaction()
        guard sigaction(SIGPIPE, nil, &current) == 0 else { return }
        if current.__sigaction_handler.sa_handler == nil && current.sa_flags & SA_SIGINFO == 0 {
            _ = signal(SIGPIPE, SIG_IGN)
        }
    }()

    /// Writes one byte to a wake-up pipe (non-blocking: a full pipe already holds a wake-up).
    static func wake(_ descriptor: Int32) {
        var byte: UInt8 = 1
        while write(descriptor, &byte, 1) < 0 && errno == EINTR {}
    }

    /// Reads every waiting byte from a non-blocking wake-up pipe.
    static func drain(_ descriptor: Int32) {
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while true {
            let got = withUnsafeMutableBytes(of: &bytes) { read(descriptor, $0.baseAddress, $0.count) }
            if got > 0 || (got < 0 && errno == EINTR) { continue }
            return
        }
    }

    /// Waits until `descriptor` is readable (or hung up).
    static func waitUntilReadable(_ descriptor: Int32) {
        var watched = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while poll(&watched, 1, -1) < 0 && errno == EINTR {}
    }

    /// Milliseconds until `deadline` for `poll`, rounded up; 0 once it has passed.
    static func pollTimeout(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        let milliseconds = seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }

    /// Turns every line ending (CR or LF) in `bytes` into a space, so that one message stays one
    /// line; JSON allows line endings only as whitespace between tokens, where a space means the same.
    static func replaceLineEndings(in bytes: UnsafeMutableRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        for ending: Int32 in [0x0A, 0x0D] {
            var offset = 0
            while offset < bytes.count, let found = memchr(base + offset, ending, bytes.count - offset) {
                found.storeBytes(of: 0x20, as: UInt8.self)
                offset = base.distance(to: found) + 1
            }
        }
    }
}
