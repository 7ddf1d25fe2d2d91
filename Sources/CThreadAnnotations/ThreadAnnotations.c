// Lock annotations for ThreadSanitizer.
//
// Synchronization.Mutex on Linux hands a contended lock over inside the kernel (a priority-
// inheriting futex, taken and released in libswiftSynchronization, which is not instrumented):
// ThreadSanitizer then sees no ordering between one holder and the next, and reports the state
// behind the lock as raced although every access is under it. Guarded (VoicePipeCore) calls these
// just inside the lock; in a `--sanitize=thread` build they name the order to ThreadSanitizer
// (SwiftPM compiles this file with -fsanitize=thread then), in every other build they are empty.
#include "ThreadAnnotations.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define VP_THREAD_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define VP_THREAD_SANITIZER 1
#endif

#if defined(VP_THREAD_SANITIZER)
#include <sanitizer/tsan_interface.h>

void vp_lock_acquired(void *lock) {
    __tsan_acquire(lock);
}

void vp_lock_releasing(void *lock) {
    __tsan_release(lock);
}
#else
void vp_lock_acquired(void *lock) {
    (void)lock;
}

void vp_lock_releasing(void *lock) {
    (void)lock;
}
#endif

int vp_built_with_address_sanitizer(void) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
    return 1;
#endif
#endif
    return 0;
}
