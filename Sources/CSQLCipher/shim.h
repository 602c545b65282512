#ifndef CIPHERDB_CSQLCIPHER_SHIM_H
#define CIPHERDB_CSQLCIPHER_SHIM_H

// sqlite3_key and sqlite3_rekey are declared only when SQLITE_HAS_CODEC is defined first.
#define SQLITE_HAS_CODEC 1
#include <sqlite3.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <string.h>

// SQLITE_TRANSIENT and SQLITE_STATIC are casts of integers to function pointers: Swift cannot import them.
static inline sqlite3_destructor_type cipherdb_sqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type cipherdb_sqlite_static(void) { return SQLITE_STATIC; }

// Anonymous files (O_TMPFILE) reach SQLite as /proc/self/fd/N. The unix VFS resolves symbolic
// links in every path it is given, and /proc/self/fd/N is one: it would open "/dir/#123 (deleted)",
// a new named file, instead of the anonymous one. This VFS is the default unix VFS with one change:
// such paths are taken as they are, so SQLite opens the magic link itself (the anonymous file).
// The unix VFSes share one table of system calls; "open" is replaced by one that lets these
// paths be followed.
// Every other path goes through the unix VFS unchanged.
// The VFS lives on the heap (a header cannot hold C globals for Swift), followed by the unix
// VFS's own xFullPathname.
typedef struct {
    sqlite3_vfs vfs;
    int (*unix_full_pathname)(sqlite3_vfs *, const char *, int, char *);
} cipherdb_anonymous_file_vfs;

static int cipherdb_full_pathname(sqlite3_vfs *vfs, const char *path, int out_size, char *out) {
    static const char prefix[] = "/proc/self/fd/";
    if (strncmp(path, prefix, sizeof prefix - 1) == 0) {
        size_t length = strlen(path);
        if ((int)length >= out_size) return SQLITE_CANTOPEN;
        memcpy(out, path, length + 1);
        return SQLITE_OK;
    }
    return ((cipherdb_anonymous_file_vfs *)vfs)->unix_full_pathname(vfs, path, out_size, out);
}

// Newer SQLite opens every file with O_NOFOLLOW (it resolved links itself): not these paths,
// which are links by nature. Every other path is opened as SQLite asked.
static int cipherdb_posix_open(const char *path, int flags, int mode) {
    static const char prefix[] = "/proc/self/fd/";
    if (strncmp(path, prefix, sizeof prefix - 1) == 0) flags &= ~O_NOFOLLOW;
    return open(path, flags, mode);
}

// Registers that VFS as the default when the default is still SQLite's "unix" VFS (an
// application's own default is left alone). Call once (CipherDB does, from a Swift global's
// initializer). Returns 1 when it is the default afterwards.
static inline int cipherdb_register_anonymous_file_vfs(void) {
    static const char name[] = "cipherdb-unix";
    sqlite3_vfs *current = sqlite3_vfs_find(NULL);
    if (current != NULL && strcmp(current->zName, name) == 0) return 1;
    if (current == NULL || strcmp(current->zName, "unix") != 0) return 0;
    cipherdb_anonymous_file_vfs *shim = sqlite3_malloc(sizeof *shim);
    if (shim == NULL) return 0;
    shim->vfs = *current;
    shim->vfs.zName = name;
    shim->vfs.pNext = NULL;
    shim->unix_full_pathname = current->xFullPathname;
    shim->vfs.xFullPathname = cipherdb_full_pathname;
    if (sqlite3_vfs_register(&shim->vfs, 1) != SQLITE_OK) { sqlite3_free(shim); return 0; }
    if (current->iVersion >= 3 && current->xSetSystemCall != NULL) {
        current->xSetSystemCall(current, "open", (sqlite3_syscall_ptr)cipherdb_posix_open);
    }
    return 1;
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
