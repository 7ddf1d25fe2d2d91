#include <malloc.h>

/// Bytes glibc's malloc has handed out and not had back: its arenas' blocks in use and its
/// mmapped blocks (Glibc's Swift module does not bring malloc.h's mallinfo2).
static inline size_t vp_bench_heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
