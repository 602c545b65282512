#include "cpkcs11_shim.h"

#include <dlfcn.h>
#include <p11-kit/pkcs11.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// A loaded, initialized module, shared by the sessions on it: PKCS#11 allows one
/// C_Initialize per process, so C_Finalize runs only when the last session closes, and only
/// when this code made the C_Initialize: a module another part of the process initialized
/// (CKR_CRYPTOKI_ALREADY_INITIALIZED) stays initialized for it. The library is never unloaded:
/// modules register thread-local state and exit handlers that must not outlive their code.
typedef struct loaded_module {
    char *path;
    void *library;
    CK_FUNCTION_LIST_PTR functions;
    int initialized_here;
    unsigned long users;
    struct loaded_module *next;
} loaded_module;

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
static loaded_module *modules = NULL;

struct cdb_p11_session {
    loaded_module *module;
    CK_FUNCTION_LIST_PTR functions;
    CK_SESSION_HANDLE handle;
};

/// The module at `path`, loaded and initialized on first use; NULL with `error` set on failure.
/// Modules are told apart by their dlopen handle, not their path: a symlink and the file it
/// names are one module, which must not be initialized (and finalized) twice.
static loaded_module *acquire_module(const char *path, CK_RV *rv, char *error, size_t error_len) {
    pthread_mutex_lock(&modules_lock);
    // Never closed (see loaded_module): a second dlopen of a loaded library only counts a reference.
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(error, error_len, "%s", dlerror());
        *rv = CDB_P11_MODULE_NOT_LOADED;
        pthread_mutex_unlock(&modules_lock);
        return NULL;
    }
    for (loaded_module *module = modules; module != NULL; module = module->next) {
        if (module->library == library) {
            module->users++;
            pthread_mutex_unlock(&modules_lock);
            return module;
        }
    }
    loaded_module *module = calloc(1, sizeof(*module));
    if (module == NULL || (module->path = strdup(path)) == NULL) {
        free(module);
        pthread_mutex_unlock(&modules_lock);
        *rv = CDB_P11_OUT_OF_MEMORY;
        return NULL;
    }
    module->library = library;
    CK_C_GetFunctionList get_function_list = (CK_C_GetFunctionList)dlsym(library, "C_GetFunctionList");
    if (get_function_list == NULL || get_function_list(&module->functions) != CKR_OK || module->functions == NULL) {
        snprintf(error, error_len, "%s is not a PKCS#11 module (no C_GetFunctionList)", path);
        *rv = CDB_P11_MODULE_NOT_LOADED;
    } else {
        CK_C_INITIALIZE_ARGS arguments;
        memset(&arguments, 0, sizeof(arguments));
        arguments.flags = CKF_OS_LOCKING_OK;
        *rv = module->functions->C_Initialize(&arguments);
        module->initialized_here = *rv == CKR_OK;
        if (*rv == CKR_CRYPTOKI_ALREADY_INITIALIZED) *rv = CKR_OK;
        if (*rv != CKR_OK) snprintf(error, error_len, "C_Initialize failed");
    }
    if (*rv != CKR_OK) {
        // The library stays loaded, as every module does: it may have run code that outlives it.
        free(module->path);
        free(module);
        pthread_mutex_unlock(&modules_lock);
        return NULL;
    }
    module->users = 1;
    module->next = modules;
    modules = module;
    pthread_mutex_unlock(&modules_lock);
    return module;
}

static void release_module(loaded_module *module) {
    pthread_mutex_lock(&modules_lock);
    if (--module->users == 0) {
        for (loaded_module **link = &modules; *link != NULL; link = &(*link)->next) {
            if (*link == module) {
                *link = module->next;
                break;
            }
        }
        if (module->initialized_here) module->functions->C_Finalize(NULL);
        free(module->path);
        free(module);
    }
    pthread_mutex_unlock(&modules_lock);
}

/// Whether a blank-padded 32-byte PKCS#11 label equals `label`.
static int label_matches(const unsigned char padded[32], const char *label) {
    size_t length = strlen(label);
    if (length > 32) return 0;
    if (memcmp(padded, label, length) != 0) return 0;
    for (size_t index = length; index < 32; index++) {
        if (padded[index] != ' ') return 0;
    }
    return 1;
}

static unsigned long login_attempts = 0;

unsigned long cdb_p11_login_attempts(void) { return __atomic_load_n(&login_attempts, __ATOMIC_RELAXED); }

unsigned long cdb_p11_open(
    const char *module_path, const char *token_label, const uint8_t *pin, size_t pin_len,
    cdb_p11_session **session, char *error, size_t error_len) {
    *session = NULL;
    struct cdb_p11_session *opened = calloc(1, sizeof(*opened));
    if (opened == NULL) return CDB_P11_OUT_OF_MEMORY;
    CK_RV rv = CKR_OK;
    opened->module = acquire_module(module_path, &rv, error, error_len);
    if (opened->module == NULL) {
        free(opened);
        return rv;
    }
    opened->functions = opened->module->functions;
    CK_ULONG count = 0;
    rv = opened->functions->C_GetSlotList(CK_TRUE, NULL, &count);
    CK_SLOT_ID *slots = count > 0 ? calloc(count, sizeof(CK_SLOT_ID)) : NULL;
    if (rv == CKR_OK && count > 0 && slots != NULL) rv = opened->functions->C_GetSlotList(CK_TRUE, slots, &count);
    CK_SLOT_ID found = 0;
    int has_token = 0;
    for (CK_ULONG index = 0; rv == CKR_OK && index < count; index++) {
        CK_TOKEN_INFO info;
        if (opened->functions->C_GetTokenInfo(slots[index], &info) == CKR_OK && label_matches(info.label, token_label)) {
            found = slots[index];
            has_token = 1;
            break;
        }
    }
    free(slots);
    if (rv == CKR_OK && !has_token) rv = CDB_P11_TOKEN_NOT_FOUND;
    if (rv == CKR_OK) rv = opened->functions->C_OpenSession(found, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &opened->handle);
    if (rv == CKR_OK) {
        __atomic_fetch_add(&login_attempts, 1, __ATOMIC_RELAXED);
        rv = opened->functions->C_Login(opened->handle, CKU_USER, (CK_UTF8CHAR_PTR)pin, (CK_ULONG)pin_len);
        // Another live session of this process on the token logged in already.
        if (rv == CKR_USER_ALREADY_LOGGED_IN) rv = CKR_OK;
    }
    if (rv != CKR_OK) {
        if (rv == CDB_P11_TOKEN_NOT_FOUND) snprintf(error, error_len, "no token labelled '%s'", token_label);
        cdb_p11_close(opened);
        return rv;
    }
    *session = opened;
    return CDB_P11_OK;
}

void cdb_p11_close(cdb_p11_session *session) {
    if (session == NULL) return;
    // No C_Logout: a login belongs to the application and the token, not to one session, so a
    // logout here would log out other live sessions; closing the token's last session ends it.
    if (session->handle != 0) session->functions->C_CloseSession(session->handle);
    release_module(session->module);
    free(session);
}

/// The handle of the one secret key labelled `key_label`.
static CK_RV find_key(cdb_p11_session *session, const char *key_label, CK_OBJECT_HANDLE *key) {
    CK_OBJECT_CLASS class = CKO_SECRET_KEY;
    CK_ATTRIBUTE template[] = {
        {CKA_CLASS, &class, sizeof(class)},
        {CKA_LABEL, (void *)key_label, strlen(key_label)},
    };
    CK_RV rv = session->functions->C_FindObjectsInit(session->handle, template, 2);
    if (rv != CKR_OK) return rv;
    CK_OBJECT_HANDLE handles[2];
    CK_ULONG found = 0;
    rv = session->functions->C_FindObjects(session->handle, handles, 2, &found);
    session->functions->C_FindObjectsFinal(session->handle);
    if (rv != CKR_OK) return rv;
    if (found == 0) return CDB_P11_KEY_NOT_FOUND;
    if (found > 1) return CDB_P11_KEY_AMBIGUOUS;
    *key = handles[0];
    return CKR_OK;
}

unsigned long cdb_p11_key(cdb_p11_session *session, const char *key_label, int create, int *created) {
    *created = 0;
    CK_OBJECT_HANDLE key = 0;
    CK_RV rv = find_key(session, key_label, &key);
    if (rv != CDB_P11_KEY_NOT_FOUND || !create) return rv;
    CK_MECHANISM mechanism = {CKM_AES_KEY_GEN, NULL, 0};
    CK_ULONG length = 32;
    CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
    CK_ATTRIBUTE template[] = {
        {CKA_LABEL, (void *)key_label, strlen(key_label)},
        {CKA_VALUE_LEN, &length, sizeof(length)},
        {CKA_TOKEN, &yes, sizeof(yes)},
        {CKA_PRIVATE, &yes, sizeof(yes)},
        {CKA_SENSITIVE, &yes, sizeof(yes)},
        {CKA_EXTRACTABLE, &no, sizeof(no)},
        {CKA_ENCRYPT, &yes, sizeof(yes)},
        {CKA_DECRYPT, &yes, sizeof(yes)},
        {CKA_WRAP, &no, sizeof(no)},
        {CKA_UNWRAP, &no, sizeof(no)},
    };
    rv = session->functions->C_GenerateKey(session->handle, &mechanism, template, sizeof(template) / sizeof(template[0]), &key);
    if (rv == CKR_OK) *created = 1;
    return rv;
}

unsigned long cdb_p11_destroy_key(cdb_p11_session *session, const char *key_label) {
    CK_OBJECT_HANDLE key = 0;
    CK_RV rv = find_key(session, key_label, &key);
    if (rv != CKR_OK) return rv;
    return session->functions->C_DestroyObject(session->handle, key);
}

unsigned long cdb_p11_key_flags(
    cdb_p11_session *session, const char *key_label, int *extractable, int *sensitive, int *never_extractable) {
    CK_OBJECT_HANDLE key = 0;
    CK_RV rv = find_key(session, key_label, &key);
    if (rv != CKR_OK) return rv;
    CK_BBOOL values[3] = {CK_TRUE, CK_FALSE, CK_FALSE};
    CK_ATTRIBUTE template[] = {
        {CKA_EXTRACTABLE, &values[0], sizeof(CK_BBOOL)},
        {CKA_SENSITIVE, &values[1], sizeof(CK_BBOOL)},
        {CKA_NEVER_EXTRACTABLE, &values[2], sizeof(CK_BBOOL)},
    };
    rv = session->functions->C_GetAttributeValue(session->handle, key, template, 3);
    *extractable = values[0] == CK_TRUE;
    *sensitive = values[1] == CK_TRUE;
    *never_extractable = values[2] == CK_TRUE;
    return rv;
}

unsigned long cdb_p11_gcm(
    cdb_p11_session *session, const char *key_label, int encrypt, const uint8_t *iv, size_t iv_len,
    const uint8_t *aad, size_t aad_len, const uint8_t *input, size_t input_len,
    uint8_t *output, size_t *output_len) {
    CK_OBJECT_HANDLE key = 0;
    CK_RV rv = find_key(session, key_label, &key);
    if (rv != CKR_OK) return rv;
    CK_GCM_PARAMS parameters;
    memset(&parameters, 0, sizeof(parameters));
    parameters.pIv = (CK_BYTE_PTR)iv;
    parameters.ulIvLen = iv_len;
    parameters.ulIvBits = iv_len * 8;
    parameters.pAAD = (CK_BYTE_PTR)aad;
    parameters.ulAADLen = aad_len;
    parameters.ulTagBits = 128;
    CK_MECHANISM mechanism = {CKM_AES_GCM, &parameters, sizeof(parameters)};
    CK_ULONG written = *output_len;
    if (encrypt) {
        rv = session->functions->C_EncryptInit(session->handle, &mechanism, key);
        if (rv == CKR_OK) rv = session->functions->C_Encrypt(session->handle, (CK_BYTE_PTR)input, input_len, output, &written);
    } else {
        rv = session->functions->C_DecryptInit(session->handle, &mechanism, key);
        if (rv == CKR_OK) rv = session->functions->C_Decrypt(session->handle, (CK_BYTE_PTR)input, input_len, output, &written);
    }
    *output_len = rv == CKR_OK ? written : 0;
    return rv;
}
