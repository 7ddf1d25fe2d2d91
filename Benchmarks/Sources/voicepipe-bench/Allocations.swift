import CBenchAllocationCounter

/// Heap allocations made by the calling thread while `body` runs (the root package's counter,
/// built here from the same C file; see Package.swift).
func countAllocations(_ body: () throws -> Void) rethrows -> UInt64 {
    vp_allocations_begin()
    defer { _ = vp_allocations_end() }
    try body()
    return vp_allocations_end()
}
