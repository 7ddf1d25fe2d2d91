#include <libwebsockets.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

/// A scheduled callback that knows its owner: lws hands a timer callback only the list entry, so
/// the entry comes first and the owner (a Swift object, unretained) follows it.
typedef struct voicepipe_lws_timer {
    lws_sorted_usec_list_t entry;
    void *owner;
} voicepipe_lws_timer;

/// The timer whose entry lws passed to a callback.
static inline voicepipe_lws_timer *voicepipe_lws_timer_of(lws_sorted_usec_list_t *entry) {
    return (voicepipe_lws_timer *)entry;
}

/// The bytes lws needs in front of every buffer given to lws_write (LWS_PRE, a macro of an
/// expression Swift does not import).
static inline size_t voicepipe_lws_pre(void) {
    return LWS_PRE;
}

/// Why the server's certificate was not accepted ("self-signed certificate", "hostname
/// mismatch"), or NULL when it was (or the connection has no TLS).
static inline const char *voicepipe_lws_certificate_problem(struct lws *wsi) {
    SSL *ssl = lws_get_ssl(wsi);
    if (!ssl) return NULL;
    long result = SSL_get_verify_result(ssl);
    return result == X509_V_OK ? NULL : X509_verify_cert_error_string(result);
}

/// 1 when `path` holds at least one certificate OpenSSL can load as a trust anchor.
static inline int voicepipe_ca_file_loads(const char *path) {
    SSL_CTX *context = SSL_CTX_new(TLS_client_method());
    if (!context) return 0;
    int loaded = SSL_CTX_load_verify_locations(context, path, NULL) == 1;
    SSL_CTX_free(context);
    ERR_clear_error();
    return loaded;
}

/// Names the calling thread (at most 15 bytes show): glibc declares pthread_setname_np only with
/// _GNU_SOURCE, which the module's headers are not compiled with.
extern int pthread_setname_np(pthread_t thread, const char *name);
static inline int voicepipe_name_this_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
