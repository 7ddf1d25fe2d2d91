// Two biquad sections in series over Int16 samples, summing the squares of the output: the
// speech-band meter's inner loop. A recursive filter run one sample at a time is bound by its
// feedback's latency (about 8 cycles a sample for two Double sections), so the AVX2 kernel
// advances the pair eight samples at a time with one matrix (the block's outputs as a linear
// function of its inputs and the state before it), whose multiply-adds are independent of each
// other but for the last few, which take the state.

#include "VoicePipeKernels.h"

#pragma STDC FP_CONTRACT OFF

/// One section in direct form I: y = b0·x + b1·x1 + b2·x2 − a2·y2 − a1·y1, summed in that order.
static inline double section(const double c[5], double x, double x1, double x2, double y1, double y2) {
    const double ahead = c[0] * x + c[1] * x1 + c[2] * x2 - c[4] * y2;
    return ahead - c[3] * y1;
}

/// One sample through both sections, updating the state; returns the second section's output.
static inline double pair_step(const vp_biquad_pair *pair, double *state, double x) {
    const double u = section(pair->first, x, state[0], state[1], state[2], state[3]);
    const double y = section(pair->second, u, state[2], state[3], state[4], state[5]);
    state[1] = state[0];
    state[0] = x;
    state[3] = state[2];
    state[2] = u;
    state[5] = state[4];
    state[4] = y;
    return y;
}

void vp_biquad_pair_design(vp_biquad_pair *pair) {
    // Column c is what a block gives for input c set to one and every other input zero: the
    // pair is linear, so any block is the sum of its columns weighted by the inputs.
    for (int column = 0; column < VP_BIQUAD_PAIR_BLOCK + 6; column++) {
        double state[6] = {0, 0, 0, 0, 0, 0};
        if (column >= VP_BIQUAD_PAIR_BLOCK) state[column - VP_BIQUAD_PAIR_BLOCK] = 1;
        double *rows = pair->columns + VP_BIQUAD_PAIR_ROWS * column;
        for (int n = 0; n < VP_BIQUAD_PAIR_BLOCK; n++) {
            rows[n] = pair_step(pair, state, column == n ? 1 : 0);
            // The first section's last two outputs: the state the next block starts from.
            if (n == VP_BIQUAD_PAIR_BLOCK - 2) rows[VP_BIQUAD_PAIR_BLOCK] = state[2];
            if (n == VP_BIQUAD_PAIR_BLOCK - 1) rows[VP_BIQUAD_PAIR_BLOCK + 1] = state[2];
        }
        for (int r = VP_BIQUAD_PAIR_BLOCK + 2; r < VP_BIQUAD_PAIR_ROWS; r++) rows[r] = 0;
    }
}

double vp_biquad_pair_sum_squares(const vp_biquad_pair *pair, double *state, const int16_t *samples, intptr_t count) {
    double sum = 0;
    for (intptr_t n = 0; n < count; n++) {
        const double y = pair_step(pair, state, (double)samples[n] / 32768.0);
        sum += y * y;
    }
    return sum;
}

#if defined(__x86_64__)
#include <immintrin.h>

#define VP_AVX2 __attribute__((target("avx2,fma")))

VP_AVX2 double vp_biquad_pair_sum_squares_avx2(const vp_biquad_pair *pair, double *state, const int16_t *samples, intptr_t count) {
    const double *m = pair->columns;
    // Rows y0…y3, y4…y7 and (u6, u7, 0, 0) of each column.
#define COLUMN(c, part) _mm256_loadu_pd(m + VP_BIQUAD_PAIR_ROWS * (c) + 4 * (part))
    const __m256d scale = _mm256_set1_pd(1.0 / 32768.0);
    __m256d x1 = _mm256_set1_pd(state[0]), x2 = _mm256_set1_pd(state[1]);
    __m256d u1 = _mm256_set1_pd(state[2]), u2 = _mm256_set1_pd(state[3]);
    __m256d y1 = _mm256_set1_pd(state[4]), y2 = _mm256_set1_pd(state[5]);
    __m256d squares = _mm256_setzero_pd();
    intptr_t n = 0;
    for (; n + VP_BIQUAD_PAIR_BLOCK <= count; n += VP_BIQUAD_PAIR_BLOCK) {
        const __m256i wide = _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(samples + n)));
        const __m256d low = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(wide)), scale);
        const __m256d high = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(wide, 1)), scale);
        __m256d inputs[8];
        inputs[0] = _mm256_permute4x64_pd(low, 0x00);
        inputs[1] = _mm256_permute4x64_pd(low, 0x55);
        inputs[2] = _mm256_permute4x64_pd(low, 0xAA);
        inputs[3] = _mm256_permute4x64_pd(low, 0xFF);
        inputs[4] = _mm256_permute4x64_pd(high, 0x00);
        inputs[5] = _mm256_permute4x64_pd(high, 0x55);
        inputs[6] = _mm256_permute4x64_pd(high, 0xAA);
        inputs[7] = _mm256_permute4x64_pd(high, 0xFF);
        // The inputs' part and the known state (x1, x2) first, off the feedback path.
        __m256d a0 = _mm256_mul_pd(COLUMN(8, 0), x1), a1 = _mm256_mul_pd(COLUMN(8, 1), x1), a2 = _mm256_mul_pd(COLUMN(8, 2), x1);
        a0 = _mm256_fmadd_pd(COLUMN(9, 0), x2, a0);
        a1 = _mm256_fmadd_pd(COLUMN(9, 1), x2, a1);
        a2 = _mm256_fmadd_pd(COLUMN(9, 2), x2, a2);
        for (int c = 0; c < 8; c++) {
            a0 = _mm256_fmadd_pd(COLUMN(c, 0), inputs[c], a0);
            a1 = _mm256_fmadd_pd(COLUMN(c, 1), inputs[c], a1);
            a2 = _mm256_fmadd_pd(COLUMN(c, 2), inputs[c], a2);
        }
        // The fed-back state in two short chains: the first section's (u1, u2) and the second's.
        a0 = _mm256_fmadd_pd(COLUMN(11, 0), u2, _mm256_fmadd_pd(COLUMN(10, 0), u1, a0));
        a1 = _mm256_fmadd_pd(COLUMN(11, 1), u2, _mm256_fmadd_pd(COLUMN(10, 1), u1, a1));
        a2 = _mm256_fmadd_pd(COLUMN(11, 2), u2, _mm256_fmadd_pd(COLUMN(10, 2), u1, a2));
        const __m256d b0 = _mm256_fmadd_pd(COLUMN(13, 0), y2, _mm256_mul_pd(COLUMN(12, 0), y1));
        const __m256d b1 = _mm256_fmadd_pd(COLUMN(13, 1), y2, _mm256_mul_pd(COLUMN(12, 1), y1));
        const __m256d b2 = _mm256_fmadd_pd(COLUMN(13, 2), y2, _mm256_mul_pd(COLUMN(12, 2), y1));
        const __m256d outLow = _mm256_add_pd(a0, b0), outHigh = _mm256_add_pd(a1, b1), firstSection = _mm256_add_pd(a2, b2);
        squares = _mm256_fmadd_pd(outLow, outLow, squares);
        squares = _mm256_fmadd_pd(outHigh, outHigh, squares);
        x1 = inputs[7];
        x2 = inputs[6];
        u1 = _mm256_permute4x64_pd(firstSection, 0x55);
        u2 = _mm256_permute4x64_pd(firstSection, 0x00);
        y1 = _mm256_permute4x64_pd(outHigh, 0xFF);
        y2 = _mm256_permute4x64_pd(outHigh, 0xAA);
    }
#undef COLUMN
    state[0] = _mm256_cvtsd_f64(x1);
    state[1] = _mm256_cvtsd_f64(x2);
    state[2] = _mm256_cvtsd_f64(u1);
    state[3] = _mm256_cvtsd_f64(u2);
    state[4] = _mm256_cvtsd_f64(y1);
    state[5] = _mm256_cvtsd_f64(y2);
    const __m128d halves = _mm_add_pd(_mm256_castpd256_pd128(squares), _mm256_extractf128_pd(squares, 1));
    double sum = _mm_cvtsd_f64(_mm_add_sd(halves, _mm_unpackhi_pd(halves, halves)));
    return sum + vp_biquad_pair_sum_squares(pair, state, samples + n, count - n);
}

#else

// Not x86-64: never chosen (vp_cpu_supports_avx2_fma() is 0); the reference keeps the symbol.
double vp_biquad_pair_sum_squares_avx2(const vp_biquad_pair *pair, double *state, const int16_t *samples, intptr_t count) {
    return vp_biquad_pair_sum_squares(pair, state, samples, count);
}

#endif
