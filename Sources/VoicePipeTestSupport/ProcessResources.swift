import Foundation
import Glibc

/// The threads and descriptors of this process, read from `/proc/self`, for tests that check a
/// component leaves none behind.
///
/// Tests run in parallel in one process, so the totals (``threadCount``, ``descriptorCount``) move
/// with whatever else runs; a leak check asserts on what it can attribute — a thread by its name,
/// the TCP sockets connected to one port — and shows the totals beside it.
public enum ProcessResources {
    /// Entries of `/proc/self/task`: the process's threads.
    public static var threadCount: Int { entries(of: "/proc/self/task").count }

    /// Entries of `/proc/self/fd`: the process's open descriptors (the one listing them included).
    public static var descriptorCount: Int { entries(of: "/proc/self/fd").count }

    /// Threads whose name (`/proc/self/task/TID/comm`) is `name`.
    public static func threads(named name: String) -> Int {
        entries(of: "/proc/self/task").filter { task in
            guard let comm = wholeFile("/proc/self/task/\(task)/comm") else { return false }
            return comm.trimmingCharacters(in: .newlines) == name
        }.count
    }

    /// Descriptors of this process that are TCP sockets (IPv4 or IPv6) whose remote port is `port`:
    /// the client ends of connections to a server listening there.
    public static func tcpSockets(toPort port: Int) -> Int {
        var inodes = Set<String>()
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            guard let text = wholeFile(table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, let colon = fields[2].lastIndex(of: ":"),
                      let remotePort = Int(fields[2][fields[2].index(after: colon)...], radix: 16),
                      remotePort == port, fields[9] != "0" else { continue }
                inodes.insert(String(fields[9]))
            }
        }
        guard !inodes.isEmpty else { return 0 }
        return entries(of: "/proc/self/fd").filter { descriptor in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")) ?? ""
            guard target.hasPrefix("socket:["), target.hasSuffix("]") else { return false }
            return inodes.contains(String(target.dropFirst("socket:[".count).dropLast()))
        }.count
    }

    /// One line for a failure message: the totals now.
    public static var summary: String { "\(threadCount) threads, \(descriptorCount) descriptors" }

    /// A /proc file read to its end: they report a size of 0 and give a page per read, so a
    /// reader trusting the size would see only the start of a long table.
    private static func wholeFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8]()
        var page = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = page.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += page[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func entries(of directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    }
}
