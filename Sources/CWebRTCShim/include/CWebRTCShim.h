#ifndef VOICEPIPE_CWEBRTCSHIM_H
#define VOICEPIPE_CWEBRTCSHIM_H

/* A C interface over WebRTC's audio processing module 0.3 (C++), for 16 kHz mono Float32 blocks of
   10 ms: echo cancellation with the extended filter and delay-agnostic mode, optional noise
   suppression and adaptive digital gain control, configured as PipeWire's echo-cancel module does. */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct VPWebRTCProcessor VPWebRTCProcessor;

/* The settings applied at creation; a step that the library refuses is reported by its number. */
typedef struct {
    int sample_rate_hz;          /* 8000, 16000, 32000 or 48000 */
    int noise_suppression;       /* 0 or 1 */
    int noise_suppression_level; /* 0 low … 3 very high */
    int gain_control;            /* 0 or 1 (adaptive digital) */
    int suppression_level;       /* 0 low, 1 moderate, 2 high */
    int extended_filter;         /* 0 or 1 */
    int delay_agnostic;          /* 0 or 1 */
    int high_pass_filter;        /* 0 or 1 */
} VPWebRTCConfig;

typedef enum {
    VPWebRTCStepNone = 0,
    VPWebRTCStepCreate,
    VPWebRTCStepInitialize,
    VPWebRTCStepHighPassFilter,
    VPWebRTCStepEchoCancellation,
    VPWebRTCStepSuppressionLevel,
    VPWebRTCStepDriftCompensation,
    VPWebRTCStepNoiseSuppression,
    VPWebRTCStepGainControl
} VPWebRTCStep;

/* The library's file, opened at run time by VoicePipeIO (nothing links it). */
const char *vp_webrtc_library_file(void);

/* What the shim needs from the library, by symbol: the one function it calls by name
   (webrtc::AudioProcessing::Create; every other call is virtual), and the keys the library looks
   its options up by. webrtc::Config keys each option by the address of a static in an inline
   template; a shim not linked against the library has its own copy of each, which the library
   would never find (the options silently left at their defaults), so the shim uses the library's. */
typedef enum {
    VPWebRTCSymbolCreate = 0,
    VPWebRTCSymbolExtendedFilterKey,
    VPWebRTCSymbolDelayAgnosticKey,
    VPWebRTCSymbolExperimentalAgcKey,
    VPWebRTCSymbolCount
} VPWebRTCSymbol;

/* The mangled name to resolve for `symbol` (NULL past VPWebRTCSymbolCount). */
const char *vp_webrtc_symbol_name(VPWebRTCSymbol symbol);

/* The resolved addresses, indexed by VPWebRTCSymbol. */
typedef struct {
    const void *addresses[VPWebRTCSymbolCount];
} VPWebRTCEntryPoints;

/* Creates a processor through `entry_points`; returns 0 and sets *out, or the library's error code
   and sets *failed_step. */
int vp_webrtc_create(const VPWebRTCEntryPoints *entry_points, const VPWebRTCConfig *config, VPWebRTCProcessor **out, VPWebRTCStep *failed_step);
void vp_webrtc_destroy(VPWebRTCProcessor *processor);
/* The far end (what the speaker played), one 10 ms block. Returns the library's error code (0 = ok). */
int vp_webrtc_process_reverse(VPWebRTCProcessor *processor, const float *far, int frames);
/* The delay between the far block given and the near block that holds its echo, in ms. */
int vp_webrtc_set_stream_delay(VPWebRTCProcessor *processor, int milliseconds);
/* The near end (the microphone), one 10 ms block; output may be near. */
int vp_webrtc_process(VPWebRTCProcessor *processor, const float *near, float *output, int frames);
/* Forgets the adapted state (same configuration). */
int vp_webrtc_reset(VPWebRTCProcessor *processor);

#ifdef __cplusplus
}
#endif

#endif
