import CAllocationCounter

// Counting heap allocations per thread, for tests: the C target behind it interposes malloc,
// calloc, realloc and memalign in whatever links it, so it is no product of the package. The
// benchmark package reaches the same C file through a link of its own (Benchmarks/Sources).

/// Heap allocations made by the calling thread while `body` runs.
public func countAllocations(_ body: () throws -> Void) rethrows -> UInt64 {
    vp_allocations_begin()
    defer { _ = vp_allocations_end() }
    try body()
    return vp_allocations_end()
}

/// Allocation counting across calls on one thread (a tap on an audio thread, say): ``begin()``
/// starts counting on the calling thread, ``end()`` returns the count since.
public enum ThreadAllocations {
    public static func begin() { vp_allocations_begin() }
    public static func end() -> UInt64 { vp_allocations_end() }
}
