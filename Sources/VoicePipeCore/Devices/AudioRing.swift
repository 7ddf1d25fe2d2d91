import Synchronization

/// A lock-free single-producer, single-consumer ring of bytes: how captured audio leaves the
/// audio thread.
///
/// The tap (producer) copies each buffer in with ``write(_:)`` and returns at once; another thread
/// (consumer) takes the bytes out with ``read(into:)`` and does the slow work: conversion, files,
/// the network. Neither side waits for the other or allocates. A buffer that does not fit whole
/// is refused whole, so the stream never splits a frame; the producer counts such drops.
public final class AudioRing: @unchecked Sendable {
    // Safety: the producer writes only bytes in [written, consumed + capacity), the consumer
    // reads only [consumed, written); the atomics publish each side's progress to the other.
    /// Bytes the ring holds at most.
    public let capacity: Int
    private let storage: UnsafeMutableRawPointer
    private let written = Atomic<Int>(0)
    private let consumed = Atomic<Int>(0)

    /// A ring of `capacity` bytes (at least 1).
    public init(capacity: Int) {
        self.capacity = max(capacity, 1)
        storage = .allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit {
        storage.deallocate()
    }

    /// Bytes waiting to be read.
    public var availableBytes: Int {
        let start = consumed.load(ordering: .acquiring)
        return written.load(ordering: .acquiring) - start
    }

    /// Producer side: copies all of `bytes` in, or nothing when they do not fit.
    /// - Returns: whether the bytes were copied.
    @discardableResult
    public func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let end = written.load(ordering: .relaxed)
        let start = consumed.load(ordering: .acquiring)
        guard let source = bytes.baseAddress, bytes.count > 0 else { return true }
        guard capacity - (end - start) >= bytes.count else { return false }
        let offset = end % capacity
        let first = min(bytes.count, capacity - offset)
        (storage + offset).copyMemory(from: source, byteCount: first)
        if first < bytes.count {
            storage.copyMemory(from: source + first, byteCount: bytes.count - first)
        }
        written.store(end + bytes.count, ordering: .releasing)
        return true
    }

    /// Consumer side: copies up to `destination.count` bytes out, rounded down to a multiple of
    /// `granularity` (a frame's size, so frames stay whole).
    /// - Returns: the bytes copied.
    public func read(into destination: UnsafeMutableRawBufferPointer, granularity: Int = 1) -> Int {
        let start = consumed.load(ordering: .relaxed)
        let end = written.load(ordering: .acquiring)
        guard let target = destination.baseAddress else { return 0 }
        let unit = max(granularity, 1)
        let count = min(end - start, destination.count) / unit * unit
        guard count > 0 else { return 0 }
        let offset = start % capacity
        let first = min(count, capacity - offset)
        target.copyMemory(from: storage + offset, byteCount: first)
        if first < count {
            (target + first).copyMemory(from: storage, byteCount: count - first)
        }
        consumed.store(start + count, ordering: .releasing)
        return count
    }
}
