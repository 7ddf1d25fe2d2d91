// Counts heap allocations per thread by interposing glibc's allocator entry points.
//
// Linked into a test or benchmark executable, these definitions take precedence over libc's
// (glibc supports replacing malloc this way); each forwards to glibc's own implementation
// (__libc_malloc and friends), so behaviour is unchanged. Counting is per thread and off unless
// vp_allocations_begin() was called on that thread, so parallel tests do not disturb each other.
//
// Under a sanitizer (`swift test --sanitize=address|thread`) the sanitizer's runtime owns malloc:
// interposing it here would route every allocation past the sanitizer's allocator (ASan would
// check no heap memory) and runs instrumented code before TSan is initialised (it crashes at
// start). There the count comes from the sanitizer's own allocation hook instead, which its
// allocator calls for every malloc, calloc, realloc and aligned allocation.
#include "AllocationCounter.h"

#include <errno.h>
#include <stddef.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define VP_UNDER_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define VP_UNDER_SANITIZER 1
#endif

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

#if defined(VP_UNDER_SANITIZER)

int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));

static void allocated(const volatile void *pointer, size_t size) {
    (void)pointer;
    (void)size;
    note();
}

static void freed(const volatile void *pointer) {
    (void)pointer;
}

// The sanitizer asks for its hooks to be installed before other threads start: a constructor runs
// while the process is still single-threaded.
__attribute__((constructor)) static void install_hooks(void) {
    __sanitizer_install_malloc_and_free_hooks(allocated, freed);
}

#else

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

#endif
