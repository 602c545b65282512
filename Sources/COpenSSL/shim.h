#ifndef CIPHERDB_COPENSSL_SHIM_H
#define CIPHERDB_COPENSSL_SHIM_H

#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/opensslv.h>
#include <limits.h>
#include <stdint.h>

/* Small C helpers for CipherCrypto (issue 4). They keep OSSL_PARAM arrays and EVP control codes,
 * which Swift imports awkwardly, on the C side. Each returns 1 on success and 0 on failure, and
 * never keeps a pointer to its arguments. */

/* scrypt through the provider KDF API (EVP_KDF "SCRYPT"). */
static inline int cipherdb_scrypt(const unsigned char *pass, size_t pass_len,
                                  const unsigned char *salt, size_t salt_len,
                                  uint64_t n, uint32_t r, uint32_t p, uint64_t maxmem,
                                  unsigned char *out, size_t out_len) {
    static unsigned char empty = 0;
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "SCRYPT", NULL);
    if (kdf == NULL) return 0;
    EVP_KDF_CTX *ctx = EVP_KDF_CTX_new(kdf);
    EVP_KDF_free(kdf);
    if (ctx == NULL) return 0;
    OSSL_PARAM params[7];
    params[0] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PASSWORD,
                                                  (void *)(pass_len ? pass : &empty), pass_len);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
                                                  (void *)(salt_len ? salt : &empty), salt_len);
    params[2] = OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_N, &n);
    params[3] = OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_R, &r);
    params[4] = OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_P, &p);
    params[5] = OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_MAXMEM, &maxmem);
    params[6] = OSSL_PARAM_construct_end();
    int ok = EVP_KDF_derive(ctx, out, out_len, params) == 1;
    EVP_KDF_CTX_free(ctx);
    return ok;
}

/* AES-256-GCM with a 12-byte nonce and a 16-byte tag. `out` has room for `in_len` bytes. */
static inline int cipherdb_aes256gcm_seal(const unsigned char *key, const unsigned char *nonce,
                                          const unsigned char *aad, size_t aad_len,
                                          const unsigned char *in, size_t in_len,
                                          unsigned char *out, unsigned char *tag) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return 0;
    int ok = 0, len = 0;
    if (aad_len > INT_MAX || in_len > INT_MAX) goto done;
    if (EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1) goto done;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) != 1) goto done;
    if (EVP_EncryptInit_ex(ctx, NULL, NULL, key, nonce) != 1) goto done;
    if (aad_len > 0 && EVP_EncryptUpdate(ctx, NULL, &len, aad, (int)aad_len) != 1) goto done;
    if (in_len > 0 && EVP_EncryptUpdate(ctx, out, &len, in, (int)in_len) != 1) goto done;
    if (EVP_EncryptFinal_ex(ctx, out + (in_len > 0 ? len : 0), &len) != 1) goto done;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag) != 1) goto done;
    ok = 1;
done:
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* Returns 1 when the tag verifies; `out` is then the plaintext. On 0 the caller wipes `out`. */
static inline int cipherdb_aes256gcm_open(const unsigned char *key, const unsigned char *nonce,
                                          const unsigned char *aad, size_t aad_len,
                                          const unsigned char *in, size_t in_len,
                                          const unsigned char *tag, unsigned char *out) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return 0;
    int ok = 0, len = 0;
    if (aad_len > INT_MAX || in_len > INT_MAX) goto done;
    if (EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1) goto done;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) != 1) goto done;
    if (EVP_DecryptInit_ex(ctx, NULL, NULL, key, nonce) != 1) goto done;
    if (aad_len > 0 && EVP_DecryptUpdate(ctx, NULL, &len, aad, (int)aad_len) != 1) goto done;
    if (in_len > 0 && EVP_DecryptUpdate(ctx, out, &len, in, (int)in_len) != 1) goto done;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, (void *)tag) != 1) goto done;
    if (EVP_DecryptFinal_ex(ctx, out + (in_len > 0 ? len : 0), &len) != 1) goto done;
    ok = 1;
done:
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* Keys an HMAC context. The parameter names are C string literals with static storage: OSSL_PARAM
 * keeps pointers to its key and value until EVP_MAC_init reads them, so neither may be a temporary.
 * `hash` is 1 for SHA-1, 256 for SHA-256, 512 for SHA-512. */
static inline int cipherdb_hmac_init(EVP_MAC_CTX *ctx, const unsigned char *key, size_t key_len, int hash) {
    static char sha1[] = "SHA1", sha256[] = "SHA256", sha512[] = "SHA512";
    char *digest = hash == 1 ? sha1 : hash == 256 ? sha256 : hash == 512 ? sha512 : NULL;
    if (digest == NULL) return 0;
    OSSL_PARAM params[2];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0);
    params[1] = OSSL_PARAM_construct_end();
    return EVP_MAC_init(ctx, key, key_len, params) == 1;
}

/* SHA-256 of a buffer, for the keystore's unkeyed corruption check. */
static inline int cipherdb_sha256(const unsigned char *in, size_t in_len, unsigned char *out) {
    unsigned int out_len = 0;
    static unsigned char empty = 0;
    return EVP_Digest(in_len ? in : &empty, in_len, out, &out_len, EVP_sha256(), NULL) == 1 && out_len == 32;
}

/* AES-256-CBC without padding, as SQLCipher encrypts a page. The context is set up once with the
 * key (`encrypt` 1 or 0); each run sets only the IV, so the key schedule is paid once. */
static inline EVP_CIPHER_CTX *cipherdb_aes256cbc_new(const unsigned char *key, int encrypt) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return NULL;
    if (EVP_CipherInit_ex(ctx, EVP_aes_256_cbc(), NULL, key, NULL, encrypt) != 1 ||
        EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/* One message of whole blocks under the context's key and `iv`; `out` may be `in`. */
static inline int cipherdb_aes256cbc_run(EVP_CIPHER_CTX *ctx, const unsigned char *iv,
                                         const unsigned char *in, size_t len, unsigned char *out) {
    int written = 0, final_written = 0;
    if (len == 0 || len > INT_MAX || len % 16 != 0) return 0;
    if (EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1) != 1) return 0;
    if (EVP_CipherUpdate(ctx, out, &written, in, (int)len) != 1) return 0;
    if (EVP_CipherFinal_ex(ctx, out + written, &final_written) != 1) return 0;
    return (size_t)written + (size_t)final_written == len;
}

#endif
