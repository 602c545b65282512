#ifndef CIPHERDB_CSQLCIPHER_SHIM_H
#define CIPHERDB_CSQLCIPHER_SHIM_H

// sqlite3_key and sqlite3_rekey are declared only when SQLITE_HAS_CODEC is defined first.
#define SQLITE_HAS_CODEC 1
#include <sqlite3.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

// SQLITE_TRANSIENT and SQLITE_STATIC are casts of integers to function pointers: Swift cannot import them.
static inline sqlite3_destructor_type cipherdb_sqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type cipherdb_sqlite_static(void) { return SQLITE_STATIC; }
// sqlite3_config(SQLITE_CONFIG_LOG, ...) is variadic, which Swift cannot call. It succeeds only
// before SQLite is initialized (SQLITE_MISUSE after).
static inline int cipherdb_config_log(void (*callback)(void *, int, const char *), void *context) {
    return sqlite3_config(SQLITE_CONFIG_LOG, callback, context);
}

// The default VFS of CipherDB ("cipherdb-unix") is SQLite's unix VFS with these changes.
//
// 1. Anonymous files (O_TMPFILE) reach SQLite as /proc/self/fd/N. The unix VFS resolves symbolic
//    links in every path it is given, and /proc/self/fd/N is one: it would open "/dir/#123
//    (deleted)", a new named file, instead of the anonymous one. Such paths are taken as they are,
//    so SQLite opens the magic link itself. The unix VFSes share one table of system calls; "open"
//    is replaced by one that lets these paths be followed. Every other path is unchanged.
// 2. A failed sync is final for the file it failed on. Linux may drop the dirty pages of a failed
//    fsync and report success to the next one ("fsyncgate"), so a commit retried after a failed
//    sync could be called durable while its data is gone. Every later xSync on that open file
//    returns the first failure: the connection can roll back or be closed, never commit over it.
// 3. A failed folder sync is a failed sync. After creating a -journal or -wal, the unix VFS syncs
//    its folder on the file's first xSync and drops that sync's result, so a commit whose journal
//    may vanish at a power loss was called durable. Through this VFS the folder is synced (once,
//    as before) by the "openDirectory" system call CipherDB puts in SQLite's table, whose result
//    the xSync (or xDelete) that asked for it returns. Other VFSes see SQLite's own behaviour.
// 4. Reads are counted, for what SQLite reports nothing of: the bytes read (progress through
//    PRAGMA integrity_check), and the pages read that were all zeros. SQLCipher 3 hands such a
//    page to SQLite unchecked, as a read past the end of the file, so only its bytes on disk
//    show it; counted here, `cipherdb verify` need not read every page a second time to find it.
//
// Nothing here keeps a pointer to the sqlite3_vfs it is called with: an application may copy
// this VFS's struct and register the copy under another name (FMDB's tests do), so the unix VFS
// is looked up by name whenever it is needed. A header cannot hold C globals for Swift; function
// statics serve instead.

// A file opened through this VFS: the unix VFS's own file follows this header in memory.
typedef struct {
    sqlite3_file base;
    sqlite3_file *real;
    int sync_failure;  // the first failed xSync's code, 0 while none failed
    // Counts of this file's reads, sampled by other threads. One thread at a time reads a file
    // (its connection's, or its shared cache's, under SQLite's mutex), so each is a relaxed load
    // and store. A locked add (`lock xadd`) was 1.6% of a 1 GB verify's CPU samples (perf), 0.2% now.
    sqlite3_int64 bytes_read;  // bytes read so far, for progress
    sqlite3_int64 zeroed_page_reads;  // whole pages read as all zeros
    sqlite3_int64 first_zeroed_page;  // the page number of the first of them, 0 while none
} cipherdb_file;

// Adds `amount` to a counter of a cipherdb_file (see there: one writer at a time).
static inline void cipherdb_count(sqlite3_int64 *counter, sqlite3_int64 amount) {
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + amount, __ATOMIC_RELAXED);
}

static inline sqlite3_vfs *cipherdb_unix_vfs(void) { return sqlite3_vfs_find("unix"); }

static inline sqlite3_file *cipherdb_real(sqlite3_file *file) { return ((cipherdb_file *)file)->real; }

static int cipherdb_close(sqlite3_file *file) {
    sqlite3_file *real = cipherdb_real(file);
    return real->pMethods != NULL ? real->pMethods->xClose(real) : SQLITE_OK;
}
// Whether `amount` bytes are all zeros. The first byte settles it for nearly every page read
// (an encrypted page is random bytes), so every read can afford the question.
static inline int cipherdb_is_zeroed(const unsigned char *bytes, int amount) {
    return amount > 0 && bytes[0] == 0 && memcmp(bytes, bytes + 1, (size_t)amount - 1) == 0;
}
static int cipherdb_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    cipherdb_file *wrapper = (cipherdb_file *)file;
    cipherdb_count(&wrapper->bytes_read, amount);
    int rc = wrapper->real->pMethods->xRead(wrapper->real, buffer, amount, offset);
    // A whole page (SQLite reads pages whole, at multiples of their size; its header reads are
    // 100 bytes). A short read, zero-filled past the end, counts too: a page SQLite wanted was
    // missing, which whoever asks checks on disk.
    // The zero test first: its first byte answers nearly every read, before a division would.
    if ((rc == SQLITE_OK || rc == SQLITE_IOERR_SHORT_READ) && amount >= 512 && cipherdb_is_zeroed(buffer, amount)
        && offset % amount == 0) {
        if (__atomic_load_n(&wrapper->first_zeroed_page, __ATOMIC_RELAXED) == 0)
            __atomic_store_n(&wrapper->first_zeroed_page, offset / amount + 1, __ATOMIC_RELAXED);
        cipherdb_count(&wrapper->zeroed_page_reads, 1);
    }
    return rc;
}
static int cipherdb_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    return cipherdb_real(file)->pMethods->xWrite(cipherdb_real(file), buffer, amount, offset);
}
static int cipherdb_truncate(sqlite3_file *file, sqlite3_int64 size) {
    return cipherdb_real(file)->pMethods->xTruncate(cipherdb_real(file), size);
}

// SQLite's own "openDirectory" system call, saved when CipherDB's replaces it.
typedef int (*cipherdb_open_directory_function)(const char *, int *);
static inline cipherdb_open_directory_function *cipherdb_sqlite_open_directory(void) {
    static cipherdb_open_directory_function function = NULL;
    return &function;
}

// This thread's folder sync state: 0 outside a call of this VFS (SQLite's behaviour), -1 while
// an xSync or xDelete of this VFS runs, a SQLite error code once its folder sync failed.
static inline int *cipherdb_folder_sync_state(void) {
    static _Thread_local int state = 0;
    return &state;
}

// SQLite opens a file's folder to sync it. Inside this VFS's calls the folder is synced here and
// the result kept for the caller; SQLite is told the folder could not be opened, which it takes
// as "nothing to sync", so the folder is synced once. Elsewhere this is SQLite's own call.
static int cipherdb_open_directory(const char *path, int *descriptor) {
    cipherdb_open_directory_function sqlite_open_directory = *cipherdb_sqlite_open_directory();
    if (sqlite_open_directory == NULL) return SQLITE_CANTOPEN;
    int *state = cipherdb_folder_sync_state();
    int rc = sqlite_open_directory(path, descriptor);
    if (*state == 0 || rc != SQLITE_OK) return rc;
    if (fsync(*descriptor) != 0 && *state < 0) *state = SQLITE_IOERR_DIR_FSYNC;
    close(*descriptor);
    *descriptor = -1;
    return SQLITE_CANTOPEN;
}

// Runs `call` with this thread's folder syncs checked; a failed one turns a success into its code.
#define CIPHERDB_WITH_FOLDER_SYNC(rc, call)                  \
    do {                                                     \
        int *cipherdb_state = cipherdb_folder_sync_state();  \
        int cipherdb_outer = *cipherdb_state;                \
        *cipherdb_state = -1;                                \
        (rc) = (call);                                       \
        if ((rc) == SQLITE_OK && *cipherdb_state > 0) (rc) = *cipherdb_state; \
        *cipherdb_state = cipherdb_outer;                    \
    } while (0)

static int cipherdb_sync(sqlite3_file *file, int flags) {
    cipherdb_file *wrapper = (cipherdb_file *)file;
    if (wrapper->sync_failure != 0) return wrapper->sync_failure;
    int rc;
    CIPHERDB_WITH_FOLDER_SYNC(rc, wrapper->real->pMethods->xSync(wrapper->real, flags));
    if (rc != SQLITE_OK) wrapper->sync_failure = rc;
    return rc;
}
static int cipherdb_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    return cipherdb_real(file)->pMethods->xFileSize(cipherdb_real(file), size);
}
static int cipherdb_lock(sqlite3_file *file, int level) { return cipherdb_real(file)->pMethods->xLock(cipherdb_real(file), level); }
static int cipherdb_unlock(sqlite3_file *file, int level) {
    return cipherdb_real(file)->pMethods->xUnlock(cipherdb_real(file), level);
}
static int cipherdb_check_reserved_lock(sqlite3_file *file, int *result) {
    return cipherdb_real(file)->pMethods->xCheckReservedLock(cipherdb_real(file), result);
}
static int cipherdb_file_control(sqlite3_file *file, int op, void *argument) {
    return cipherdb_real(file)->pMethods->xFileControl(cipherdb_real(file), op, argument);
}
static int cipherdb_sector_size(sqlite3_file *file) { return cipherdb_real(file)->pMethods->xSectorSize(cipherdb_real(file)); }
static int cipherdb_device_characteristics(sqlite3_file *file) {
    return cipherdb_real(file)->pMethods->xDeviceCharacteristics(cipherdb_real(file));
}
static int cipherdb_shm_map(sqlite3_file *file, int region, int size, int extend, void volatile **address) {
    return cipherdb_real(file)->pMethods->xShmMap(cipherdb_real(file), region, size, extend, address);
}
static int cipherdb_shm_lock(sqlite3_file *file, int offset, int count, int flags) {
    return cipherdb_real(file)->pMethods->xShmLock(cipherdb_real(file), offset, count, flags);
}
static void cipherdb_shm_barrier(sqlite3_file *file) { cipherdb_real(file)->pMethods->xShmBarrier(cipherdb_real(file)); }
static int cipherdb_shm_unmap(sqlite3_file *file, int delete_flag) {
    return cipherdb_real(file)->pMethods->xShmUnmap(cipherdb_real(file), delete_flag);
}
static int cipherdb_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **pointer) {
    return cipherdb_real(file)->pMethods->xFetch(cipherdb_real(file), offset, amount, pointer);
}
static int cipherdb_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    return cipherdb_real(file)->pMethods->xUnfetch(cipherdb_real(file), offset, pointer);
}

// The methods for a file whose unix methods are of `version` (1 to 3): the same version, so
// SQLite never calls a method the unix file lacks.
static inline const sqlite3_io_methods *cipherdb_io_methods(int version) {
    static sqlite3_io_methods methods[3];
    static int made = 0;
    if (!made) {
        for (int index = 0; index < 3; index++) {
            sqlite3_io_methods m = {
                index + 1, cipherdb_close, cipherdb_read, cipherdb_write, cipherdb_truncate, cipherdb_sync,
                cipherdb_file_size, cipherdb_lock, cipherdb_unlock, cipherdb_check_reserved_lock, cipherdb_file_control,
                cipherdb_sector_size, cipherdb_device_characteristics,
                index >= 1 ? cipherdb_shm_map : NULL, index >= 1 ? cipherdb_shm_lock : NULL,
                index >= 1 ? cipherdb_shm_barrier : NULL, index >= 1 ? cipherdb_shm_unmap : NULL,
                index >= 2 ? cipherdb_fetch : NULL, index >= 2 ? cipherdb_unfetch : NULL,
            };
            methods[index] = m;
        }
        made = 1;  // filled once, before the VFS is registered (registration is serialized by Swift)
    }
    return &methods[(version < 1 ? 1 : version > 3 ? 3 : version) - 1];
}

static int cipherdb_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    sqlite3_vfs *unix_vfs = cipherdb_unix_vfs();
    cipherdb_file *wrapper = (cipherdb_file *)file;
    wrapper->base.pMethods = NULL;
    wrapper->real = (sqlite3_file *)(wrapper + 1);
    wrapper->real->pMethods = NULL;
    wrapper->sync_failure = 0;
    wrapper->bytes_read = 0;
    wrapper->zeroed_page_reads = 0;
    wrapper->first_zeroed_page = 0;
    if (unix_vfs == NULL) return SQLITE_CANTOPEN;
    int rc = unix_vfs->xOpen(unix_vfs, name, wrapper->real, flags, out_flags);
    if (wrapper->real->pMethods != NULL) wrapper->base.pMethods = cipherdb_io_methods(wrapper->real->pMethods->iVersion);
    return rc;
}

// The main file of `db` when this VFS opened it (by its name: a static function's address
// differs between the objects that include this header), else NULL. SQLite reports no progress
// inside PRAGMA integrity_check: the bytes it has read are what can be shown.
static inline sqlite3_file *cipherdb_main_file(sqlite3 *db) {
    sqlite3_vfs *vfs = NULL;
    sqlite3_file *file = NULL;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_VFS_POINTER, &vfs) != SQLITE_OK || vfs == NULL
        || strcmp(vfs->zName, "cipherdb-unix") != 0)
        return NULL;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || file == NULL || file->pMethods == NULL)
        return NULL;
    return file;
}

// The bytes read so far through `file` (from cipherdb_main_file), from any thread while its
// connection is open.
static inline sqlite3_int64 cipherdb_file_bytes_read(sqlite3_file *file) {
    return __atomic_load_n(&((cipherdb_file *)file)->bytes_read, __ATOMIC_RELAXED);
}

// The whole pages read as all zeros so far through `file` (as cipherdb_file_bytes_read), and the
// number of the first of them (0 while none).
static inline sqlite3_int64 cipherdb_file_zeroed_page_reads(sqlite3_file *file, sqlite3_int64 *first_page) {
    *first_page = __atomic_load_n(&((cipherdb_file *)file)->first_zeroed_page, __ATOMIC_RELAXED);
    return __atomic_load_n(&((cipherdb_file *)file)->zeroed_page_reads, __ATOMIC_RELAXED);
}

static int cipherdb_delete(sqlite3_vfs *vfs, const char *path, int sync_folder) {
    (void)vfs;
    sqlite3_vfs *unix_vfs = cipherdb_unix_vfs();
    if (unix_vfs == NULL) return SQLITE_IOERR_DELETE;
    int rc;
    CIPHERDB_WITH_FOLDER_SYNC(rc, unix_vfs->xDelete(unix_vfs, path, sync_folder));
    return rc;
}

static int cipherdb_full_pathname(sqlite3_vfs *vfs, const char *path, int out_size, char *out) {
    (void)vfs;
    static const char prefix[] = "/proc/self/fd/";
    if (strncmp(path, prefix, sizeof prefix - 1) == 0) {
        size_t length = strlen(path);
        if ((int)length >= out_size) return SQLITE_CANTOPEN;
        memcpy(out, path, length + 1);
        return SQLITE_OK;
    }
    sqlite3_vfs *unix_vfs = cipherdb_unix_vfs();
    if (unix_vfs == NULL) return SQLITE_CANTOPEN;
    return unix_vfs->xFullPathname(unix_vfs, path, out_size, out);
}

// Whether `path` ends with `suffix`.
static inline int cipherdb_has_suffix(const char *path, const char *suffix) {
    size_t length = strlen(path), count = strlen(suffix);
    return length >= count && strcmp(path + length - count, suffix) == 0;
}

// The descriptor this thread's last cipherdb_posix_open made private (-1: none). SQLite sets a
// new file's mode with fchmod right after opening it, against the umask.
static inline int *cipherdb_private_descriptor(void) {
    static _Thread_local int descriptor = -1;
    return &descriptor;
}

// Newer SQLite opens every file with O_NOFOLLOW (it resolved links itself): not these paths,
// which are links by nature. A database file SQLite creates (an ATTACH target, say) is created
// 0600, never SQLite's 0644: it may be a decrypted copy. Its journal, WAL and shared memory keep
// the mode SQLite gives them, the database's own, so that whoever may open the database can
// still recover it.
static int cipherdb_posix_open(const char *path, int flags, int mode) {
    static const char prefix[] = "/proc/self/fd/";
    if (strncmp(path, prefix, sizeof prefix - 1) == 0) flags &= ~O_NOFOLLOW;
    int private_file = (flags & O_CREAT) && !cipherdb_has_suffix(path, "-journal") && !cipherdb_has_suffix(path, "-wal")
        && !cipherdb_has_suffix(path, "-shm");
    int descriptor = open(path, flags, private_file ? mode & 0600 : mode);
    *cipherdb_private_descriptor() = private_file ? descriptor : -1;
    return descriptor;
}

// SQLite's fchmod of a new file, kept owner-only for the file cipherdb_posix_open made private.
static int cipherdb_posix_fchmod(int descriptor, mode_t mode) {
    if (descriptor >= 0 && descriptor == *cipherdb_private_descriptor()) mode &= 0600;
    return fchmod(descriptor, mode);
}

// Registers that VFS as the default when the default is still SQLite's "unix" VFS (an
// application's own default is left alone). Call once (CipherDB does, from a Swift global's
// initializer). Returns 1 when it is the default afterwards.
static inline int cipherdb_register_anonymous_file_vfs(void) {
    static const char name[] = "cipherdb-unix";
    sqlite3_vfs *current = sqlite3_vfs_find(NULL);
    if (current != NULL && strcmp(current->zName, name) == 0) return 1;
    if (current == NULL || strcmp(current->zName, "unix") != 0) return 0;
    sqlite3_vfs *shim = sqlite3_malloc(sizeof *shim);
    if (shim == NULL) return 0;
    (void)cipherdb_io_methods(3);
    *shim = *current;
    shim->zName = name;
    shim->pNext = NULL;
    shim->szOsFile = (int)sizeof(cipherdb_file) + current->szOsFile;
    shim->xOpen = cipherdb_open;
    shim->xFullPathname = cipherdb_full_pathname;
    shim->xDelete = cipherdb_delete;
    if (sqlite3_vfs_register(shim, 1) != SQLITE_OK) { sqlite3_free(shim); return 0; }
    if (current->iVersion >= 3 && current->xSetSystemCall != NULL) {
        current->xSetSystemCall(current, "open", (sqlite3_syscall_ptr)cipherdb_posix_open);
        current->xSetSystemCall(current, "fchmod", (sqlite3_syscall_ptr)cipherdb_posix_fchmod);
        *cipherdb_sqlite_open_directory() = (cipherdb_open_directory_function)current->xGetSystemCall(current, "openDirectory");
        if (*cipherdb_sqlite_open_directory() != NULL) {
            current->xSetSystemCall(current, "openDirectory", (sqlite3_syscall_ptr)cipherdb_open_directory);
        }
    }
    return 1;
}

// sqlite3_db_config with an int and an int* (its on/off options) is variadic: Swift cannot call it.
// `value` -1 leaves the option as it is; `result` (may be NULL) gets its setting after the call.
static inline int cipherdb_db_config_flag(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

// SQLite's own text for a real: printf("%!.<digits>g") in SQLite's printf (the shell's rendering,
// which differs from the C library's in the last digits). sqlite3_snprintf is variadic: Swift
// cannot call it.
static inline void cipherdb_format_real(double value, int digits, char *out, int size) {
    sqlite3_snprintf(size, out, "%!.*g", digits, value);
}

// sqlite3_error_offset (SQLite 3.38) when the running library has it, else -1: SQLCipher 3.4.1 is
// SQLite 3.15, and SQLCipher 4 may be loaded over it at run time, so the symbol is looked up then.
static inline int cipherdb_error_offset(sqlite3 *db) {
    typedef int (*error_offset_function)(sqlite3 *);
    static error_offset_function function = NULL;
    static int resolved = 0;
    if (!resolved) {
        // The process's global scope (RTLD_DEFAULT needs _GNU_SOURCE): preloaded libraries included.
        void *process = dlopen(NULL, RTLD_LAZY);
        function = process != NULL ? (error_offset_function)dlsym(process, "sqlite3_error_offset") : NULL;
        resolved = 1;
    }
    return function != NULL ? function(db) : -1;
}

#endif
