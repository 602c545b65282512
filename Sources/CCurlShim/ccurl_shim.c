#include "ccurl_shim.h"

#include <curl/curl.h>
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

static pthread_once_t global_init = PTHREAD_ONCE_INIT;

// Takes effect when this is the process's first libcurl initialisation (an application that
// initialised libcurl itself keeps its own allocator).
static void initialize_curl(void) {
    curl_global_init_mem(CURL_GLOBAL_DEFAULT, wiping_malloc, wiping_free, wiping_realloc, wiping_strdup, wiping_calloc);
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

    size_t header_len = sizeof(prefix) - 1 + token_len + 1;
    char *token_header = malloc(header_len);
    if (token_header == NULL) return -1;
    memcpy(token_header, prefix, sizeof(prefix) - 1);
    memcpy(token_header + sizeof(prefix) - 1, token, token_len);
    token_header[header_len - 1] = '\0';

    CURL *curl = curl_easy_init();
    struct curl_slist *headers = NULL;
    struct curl_slist *appended = curl_slist_append(NULL, token_header);
    wipe(token_header, header_len);
    free(token_header);
    if (curl == NULL || appended == NULL) {
        if (appended != NULL) {
            wipe(appended->data, strlen(appended->data));
            curl_slist_free_all(appended);
        }
        if (curl != NULL) curl_easy_cleanup(curl);
        return -1;
    }
    headers = appended;
    headers = curl_slist_append(headers, "Content-Type: application/json");

    wiped_buffer buffer = {0};
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    // No proxy ever sees a request (it would see the token, and the master key at enrolment):
    // libcurl otherwise takes one from http_proxy, HTTPS_PROXY or ALL_PROXY.
    curl_easy_setopt(curl, CURLOPT_PROXY, "");
    curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    // HTTP/1.1 only: over HTTP/2, nghttp2 keeps the token header in its HPACK table, in memory
    // of its own that the wiping allocator never sees.
    curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, timeout_seconds);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, timeout_seconds);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    // A TLS backend other than OpenSSL does not take the callback: the option is then ignored.
    curl_easy_setopt(curl, CURLOPT_SSL_CTX_FUNCTION, harden_tls);
    if (ca_file != NULL) curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    // The body is sent from the caller's (wiped) buffer, never copied by libcurl.
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)body);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_response);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &buffer);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, result->error);

    CURLcode code = curl_easy_perform(curl);
    result->curl_code = (int)code;
    result->failure_class = failure_class(code);
    if (code != CURLE_OK && result->error[0] == '\0') {
        strncpy(result->error, curl_easy_strerror(code), sizeof(result->error) - 1);
    }
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result->status);
    curl_easy_cleanup(curl);
    for (struct curl_slist *item = headers; item != NULL; item = item->next) wipe(item->data, strlen(item->data));
    curl_slist_free_all(headers);

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
