#include <speex/speex_echo.h>
#include <speex/speex_preprocess.h>

/* speexdsp is opened at run time (VoicePipeIO's EchoLibrary), so a machine without libspeexdsp1
   still runs everything but the speex echo backends: the module links nothing, and these pointer
   types, taken from the declarations above, are what the resolved symbols are cast to. */
typedef __typeof__(speex_echo_state_init) *vp_speex_echo_state_init_fn;
typedef __typeof__(speex_echo_state_destroy) *vp_speex_echo_state_destroy_fn;
typedef __typeof__(speex_echo_cancellation) *vp_speex_echo_cancellation_fn;
typedef __typeof__(speex_echo_state_reset) *vp_speex_echo_state_reset_fn;
typedef __typeof__(speex_echo_ctl) *vp_speex_echo_ctl_fn;
typedef __typeof__(speex_preprocess_state_init) *vp_speex_preprocess_state_init_fn;
typedef __typeof__(speex_preprocess_state_destroy) *vp_speex_preprocess_state_destroy_fn;
typedef __typeof__(speex_preprocess_run) *vp_speex_preprocess_run_fn;
typedef __typeof__(speex_preprocess_ctl) *vp_speex_preprocess_ctl_fn;
