// Resampler inner loops for CPUs with AVX2 and FMA, and plain C references for them.
//
// The signatures match DSPKernels in VoicePipeCore (see that type for what each computes);
// VoicePipeCore offers the AVX2 set after vp_cpu_supports_avx2_fma() says the CPU and the
// operating system support it. Every vector lane performs exactly the operations of its
// reference, in the same order (fused multiply-adds included), so the two agree bit for bit.
#ifndef VOICEPIPE_KERNELS_H
#define VOICEPIPE_KERNELS_H

#include <stdint.h>

#pragma clang assume_nonnull begin

/// One residue class of a sharp decimator phase: a run of taps and the two input streams it
/// folds. Output n adds Σ_j taps[tapStart + j]·(S_forward[n + forwardOffset + j] +
/// S_backward[n + backwardOffset − j]) for j < tapCount (S_k is stream slot k).
typedef struct __attribute__((swift_name("DecimatorTapClass"))) vp_tap_class {
    intptr_t tapStart;
    intptr_t tapCount;
    intptr_t forwardStream;
    intptr_t forwardOffset;
    intptr_t backwardStream;
    intptr_t backwardOffset;
} vp_tap_class;

/// The polyphase table laid out for a kernel that computes sixteen consecutive outputs at once,
/// one per lane. The outputs of one period are numbered by their place in it: place s has the
/// phase s·stepPhase mod phaseCount, so sixteen consecutive outputs are sixteen consecutive places.
typedef struct __attribute__((swift_name("PolyphaseColumns"))) vp_polyphase_columns {
    /// taps[j·stride + s]: tap j of the row of place s, for s < phaseCount + 15 (place
    /// phaseCount + k repeats place k), so tap j of sixteen consecutive places is one load. With
    /// taps 64-byte aligned and stride a multiple of 16, that load is aligned from a place that is
    /// a multiple of 16, which the AVX-512 kernel steps to first (any layout gives the same results).
    const float *taps;
    intptr_t stride;
    /// offsets[16·s + k]: the input position of place s + k less that of place s (k < 16); each
    /// at most 24, so that an output's eight-tap window lies in 32 samples from place s's position.
    const uint8_t *offsets;
    /// advances[s]: the input position of place s + 16 less that of place s.
    const uint8_t *advances;
    /// The place of phase p is p·placeOfPhaseStep mod phaseCount (the inverse of stepPhase).
    intptr_t placeOfPhaseStep;
} vp_polyphase_columns;

/// How the polyphase stage steps from one output to the next: the input position advances by
/// stepWhole + stepPhase / phaseCount samples per output. Outputs are computed while the
/// position's whole part is below end. `columns`, when not null, is the same table laid out for
/// the sixteen-lane kernel; the other kernels ignore it.
typedef struct __attribute__((swift_name("PolyphaseWalk"))) vp_polyphase_walk {
    intptr_t phaseCount;
    intptr_t stepWhole;
    intptr_t stepPhase;
    intptr_t end;
    const vp_polyphase_columns *_Nullable columns;
} vp_polyphase_walk;

/// The polyphase stage's position: the next output sits at input base + phase / phaseCount.
typedef struct __attribute__((swift_name("PolyphasePosition"))) vp_polyphase_position {
    intptr_t base;
    intptr_t phase;
} vp_polyphase_position;

/// What a Float -> Int16 conversion measured on the way: the largest |x| before rounding (NaN
/// never counts) and the largest |result| after it (0 ... 32768).
typedef struct __attribute__((swift_name("ConversionPeaks"))) vp_conversion_peaks {
    float input;
    float output;
} vp_conversion_peaks;

/// 1 when the CPU has AVX2 and FMA (cpuid) and the operating system saves the YMM registers
/// (xgetbv), else 0.
int vp_cpu_supports_avx2_fma(void);

void vp_decimate_avx2(const float *_Nonnull const *_Nonnull streams, const vp_tap_class *classes, intptr_t factor,
                      const float *taps, const void *splats, float centre, float *output, intptr_t count);
void vp_interpolate_avx2(const float *x, const float *evenTaps, const float *oddTaps,
                         const void *evenSplats, const void *oddSplats, float centre, float *output, intptr_t count);
intptr_t vp_polyphase_avx2(const float *origin, const float *table, intptr_t rowLength,
                           const vp_polyphase_walk *walk, vp_polyphase_position *position, float *output);

/// CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID), for the one-time
/// calibration that chooses a kernel set; 0 where that clock is missing.
int64_t vp_thread_cpu_nanoseconds(void);

/// 1 when the AVX2 set runs and the CPU also has AVX-512 F with the mask and ZMM registers saved
/// by the operating system (xgetbv), else 0.
int vp_cpu_supports_avx512f(void);

/// The polyphase loop with sixteen outputs per step when walk->columns is set (else
/// vp_polyphase_avx2); bit for bit the AVX2 results. It reads no input past
/// origin[walk->end + rowLength − 2], the last sample the last output needs.
intptr_t vp_polyphase_avx512(const float *origin, const float *table, intptr_t rowLength,
                             const vp_polyphase_walk *walk, vp_polyphase_position *position, float *output);

/// The decimate and interpolate kernels with sixteen lanes; bit for bit the AVX2 results.
void vp_decimate_avx512(const float *_Nonnull const *_Nonnull streams, const vp_tap_class *classes, intptr_t factor,
                        const float *taps, const void *splats, float centre, float *output, intptr_t count);
void vp_interpolate_avx512(const float *x, const float *evenTaps, const float *oddTaps,
                           const void *evenSplats, const void *oddSplats, float centre, float *output, intptr_t count);

/// Interleaved stereo to mono, (L + R) / 2 of the normalised samples (Float32: NaN -> 0, clamped
/// to ±1; Int16: x / 32768); exact, the same result as the scalar rule in any case.
void vp_downmix_stereo_float_avx2(const float *input, float *output, intptr_t frames);
void vp_downmix_stereo_int16_avx2(const int16_t *input, float *output, intptr_t frames);
/// The downmixes dealt out to two streams: mono sample 2k to first[k], 2k + 1 to second[k].
void vp_downmix_stereo_float_split_avx2(const float *input, float *first, float *second, intptr_t frames);
void vp_downmix_stereo_int16_split_avx2(const int16_t *input, float *first, float *second, intptr_t frames);
/// The four downmixes with sixteen lanes (the sets agree bit for bit, as each does with the rule).
void vp_downmix_stereo_float_avx512(const float *input, float *output, intptr_t frames);
void vp_downmix_stereo_int16_avx512(const int16_t *input, float *output, intptr_t frames);
void vp_downmix_stereo_float_split_avx512(const float *input, float *first, float *second, intptr_t frames);
void vp_downmix_stereo_int16_split_avx512(const int16_t *input, float *first, float *second, intptr_t frames);

/// Float -> Int16 (x32768, nearest-even, saturate, NaN -> 0), with the peaks of input and output.
/// Exact: the same result as the scalar rule in any case.
void vp_convert_int16_avx2(const float *input, int16_t *output, intptr_t count, vp_conversion_peaks *peaks);

/// output[2i] = even[i], output[2i + 1] = odd[i] for i < pairs.
void vp_interleave_avx2(const float *even, const float *odd, float *output, intptr_t pairs);
/// target[i] = source[stride · i] for i < count; reads nothing past source[stride · (count − 1)].
void vp_take_every_avx2(const float *source, intptr_t stride, float *target, intptr_t count);

/// vp_convert_int16_avx2 with sixteen lanes.
void vp_convert_int16_avx512(const float *input, int16_t *output, intptr_t count, vp_conversion_peaks *peaks);

/// Int16 -> Float (x / 32768, exact).
void vp_convert_float_avx2(const int16_t *input, float *output, intptr_t count);

/// Standard base64 (A-Z a-z 0-9 + /, no padding) from `text`, 32 characters to 24 bytes at a
/// time, for up to `blocks` blocks, stopping before the first block with a character outside
/// the alphabet. Writes exactly 24 bytes per block decoded. Returns the number of blocks decoded.
/// Needs AVX2 (check vp_cpu_supports_avx2_fma() first).
intptr_t vp_base64_decode_blocks_avx2(const uint8_t *text, intptr_t blocks, uint8_t *output);
/// Standard base64 of `blocks` blocks of 24 bytes from `bytes`, 32 characters each to `text`.
/// Reads 4 bytes past the last block (28 bytes per block from its start). Needs AVX2.
void vp_base64_encode_blocks_avx2(const uint8_t *bytes, intptr_t blocks, uint8_t *text);
/// How far a JSON string's content runs from `bytes` before its first '"', '\\' or byte below
/// 0x20, looking at whole 32-byte blocks only: the offset of that byte within the first block
/// holding one, or 32 × ⌊count / 32⌋ when none does. Needs AVX2.
intptr_t vp_json_string_run_avx2(const uint8_t *bytes, intptr_t count);

/// The references: scalar code with fmaf, the same operations in the same order as the AVX2 lanes.
void vp_decimate_fma_reference(const float *_Nonnull const *_Nonnull streams, const vp_tap_class *classes, intptr_t factor,
                               const float *taps, const void *splats, float centre, float *output, intptr_t count);
void vp_interpolate_fma_reference(const float *x, const float *evenTaps, const float *oddTaps,
                                  const void *evenSplats, const void *oddSplats, float centre, float *output, intptr_t count);
intptr_t vp_polyphase_fma_reference(const float *origin, const float *table, intptr_t rowLength,
                                    const vp_polyphase_walk *walk, vp_polyphase_position *position, float *output);

/// The simulated room's direct-form convolution: output[n] = Σ_j reversedTaps[j]·work[n + j]
/// for n < count, each sum in order of j (eight outputs at a time, one per lane, the scalar
/// remainder the same sums), so the result does not depend on how the input is cut.
void vp_room_convolve(const float *work, const float *reversedTaps, intptr_t tapCount, float *output, intptr_t count)
    __attribute__((swift_name("roomConvolve(work:reversedTaps:tapCount:output:count:)")));


/// Samples a biquad pair's block kernel advances at once, and the rows of its matrix's columns.
#define VP_BIQUAD_PAIR_BLOCK 8
#define VP_BIQUAD_PAIR_ROWS 12

/// Two second-order sections in series, each b0 b1 b2 a1 a2 (a0 = 1) in direct form I, and the
/// matrix that advances them a block at a time. The state is six doubles: the first section's
/// last two inputs and outputs (x1 x2 u1 u2, the input in full-scale units) and the second's
/// last two outputs (y1 y2); the second section's inputs are the first's outputs.
typedef struct __attribute__((swift_name("BiquadPairDesign"))) vp_biquad_pair {
    double first[5];
    double second[5];
    /// columns[12·c + r]: row r (y0 … y7, then the first section's u6 and u7, then two zeros)
    /// of a block whose input c is one and every other zero; inputs 0 … 7 are the block's
    /// samples, 8 … 13 the state before it (x1 x2 u1 u2 y1 y2).
    double columns[(VP_BIQUAD_PAIR_BLOCK + 6) * VP_BIQUAD_PAIR_ROWS];
} vp_biquad_pair;

/// Fills pair->columns from the sections' coefficients.
void vp_biquad_pair_design(vp_biquad_pair *pair);
/// Runs samples[n] / 32768 through both sections one at a time, updating `state`, and returns
/// the sum of the squared outputs. Each section sums b0·x + b1·x1 + b2·x2 − a2·y2, then − a1·y1.
double vp_biquad_pair_sum_squares(const vp_biquad_pair *pair, double *state, const int16_t *samples, intptr_t count);
/// The same with the block matrix (AVX2 + FMA), eight samples at a time, and the remainder one
/// at a time. It rounds differently (about one part in 10^15 of the result). Needs AVX2.
double vp_biquad_pair_sum_squares_avx2(const vp_biquad_pair *pair, double *state, const int16_t *samples, intptr_t count);

#pragma clang assume_nonnull end

#endif
