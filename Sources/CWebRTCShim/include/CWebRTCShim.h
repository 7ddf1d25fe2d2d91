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

/* The library's file and the one function the shim calls by name (webrtc::AudioProcessing::Create,
   mangled); everything else is reached through the vtables of the objects it returns. VoicePipeIO
   opens the library at run time and resolves this symbol, so nothing links the library. */
const char *vp_webrtc_library_file(void);
const char *vp_webrtc_create_symbol(void);

/* Creates a processor through `create_entry` (the resolved vp_webrtc_create_symbol); returns 0 and
   sets *out, or the library's error code and sets *failed_step. */
int vp_webrtc_create(const void *create_entry, const VPWebRTCConfig *config, VPWebRTCProcessor **out, VPWebRTCStep *failed_step);
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
