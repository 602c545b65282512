// One HTTP POST through libcurl for the keystore's Transit slots. libcurl's options are set
// through a variadic function Swift cannot call, so they live here; the token and the bodies
// (which carry key material) stay in buffers this code wipes before freeing.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include <stddef.h>
#include <stdint.h>

/// What one request did. `curl_code` 0 and `status` set: the server answered.
typedef struct {
    /// libcurl's CURLcode (0: the exchange completed).
    int curl_code;
    /// Which class of failure `curl_code` is: 0 none, 1 could not reach the server, 2 TLS or
    /// certificate verification, 3 anything else.
    int failure_class;
    /// The HTTP status, 0 when there was no response.
    long status;
    /// libcurl's error text (names the host, never the token or a body).
    char error[256];
} cdb_http_result;

/// POSTs `body` to `url` with `X-Vault-Token: <token>` and a JSON content type.
///
/// TLS is verified (peer and host name) against `ca_file` when not NULL, else the system store.
/// Redirects are not followed; only http and https are allowed (the caller allows http only to
/// loopback); no proxy is used, whatever the environment says. The response body is returned in
/// a buffer of `*response_len` bytes that the caller releases with `cdb_http_free`.
/// libcurl itself is loaded on the first call; when it cannot be, `curl_code` is
/// CURLE_FAILED_INIT and `error` says why. Returns 0 when `result` was filled (check its
/// fields), -1 when memory ran out.
int cdb_http_post(
    const char *url, const uint8_t *token, size_t token_len, const char *ca_file,
    const uint8_t *body, size_t body_len, long timeout_seconds,
    cdb_http_result *result, uint8_t **response, size_t *response_len);

/// Wipes and frees a response buffer from `cdb_http_post` (NULL is allowed).
void cdb_http_free(uint8_t *response, size_t response_len);

/// How many bytes of libcurl's own allocations were wiped as they were freed (its buffers
/// held tokens and Transit answers); 0 when the process initialised libcurl before this code.
unsigned long long cdb_http_wiped_bytes(void);

#endif
