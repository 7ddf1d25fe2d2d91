import CSndFile

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of an audio file held in memory, read by libsndfile through its virtual I/O callbacks.
///
/// A reader keeps one alive for as long as its libsndfile handle: the handle reads through an
/// unretained pointer to it.
final class MemoryAudioBytes {
    let bytes: [UInt8]
    /// libsndfile's read position; past the end is allowed (reads there return nothing), as on a file.
    private var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// A byte reader for ``AudioHeaderProbe`` and ``StreamEndProbe``; it never moves ``position``.
    var byteReader: AudioHeaderProbe.ByteReader {
        { [bytes] offset, count in
            guard offset >= 0, count > 0, offset < bytes.count else { return [] }
            return Array(bytes[offset..<offset + min(count, bytes.count - offset)])
        }
    }

    /// The callbacks: each finds this object through libsndfile's `user_data` pointer.
    static let callbacks = SF_VIRTUAL_IO(
        get_filelen: { context in source(context).map { sf_count_t($0.bytes.count) } ?? -1 },
        seek: { offset, whence, context in source(context)?.seek(offset, whence: whence) ?? -1 },
        read: { destination, count, context in source(context)?.read(into: destination, count: count) ?? 0 },
        write: { _, _, _ in 0 },
        tell: { context in source(context).map { sf_count_t($0.position) } ?? -1 })

    /// The object behind libsndfile's `user_data`: the pointer given to `sf_open_virtual`.
    private static func source(_ context: UnsafeMutableRawPointer?) -> MemoryAudioBytes? {
        context.map { Unmanaged<MemoryAudioBytes>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
    }

    /// The pointer libsndfile hands back to the callbacks; valid while this object lives.
    var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Moves the position as `lseek` would; -1 for a position before the start or a bad `whence`.
    private func seek(_ offset: sf_count_t, whence: Int32) -> sf_count_t {
        let base: Int
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = position
        case SEEK_END: base = bytes.count
        default: return -1
        }
        let (target, overflow) = base.addingReportingOverflow(Int(offset))
        guard !overflow, target >= 0 else { return -1 }
        position = target
        return sf_count_t(target)
    }

    private func read(into destination: UnsafeMutableRawPointer?, count: sf_count_t) -> sf_count_t {
        guard let destination, count > 0, position < bytes.count else { return 0 }
        let length = min(Int(count), bytes.count - position)
        bytes.withUnsafeBytes { source in
            guard let base = source.baseAddress else { return }
            destination.copyMemory(from: base + position, byteCount: length)
        }
        position += length
        return sf_count_t(length)
    }
}
