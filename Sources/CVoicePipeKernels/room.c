// The simulated room's convolution, in C so that it runs fast enough for a real-time room in a
// debug build too (Swift's SIMD types compile to calls there; C's vector extensions stay vectors).

#include "VoicePipeKernels.h"

#pragma STDC FP_CONTRACT OFF

typedef float vp_room_lanes __attribute__((vector_size(32), aligned(4)));

void vp_room_convolve(const float *work, const float *reversedTaps, intptr_t tapCount, float *output, intptr_t count) {
    intptr_t n = 0;
    for (; n + 8 <= count; n += 8) {
        vp_room_lanes accumulator = {0, 0, 0, 0, 0, 0, 0, 0};
        const float *row = work + n;
        for (intptr_t j = 0; j < tapCount; j++) {
            vp_room_lanes samples = *(const vp_room_lanes *)(row + j);
            float tap = reversedTaps[j];
            vp_room_lanes taps = {tap, tap, tap, tap, tap, tap, tap, tap};
            vp_room_lanes product = taps * samples;
            accumulator = accumulator + product;
        }
        for (int lane = 0; lane < 8; lane++) output[n + lane] = accumulator[lane];
    }
    for (; n < count; n++) {
        float sum = 0;
        for (intptr_t j = 0; j < tapCount; j++) {
            float product = reversedTaps[j] * work[n + j];
            sum = sum + product;
        }
        output[n] = sum;
    }
}
