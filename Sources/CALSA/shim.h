#include <alsa/asoundlib.h>

/// alsa-lib prints its own errors to stderr ("ALSA lib pcm.c:2666: Unknown PCM …"); VoicePipe
/// reports them itself, with a sentence the user can act on, so it installs this handler instead.
/// (The handler is variadic, which Swift cannot define.)
static void vp_alsa_ignore_error(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void vp_alsa_silence_errors(void) {
    snd_lib_error_set_handler(vp_alsa_ignore_error);
}
