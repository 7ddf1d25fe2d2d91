// AVX2 + FMA resampler kernels and their plain C references. The AVX2 functions are compiled
// with per-function target attributes, so the rest of the package keeps the x86-64 baseline;
// callers check vp_cpu_supports_avx2_fma() first.
#include "VoicePipeKernels.h"

#include <math.h>
#include <time.h>

int64_t vp_thread_cpu_nanoseconds(void) {
    struct timespec now;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

// ---- References (portable C) ----------------------------------------------------------------

/// Output n: centre * S0[n], then for each class s, j ascending: fma(tap, F[n+fo+j] + B[n+bo-j], sum).
static inline float decimate_one(const float *_Nonnull const *_Nonnull streams, const vp_tap_class *classes, intptr_t factor,
                                 const float *taps, float centre, intptr_t n) {
    float sum = centre * streams[0][n];
    for (intptr_t s = 0; s < factor; s++) {
        const vp_tap_class *c = classes + s;
        const float *t = taps + c->tapStart;
        const float *forward = streams[c->forwardStream] + n + c->forwardOffset;
        const float *backward = streams[c->backwardStream] + n + c->backwardOffset;
        for (intptr_t j = 0; j < c->tapCount; j++) {
            sum = fmaf(t[j], forward[j] + backward[-j], sum);
        }
    }
    return sum;
}

void vp_decimate_fma_reference(const float *_Nonnull const *_Nonnull streams, const vp_tap_class *classes, intptr_t factor,
                               const float *taps, const void *splats, float centre, float *output, intptr_t count) {
    (void)splats;
    for (intptr_t n = 0; n < count; n++) {
        output[n] = decimate_one(streams, classes, factor, taps, centre, n);
    }
}

/// Even: centre * x[i], then fma(even[t], x[i+32-t] + x[i-32+t], sum); odd: 0, then
/// fma(odd[t], x[i+32-t] + x[i-31+t], sum); t ascending.
static inline void interpolate_one(const float *x, const float *evenTaps, const float *oddTaps, float centre, float *out) {
    float even = centre * x[0];
    float odd = 0;
    for (int t = 0; t < 32; t++) {
        even = fmaf(evenTaps[t], x[32 - t] + x[-32 + t], even);
        odd = fmaf(oddTaps[t], x[32 - t] + x[-31 + t], odd);
    }
    out[0] = even;
    out[1] = odd;
}

void vp_interpolate_fma_reference(const float *x, const float *evenTaps, const float *oddTaps,
                                  const void *evenSplats, const void *oddSplats, float centre, float *output, intptr_t count) {
    (void)evenSplats;
    (void)oddSplats;
    for (intptr_t i = 0; i < count; i++) {
        interpolate_one(x + i, evenTaps, oddTaps, centre, output + 2 * i);
    }
}

/// Eight lanes: lane k = fma(x[j], c[j], lane k) for j = k, k+8, … (count is a multiple of 8);
/// then m_k = l_k + l_(k+4) and the result (m0 + m2) + (m1 + m3).
static inline float dot_one(const float *x, const float *c, intptr_t count) {
    float l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    intptr_t j = 0;
    for (; j + 8 <= count; j += 8) {
        for (int k = 0; k < 8; k++) l[k] = fmaf(x[j + k], c[j + k], l[k]);
    }
    // A row length of 8n + 4 ends with four taps, into the low four lanes.
    if (j < count) {
        for (int k = 0; k < 4; k++) l[k] = fmaf(x[j + k], c[j + k], l[k]);
    }
    const float m0 = l[0] + l[4], m1 = l[1] + l[5], m2 = l[2] + l[6], m3 = l[3] + l[7];
    return (m0 + m2) + (m1 + m3);
}

static inline void advance(intptr_t *base, intptr_t *phase, const vp_polyphase_walk *walk) {
    *base += walk->stepWhole;
    *phase += walk->stepPhase;
    if (*phase >= walk->phaseCount) {
        *phase -= walk->phaseCount;
        *base += 1;
    }
}

intptr_t vp_polyphase_fma_reference(const float *origin, const float *table, intptr_t rowLength,
                                    const vp_polyphase_walk *walk, vp_polyphase_position *position, float *output) {
    intptr_t base = position->base, phase = position->phase, produced = 0;
    while (base < walk->end) {
        output[produced++] = dot_one(origin + base, table + phase * rowLength, rowLength);
        advance(&base, &phase, walk);
    }
    position->base = base;
    position->phase = phase;
    return produced;
}

/// The Int16 rule, one sample: NaN -> 0, x32768, round to nearest-even, saturate.
static inline int16_t to_int16(float x) {
    if (x != x) return 0;
    float scaled = x * 32768.0f;
    if (scaled >= 32767.0f) return 32767;
    if (scaled <= -32768.0f) return -32768;
    return (int16_t)lrintf(scaled);  // the default rounding mode is nearest-even
}

// ---- AVX2 + FMA -----------------------------------------------------------------------------

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

#define VP_AVX2 __attribute__((target("avx2,fma")))

/// Unrolls a loop over a kernel's accumulator blocks completely, so the accumulators stay in
/// registers: a loop left rolled keeps them on the stack, and every multiply-add's result then
/// makes a round trip through memory on its dependency chain (about 12 % of the 48 kHz capture's
/// time).
#define VP_UNROLL _Pragma("clang loop unroll(full)")

/// A mask selecting the first `lanes` (0 … 8) of eight.
VP_AVX2 static inline __m256i lane_mask(intptr_t lanes) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)lanes), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// A mask selecting the first `lanes` of sixteen: none for lanes ≤ 0, all for lanes ≥ 16.
static inline __mmask16 first_lanes16(intptr_t lanes) {
    return lanes <= 0 ? 0 : lanes >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << lanes) - 1);
}

/// XCR0 through xgetbv: which register states the operating system saves on a context switch.
__attribute__((target("xsave"))) static uint64_t enabled_register_states(void) {
    return _xgetbv(0);
}

int vp_cpu_supports_avx2_fma(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    const int fma = (ecx >> 12) & 1, osxsave = (ecx >> 27) & 1, avx = (ecx >> 28) & 1;
    if (!fma || !osxsave || !avx) return 0;
    // Bits 1 (SSE) and 2 (AVX): the operating system keeps the full YMM registers.
    if ((enabled_register_states() & 0x6) != 0x6) return 0;
    if (__get_cpuid_max(0, 0) < 7) return 0;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    return (ebx >> 5) & 1;  // AVX2
}

int vp_cpu_supports_avx512f(void) {
    if (!vp_cpu_supports_avx2_fma()) return 0;
    unsigned eax, ebx, ecx, edx;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (!((ebx >> 16) & 1)) return 0;  // AVX-512 F
    // Bits 5-7: the operating system keeps the mask registers and the full ZMM registers.
    return (enabled_register_states() & 0xE6) == 0xE6;
}

/// The eight-float window starting r floats into x (its low vector) and y (the next eight), with
/// m the window four in: a byte shift within each 128-bit half.
#define VP_WINDOW(high, low, r) _mm256_castsi256_ps(_mm256_alignr_epi8(_mm256_castps_si256(high), _mm256_castps_si256(low), 4 * (r)))

/// `blocks` (1 … 4) vectors of eight consecutive outputs from output n, one accumulator each: the
/// broadcast tap feeds every block. Each lane runs decimate_one's operations in its order;
/// `outputs` (≤ 8·blocks) is how many lanes are stored, the rest read within the read slack.
///
/// Implementation notes: with loads alone the loop is bound by loads (two per multiply-add, and 7
/// of 16 unaligned eight-float loads split a cache line), so per eight taps the forward windows
/// come from two loads and shuffles (x, x + 8, their middle, byte shifts) while the backward ones
/// stay loads (12-15 % faster on Zen 4 than loads alone; shuffles for both sides were 15 %
/// slower). That moves the limit to the floating-point ports: 8 FMAs, 8 adds and about 13
/// shuffle µops per eight taps and block, on Zen 4's four FP pipes. The two-load window reads one sample past the last forward sample
/// a group uses, within the read slack.
VP_AVX2 __attribute__((always_inline)) static inline void decimate_blocks(const float *_Nonnull const *_Nonnull streams, const vp_tap_class *classes,
                                                                          intptr_t factor, const float *taps, __m256 centreTap, float *output,
                                                                          intptr_t n, int blocks, intptr_t outputs) {
    __m256 a[4];
    VP_UNROLL
    for (int b = 0; b < blocks; b++) a[b] = _mm256_mul_ps(centreTap, _mm256_loadu_ps(streams[0] + n + 8 * b));
    for (intptr_t s = 0; s < factor; s++) {
        const vp_tap_class *c = classes + s;
        const float *t = taps + c->tapStart;
        const float *forward = streams[c->forwardStream] + n + c->forwardOffset;
        const float *backward = streams[c->backwardStream] + n + c->backwardOffset;
        intptr_t j = 0;
        for (; j + 8 <= c->tapCount; j += 8) {
            __m256 tap[8];
            for (int k = 0; k < 8; k++) tap[k] = _mm256_broadcast_ss(t + j + k);
            VP_UNROLL
            for (int b = 0; b < blocks; b++) {
                const float *f = forward + j + 8 * b, *g = backward - j + 8 * b;
                const __m256 x = _mm256_loadu_ps(f), y = _mm256_loadu_ps(f + 8);
                const __m256 m = _mm256_permute2f128_ps(x, y, 0x21);
                a[b] = _mm256_fmadd_ps(tap[0], _mm256_add_ps(x, _mm256_loadu_ps(g)), a[b]);
                a[b] = _mm256_fmadd_ps(tap[1], _mm256_add_ps(VP_WINDOW(m, x, 1), _mm256_loadu_ps(g - 1)), a[b]);
                a[b] = _mm256_fmadd_ps(tap[2], _mm256_add_ps(VP_WINDOW(m, x, 2), _mm256_loadu_ps(g - 2)), a[b]);
                a[b] = _mm256_fmadd_ps(tap[3], _mm256_add_ps(VP_WINDOW(m, x, 3), _mm256_loadu_ps(g - 3)), a[b]);
                a[b] = _mm256_fmadd_ps(tap[4], _mm256_add_ps(m, _mm256_loadu_ps(g - 4)), a[b]);
                a[b] = _mm256_fmadd_ps(tap[5], _mm256_add_ps(VP_WINDOW(y, m, 1), _mm256_loadu_ps(g - 5)), a[b]);
                a[b] = _mm256_fmadd_ps(tap[6], _mm256_add_ps(VP_WINDOW(y, m, 2), _mm256_loadu_ps(g - 6)), a[b]);
                a[b] = _mm256_fmadd_ps(tap[7], _mm256_add_ps(VP_WINDOW(y, m, 3), _mm256_loadu_ps(g - 7)), a[b]);
            }
        }
        for (; j < c->tapCount; j++) {
            const __m256 tap = _mm256_broadcast_ss(t + j);
            VP_UNROLL
            for (int b = 0; b < blocks; b++) {
                a[b] = _mm256_fmadd_ps(tap, _mm256_add_ps(_mm256_loadu_ps(forward + j + 8 * b), _mm256_loadu_ps(backward - j + 8 * b)), a[b]);
            }
        }
    }
    VP_UNROLL
    for (int b = 0; b < blocks; b++) {
        if (outputs >= 8 * b + 8) {
            _mm256_storeu_ps(output + n + 8 * b, a[b]);
        } else {
            _mm256_maskstore_ps(output + n + 8 * b, lane_mask(outputs - 8 * b), a[b]);
        }
    }
}

VP_AVX2 void vp_decimate_avx2(const float *_Nonnull const *_Nonnull streams, const vp_tap_class *classes, intptr_t factor,
                              const float *taps, const void *splats, float centre, float *output, intptr_t count) {
    (void)splats;
    const __m256 centreTap = _mm256_set1_ps(centre);
    intptr_t n = 0;
    // 32 outputs per step: four independent accumulators keep both FMA units busy.
    for (; n + 32 <= count; n += 32) decimate_blocks(streams, classes, factor, taps, centreTap, output, n, 4, 32);
    // The rest in one step of as many blocks as it needs, so a short run's tail does not run one
    // dependent chain at a time.
    const intptr_t rest = count - n;
    if (rest > 24) decimate_blocks(streams, classes, factor, taps, centreTap, output, n, 4, rest);
    else if (rest > 16) decimate_blocks(streams, classes, factor, taps, centreTap, output, n, 3, rest);
    else if (rest > 8) decimate_blocks(streams, classes, factor, taps, centreTap, output, n, 2, rest);
    else if (rest > 0) decimate_blocks(streams, classes, factor, taps, centreTap, output, n, 1, rest);
}

/// Interleaves eight even and eight odd outputs: (e0 o0 e1 o1 …) into out[0 … 15], or only the
/// first `outputs` of them (a partial last vector).
VP_AVX2 static inline void store_pairs(float *out, __m256 even, __m256 odd, intptr_t outputs) {
    const __m256 low = _mm256_unpacklo_ps(even, odd), high = _mm256_unpackhi_ps(even, odd);
    const __m256 first = _mm256_permute2f128_ps(low, high, 0x20);
    const __m256 second = _mm256_permute2f128_ps(low, high, 0x31);
    if (outputs >= 16) {
        _mm256_storeu_ps(out, first);
        _mm256_storeu_ps(out + 8, second);
    } else {
        _mm256_maskstore_ps(out, lane_mask(outputs), first);
        _mm256_maskstore_ps(out + 8, lane_mask(outputs - 8), second);
    }
}

/// `blocks` (1 … 4) vectors of eight consecutive inputs from p, one accumulator pair per block.
/// The early sample of odd tap t is the early sample of even tap t + 1, so each step loads one
/// late and one early vector per block and carries the early one to the next tap: two loads per
/// two fused multiply-adds instead of three. Each lane still runs interpolate_one's operations in
/// its order. `inputs` (≤ 8·blocks) is how many of the lanes are stored.
VP_AVX2 __attribute__((always_inline)) static inline void interpolate_blocks(const float *p, const float *evenTaps, const float *oddTaps,
                                                                             __m256 centreTap, float *out, int blocks, intptr_t inputs) {
    __m256 e[4], o[4], early[4];
    for (int b = 0; b < blocks; b++) {
        e[b] = _mm256_mul_ps(centreTap, _mm256_loadu_ps(p + 8 * b));
        o[b] = _mm256_setzero_ps();
        early[b] = _mm256_loadu_ps(p + 8 * b - 32);
    }
    for (int t = 0; t < 32; t++) {
        const __m256 even = _mm256_broadcast_ss(evenTaps + t);
        const __m256 odd = _mm256_broadcast_ss(oddTaps + t);
        for (int b = 0; b < blocks; b++) {
            const __m256 late = _mm256_loadu_ps(p + 8 * b + 32 - t);
            const __m256 next = _mm256_loadu_ps(p + 8 * b - 31 + t);
            e[b] = _mm256_fmadd_ps(even, _mm256_add_ps(late, early[b]), e[b]);
            o[b] = _mm256_fmadd_ps(odd, _mm256_add_ps(late, next), o[b]);
            early[b] = next;
        }
    }
    for (int b = 0; b < blocks; b++) store_pairs(out + 16 * b, e[b], o[b], 2 * (inputs - 8 * b));
}

VP_AVX2 void vp_interpolate_avx2(const float *x, const float *evenTaps, const float *oddTaps,
                                 const void *evenSplats, const void *oddSplats, float centre, float *output, intptr_t count) {
    (void)evenSplats;
    (void)oddSplats;
    const __m256 centreTap = _mm256_set1_ps(centre);
    intptr_t i = 0;
    // 32 inputs (64 outputs) per step: eight independent accumulators.
    for (; i + 32 <= count; i += 32) interpolate_blocks(x + i, evenTaps, oddTaps, centreTap, output + 2 * i, 4, 32);
    // The rest in one step of as many blocks as it needs (a short chunk's tail would otherwise run
    // one dependent chain at a time); the last vector may be partial: its extra lanes read within
    // the stages' read slack and are not stored.
    const intptr_t rest = count - i;
    if (rest > 24) interpolate_blocks(x + i, evenTaps, oddTaps, centreTap, output + 2 * i, 4, rest);
    else if (rest > 16) interpolate_blocks(x + i, evenTaps, oddTaps, centreTap, output + 2 * i, 3, rest);
    else if (rest > 8) interpolate_blocks(x + i, evenTaps, oddTaps, centreTap, output + 2 * i, 2, rest);
    else if (rest > 0) interpolate_blocks(x + i, evenTaps, oddTaps, centreTap, output + 2 * i, 1, rest);
}

/// output[2i] = even[i], output[2i + 1] = odd[i] for i < pairs: a two-phase stage's outputs in
/// order, sixteen per step.
VP_AVX2 void vp_interleave_avx2(const float *even, const float *odd, float *output, intptr_t pairs) {
    intptr_t i = 0;
    for (; i + 8 <= pairs; i += 8) {
        store_pairs(output + 2 * i, _mm256_loadu_ps(even + i), _mm256_loadu_ps(odd + i), 16);
    }
    for (; i < pairs; i++) {
        output[2 * i] = even[i];
        output[2 * i + 1] = odd[i];
    }
}

/// target[i] = source[stride · i] for i < count: one input stream of a decimator, dealt out of
/// its input. Strides 2 and 3 eight samples per step; a step's loads end at most two samples
/// past the last sample it takes, so the vector loop stops a step early and never reads past
/// source[stride · (count − 1)].
VP_AVX2 void vp_take_every_avx2(const float *source, intptr_t stride, float *target, intptr_t count) {
    intptr_t i = 0;
    if (stride == 2) {
        const __m256i order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
        for (; i + 9 <= count; i += 8) {
            const __m256 a = _mm256_loadu_ps(source + 2 * i), b = _mm256_loadu_ps(source + 2 * i + 8);
            // (a0 a2 b0 b2 | a4 a6 b4 b6), put in order by 64-bit pairs.
            const __m256 evens = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
            _mm256_storeu_ps(target + i, _mm256_permutevar8x32_ps(evens, order));
        }
    } else if (stride == 3) {
        // Lanes 0, 3, 6 of a, 1, 4, 7 of b and 2, 5 of c, blended into one vector and ordered.
        const __m256i order = _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5);
        for (; i + 9 <= count; i += 8) {
            const __m256 a = _mm256_loadu_ps(source + 3 * i), b = _mm256_loadu_ps(source + 3 * i + 8), c = _mm256_loadu_ps(source + 3 * i + 16);
            const __m256 ab = _mm256_blend_ps(a, b, 0x92);
            const __m256 abc = _mm256_blend_ps(ab, c, 0x24);
            _mm256_storeu_ps(target + i, _mm256_permutevar8x32_ps(abc, order));
        }
    }
    for (; i < count; i++) target[i] = source[stride * i];
}

/// Per 128-bit lane, 16 characters to 12 bytes. A character's high nibble indexes lut_hi and its
/// low nibble lut_lo; the two entries share a bit exactly when the character is outside the
/// alphabet (high nibbles 0-1 and 8-F share bit 4 with every low nibble; 2 allows only B and F,
/// 3 only 0-9, 4 and 6 all but 0, 5 and 7 only 0-A). The value is the character plus an offset
/// chosen by its high nibble ('/' shares '+''s nibble and takes the entry before it). Pairs of
/// 6-bit values then merge into 12 bits (vpmaddubsw), pairs of those into 24 (vpmaddwd), and a
/// byte shuffle puts each group's three bytes in order.
VP_AVX2 intptr_t vp_base64_decode_blocks_avx2(const uint8_t *text, intptr_t blocks, uint8_t *output) {
    const __m256i lutLow = _mm256_setr_epi8(0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13, 0x1A, 0x1B, 0x1B, 0x1B, 0x1A,
                                            0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13, 0x1A, 0x1B, 0x1B, 0x1B, 0x1A);
    const __m256i lutHigh = _mm256_setr_epi8(0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10,
                                             0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10);
    const __m256i lutOffset = _mm256_setr_epi8(0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0,
                                               0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m256i nibble = _mm256_set1_epi8(0x0F), slash = _mm256_set1_epi8('/');
    const __m256i groupOrder = _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1,
                                                2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    const __m256i laneOrder = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
    intptr_t b = 0;
    for (; b < blocks; b++) {
        const __m256i characters = _mm256_loadu_si256((const __m256i *)(text + 32 * b));
        const __m256i high = _mm256_and_si256(_mm256_srli_epi32(characters, 4), nibble);
        const __m256i low = _mm256_and_si256(characters, nibble);
        const __m256i outside = _mm256_and_si256(_mm256_shuffle_epi8(lutLow, low), _mm256_shuffle_epi8(lutHigh, high));
        if (!_mm256_testz_si256(outside, outside)) break;
        const __m256i offset = _mm256_shuffle_epi8(lutOffset, _mm256_add_epi8(high, _mm256_cmpeq_epi8(characters, slash)));
        const __m256i values = _mm256_add_epi8(characters, offset);
        const __m256i twelve = _mm256_maddubs_epi16(values, _mm256_set1_epi32(0x01400140));
        const __m256i twentyFour = _mm256_madd_epi16(twelve, _mm256_set1_epi32(0x00011000));
        const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(twentyFour, groupOrder), laneOrder);
        _mm_storeu_si128((__m128i *)(output + 24 * b), _mm256_castsi256_si128(bytes));
        _mm_storel_epi64((__m128i *)(output + 24 * b + 16), _mm256_extracti128_si256(bytes, 1));
    }
    return b;
}

/// Per 128-bit lane, 12 bytes to 16 characters: each group of three bytes (a b c) is spread over
/// a 32-bit lane as (b a c b), two multiplies move its four 6-bit fields to the bottoms of the
/// lane's bytes, and each field becomes its character by adding an offset chosen by its range
/// (A-Z, a-z, 0-9, '+', '/'): a saturating subtraction and a compare map the field to an entry of
/// a 16-byte table.
VP_AVX2 void vp_base64_encode_blocks_avx2(const uint8_t *bytes, intptr_t blocks, uint8_t *text) {
    const __m256i spread = _mm256_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10,
                                            1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    const __m256i offsets = _mm256_setr_epi8(71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 65, 0, 0,
                                             71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 65, 0, 0);
    for (intptr_t b = 0; b < blocks; b++) {
        const uint8_t *p = bytes + 24 * b;
        const __m256i loaded = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p)),
                                                       _mm_loadu_si128((const __m128i *)(p + 12)), 1);
        const __m256i groups = _mm256_shuffle_epi8(loaded, spread);
        // Fields 0 and 2 by the high half of a multiply, fields 1 and 3 by the low half.
        const __m256i evenFields = _mm256_mulhi_epu16(_mm256_and_si256(groups, _mm256_set1_epi32(0x0FC0FC00)), _mm256_set1_epi32(0x04000040));
        const __m256i oddFields = _mm256_mullo_epi16(_mm256_and_si256(groups, _mm256_set1_epi32(0x003F03F0)), _mm256_set1_epi32(0x01000010));
        const __m256i fields = _mm256_or_si256(evenFields, oddFields);
        // 0-25 -> entry 13, 26-51 -> 0, 52-61 -> 1-10, 62 -> 11, 63 -> 12.
        const __m256i entry = _mm256_or_si256(_mm256_subs_epu8(fields, _mm256_set1_epi8(51)),
                                              _mm256_and_si256(_mm256_cmpgt_epi8(_mm256_set1_epi8(26), fields), _mm256_set1_epi8(13)));
        _mm256_storeu_si256((__m256i *)(text + 32 * b), _mm256_add_epi8(fields, _mm256_shuffle_epi8(offsets, entry)));
    }
}

VP_AVX2 intptr_t vp_json_string_run_avx2(const uint8_t *bytes, intptr_t count) {
    const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\'), space = _mm256_set1_epi8(0x20);
    intptr_t i = 0;
    for (; i + 32 <= count; i += 32) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(bytes + i));
        // Below 0x20 (unsigned): min(x, 0x1F) == x.
        const __m256i control = _mm256_cmpeq_epi8(_mm256_min_epu8(x, _mm256_set1_epi8(0x1F)), x);
        const __m256i stop = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(x, quote), _mm256_cmpeq_epi8(x, backslash)), control);
        const unsigned mask = (unsigned)_mm256_movemask_epi8(stop);
        if (mask != 0) return i + __builtin_ctz(mask);
    }
    return i;
}

// ---- AVX-512 (F) + FMA ------------------------------------------------------------------------
//
// The same kernels with sixteen lanes: each lane runs the same reference's operations in the same
// order as an AVX2 lane, so both sets give the same bits. A core that splits 512-bit operations
// in two may run them slower than the AVX2 set; DSPKernels chooses between the sets by measuring.

#define VP_AVX512 __attribute__((target("avx512f,fma")))

/// One tap of a sixteen-tap group for every block: the forward window k floats into the group is
/// v[b] (k = 0) or valignd of v[b + 1] and v[b]; the backward window is a load. Skipped past the
/// class's last tap (`rem` taps are left in the group).
#define VP_DECIMATE_TAP512(k)                                                                                                   \
    if ((k) < rem) {                                                                                                            \
        const __m512 tap = _mm512_set1_ps(t[j + (k)]);                                                                          \
        for (int b = 0; b < blocks; b++) {                                                                                      \
            const __m512 w = (k) == 0 ? v[b] : _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(v[b + 1]),          \
                                                                                        _mm512_castps_si512(v[b]), (k)));      \
            a[b] = _mm512_fmadd_ps(tap, _mm512_add_ps(w, _mm512_loadu_ps(backward - j - (k) + 16 * b)), a[b]);                  \
        }                                                                                                                       \
    }

/// `blocks` (1 … 8) vectors of sixteen consecutive outputs from output n; see decimate_blocks.
///
/// Implementation notes: sixteen-float windows at every offset make nearly every load split a
/// cache line, and with two such loads per multiply-add the loads set the pace. So per group of
/// sixteen taps the forward windows come from blocks + 1 loads and one valignd each, and only the
/// backward windows stay loads: 15-25 % faster than loads alone on an Intel Xeon with full-width
/// AVX-512 (Sapphire Rapids class). The last vector is loaded under a mask of the lanes the
/// group's windows use, so nothing is read past what loads alone would read.
VP_AVX512 __attribute__((always_inline)) static inline void decimate_blocks512(const float *_Nonnull const *_Nonnull streams, const vp_tap_class *classes,
                                                                               intptr_t factor, const float *taps, __m512 centreTap, float *output,
                                                                               intptr_t n, int blocks, intptr_t outputs) {
    __m512 a[8];
    for (int b = 0; b < blocks; b++) a[b] = _mm512_mul_ps(centreTap, _mm512_loadu_ps(streams[0] + n + 16 * b));
    for (intptr_t s = 0; s < factor; s++) {
        const vp_tap_class *c = classes + s;
        const float *t = taps + c->tapStart;
        const float *forward = streams[c->forwardStream] + n + c->forwardOffset;
        const float *backward = streams[c->backwardStream] + n + c->backwardOffset;
        for (intptr_t j = 0; j < c->tapCount; j += 16) {
            const intptr_t rem = c->tapCount - j;
            // Window k of the last block takes lanes 0 … k − 1 of v[blocks], k < min(rem, 16).
            const __mmask16 lastLanes = first_lanes16((rem < 16 ? rem : 16) - 1);
            __m512 v[9];
            for (int b = 0; b < blocks; b++) v[b] = _mm512_loadu_ps(forward + j + 16 * b);
            v[blocks] = _mm512_maskz_loadu_ps(lastLanes, forward + j + 16 * blocks);
            VP_DECIMATE_TAP512(0) VP_DECIMATE_TAP512(1) VP_DECIMATE_TAP512(2) VP_DECIMATE_TAP512(3)
            VP_DECIMATE_TAP512(4) VP_DECIMATE_TAP512(5) VP_DECIMATE_TAP512(6) VP_DECIMATE_TAP512(7)
            VP_DECIMATE_TAP512(8) VP_DECIMATE_TAP512(9) VP_DECIMATE_TAP512(10) VP_DECIMATE_TAP512(11)
            VP_DECIMATE_TAP512(12) VP_DECIMATE_TAP512(13) VP_DECIMATE_TAP512(14) VP_DECIMATE_TAP512(15)
        }
    }
    for (int b = 0; b < blocks; b++) {
        const intptr_t lanes = outputs - 16 * b;
        if (lanes >= 16) {
            _mm512_storeu_ps(output + n + 16 * b, a[b]);
        } else {
            _mm512_mask_storeu_ps(output + n + 16 * b, first_lanes16(lanes), a[b]);
        }
    }
}

VP_AVX512 void vp_decimate_avx512(const float *_Nonnull const *_Nonnull streams, const vp_tap_class *classes, intptr_t factor,
                                  const float *taps, const void *splats, float centre, float *output, intptr_t count) {
    (void)splats;
    const __m512 centreTap = _mm512_set1_ps(centre);
    intptr_t n = 0;
    // 64 outputs per step: four accumulators of sixteen. The last 1 … 128 outputs go in one step
    // of up to eight, whose last vector may be partial (its extra lanes read within the read slack
    // of 16 and are not stored): each output's sum is one chain of dependent multiply-adds, so a
    // step of one or two vectors would wait on the multiply-add latency.
    for (; count - n > 128; n += 64) decimate_blocks512(streams, classes, factor, taps, centreTap, output, n, 4, 64);
    const intptr_t rest = count - n;
    switch ((rest + 15) / 16) {
    case 8: decimate_blocks512(streams, classes, factor, taps, centreTap, output, n, 8, rest); break;
    case 7: decimate_blocks512(streams, classes, factor, taps, centreTap, output, n, 7, rest); break;
    case 6: decimate_blocks512(streams, classes, factor, taps, centreTap, output, n, 6, rest); break;
    case 5: decimate_blocks512(streams, classes, factor, taps, centreTap, output, n, 5, rest); break;
    case 4: decimate_blocks512(streams, classes, factor, taps, centreTap, output, n, 4, rest); break;
    case 3: decimate_blocks512(streams, classes, factor, taps, centreTap, output, n, 3, rest); break;
    case 2: decimate_blocks512(streams, classes, factor, taps, centreTap, output, n, 2, rest); break;
    case 1: decimate_blocks512(streams, classes, factor, taps, centreTap, output, n, 1, rest); break;
    default: break;
    }
}

/// Interleaves sixteen even and sixteen odd outputs into out[0 … 31], or only the first `outputs`.
VP_AVX512 static inline void store_pairs512(float *out, __m512 even, __m512 odd, intptr_t outputs) {
    const __m512i firstIndex = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i secondIndex = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const __m512 first = _mm512_permutex2var_ps(even, firstIndex, odd);
    const __m512 second = _mm512_permutex2var_ps(even, secondIndex, odd);
    if (outputs >= 32) {
        _mm512_storeu_ps(out, first);
        _mm512_storeu_ps(out + 16, second);
    } else {
        _mm512_mask_storeu_ps(out, first_lanes16(outputs), first);
        _mm512_mask_storeu_ps(out + 16, first_lanes16(outputs - 16), second);
    }
}

/// `blocks` (1 … 6) vectors of sixteen consecutive inputs from p; see interpolate_blocks.
VP_AVX512 __attribute__((always_inline)) static inline void interpolate_blocks512(const float *p, const float *evenTaps, const float *oddTaps,
                                                                                  __m512 centreTap, float *out, int blocks, intptr_t inputs) {
    __m512 e[6], o[6], early[6];
    for (int b = 0; b < blocks; b++) {
        e[b] = _mm512_mul_ps(centreTap, _mm512_loadu_ps(p + 16 * b));
        o[b] = _mm512_setzero_ps();
        early[b] = _mm512_loadu_ps(p + 16 * b - 32);
    }
    for (int t = 0; t < 32; t++) {
        const __m512 even = _mm512_set1_ps(evenTaps[t]);
        const __m512 odd = _mm512_set1_ps(oddTaps[t]);
        for (int b = 0; b < blocks; b++) {
            const __m512 late = _mm512_loadu_ps(p + 16 * b + 32 - t);
            const __m512 next = _mm512_loadu_ps(p + 16 * b - 31 + t);
            e[b] = _mm512_fmadd_ps(even, _mm512_add_ps(late, early[b]), e[b]);
            o[b] = _mm512_fmadd_ps(odd, _mm512_add_ps(late, next), o[b]);
            early[b] = next;
        }
    }
    for (int b = 0; b < blocks; b++) store_pairs512(out + 32 * b, e[b], o[b], 2 * (inputs - 16 * b));
}

VP_AVX512 void vp_interpolate_avx512(const float *x, const float *evenTaps, const float *oddTaps,
                                     const void *evenSplats, const void *oddSplats, float centre, float *output, intptr_t count) {
    (void)evenSplats;
    (void)oddSplats;
    const __m512 centreTap = _mm512_set1_ps(centre);
    intptr_t i = 0;
    // 64 inputs per step; the last 1 … 96 in one step of up to six vectors (as the decimator's
    // last step: a step of one vector would wait on the multiply-add latency).
    for (; count - i > 96; i += 64) interpolate_blocks512(x + i, evenTaps, oddTaps, centreTap, output + 2 * i, 4, 64);
    const intptr_t rest = count - i;
    switch ((rest + 15) / 16) {
    case 6: interpolate_blocks512(x + i, evenTaps, oddTaps, centreTap, output + 2 * i, 6, rest); break;
    case 5: interpolate_blocks512(x + i, evenTaps, oddTaps, centreTap, output + 2 * i, 5, rest); break;
    case 4: interpolate_blocks512(x + i, evenTaps, oddTaps, centreTap, output + 2 * i, 4, rest); break;
    case 3: interpolate_blocks512(x + i, evenTaps, oddTaps, centreTap, output + 2 * i, 3, rest); break;
    case 2: interpolate_blocks512(x + i, evenTaps, oddTaps, centreTap, output + 2 * i, 2, rest); break;
    case 1: interpolate_blocks512(x + i, evenTaps, oddTaps, centreTap, output + 2 * i, 1, rest); break;
    default: break;
    }
}

/// Eight lanes of partial sums folded to four: m_k = l_k + l_(k+4).
/// Row lengths are a multiple of four: a length of 8n + 4 ends with four taps into the low lanes.
VP_AVX2 static inline __m128 dot_lanes(const float *x, const float *c, intptr_t count) {
    __m256 sum = _mm256_setzero_ps();
    intptr_t j = 0;
    for (; j + 8 <= count; j += 8) {
        sum = _mm256_fmadd_ps(_mm256_loadu_ps(x + j), _mm256_loadu_ps(c + j), sum);
    }
    __m128 low = _mm256_castps256_ps128(sum);
    if (j < count) low = _mm_fmadd_ps(_mm_loadu_ps(x + j), _mm_loadu_ps(c + j), low);
    return _mm_add_ps(low, _mm256_extractf128_ps(sum, 1));
}

/// advance() without a branch: the phase wraps by subtracting a mask, so a carry pattern the
/// branch predictor cannot learn (121 / 320 for 44.1 -> 32 kHz) costs nothing.
static inline void advance_flat(intptr_t *base, intptr_t *phase, intptr_t phaseCount, intptr_t stepWhole, intptr_t stepPhase) {
    const intptr_t next = *phase + stepPhase;
    const intptr_t carry = (intptr_t)(next >= phaseCount);
    *phase = next - (phaseCount & -carry);
    *base += stepWhole + carry;
}

/// The four-output loop for one row length; a constant length lets the dot products unroll.
/// The walk lives in locals and steps without branches; positions of the next four outputs are
/// computed before their dot products.
#define VP_POLYPHASE_LOOP(length)                                                                   \
    for (;;) {                                                                                      \
        intptr_t b1 = base, p1 = phase;                                                             \
        advance_flat(&b1, &p1, phaseCount, stepWhole, stepPhase);                                   \
        intptr_t b2 = b1, p2 = p1;                                                                  \
        advance_flat(&b2, &p2, phaseCount, stepWhole, stepPhase);                                   \
        intptr_t b3 = b2, p3 = p2;                                                                  \
        advance_flat(&b3, &p3, phaseCount, stepWhole, stepPhase);                                   \
        if (b3 >= last) break;                                                                      \
        const __m128 a = dot_lanes(origin + base, table + phase * (length), (length));              \
        const __m128 b = dot_lanes(origin + b1, table + p1 * (length), (length));                   \
        const __m128 c = dot_lanes(origin + b2, table + p2 * (length), (length));                   \
        const __m128 d = dot_lanes(origin + b3, table + p3 * (length), (length));                   \
        const __m128 ab = _mm_add_ps(_mm_unpacklo_ps(a, b), _mm_unpackhi_ps(a, b));                 \
        const __m128 cd = _mm_add_ps(_mm_unpacklo_ps(c, d), _mm_unpackhi_ps(c, d));                 \
        _mm_storeu_ps(output + produced, _mm_add_ps(_mm_movelh_ps(ab, cd), _mm_movehl_ps(cd, ab))); \
        produced += 4;                                                                              \
        advance_flat(&b3, &p3, phaseCount, stepWhole, stepPhase);                                   \
        base = b3;                                                                                  \
        phase = p3;                                                                                 \
    }

VP_AVX2 intptr_t vp_polyphase_avx2(const float *origin, const float *table, intptr_t rowLength,
                                   const vp_polyphase_walk *walk, vp_polyphase_position *position, float *output) {
    intptr_t base = position->base, phase = position->phase, produced = 0;
    const intptr_t last = walk->end, phaseCount = walk->phaseCount, stepWhole = walk->stepWhole, stepPhase = walk->stepPhase;
    // Four outputs at a time; lane k of each stored vector is (m0 + m2) + (m1 + m3) of sum k.
    switch (rowLength) {
    case 12: VP_POLYPHASE_LOOP(12) break;
    case 16: VP_POLYPHASE_LOOP(16) break;
    case 20: VP_POLYPHASE_LOOP(20) break;
    case 24: VP_POLYPHASE_LOOP(24) break;
    case 28: VP_POLYPHASE_LOOP(28) break;
    case 32: VP_POLYPHASE_LOOP(32) break;
    default: VP_POLYPHASE_LOOP(rowLength) break;
    }
    // The last outputs of a call (fewer than four), still vectorised: lanes folded as dot_one does,
    // (m0 + m2) + (m1 + m3).
    while (base < last) {
        const __m128 m = dot_lanes(origin + base, table + phase * rowLength, rowLength);
        const __m128 pairs = _mm_add_ps(m, _mm_movehl_ps(m, m));
        output[produced++] = _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 1)));
        advance_flat(&base, &phase, phaseCount, stepWhole, stepPhase);
    }
    position->base = base;
    position->phase = phase;
    return produced;
}

/// One step of the sixteen-lane polyphase loop: the outputs of places `place` … place + 15 from
/// the input at `x` (the first one's position), each lane the same fused multiply-adds in the
/// same order as dot_lanes: tap j into partial sum j mod 8, then ((m0 + m2) + (m1 + m3)) of
/// m_k = l_k + l_(k+4). Tap j of every lane is a permute of the 32 samples from x + 8·(j / 8),
/// indexed by the lane's offset plus j mod 8. `readable`: samples from x that may be read.
///
/// Implementation notes: a row at a time (the AVX2 kernel) needs each output's lanes summed
/// across the vector; one output per lane needs no such reduction, and its taps come from one
/// load of the column layout.
VP_AVX512 __attribute__((always_inline)) static inline __m512 polyphase_step512(const float *x, const float *taps, intptr_t stride,
                                                                                __m512i offsets, intptr_t rowLength, intptr_t readable, int masked) {
    __m512i index[8];
    __m512 sum[8];
    VP_UNROLL for (int d = 0; d < 8; d++) {
        index[d] = _mm512_add_epi32(offsets, _mm512_set1_epi32(d));
        sum[d] = _mm512_setzero_ps();
    }
    for (intptr_t w = 0; w < rowLength; w += 8) {
        const __m512 low = masked ? _mm512_maskz_loadu_ps(first_lanes16(readable - w), x + w) : _mm512_loadu_ps(x + w);
        const __m512 high = masked ? _mm512_maskz_loadu_ps(first_lanes16(readable - w - 16), x + w + 16) : _mm512_loadu_ps(x + w + 16);
        VP_UNROLL for (int d = 0; d < 8; d++) {
            if (w + d < rowLength) {
                const __m512 window = _mm512_permutex2var_ps(low, index[d], high);
                sum[d] = _mm512_fmadd_ps(window, _mm512_loadu_ps(taps + (w + d) * stride), sum[d]);
            }
        }
    }
    const __m512 m0 = _mm512_add_ps(sum[0], sum[4]), m1 = _mm512_add_ps(sum[1], sum[5]);
    const __m512 m2 = _mm512_add_ps(sum[2], sum[6]), m3 = _mm512_add_ps(sum[3], sum[7]);
    return _mm512_add_ps(_mm512_add_ps(m0, m2), _mm512_add_ps(m1, m3));
}

/// The sixteen-lane loop for one row length (a constant lets the steps unroll).
VP_AVX512 __attribute__((always_inline)) static inline intptr_t polyphase_columns512(const float *origin, intptr_t rowLength, const vp_polyphase_walk *walk,
                                                                                     vp_polyphase_position *position, float *output) {
    const vp_polyphase_columns *columns = walk->columns;
    const intptr_t phaseCount = walk->phaseCount, last = walk->end, stride = columns->stride;
    const float *taps = columns->taps;
    const uint8_t *offsetTable = columns->offsets, *advances = columns->advances;
    // Past the last sample the last output needs, nothing is read: the steps whose windows
    // (up to 8·⌊(rowLength − 1) / 8⌋ + 32 samples) reach it load under masks.
    const intptr_t readableEnd = last + rowLength - 1;
    const intptr_t windowSpan = 8 * ((rowLength - 1) / 8) + 32;
    intptr_t base = position->base, produced = 0;
    intptr_t place = position->phase * columns->placeOfPhaseStep % phaseCount;
    // Steps stay aligned until the place wraps: for ever when the period is whole vectors, for a
    // dozen steps or more when it is long. A short period (3 places from 32 to 48 kHz) never
    // stays aligned, so its steps do not try (stopping short on every step cost it about a third
    // of its speed).
    const int realigns = phaseCount % 16 == 0 || phaseCount >= 192;
    while (base < last) {
        const __m512i offsets = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(offsetTable + 16 * place)));
        const intptr_t readable = readableEnd - base, remaining = last - base;
        const __m512 result = readable >= windowSpan
            ? polyphase_step512(origin + base, taps + place, stride, offsets, rowLength, readable, 0)
            : polyphase_step512(origin + base, taps + place, stride, offsets, rowLength, readable, 1);
        // With more than twelve steps to go, this step stops at the next place that is a multiple of
        // sixteen: the steps from there load their taps as aligned vectors (the table and its
        // stride are 64-byte aligned), not across cache lines, which pays for the short step.
        const intptr_t toAligned = realigns && remaining > 12 * (intptr_t)advances[place] ? 16 - (place & 15) : 16;
        if (remaining > 24 && toAligned == 16) {
            _mm512_storeu_ps(output + produced, result);
            produced += 16;
            base += advances[place];
            place += 16;
            if (place >= phaseCount) place %= phaseCount;
        } else {
            // The outputs whose position is below the end (a prefix of the lanes, offsets
            // rising), up to the aligned place.
            const __mmask16 lanes = _mm512_cmplt_epi32_mask(offsets, _mm512_set1_epi32((int)remaining)) & first_lanes16(toAligned);
            const intptr_t count = __builtin_popcount(lanes);
            _mm512_mask_storeu_ps(output + produced, lanes, result);
            produced += count;
            base += count < 16 ? offsetTable[16 * place + count] : advances[place];
            place += count;
            if (place >= phaseCount) place %= phaseCount;
            if (count < toAligned) break;
        }
    }
    position->base = base;
    position->phase = place * walk->stepPhase % phaseCount;
    return produced;
}

VP_AVX512 intptr_t vp_polyphase_avx512(const float *origin, const float *table, intptr_t rowLength,
                                       const vp_polyphase_walk *walk, vp_polyphase_position *position, float *output) {
    if (walk->columns == NULL) return vp_polyphase_avx2(origin, table, rowLength, walk, position, output);
    switch (rowLength) {
    case 12: return polyphase_columns512(origin, 12, walk, position, output);
    case 16: return polyphase_columns512(origin, 16, walk, position, output);
    case 20: return polyphase_columns512(origin, 20, walk, position, output);
    case 24: return polyphase_columns512(origin, 24, walk, position, output);
    case 28: return polyphase_columns512(origin, 28, walk, position, output);
    case 32: return polyphase_columns512(origin, 32, walk, position, output);
    default: return polyphase_columns512(origin, rowLength, walk, position, output);
    }
}

/// Sixteen samples per step: NaN lanes masked to 0, clamped to [-32768, 32767] before rounding (so
/// vcvtps2dq, which rounds to nearest-even, never overflows), packed with saturation. The peaks come
/// from the highest and the lowest sample: the conversion is monotonic, so the largest |result| is
/// the larger of the results for those two.
VP_AVX2 void vp_convert_int16_avx2(const float *input, int16_t *output, intptr_t count, vp_conversion_peaks *peaks) {
    const __m256 scale = _mm256_set1_ps(32768.0f);
    const __m256 low = _mm256_set1_ps(-32768.0f), high = _mm256_set1_ps(32767.0f);
    __m256 highest = _mm256_setzero_ps(), lowest = _mm256_setzero_ps();
    intptr_t i = 0;
    for (; i + 16 <= count; i += 16) {
        __m256 a = _mm256_loadu_ps(input + i), b = _mm256_loadu_ps(input + i + 8);
        a = _mm256_and_ps(a, _mm256_cmp_ps(a, a, _CMP_ORD_Q));
        b = _mm256_and_ps(b, _mm256_cmp_ps(b, b, _CMP_ORD_Q));
        highest = _mm256_max_ps(highest, _mm256_max_ps(a, b));
        lowest = _mm256_min_ps(lowest, _mm256_min_ps(a, b));
        const __m256i ia = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(a, scale), low), high));
        const __m256i ib = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(b, scale), low), high));
        // packs works within 128-bit lanes: (a0 b0 a1 b1) -> reorder the 64-bit quarters to (a0 a1 b0 b1).
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packs_epi32(ia, ib), 0xD8);
        _mm256_storeu_si256((__m256i *)(output + i), packed);
    }
    for (; i + 8 <= count; i += 8) {
        __m256 x = _mm256_loadu_ps(input + i);
        x = _mm256_and_ps(x, _mm256_cmp_ps(x, x, _CMP_ORD_Q));
        highest = _mm256_max_ps(highest, x);
        lowest = _mm256_min_ps(lowest, x);
        const __m256i integers = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(x, scale), low), high));
        const __m128i packed = _mm_packs_epi32(_mm256_castsi256_si128(integers), _mm256_extracti128_si256(integers, 1));
        _mm_storeu_si128((__m128i *)(output + i), packed);
    }
    float highs[8], lows[8];
    _mm256_storeu_ps(highs, highest);
    _mm256_storeu_ps(lows, lowest);
    float top = 0, bottom = 0;
    for (int k = 0; k < 8; k++) {
        if (highs[k] > top) top = highs[k];
        if (lows[k] < bottom) bottom = lows[k];
    }
    for (; i < count; i++) {
        const float x = input[i];
        output[i] = to_int16(x);
        if (x > top) top = x;
        if (x < bottom) bottom = x;
    }
    peaks->input = top > -bottom ? top : -bottom;
    const float topInt = (float)to_int16(top), bottomInt = -(float)to_int16(bottom);
    peaks->output = topInt > bottomInt ? topInt : bottomInt;
}

/// Interleaved stereo Float32 to mono, eight frames per step: each sample NaN -> 0 and clamped to
/// ±1, then (L + R) · 0.5, the same operations as the scalar rule, so the results are identical.
VP_AVX2 void vp_downmix_stereo_float_avx2(const float *input, float *output, intptr_t frames) {
    const __m256 one = _mm256_set1_ps(1.0f), minusOne = _mm256_set1_ps(-1.0f), half = _mm256_set1_ps(0.5f);
    intptr_t f = 0;
    for (; f + 8 <= frames; f += 8) {
        __m256 a = _mm256_loadu_ps(input + 2 * f), b = _mm256_loadu_ps(input + 2 * f + 8);
        a = _mm256_min_ps(_mm256_max_ps(_mm256_and_ps(a, _mm256_cmp_ps(a, a, _CMP_ORD_Q)), minusOne), one);
        b = _mm256_min_ps(_mm256_max_ps(_mm256_and_ps(b, _mm256_cmp_ps(b, b, _CMP_ORD_Q)), minusOne), one);
        // hadd gives (L0+R0 L1+R1 L2+R2 L3+R3 | L4+R4 …) with the 64-bit quarters as (a0 b0 a1 b1).
        const __m256 sums = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_hadd_ps(a, b)), 0xD8));
        _mm256_storeu_ps(output + f, _mm256_mul_ps(sums, half));
    }
    for (; f < frames; f++) {
        float l = input[2 * f], r = input[2 * f + 1];
        l = l != l ? 0.0f : (l < -1.0f ? -1.0f : (l > 1.0f ? 1.0f : l));
        r = r != r ? 0.0f : (r < -1.0f ? -1.0f : (r > 1.0f ? 1.0f : r));
        output[f] = (l + r) * 0.5f;
    }
}

/// Sixteen stereo frames as four vectors of normalised (L R L R …) samples: each frame's L + R,
/// halved, mono sample 2k to first[k] and 2k + 1 to second[k] (k < 8). hadd leaves (m0 m1 m4 m5 |
/// m2 m3 m6 m7) and (m8 m9 m12 m13 | m10 m11 m14 m15); the shuffles take the even and odd ones as
/// (m0 m4 m8 m12 | m2 m6 m10 m14), which the permutation orders.
VP_AVX2 static inline void deal_out_mono(const __m256 v[4], float *first, float *second) {
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const __m256 half = _mm256_set1_ps(0.5f);
    const __m256 low = _mm256_hadd_ps(v[0], v[1]), high = _mm256_hadd_ps(v[2], v[3]);
    const __m256 even = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(low, high, _MM_SHUFFLE(2, 0, 2, 0)), order);
    const __m256 odd = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(low, high, _MM_SHUFFLE(3, 1, 3, 1)), order);
    _mm256_storeu_ps(first, _mm256_mul_ps(even, half));
    _mm256_storeu_ps(second, _mm256_mul_ps(odd, half));
}

/// vp_downmix_stereo_float_avx2 with its output dealt out to two streams: mono sample 2k to
/// first[k], 2k + 1 to second[k] (a half-band decimator's even and odd streams), sixteen frames
/// per step. The same operations per sample, so the same results.
VP_AVX2 void vp_downmix_stereo_float_split_avx2(const float *input, float *first, float *second, intptr_t frames) {
    const __m256 one = _mm256_set1_ps(1.0f), minusOne = _mm256_set1_ps(-1.0f);
    intptr_t f = 0;
    for (; f + 16 <= frames; f += 16) {
        __m256 v[4];
        for (int k = 0; k < 4; k++) {
            const __m256 x = _mm256_loadu_ps(input + 2 * f + 8 * k);
            v[k] = _mm256_min_ps(_mm256_max_ps(_mm256_and_ps(x, _mm256_cmp_ps(x, x, _CMP_ORD_Q)), minusOne), one);
        }
        deal_out_mono(v, first + f / 2, second + f / 2);
    }
    for (; f < frames; f++) {
        float l = input[2 * f], r = input[2 * f + 1];
        l = l != l ? 0.0f : (l < -1.0f ? -1.0f : (l > 1.0f ? 1.0f : l));
        r = r != r ? 0.0f : (r < -1.0f ? -1.0f : (r > 1.0f ? 1.0f : r));
        (f & 1 ? second : first)[f / 2] = (l + r) * 0.5f;
    }
}

/// Interleaved stereo Int16 to mono, eight frames per step: (L / 32768 + R / 32768) · 0.5, exact.
VP_AVX2 void vp_downmix_stereo_int16_avx2(const int16_t *input, float *output, intptr_t frames) {
    const __m256 scale = _mm256_set1_ps(1.0f / 32768.0f), half = _mm256_set1_ps(0.5f);
    intptr_t f = 0;
    for (; f + 8 <= frames; f += 8) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(input + 2 * f));
        const __m256 a = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(x))), scale);
        const __m256 b = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(x, 1))), scale);
        const __m256 sums = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_hadd_ps(a, b)), 0xD8));
        _mm256_storeu_ps(output + f, _mm256_mul_ps(sums, half));
    }
    for (; f < frames; f++) output[f] = ((float)input[2 * f] * (1.0f / 32768.0f) + (float)input[2 * f + 1] * (1.0f / 32768.0f)) * 0.5f;
}

/// vp_downmix_stereo_int16_avx2 dealt out to two streams as vp_downmix_stereo_float_split_avx2
/// does: mono sample 2k to first[k], 2k + 1 to second[k], sixteen frames per step.
VP_AVX2 void vp_downmix_stereo_int16_split_avx2(const int16_t *input, float *first, float *second, intptr_t frames) {
    const __m256 scale = _mm256_set1_ps(1.0f / 32768.0f);
    intptr_t f = 0;
    for (; f + 16 <= frames; f += 16) {
        __m256 v[4];
        for (int k = 0; k < 2; k++) {
            const __m256i x = _mm256_loadu_si256((const __m256i *)(input + 2 * f + 16 * k));
            v[2 * k] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(x))), scale);
            v[2 * k + 1] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(x, 1))), scale);
        }
        deal_out_mono(v, first + f / 2, second + f / 2);
    }
    for (; f < frames; f++) {
        (f & 1 ? second : first)[f / 2] = ((float)input[2 * f] * (1.0f / 32768.0f) + (float)input[2 * f + 1] * (1.0f / 32768.0f)) * 0.5f;
    }
}

/// Sixteen samples per step: sign-extend to 32 bits, convert (exact), scale by 2^-15 (exact).
VP_AVX2 void vp_convert_float_avx2(const int16_t *input, float *output, intptr_t count) {
    const __m256 scale = _mm256_set1_ps(1.0f / 32768.0f);
    intptr_t i = 0;
    for (; i + 16 <= count; i += 16) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(input + i));
        const __m256 low = _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(x)));
        const __m256 high = _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(x, 1)));
        _mm256_storeu_ps(output + i, _mm256_mul_ps(low, scale));
        _mm256_storeu_ps(output + i + 8, _mm256_mul_ps(high, scale));
    }
    for (; i < count; i++) output[i] = (float)input[i] * (1.0f / 32768.0f);
}

/// Sixteen samples (those in mask m) of vp_convert_int16_avx2's rule: NaN lanes zeroed, peaks
/// kept, scaled and held below 32767 (vcvtps2dq gives INT_MIN past the range, which the
/// saturating narrowing turns into -32768: right for the low side only), narrowed with
/// saturation and stored under the mask (AVX-512 F alone).
VP_AVX512 static inline void convert_int16_step512(const float *input, int16_t *output, __mmask16 m, __m512 *highest, __m512 *lowest) {
    __m512 a = _mm512_maskz_loadu_ps(m, input);
    a = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(a, a, _CMP_ORD_Q), a);
    *highest = _mm512_max_ps(*highest, a);
    *lowest = _mm512_min_ps(*lowest, a);
    const __m512i ia = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_mul_ps(a, _mm512_set1_ps(32768.0f)), _mm512_set1_ps(32767.0f)));
    _mm512_mask_cvtsepi32_storeu_epi16(output, m, ia);
}
/// vp_convert_int16_avx2 with two accumulator pairs of sixteen lanes; the last samples under a
/// mask, so one reduction serves the whole call (a 10 ms frame is 160 samples, where the AVX2
/// function's scalar tail and reduction weigh).
VP_AVX512 void vp_convert_int16_avx512(const float *input, int16_t *output, intptr_t count, vp_conversion_peaks *peaks) {
    __m512 h0 = _mm512_setzero_ps(), l0 = _mm512_setzero_ps(), h1 = h0, l1 = l0;
    intptr_t i = 0;
    for (; i + 32 <= count; i += 32) {
        convert_int16_step512(input + i, output + i, 0xFFFF, &h0, &l0);
        convert_int16_step512(input + i + 16, output + i + 16, 0xFFFF, &h1, &l1);
    }
    for (; i < count; i += 16) {
        convert_int16_step512(input + i, output + i, first_lanes16(count - i), &h0, &l0);
    }
    const float top = _mm512_reduce_max_ps(_mm512_max_ps(h0, h1)), bottom = _mm512_reduce_min_ps(_mm512_min_ps(l0, l1));
    peaks->input = top > -bottom ? top : -bottom;
    const float topInt = (float)to_int16(top), bottomInt = -(float)to_int16(bottom);
    peaks->output = topInt > bottomInt ? topInt : bottomInt;
}
/// A Float32 sample as the downmix rule takes it: NaN -> 0, clamped to ±1 (maxps on the ordered
/// lanes, zero on the others; then minps), the scalar rule's result in every case.
VP_AVX512 static inline __m512 clamped_sample512(__m512 x) {
    const __mmask16 ordered = _mm512_cmp_ps_mask(x, x, _CMP_ORD_Q);
    return _mm512_min_ps(_mm512_maskz_max_ps(ordered, x, _mm512_set1_ps(-1.0f)), _mm512_set1_ps(1.0f));
}

/// Int16 samples normalised (x / 32768, exact): sixteen from a 256-bit vector.
VP_AVX512 static inline __m512 normalised_int16_512(__m256i x) {
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(x)), _mm512_set1_ps(1.0f / 32768.0f));
}

/// Sixteen stereo frames of normalised samples in a and b (L0 R0 L1 R1 …): (L + R) · 0.5 per frame.
VP_AVX512 static inline __m512 mono512(__m512 a, __m512 b) {
    const __m512i left = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i right = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    return _mm512_mul_ps(_mm512_add_ps(_mm512_permutex2var_ps(a, left, b), _mm512_permutex2var_ps(a, right, b)), _mm512_set1_ps(0.5f));
}

/// Thirty-two stereo frames of normalised samples in v[0 … 3], their mono samples dealt out: mono
/// sample 2k to first[k], 2k + 1 to second[k] (k < 16). Each pair of vectors gives the left and
/// right samples of its even frames ([L | R], eight each) and of its odd frames; 128-bit lane
/// shuffles join the two pairs' halves.
VP_AVX512 static inline void deal_out_mono512(const __m512 v[4], float *first, float *second) {
    const __m512i evenFrames = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
    const __m512i oddFrames = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
    const __m512 half = _mm512_set1_ps(0.5f);
    const __m512 even01 = _mm512_permutex2var_ps(v[0], evenFrames, v[1]), even23 = _mm512_permutex2var_ps(v[2], evenFrames, v[3]);
    const __m512 odd01 = _mm512_permutex2var_ps(v[0], oddFrames, v[1]), odd23 = _mm512_permutex2var_ps(v[2], oddFrames, v[3]);
    const __m512 evenLeft = _mm512_shuffle_f32x4(even01, even23, _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 evenRight = _mm512_shuffle_f32x4(even01, even23, _MM_SHUFFLE(3, 2, 3, 2));
    const __m512 oddLeft = _mm512_shuffle_f32x4(odd01, odd23, _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 oddRight = _mm512_shuffle_f32x4(odd01, odd23, _MM_SHUFFLE(3, 2, 3, 2));
    _mm512_storeu_ps(first, _mm512_mul_ps(_mm512_add_ps(evenLeft, evenRight), half));
    _mm512_storeu_ps(second, _mm512_mul_ps(_mm512_add_ps(oddLeft, oddRight), half));
}

/// vp_downmix_stereo_float_avx2 sixteen frames per step; the last frames by the AVX2 function.
VP_AVX512 void vp_downmix_stereo_float_avx512(const float *input, float *output, intptr_t frames) {
    intptr_t f = 0;
    for (; f + 16 <= frames; f += 16) {
        const __m512 a = clamped_sample512(_mm512_loadu_ps(input + 2 * f)), b = clamped_sample512(_mm512_loadu_ps(input + 2 * f + 16));
        _mm512_storeu_ps(output + f, mono512(a, b));
    }
    vp_downmix_stereo_float_avx2(input + 2 * f, output + f, frames - f);
}

/// vp_downmix_stereo_int16_avx2 sixteen frames per step; the last frames by the AVX2 function.
VP_AVX512 void vp_downmix_stereo_int16_avx512(const int16_t *input, float *output, intptr_t frames) {
    intptr_t f = 0;
    for (; f + 16 <= frames; f += 16) {
        const __m512i x = _mm512_loadu_si512((const void *)(input + 2 * f));
        const __m512 a = normalised_int16_512(_mm512_castsi512_si256(x)), b = normalised_int16_512(_mm512_extracti64x4_epi64(x, 1));
        _mm512_storeu_ps(output + f, mono512(a, b));
    }
    vp_downmix_stereo_int16_avx2(input + 2 * f, output + f, frames - f);
}

/// vp_downmix_stereo_float_split_avx2 thirty-two frames per step; the last frames (an even
/// number of them in, so the streams keep their order) by the AVX2 function.
VP_AVX512 void vp_downmix_stereo_float_split_avx512(const float *input, float *first, float *second, intptr_t frames) {
    intptr_t f = 0;
    for (; f + 32 <= frames; f += 32) {
        __m512 v[4];
        for (int k = 0; k < 4; k++) v[k] = clamped_sample512(_mm512_loadu_ps(input + 2 * f + 16 * k));
        deal_out_mono512(v, first + f / 2, second + f / 2);
    }
    vp_downmix_stereo_float_split_avx2(input + 2 * f, first + f / 2, second + f / 2, frames - f);
}

/// vp_downmix_stereo_int16_split_avx2 thirty-two frames per step; the rest as above.
VP_AVX512 void vp_downmix_stereo_int16_split_avx512(const int16_t *input, float *first, float *second, intptr_t frames) {
    intptr_t f = 0;
    for (; f + 32 <= frames; f += 32) {
        __m512 v[4];
        for (int k = 0; k < 2; k++) {
            const __m512i x = _mm512_loadu_si512((const void *)(input + 2 * f + 32 * k));
            v[2 * k] = normalised_int16_512(_mm512_castsi512_si256(x));
            v[2 * k + 1] = normalised_int16_512(_mm512_extracti64x4_epi64(x, 1));
        }
        deal_out_mono512(v, first + f / 2, second + f / 2);
    }
    vp_downmix_stereo_int16_split_avx2(input + 2 * f, first + f / 2, second + f / 2, frames - f);
}

#else

// Not x86-64: the AVX2 entry points are never chosen (vp_cpu_supports_avx2_fma() is 0); they run
// the references so that the symbols exist.
int vp_cpu_supports_avx2_fma(void) { return 0; }
int vp_cpu_supports_avx512f(void) { return 0; }

void vp_decimate_avx512(const float *_Nonnull const *_Nonnull streams, const vp_tap_class *classes, intptr_t factor,
                        const float *taps, const void *splats, float centre, float *output, intptr_t count) {
    vp_decimate_fma_reference(streams, classes, factor, taps, splats, centre, output, count);
}

void vp_interpolate_avx512(const float *x, const float *evenTaps, const float *oddTaps,
                           const void *evenSplats, const void *oddSplats, float centre, float *output, intptr_t count) {
    vp_interpolate_fma_reference(x, evenTaps, oddTaps, evenSplats, oddSplats, centre, output, count);
}

void vp_decimate_avx2(const float *_Nonnull const *_Nonnull streams, const vp_tap_class *classes, intptr_t factor,
                      const float *taps, const void *splats, float centre, float *output, intptr_t count) {
    vp_decimate_fma_reference(streams, classes, factor, taps, splats, centre, output, count);
}

void vp_interpolate_avx2(const float *x, const float *evenTaps, const float *oddTaps,
                         const void *evenSplats, const void *oddSplats, float centre, float *output, intptr_t count) {
    vp_interpolate_fma_reference(x, evenTaps, oddTaps, evenSplats, oddSplats, centre, output, count);
}

intptr_t vp_polyphase_avx2(const float *origin, const float *table, intptr_t rowLength,
                           const vp_polyphase_walk *walk, vp_polyphase_position *position, float *output) {
    return vp_polyphase_fma_reference(origin, table, rowLength, walk, position, output);
}

intptr_t vp_polyphase_avx512(const float *origin, const float *table, intptr_t rowLength,
                             const vp_polyphase_walk *walk, vp_polyphase_position *position, float *output) {
    return vp_polyphase_fma_reference(origin, table, rowLength, walk, position, output);
}

void vp_convert_int16_avx2(const float *input, int16_t *output, intptr_t count, vp_conversion_peaks *peaks) {
    float maxFloat = 0, maxInt = 0;
    for (intptr_t i = 0; i < count; i++) {
        const int16_t value = to_int16(input[i]);
        output[i] = value;
        if (fabsf(input[i]) > maxFloat) maxFloat = fabsf(input[i]);
        const float integer = value < 0 ? -(float)value : (float)value;
        if (integer > maxInt) maxInt = integer;
    }
    peaks->input = maxFloat;
    peaks->output = maxInt;
}

void vp_convert_float_avx2(const int16_t *input, float *output, intptr_t count) {
    for (intptr_t i = 0; i < count; i++) output[i] = (float)input[i] * (1.0f / 32768.0f);
}

intptr_t vp_base64_decode_blocks_avx2(const uint8_t *text, intptr_t blocks, uint8_t *output) {
    (void)text;
    (void)blocks;
    (void)output;
    return 0;
}

void vp_base64_encode_blocks_avx2(const uint8_t *bytes, intptr_t blocks, uint8_t *text) {
    (void)bytes;
    (void)blocks;
    (void)text;
}

intptr_t vp_json_string_run_avx2(const uint8_t *bytes, intptr_t count) {
    (void)bytes;
    (void)count;
    return 0;
}

void vp_downmix_stereo_float_avx2(const float *input, float *output, intptr_t frames) {
    for (intptr_t f = 0; f < frames; f++) {
        float l = input[2 * f], r = input[2 * f + 1];
        l = l != l ? 0.0f : (l < -1.0f ? -1.0f : (l > 1.0f ? 1.0f : l));
        r = r != r ? 0.0f : (r < -1.0f ? -1.0f : (r > 1.0f ? 1.0f : r));
        output[f] = (l + r) * 0.5f;
    }
}

void vp_downmix_stereo_float_split_avx2(const float *input, float *first, float *second, intptr_t frames) {
    for (intptr_t f = 0; f < frames; f++) {
        float l = input[2 * f], r = input[2 * f + 1];
        l = l != l ? 0.0f : (l < -1.0f ? -1.0f : (l > 1.0f ? 1.0f : l));
        r = r != r ? 0.0f : (r < -1.0f ? -1.0f : (r > 1.0f ? 1.0f : r));
        (f & 1 ? second : first)[f / 2] = (l + r) * 0.5f;
    }
}

void vp_downmix_stereo_int16_split_avx2(const int16_t *input, float *first, float *second, intptr_t frames) {
    for (intptr_t f = 0; f < frames; f++) {
        (f & 1 ? second : first)[f / 2] = ((float)input[2 * f] * (1.0f / 32768.0f) + (float)input[2 * f + 1] * (1.0f / 32768.0f)) * 0.5f;
    }
}

void vp_downmix_stereo_int16_avx2(const int16_t *input, float *output, intptr_t frames) {
    for (intptr_t f = 0; f < frames; f++) output[f] = ((float)input[2 * f] * (1.0f / 32768.0f) + (float)input[2 * f + 1] * (1.0f / 32768.0f)) * 0.5f;
}

void vp_downmix_stereo_float_avx512(const float *input, float *output, intptr_t frames) {
    vp_downmix_stereo_float_avx2(input, output, frames);
}

void vp_downmix_stereo_int16_avx512(const int16_t *input, float *output, intptr_t frames) {
    vp_downmix_stereo_int16_avx2(input, output, frames);
}

void vp_downmix_stereo_float_split_avx512(const float *input, float *first, float *second, intptr_t frames) {
    vp_downmix_stereo_float_split_avx2(input, first, second, frames);
}

void vp_downmix_stereo_int16_split_avx512(const int16_t *input, float *first, float *second, intptr_t frames) {
    vp_downmix_stereo_int16_split_avx2(input, first, second, frames);
}

void vp_interleave_avx2(const float *even, const float *odd, float *output, intptr_t pairs) {
    for (intptr_t i = 0; i < pairs; i++) {
        output[2 * i] = even[i];
        output[2 * i + 1] = odd[i];
    }
}

void vp_take_every_avx2(const float *source, intptr_t stride, float *target, intptr_t count) {
    for (intptr_t i = 0; i < count; i++) target[i] = source[stride * i];
}

void vp_convert_int16_avx512(const float *input, int16_t *output, intptr_t count, vp_conversion_peaks *peaks) {
    vp_convert_int16_avx2(input, output, count, peaks);
}

#endif
