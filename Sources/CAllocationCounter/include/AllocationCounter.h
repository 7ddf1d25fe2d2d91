#ifndef VOICEPIPE_ALLOCATION_COUNTER_H
#define VOICEPIPE_ALLOCATION_COUNTER_H

#include <stdint.h>

/// Starts counting heap allocations made by the calling thread.
void vp_allocations_begin(void);

/// Stops counting and returns the number of allocations (malloc, calloc, realloc, aligned
/// allocations) the calling thread made since vp_allocations_begin().
uint64_t vp_allocations_end(void);

#endif
