import Dispatch
import Foundation
import Glibc
import Synchronization
import VoicePipeClient
import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// Reading transport events and driving the far end of descriptors in tests, with every wait
/// bounded so a broken transport fails a test instead of hanging the run.
enum TransportTesting {
    /// Events from `transport` until one satisfies `stop` (by default ``TransportEvent/closed(_:)``),
    /// that one included, or what arrived within `seconds`. The default deadline is generous: in
    /// the whole suite, CPU-bound tests can hold both of the cooperative pool's threads for a while.
    static func events(of transport: some SessionTransport, within seconds: Double = 120,
                       until stop: @escaping @Sendable (TransportEvent) -> Bool = isClosed) async -> [TransportEvent] {
        let stream = transport.events
        return await withTaskGroup(of: [TransportEvent]?.self) { group in
            group.addTask {
                var received = [TransportEvent]()
                for await event in stream {
                    received.append(event)
                    if stop(event) { break }
                }
                return received
            }
            group.addTask {
                // A deadline for a transport that never delivers, not a pause: cancelled at once
                // when the events come.
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            // Cancelled, the reader returns what it had (the queue ends a cancelled wait).
            let second = await group.next() ?? nil
            return first ?? second ?? []
        }
    }

    static func isClosed(_ event: TransportEvent) -> Bool {
        if case .closed = event { return true }
        return false
    }

    /// The close reason among `events`, if any.
    static func closeReason(_ events: [TransportEvent]) -> TransportCloseReason? {
        for case .closed(let reason) in events { return reason }
        return nil
    }

    /// The texts of the `.message` events, in order.
    static func messages(_ events: [TransportEvent]) -> [String] {
        events.compactMap { if case .message(let text) = $0 { text } else { nil } }
    }

    /// A pipe, both ends closed on exec (so children that other tests start do not hold it open).
    static func pipe() -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        _ = Glibc.pipe(&ends)
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        return (ends[0], ends[1])
    }

    /// Writes all of `bytes` to `descriptor`.
    static func write(_ bytes: [UInt8], to descriptor: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Waits, on this thread, until the last writer of the pipe whose read end is `descriptor` has
    /// closed it, without reading what is in it.
    /// - Returns: false if that did not happen within `seconds`.
    static func waitForHangUp(_ descriptor: Int32, within seconds: Double) -> Bool {
        // No events asked for: poll reports only a hang-up (or an error), not waiting data.
        var watched = pollfd(fd: descriptor, events: 0, revents: 0)
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            let left = ContinuousClock.now.duration(to: deadline)
            let milliseconds = Int32(left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            if poll(&watched, 1, milliseconds) > 0 { return watched.revents & Int16(POLLHUP) != 0 }
        }
        return false
    }

    /// Reads `descriptor` to its end on a thread of its own, then closes it.
    final class Drain: Sendable {
        private let bytes = Guarded<[UInt8]>([])
        private let done = DispatchSemaphore(value: 0)

        init(_ descriptor: Int32) {
            Thread.detachNewThread { [self] in
                var chunk = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    if got < 0 && errno == EINTR { continue }
                    guard got > 0 else { break }
                    bytes.withLock { $0 += chunk[0..<got] }
                }
                _ = close(descriptor)
                done.signal()
            }
        }

        /// Everything read, once the end came within `seconds`; nil if it did not.
        func result(within seconds: Double = 10) -> [UInt8]? {
            guard done.wait(timeout: .now() + seconds) == .success else { return nil }
            return bytes.withLock { $0 }
        }
    }
}
