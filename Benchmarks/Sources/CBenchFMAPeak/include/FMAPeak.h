// The core's multiply-add peak, measured: independent FMA chains that keep every FMA pipe busy.
#ifndef VOICEPIPE_BENCH_FMA_PEAK_H
#define VOICEPIPE_BENCH_FMA_PEAK_H

/// Runs `iterations` steps of twelve independent 8-lane FMAs (AVX2 + FMA): 96 lane-FMAs a step.
/// Call only on a CPU with AVX2 and FMA. Returns a value that depends on every FMA.
float bench_fma_peak_avx2(long iterations);

/// The same with twelve 16-lane AVX-512 FMAs: 192 lane-FMAs a step. Call only with AVX-512 F.
float bench_fma_peak_avx512(long iterations);

/// Twelve independent 8-lane FMAs a step, each fed by one unaligned load from `samples` (at least
/// 128 floats, in L1) plus one add: the cheapest form of a folded symmetric FIR's inner loop.
float bench_folded_fma_avx2(const float *samples, long iterations);

/// The same with sixteen-lane AVX-512 loads, adds and FMAs (most loads split a cache line, as a
/// sixteen-lane filter's do). Call only with AVX-512 F.
float bench_folded_fma_avx512(const float *samples, long iterations);

#endif
