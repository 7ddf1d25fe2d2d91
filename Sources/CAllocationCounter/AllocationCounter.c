// Counts heap allocations per thread by interposing glibc's allocator entry points.
//
// Linked into a test or benchmark executable, these definitions take precedence over libc's
// (glibc supports replacing malloc this way); each forwards to glibc's own implementation
// (__libc_malloc and friends), so behaviour is unchanged. Counting is per thread and off unless
// vp_allocations_begin() was called on that thread, so parallel tests do not disturb each other.
#include "AllocationCounter.h"

#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static _Thread_local int counting;
static _Thread_local uint64_t allocations;

void vp_allocations_begin(void) {
    allocations = 0;
    counting = 1;
}

uint64_t vp_allocations_end(void) {
    counting = 0;
    return allocations;
}

static inline void note(void) {
    if (counting) {
        allocations += 1;
    }
}

void *malloc(size_t size) {
    note();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    note();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    note();
    return __libc_realloc(pointer, size);
}

void free(void *pointer) {
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
    note();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    note();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) {
        return EINVAL;
    }
    note();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) {
        return ENOMEM;
    }
    *result = pointer;
    return 0;
}
