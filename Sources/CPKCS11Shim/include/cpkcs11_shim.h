// A PKCS#11 module loaded at run time (dlopen) and the few calls a keystore slot needs: find a
// token by label, log in, find or create a non-extractable AES-256 key by label, and AES-GCM
// encrypt/decrypt with it. The PKCS#11 header is p11-kit's (Debian's libp11-kit-dev).
#ifndef CPKCS11_SHIM_H
#define CPKCS11_SHIM_H

#include <stddef.h>
#include <stdint.h>

/// Return codes: a PKCS#11 CKR_* value, or one of these for what PKCS#11 has no code for.
#define CDB_P11_OK 0UL
#define CDB_P11_MODULE_NOT_LOADED 0x80000001UL
#define CDB_P11_TOKEN_NOT_FOUND 0x80000002UL
#define CDB_P11_KEY_NOT_FOUND 0x80000003UL
#define CDB_P11_KEY_AMBIGUOUS 0x80000004UL
#define CDB_P11_OUT_OF_MEMORY 0x80000005UL

/// A loaded module with a logged-in session on one token.
typedef struct cdb_p11_session cdb_p11_session;

/// Loads `module_path`, initializes it, finds the token labelled `token_label` and logs in as
/// the user with `pin`. On failure `*session` is NULL and `error` holds a message (never the PIN).
unsigned long cdb_p11_open(
    const char *module_path, const char *token_label, const uint8_t *pin, size_t pin_len,
    cdb_p11_session **session, char *error, size_t error_len);

/// How many times this process called C_Login, through any module: each call may count against
/// the token's PIN retry counter (tests check that one unlock makes one attempt).
unsigned long cdb_p11_login_attempts(void);

/// Logs out and closes the session; the last session on a module finalizes it if this code
/// initialized it (the library stays loaded).
void cdb_p11_close(cdb_p11_session *session);

/// Finds the one secret key labelled `key_label`; with `create`, generates it when missing: an
/// AES-256 token object, private, sensitive, never extractable, for encrypt and decrypt only.
/// `*created` tells whether it was generated.
unsigned long cdb_p11_key(cdb_p11_session *session, const char *key_label, int create, int *created);

/// Destroys the key labelled `key_label` (for tests and for removing a slot's key by hand).
unsigned long cdb_p11_destroy_key(cdb_p11_session *session, const char *key_label);

/// Reads the key's CKA_EXTRACTABLE, CKA_SENSITIVE and CKA_NEVER_EXTRACTABLE (1 true, 0 false).
unsigned long cdb_p11_key_flags(
    cdb_p11_session *session, const char *key_label, int *extractable, int *sensitive, int *never_extractable);

/// AES-GCM with the key labelled `key_label` (a 16-byte tag appended to the ciphertext).
/// `output` holds `input_len + 16` bytes when encrypting, `input_len - 16` when decrypting;
/// `*output_len` is set to what was written.
unsigned long cdb_p11_gcm(
    cdb_p11_session *session, const char *key_label, int encrypt, const uint8_t *iv, size_t iv_len,
    const uint8_t *aad, size_t aad_len, const uint8_t *input, size_t input_len,
    uint8_t *output, size_t *output_len);

#endif
