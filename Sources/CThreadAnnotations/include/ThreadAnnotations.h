#ifndef VOICEPIPE_THREAD_ANNOTATIONS_H
#define VOICEPIPE_THREAD_ANNOTATIONS_H

/// Tells ThreadSanitizer, in a build with it, that the lock at `lock` was just taken: everything
/// done before the last vp_lock_releasing() on it happens before what follows. Does nothing in
/// any other build.
void vp_lock_acquired(void *lock);

/// Tells ThreadSanitizer, in a build with it, that the lock at `lock` is about to be released.
/// Does nothing in any other build.
void vp_lock_releasing(void *lock);

/// 1 in a build with AddressSanitizer, whose quarantine and shadow memory make a process's
/// resident memory grow with what it frees: memory figures then measure the sanitizer.
int vp_built_with_address_sanitizer(void);

#endif
