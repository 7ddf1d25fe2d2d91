import Dispatch
import Foundation
import Glibc
import Synchronization
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// A voice runtime started as a child process, `/bin/sh -c COMMAND`, talking JSON Lines on its
/// standard input and output: what ``JSONLinesTransport/launching(_:standardError:exitGrace:terminationGrace:maximumMessageLength:backlogLimit:flushTimeout:)``
/// runs, and how a caller (or a test) sees its process id and how it ended.
///
/// The process is started with `posix_spawn` (not Foundation's `Process`, which runs a run loop
/// thread of its own and reports through it), in a new process group, with SIGPIPE at its default
/// action and nothing inherited but its three standard streams. Being in its own group, it does
/// not get a terminal's Ctrl-C: the client does, and stops it by closing the transport.
///
/// Stopping it closes its standard input, waits ``exitGrace`` seconds for it to exit, then sends
/// SIGTERM to its process group, waits ``terminationGrace`` seconds, then sends SIGKILL. The group
/// matters: Debian's `sh` (dash) does not `exec` the command, so the runtime is usually the shell's
/// child and outlives a signal sent to the shell alone. Whatever of the group still holds the
/// runtime's output ``terminationGrace`` seconds after the shell ended is killed too. The shell is
/// reaped only then (until then its process id, which names the group, cannot be reused), so no
/// zombie is left and no signal reaches an unrelated process.
public final class RuntimeProcess: Sendable {
    /// Where the runtime's standard error goes.
    public enum StandardError: Sendable, Hashable {
        /// To this process's standard error, as it is written: the runtime's own words reach the user.
        case inherit
        /// Nowhere visible: the last `bytes` are kept for ``RuntimeProcess/standardErrorTail`` and
        /// for the close reason when the runtime fails or cannot start.
        case keepTail(bytes: Int)
    }

    /// How the process ended.
    public enum Termination: Sendable, Hashable, CustomStringConvertible {
        /// It exited with this status (0–255).
        case exited(status: Int32)
        /// A signal ended it.
        case killed(signal: Int32)
        /// It ended, but something else in this process collected its status first (a SIGCHLD
        /// set to SIG_IGN, or a `waitpid(-1, …)` elsewhere).
        case statusUnavailable

        /// "exited with status 3", "was killed by signal 9".
        public var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .killed(let signal): "was killed by signal \(signal)"
            case .statusUnavailable: "ended, but its exit status was collected elsewhere in this program"
            }
        }
    }

    /// The command line as given to `/bin/sh -c`.
    public let command: String
    /// Where its standard error goes.
    public let standardError: StandardError
    /// Seconds the runtime has to exit by itself once its standard input is closed.
    public let exitGrace: Double
    /// Seconds between SIGTERM and SIGKILL.
    public let terminationGrace: Double

    private struct State {
        var pid: pid_t?
        var termination: Termination?
        /// Reaped (or collected elsewhere): its process id may now belong to another process.
        var reaped = false
        /// ``stop(outputEnded:)`` gave up waiting: the reaper thread reaps it whenever it ends.
        var abandoned = false
        var errorTail: [UInt8] = []
    }

    private let state = Guarded(State())
    /// Left once the process has ended, before it is reaped (entered at start).
    private let ended = DispatchGroup()
    /// Left once its standard error reached its end (only with ``StandardError/keepTail(bytes:)``).
    private let errorDrained = DispatchGroup()

    init(command: String, standardError: StandardError, exitGrace: Double, terminationGrace: Double) {
        self.command = command
        self.standardError = standardError
        self.exitGrace = exitGrace.isFinite ? max(exitGrace, 0) : 2
        self.terminationGrace = terminationGrace.isFinite ? max(terminationGrace, 0) : 1
    }

    /// The process id once started; nil before, or when it could not be started.
    public var pid: pid_t? { state.withLock { $0.pid } }

    /// How it ended, once it has ended; nil while it runs (or before it started). The transport
    /// reaps it before it reports ``TransportEvent/closed(_:)``.
    public var termination: Termination? { state.withLock { $0.termination } }

    /// Waits up to `seconds` for the process to end.
    /// - Returns: how it ended, or nil when it is still running (or was never started).
    public func waitForTermination(seconds: Double) -> Termination? {
        guard pid != nil else { return nil }
        _ = ended.wait(timeout: .now() + max(seconds, 0))
        return termination
    }

    /// The end of what the runtime wrote to standard error, as text (empty with
    /// ``StandardError/inherit``).
    public var standardErrorTail: String {
        var bytes = state.withLock { $0.errorTail }[...]
        // The kept tail may start inside a UTF-8 sequence: drop its continuation bytes.
        while let first = bytes.first, first & 0xC0 == 0x80 { bytes = bytes.dropFirst() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The descriptors this process keeps: it writes the runtime's standard input and reads its output.
    struct Pipes: Sendable {
        /// The write end of the runtime's standard input (non-blocking).
        let input: Int32
        /// The read end of the runtime's standard output.
        let output: Int32
    }

    /// Starts the runtime.
    /// - Throws: the failing call's code (no pipes left open, no process left behind).
    func start() throws(SystemCallFailure) -> Pipes {
        _ = DescriptorSupport.brokenPipesIgnored
        var opened: [Int32] = []
        var succeeded = false
        defer { if !succeeded { opened.forEach { _ = close($0) } } }
        let input = try DescriptorSupport.makePipe()
        opened += [input.read, input.write]
        let output = try DescriptorSupport.makePipe()
        opened += [output.read, output.write]
        var errorPipe: (read: Int32, write: Int32)?
        if case .keepTail = standardError {
            let made = try DescriptorSupport.makePipe()
            opened += [made.read, made.write]
            errorPipe = made
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // makePipe keeps every end above 2, so these dup2s never overwrite one another.
        posix_spawn_file_actions_adddup2(&actions, input.read, STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, output.write, STDOUT_FILENO)
        if let errorPipe { posix_spawn_file_actions_adddup2(&actions, errorPipe.write, STDERR_FILENO) }
        DescriptorSupport.closeFrom(3, in: &actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A signal this process ignores stays ignored across exec: the runtime starts with the
        // default action for the ones it is stopped or interrupted with, whatever its host ignores.
        var defaultSignals = sigset_t()
        sigemptyset(&defaultSignals)
        for number in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT] { sigaddset(&defaultSignals, number) }
        var noSignalsBlocked = sigset_t()
        sigemptyset(&noSignalsBlocked)
        posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignalsBlocked)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        // argv[0] "sh", as system(3) has it: the shell's own messages start "sh: ".
        var arguments: [UnsafeMutablePointer<CChar>?] = ["sh", "-c", command].map { (argument: String) in strdup(argument) } + [nil]
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, &arguments, environ)
        guard spawned == 0 else { throw SystemCallFailure(code: .posix(spawned)) }
        succeeded = true

        // The child's ends now live in the child only.
        _ = close(input.read)
        _ = close(output.write)
        if let errorPipe { _ = close(errorPipe.write) }
        DescriptorSupport.setNonBlocking(input.write)

        let started = pid
        state.withLock { $0.pid = started }
        ended.enter()
        let reaper = Thread { [self] in awaitEnd(started) }
        reaper.name = "voicepipe runtime reaper"
        reaper.start()
        if let errorPipe, case .keepTail(let limit) = standardError {
            errorDrained.enter()
            let collector = Thread { [self] in collectStandardError(errorPipe.read, keeping: max(limit, 1)) }
            collector.name = "voicepipe runtime stderr"
            collector.start()
        }
        return Pipes(input: input.write, output: output.read)
    }

    /// Ends the process once its standard input has been closed: it gets ``exitGrace`` seconds to
    /// exit, then SIGTERM to its group and ``terminationGrace`` seconds, then SIGKILL; then what is
    /// left of the group gets ``terminationGrace`` seconds to let go of the runtime's output before
    /// SIGKILL; then the shell is reaped.
    /// - Parameter outputEnded: waits up to the given seconds for the end of the runtime's output
    ///   (every process holding it has closed it or exited); true when it came.
    func stop(outputEnded: (Double) -> Bool) {
        guard pid != nil else { return }
        if ended.wait(timeout: .now() + exitGrace) != .success {
            signalGroup(SIGTERM)
            if ended.wait(timeout: .now() + terminationGrace) != .success {
                signalGroup(SIGKILL)
                // SIGKILL cannot be refused, but a process stuck in the kernel ends only later.
                _ = ended.wait(timeout: .now() + 5)
            }
        }
        if !outputEnded(terminationGrace) {
            signalGroup(SIGKILL)
            _ = outputEnded(1)
        }
        state.withLock { state in
            if state.termination != nil { Self.reap(&state) } else { state.abandoned = true }
        }
    }

    /// The close reason once the runtime's output ended or writing to it failed: how it ended when
    /// it ends within a second, else `otherwise`.
    /// - Parameter heardFromRuntime: whether any line came from it; a shell status of 127 or 126
    ///   before any line means the command could not be started at all.
    func closeReason(otherwise: TransportCloseReason, heardFromRuntime: Bool) -> TransportCloseReason {
        guard let termination = waitForTermination(seconds: 1) else { return otherwise }
        if case .keepTail = standardError { _ = errorDrained.wait(timeout: .now() + 0.5) }
        let said = lastWords()
        switch termination {
        case .exited(let status) where !heardFromRuntime && (status == 127 || status == 126):
            let problem = status == 127 ? "command not found" : "it cannot be executed"
            return .refused("could not start the runtime '\(command)': \(problem) (status \(status))" + (said.map { "; it said: \($0)" } ?? ""))
        case .exited(0), .statusUnavailable:
            return .closedByRuntime("the runtime \(termination)")
        case .exited, .killed:
            // A failure status or a signal is a runtime that failed, not one that finished.
            return .failed("the runtime \(termination)" + (said.map { "; it said: \($0)" } ?? ""), code: nil)
        }
    }

    /// The last line the runtime wrote to standard error (at most 300 characters), when kept.
    private func lastWords() -> String? {
        let lines = standardErrorTail.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let last = lines.last(where: { !$0.isEmpty }) else { return nil }
        return last.count > 300 ? "…" + last.suffix(300) : last
    }

    /// Sends `signal` to the runtime's process group while the shell has not been reaped: its
    /// process id, which is the group's, cannot belong to anything else until then.
    private func signalGroup(_ signal: Int32) {
        state.withLock { state in
            guard let pid = state.pid, !state.reaped else { return }
            if kill(-pid, signal) != 0 { _ = kill(pid, signal) }
        }
    }

    /// Waits for the shell to end without reaping it (the reaping is ``stop(outputEnded:)``'s) and
    /// records how it ended.
    private func awaitEnd(_ pid: pid_t) {
        var info = siginfo_t()
        var result: Int32
        repeat { result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) } while result != 0 && errno == EINTR
        state.withLock { state in
            if result != 0 {
                // Collected elsewhere (SIGCHLD ignored, a waitpid(-1) in this program): nothing to reap.
                state.termination = .statusUnavailable
                state.reaped = true
            } else if info.si_code == Int32(CLD_EXITED) {
                state.termination = .exited(status: info._sifields._sigchld.si_status)
            } else {
                state.termination = .killed(signal: info._sifields._sigchld.si_status)
            }
            if state.abandoned { Self.reap(&state) }
        }
        ended.leave()
    }

    /// Reaps the ended shell, under the lock that ``signalGroup(_:)`` takes.
    private static func reap(_ state: inout State) {
        guard let pid = state.pid, !state.reaped else { return }
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) < 0 && errno == EINTR {}
        state.reaped = true
    }

    /// Reads the runtime's standard error to its end, keeping the last `limit` bytes.
    private func collectStandardError(_ descriptor: Int32, keeping limit: Int) {
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while true {
            let got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            state.withLock { state in
                state.errorTail.append(contentsOf: chunk[0..<got])
                if state.errorTail.count > 2 * limit { state.errorTail.removeFirst(state.errorTail.count - limit) }
            }
        }
        _ = close(descriptor)
        state.withLock { state in
            if state.errorTail.count > limit { state.errorTail.removeFirst(state.errorTail.count - limit) }
        }
        errorDrained.leave()
    }
}
