#include "ccurl_shim.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <stdio.h>
#if defined(__APPLE__)
#include <malloc/malloc.h>
#define usable_size(pointer) malloc_size(pointer)
#else
#include <malloc.h>
#define usable_size(pointer) malloc_usable_size(pointer)
#endif
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/// A growing buffer that never leaves a copy behind: growth copies, wipes and frees the old one.
typedef struct {
    uint8_t *bytes;
    size_t length;
    size_t capacity;
    int failed;
} wiped_buffer;

static void wipe(void *pointer, size_t length) {
    if (pointer != NULL && length > 0) explicit_bzero(pointer, length);
}

static size_t append_response(char *data, size_t size, size_t count, void *context) {
    wiped_buffer *buffer = context;
    size_t length = size * count;
    // Transit answers are small; anything near this is not a Transit answer.
    if (buffer->length + length > (1u << 20)) {
        buffer->failed = 1;
        return 0;
    }
    if (buffer->length + length > buffer->capacity) {
        size_t capacity = buffer->capacity == 0 ? 4096 : buffer->capacity;
        while (capacity < buffer->length + length) capacity *= 2;
        uint8_t *grown = malloc(capacity);
        if (grown == NULL) {
            buffer->failed = 1;
            return 0;
        }
        if (buffer->length > 0) memcpy(grown, buffer->bytes, buffer->length);
        wipe(buffer->bytes, buffer->capacity);
        free(buffer->bytes);
        buffer->bytes = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->bytes + buffer->length, data, length);
    buffer->length += length;
    return length;
}

static int failure_class(CURLcode code) {
    switch (code) {
    case CURLE_OK:
        return 0;
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
        return 1;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
        return 2;
    default:
        return 3;
    }
}

// libcurl's own memory: its receive buffer holds a Transit answer (the master key, base64) and
// its request buffer the token header. Every block it frees is wiped first, whatever its size.
static atomic_ullong wiped_bytes = 0;

static void *wiping_malloc(size_t size) { return malloc(size); }

static void wiping_free(void *pointer) {
    if (pointer == NULL) return;
    size_t usable = usable_size(pointer);
    explicit_bzero(pointer, usable);
    atomic_fetch_add(&wiped_bytes, usable);
    free(pointer);
}

static void *wiping_realloc(void *pointer, size_t size) {
    if (pointer == NULL) return malloc(size);
    if (size == 0) {
        wiping_free(pointer);
        return NULL;
    }
    // Never realloc in place: a block that moves would leave its old bytes behind unwiped.
    void *grown = malloc(size);
    if (grown == NULL) return NULL;
    size_t old = usable_size(pointer);
    memcpy(grown, pointer, old < size ? old : size);
    wiping_free(pointer);
    return grown;
}

static char *wiping_strdup(const char *text) {
    size_t length = strlen(text) + 1;
    char *copy = malloc(length);
    if (copy != NULL) memcpy(copy, text, length);
    return copy;
}

static void *wiping_calloc(size_t count, size_t size) { return calloc(count, size); }

unsigned long long cdb_http_wiped_bytes(void) { return atomic_load(&wiped_bytes); }

/// TLS: OpenSSL wipes the decrypted records it keeps in its buffers (OpenSSL 3's
/// SSL_OP_CLEANSE_PLAINTEXT), for the same reason.
static CURLcode harden_tls(CURL *curl, void *ssl_context, void *context) {
    (void)curl;
    (void)context;
#ifdef SSL_OP_CLEANSE_PLAINTEXT
    SSL_CTX_set_options((SSL_CTX *)ssl_context, SSL_OP_CLEANSE_PLAINTEXT);
#else
    (void)ssl_context;
#endif
    return CURLE_OK;
}

// libcurl is loaded on the first request, not when the process starts: with its TLS, LDAP,
// SSH and Kerberos libraries it is about 30 shared objects, which every `cipherdb` command
// would otherwise map and relocate (3.5 ms here) though only Transit slots use it. It is never
// unloaded: another consumer in the process may hold the same handle.
static struct {
    __typeof__(curl_global_init_mem) *global_init_mem;
    __typeof__(curl_easy_init) *easy_init;
    __typeof__(curl_easy_setopt) *easy_setopt;
    __typeof__(curl_easy_perform) *easy_perform;
    __typeof__(curl_easy_getinfo) *easy_getinfo;
    __typeof__(curl_easy_strerror) *easy_strerror;
    __typeof__(curl_easy_cleanup) *easy_cleanup;
    __typeof__(curl_slist_append) *slist_append;
    __typeof__(curl_slist_free_all) *slist_free_all;
} libcurl;
static char load_error[256];

static pthread_once_t global_init = PTHREAD_ONCE_INIT;

static void initialize_curl(void) {
    // The library a link with -lcurl names (its soname), found where the dynamic linker looks;
    // macOS's by its full path, since a bare name would also be looked for in the working
    // directory. Not the unversioned libcurl.so: on Debian it may lead to the GnuTLS build, which
    // harden_tls cannot reach.
#if defined(__APPLE__)
    static const char name[] = "/usr/lib/libcurl.4.dylib";
#else
    static const char name[] = "libcurl.so.4";
#endif
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof(load_error), "libcurl could not be loaded (%s): install libcurl (Debian: libcurl4)",
                 reason != NULL ? reason : name);
        return;
    }
#define CDB_RESOLVE(field, symbol)                                                                 \
    if ((*(void **)&libcurl.field = dlsym(handle, symbol)) == NULL) {                              \
        snprintf(load_error, sizeof(load_error), "libcurl has no %s: it is too old", symbol);     \
        return;                                                                                    \
    }
    CDB_RESOLVE(easy_init, "curl_easy_init")
    CDB_RESOLVE(easy_setopt, "curl_easy_setopt")
    CDB_RESOLVE(easy_perform, "curl_easy_perform")
    CDB_RESOLVE(easy_getinfo, "curl_easy_getinfo")
    CDB_RESOLVE(easy_strerror, "curl_easy_strerror")
    CDB_RESOLVE(easy_cleanup, "curl_easy_cleanup")
    CDB_RESOLVE(slist_append, "curl_slist_append")
    CDB_RESOLVE(slist_free_all, "curl_slist_free_all")
    // Resolved last: its presence says every other function is there.
    CDB_RESOLVE(global_init_mem, "curl_global_init_mem")
#undef CDB_RESOLVE
    libcurl.global_init_mem(CURL_GLOBAL_DEFAULT, wiping_malloc, wiping_free, wiping_realloc, wiping_strdup, wiping_calloc);
}

int cdb_http_post(
    const char *url, const uint8_t *token, size_t token_len, const char *ca_file,
    const uint8_t *body, size_t body_len, long timeout_seconds,
    cdb_http_result *result, uint8_t **response, size_t *response_len) {
    static const char prefix[] = "X-Vault-Token: ";
    pthread_once(&global_init, initialize_curl);
    memset(result, 0, sizeof(*result));
    *response = NULL;
    *response_len = 0;
    if (libcurl.global_init_mem == NULL) {
        result->curl_code = CURLE_FAILED_INIT;
        result->failure_class = 3;
        strncpy(result->error, load_error, sizeof(result->error) - 1);
        return 0;
    }

    size_t header_len = sizeof(prefix) - 1 + token_len + 1;
    char *token_header = malloc(header_len);
    if (token_header == NULL) return -1;
    memcpy(token_header, prefix, sizeof(prefix) - 1);
    memcpy(token_header + sizeof(prefix) - 1, token, token_len);
    token_header[header_len - 1] = '\0';

    CURL *curl = libcurl.easy_init();
    struct curl_slist *headers = NULL;
    struct curl_slist *appended = libcurl.slist_append(NULL, token_header);
    wipe(token_header, header_len);
    free(token_header);
    if (curl == NULL || appended == NULL) {
        if (appended != NULL) {
            wipe(appended->data, strlen(appended->data));
            libcurl.slist_free_all(appended);
        }
        if (curl != NULL) libcurl.easy_cleanup(curl);
        return -1;
    }
    headers = appended;
    headers = libcurl.slist_append(headers, "Content-Type: application/json");

    wiped_buffer buffer = {0};
    libcurl.easy_setopt(curl, CURLOPT_URL, url);
    libcurl.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    // No proxy ever sees a request (it would see the token, and the master key at enrolment):
    // libcurl otherwise takes one from http_proxy, HTTPS_PROXY or ALL_PROXY.
    libcurl.easy_setopt(curl, CURLOPT_PROXY, "");
    libcurl.easy_setopt(curl, CURLOPT_NOPROXY, "*");
    libcurl.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    // HTTP/1.1 only: over HTTP/2, nghttp2 keeps the token header in its HPACK table, in memory
    // of its own that the wiping allocator never sees.
    libcurl.easy_setopt(curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    libcurl.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    libcurl.easy_setopt(curl, CURLOPT_TIMEOUT, timeout_seconds);
    libcurl.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, timeout_seconds);
    libcurl.easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    libcurl.easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    // A TLS backend other than OpenSSL does not take the callback: the option is then ignored.
    libcurl.easy_setopt(curl, CURLOPT_SSL_CTX_FUNCTION, harden_tls);
    if (ca_file != NULL) libcurl.easy_setopt(curl, CURLOPT_CAINFO, ca_file);
    libcurl.easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    libcurl.easy_setopt(curl, CURLOPT_POST, 1L);
    // The body is sent from the caller's (wiped) buffer, never copied by libcurl.
    libcurl.easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)body);
    libcurl.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    libcurl.easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_response);
    libcurl.easy_setopt(curl, CURLOPT_WRITEDATA, &buffer);
    libcurl.easy_setopt(curl, CURLOPT_ERRORBUFFER, result->error);

    CURLcode code = libcurl.easy_perform(curl);
    result->curl_code = (int)code;
    result->failure_class = failure_class(code);
    if (code != CURLE_OK && result->error[0] == '\0') {
        strncpy(result->error, libcurl.easy_strerror(code), sizeof(result->error) - 1);
    }
    libcurl.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result->status);
    libcurl.easy_cleanup(curl);
    for (struct curl_slist *item = headers; item != NULL; item = item->next) wipe(item->data, strlen(item->data));
    libcurl.slist_free_all(headers);

    if (buffer.failed && code == CURLE_OK) result->failure_class = 3;
    if (code != CURLE_OK || buffer.failed) {
        wipe(buffer.bytes, buffer.capacity);
        free(buffer.bytes);
        return 0;
    }
    *response = buffer.bytes;
    *response_len = buffer.length;
    // Keep the capacity's tail wiped too: the caller frees with the length only.
    if (buffer.capacity > buffer.length) wipe(buffer.bytes + buffer.length, buffer.capacity - buffer.length);
    return 0;
}

void cdb_http_free(uint8_t *response, size_t response_len) {
    wipe(response, response_len);
    free(response);
}
