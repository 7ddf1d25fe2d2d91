/// A stage's window onto its input stream: the most recent samples, addressed by absolute index.
///
/// Indices count input samples since the stream started; samples before index 0 are zeros, which
/// ``reset(leadingZeros:)`` writes so the first outputs see silence before the stream.
/// Implementation notes: the position fields opt out of dynamic exclusivity checks, as do the
/// other per-stream counters of the stages and converters: each object is used from one thread
/// at a time and its fields are never passed `inout` while being read, and with 10 ms buffers
/// the checks cost more than a tenth of the conversion. One preallocated block; samples older than what the filter still needs
/// are dropped by moving the tail to the front when the free space runs short, so steady state
/// never allocates.
///
/// ```
///  storage: [ dropped … | start ─── count samples ─── | free … ]
///           offset ──────^
/// ```
@usableFromInline
final class SampleHistory {
    @usableFromInline let storage: UnsafeMutablePointer<Float>
    @usableFromInline let capacity: Int
    /// Position in `storage` of the sample with absolute index `start`.
    @usableFromInline @exclusivity(unchecked) var offset = 0
    /// Absolute index of the oldest sample kept.
    @usableFromInline @exclusivity(unchecked) var start = 0
    /// Samples kept.
    @usableFromInline @exclusivity(unchecked) var count = 0

    /// - Parameters:
    ///   - capacity: samples the history can hold.
    ///   - readSlack: samples past the newest one that may be read (they hold zeros or old,
    ///     finite samples), for vector loads that run past a window's end into zero taps.
    init(capacity: Int, readSlack: Int = 0) {
        self.capacity = capacity
        storage = .allocate(capacity: capacity + readSlack)
        storage.initialize(repeating: 0, count: capacity + readSlack)
    }

    deinit {
        storage.deallocate()
    }

    /// One past the newest sample's absolute index.
    @inlinable var end: Int { start + count }

    /// Pointer to the sample with absolute index `index` (which must be kept).
    @inlinable func pointer(at index: Int) -> UnsafeMutablePointer<Float> {
        storage + (offset + index - start)
    }

    /// Empties the history and fills the `leadingZeros` samples before index 0 with silence.
    func reset(leadingZeros: Int) {
        offset = 0
        start = -leadingZeros
        count = leadingZeros
        storage.update(repeating: 0, count: leadingZeros)
    }

    /// Appends samples, compacting first when they would not fit behind the kept ones.
    @inlinable func append(_ samples: UnsafeBufferPointer<Float>) {
        guard let base = samples.baseAddress, samples.count > 0 else { return }
        makeRoom(for: samples.count)
        (storage + offset + count).update(from: base, count: samples.count)
        count += samples.count
    }

    /// Room for `n` more samples after the newest: the caller writes them, then calls
    /// ``commit(_:)`` with the same count.
    @inlinable func reserve(_ n: Int) -> UnsafeMutablePointer<Float> {
        makeRoom(for: n)
        return storage + offset + count
    }

    /// Keeps the `n` samples written after ``reserve(_:)``.
    @inlinable func commit(_ n: Int) {
        count += n
    }

    /// Appends `n` zeros (the silence after a flushed stream).
    @inlinable func appendZeros(_ n: Int) {
        makeRoom(for: n)
        (storage + offset + count).update(repeating: 0, count: n)
        count += n
    }

    /// Forgets every sample before absolute index `index`.
    @inlinable func discard(before index: Int) {
        let drop = min(max(index - start, 0), count)
        offset += drop
        start += drop
        count -= drop
    }

    @usableFromInline func makeRoom(for n: Int) {
        if offset + count + n <= capacity { return }
        precondition(count + n <= capacity, "SampleHistory sized too small: internal block size invariant broken")
        (storage).update(from: storage + offset, count: count)
        offset = 0
    }
}
