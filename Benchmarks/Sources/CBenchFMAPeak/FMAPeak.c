#include "FMAPeak.h"

#if defined(__x86_64__)
#include <immintrin.h>

// Twelve accumulators cover four-cycle FMA latency on two pipes with room to spare; the multiplier
// and addend keep the values finite (x -> x * 0.999 + 0.001 converges to 1).
__attribute__((target("avx2,fma"))) float bench_fma_peak_avx2(long iterations) {
    const __m256 m = _mm256_set1_ps(0.999f), a = _mm256_set1_ps(0.001f);
    __m256 x[12];
    for (int k = 0; k < 12; k++) x[k] = _mm256_set1_ps((float)k);
    for (long i = 0; i < iterations; i++) {
        for (int k = 0; k < 12; k++) x[k] = _mm256_fmadd_ps(x[k], m, a);
    }
    __m256 sum = x[0];
    for (int k = 1; k < 12; k++) sum = _mm256_add_ps(sum, x[k]);
    return _mm256_cvtss_f32(sum);
}

// The folded-tap pattern at its cheapest: per FMA one unaligned load (from L1) and one add, as a
// symmetric FIR needs when the second sample of each pair costs nothing; twelve independent
// accumulators, so neither latency nor a dependency limits it. `samples` holds at least 128 floats.
__attribute__((target("avx2,fma"))) float bench_folded_fma_avx2(const float *samples, long iterations) {
    const __m256 m = _mm256_set1_ps(0.999f), a = _mm256_set1_ps(0.001f);
    __m256 x[12];
    for (int k = 0; k < 12; k++) x[k] = _mm256_set1_ps((float)k);
    for (long i = 0; i < iterations; i++) {
        for (int k = 0; k < 12; k++) x[k] = _mm256_fmadd_ps(x[k], m, _mm256_add_ps(_mm256_loadu_ps(samples + 9 * k + 1), a));
        // The loads are read again each iteration, as a filter reads its window.
        __asm__ volatile("" ::: "memory");
    }
    __m256 sum = x[0];
    for (int k = 1; k < 12; k++) sum = _mm256_add_ps(sum, x[k]);
    return _mm256_cvtss_f32(sum);
}

__attribute__((target("avx512f"))) float bench_fma_peak_avx512(long iterations) {
    const __m512 m = _mm512_set1_ps(0.999f), a = _mm512_set1_ps(0.001f);
    __m512 x[12];
    for (int k = 0; k < 12; k++) x[k] = _mm512_set1_ps((float)k);
    for (long i = 0; i < iterations; i++) {
        for (int k = 0; k < 12; k++) x[k] = _mm512_fmadd_ps(x[k], m, a);
    }
    __m512 sum = x[0];
    for (int k = 1; k < 12; k++) sum = _mm512_add_ps(sum, x[k]);
    return _mm512_reduce_add_ps(sum);
}
// bench_folded_fma_avx2 with sixteen lanes: each unaligned 64-byte load splits a cache line, as
// most of a sixteen-lane filter's window loads do.
__attribute__((target("avx512f"))) float bench_folded_fma_avx512(const float *samples, long iterations) {
    const __m512 m = _mm512_set1_ps(0.999f), a = _mm512_set1_ps(0.001f);
    __m512 x[12];
    for (int k = 0; k < 12; k++) x[k] = _mm512_set1_ps((float)k);
    for (long i = 0; i < iterations; i++) {
        for (int k = 0; k < 12; k++) x[k] = _mm512_fmadd_ps(x[k], m, _mm512_add_ps(_mm512_loadu_ps(samples + 9 * k + 1), a));
        __asm__ volatile("" ::: "memory");
    }
    __m512 sum = x[0];
    for (int k = 1; k < 12; k++) sum = _mm512_add_ps(sum, x[k]);
    return _mm512_reduce_add_ps(sum);
}
#else
float bench_folded_fma_avx512(const float *samples, long iterations) { (void)samples; (void)iterations; return 0; }
float bench_fma_peak_avx2(long iterations) { (void)iterations; return 0; }
float bench_fma_peak_avx512(long iterations) { (void)iterations; return 0; }
float bench_folded_fma_avx2(const float *samples, long iterations) { (void)samples; (void)iterations; return 0; }
#endif
