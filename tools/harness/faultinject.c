/*
 * faultinject.c: an LD_PRELOAD object that makes one fsync or write of a process fail, for the
 * harness's eio-* scenarios (scen_eio.py builds it once per run into the run's folder:
 *   cc -shared -fPIC -O2 -o faultinject.so faultinject.c -ldl).
 *
 * Wrapped: fsync, fdatasync, write, pwrite, pwrite64, writev, pwritev, pwritev64, and read, pread,
 * pread64, readv, preadv, preadv64. Only calls on a regular file (writes, reads, fsync) or a
 * directory (fsync) are counted; pipes, terminals and sockets pass through untouched. Counters are
 * per process, one for each kind below. Reads are counted (and logged) only when the fault is a
 * read or CIPHERDB_FAULT_READS is set: a run reads far more than it writes.
 *
 * Environment:
 *   CIPHERDB_FAULT=KIND:K   KIND is one of
 *       fsync    the K-th fsync/fdatasync of a regular file returns -1 / EIO WITHOUT syncing;
 *       dirsync  the K-th fsync/fdatasync of a directory returns -1 / EIO without syncing;
 *       write    the K-th write/pwrite/writev of a regular file returns -1 / EIO, nothing written;
 *       enospc   the same with ENOSPC;
 *       read     the K-th read/pread/readv of a regular file returns -1 / EIO, nothing read.
 *     Every later call goes through for real (one failure, as a flaky disk gives: a program that
 *     retries an fsync then "succeeds" although the data of the failed one may be lost).
 *   CIPHERDB_FAULT=KIND:K-L   fails the K-th through the L-th call (a disk that fails for a while).
 *   CIPHERDB_FAULT_LOG=PATH   append one line per counted call, "fsync PATH", "dirsync PATH",
 *     "write PATH" (the fd's path from /proc/self/fd), and "FAULT KIND N PATH" when one is injected.
 *     Written with the raw write syscall, so logging never recurses into the wrappers.
 *   CIPHERDB_FAULT_PATH=SUBSTRING   count (and log) only calls whose fd path contains it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum kind { K_FSYNC, K_DIRSYNC, K_WRITE, K_READ, K_NONE };
static const char *const kind_names[] = {"fsync", "dirsync", "write", "read"};

static int fault_kind = K_NONE;   /* the counter the fault is on */
static int fault_errno = EIO;
static long fault_at = 0;         /* 1-based index of the first call that fails; 0 = none */
static long fault_until = 0;      /* ... and of the last */
static int count_reads = 0;
static long counters[4];
static int log_fd = -1;
static const char *path_filter = NULL;
static __thread int busy;         /* the wrappers' own calls (readlink, fstat) are not counted */

static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static ssize_t (*real_pwritev64)(int, const struct iovec *, int, off64_t);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_pread64)(int, void *, size_t, off64_t);
static ssize_t (*real_readv)(int, const struct iovec *, int);
static ssize_t (*real_preadv)(int, const struct iovec *, int, off_t);
static ssize_t (*real_preadv64)(int, const struct iovec *, int, off64_t);

static void raw_write_all(int fd, const char *text, size_t length) {
    while (length > 0) {
        long done = syscall(SYS_write, fd, text, length);
        if (done < 0) {
            if (errno == EINTR) continue;
            return;
        }
        text += done;
        length -= (size_t)done;
    }
}

__attribute__((constructor)) static void faultinject_init(void) {
    const char *spec = getenv("CIPHERDB_FAULT");
    if (spec && *spec) {
        const char *colon = strchr(spec, ':');
        size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
        if (n == 5 && !strncmp(spec, "fsync", 5)) fault_kind = K_FSYNC;
        else if (n == 7 && !strncmp(spec, "dirsync", 7)) fault_kind = K_DIRSYNC;
        else if (n == 5 && !strncmp(spec, "write", 5)) fault_kind = K_WRITE;
        else if (n == 6 && !strncmp(spec, "enospc", 6)) { fault_kind = K_WRITE; fault_errno = ENOSPC; }
        else if (n == 4 && !strncmp(spec, "read", 4)) fault_kind = K_READ;
        char *end = NULL;
        fault_at = colon ? strtol(colon + 1, &end, 10) : 1;
        fault_until = end && *end == '-' ? strtol(end + 1, NULL, 10) : fault_at;
        if (fault_kind == K_NONE || fault_at < 1 || fault_until < fault_at) {
            static const char bad[] = "faultinject: cannot parse CIPHERDB_FAULT\n";
            raw_write_all(2, bad, sizeof bad - 1);
            fault_kind = K_NONE;
        }
    }
    const char *reads = getenv("CIPHERDB_FAULT_READS");
    count_reads = fault_kind == K_READ || (reads && *reads);
    const char *filter = getenv("CIPHERDB_FAULT_PATH");
    if (filter && *filter) path_filter = filter;
    const char *log = getenv("CIPHERDB_FAULT_LOG");
    if (log && *log) {
        int fd = (int)syscall(SYS_openat, AT_FDCWD, log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd >= 0) {
            /* Far from the low numbers a program closes and reuses. */
            int high = fcntl(fd, F_DUPFD_CLOEXEC, 900);
            if (high >= 0) {
                syscall(SYS_close, fd);
                fd = high;
            }
            log_fd = fd;
        }
    }
}

#define RESOLVE(name) \
    do { \
        if (!real_##name) real_##name = dlsym(RTLD_NEXT, #name); \
    } while (0)

/* Which counter a call on fd belongs to (K_NONE: not counted), and its path. `call` is K_FSYNC
 * for a sync, K_WRITE or K_READ. */
static int classify(int fd, int call, char *path, size_t size) {
    if (fd < 0 || fd == log_fd) return K_NONE;
    struct stat st;
    if (fstat(fd, &st) != 0) return K_NONE;
    int kind;
    if (S_ISREG(st.st_mode)) kind = call;
    else if (S_ISDIR(st.st_mode) && call == K_FSYNC) kind = K_DIRSYNC;
    else return K_NONE;
    char link[64];
    char *p = link + sizeof link;
    *--p = 0;
    unsigned value = (unsigned)fd;
    do { *--p = (char)('0' + value % 10); value /= 10; } while (value);
    static const char prefix[] = "/proc/self/fd/";
    p -= sizeof prefix - 1;
    memcpy(p, prefix, sizeof prefix - 1);
    ssize_t got = readlink(p, path, size - 1);
    if (got < 0) got = 0;
    path[got] = 0;
    if (path_filter && !strstr(path, path_filter)) return K_NONE;
    return kind;
}

static void log_line(const char *tag, long n, const char *path) {
    if (log_fd < 0) return;
    char line[4200];
    size_t used = 0;
    size_t tag_length = strlen(tag);
    memcpy(line, tag, tag_length);
    used = tag_length;
    if (n > 0) {
        char digits[24];
        char *p = digits + sizeof digits;
        unsigned long value = (unsigned long)n;
        do { *--p = (char)('0' + value % 10); value /= 10; } while (value);
        line[used++] = ' ';
        size_t length = (size_t)(digits + sizeof digits - p);
        memcpy(line + used, p, length);
        used += length;
    }
    line[used++] = ' ';
    size_t path_length = strnlen(path, sizeof line - used - 2);
    memcpy(line + used, path, path_length);
    used += path_length;
    line[used++] = '\n';
    raw_write_all(log_fd, line, used);
}

/* Counts a call (`call` as for classify); returns the errno to fail it with, or 0 to let it through. */
static int intercept(int fd, int call) {
    if (busy) return 0;
    if (fault_kind == K_NONE && log_fd < 0) return 0;
    if (call == K_READ && !count_reads) return 0;
    busy = 1;
    int saved = errno;
    char path[4096];
    int kind = classify(fd, call, path, sizeof path);
    int fail = 0;
    if (kind != K_NONE) {
        long n = __atomic_add_fetch(&counters[kind], 1, __ATOMIC_SEQ_CST);
        log_line(kind_names[kind], 0, path);
        if (kind == fault_kind && n >= fault_at && n <= fault_until) {
            fail = kind == K_WRITE ? fault_errno : EIO;
            char tag[32] = "FAULT ";
            strcat(tag, kind == K_WRITE && fault_errno == ENOSPC ? "enospc" : kind_names[kind]);
            log_line(tag, n, path);
        }
    }
    errno = saved;
    busy = 0;
    return fail;
}

int fsync(int fd) {
    RESOLVE(fsync);
    int fail = intercept(fd, K_FSYNC);
    if (fail) { errno = fail; return -1; }
    return real_fsync(fd);
}

int fdatasync(int fd) {
    RESOLVE(fdatasync);
    int fail = intercept(fd, K_FSYNC);
    if (fail) { errno = fail; return -1; }
    return real_fdatasync(fd);
}

ssize_t write(int fd, const void *buffer, size_t count) {
    RESOLVE(write);
    int fail = intercept(fd, K_WRITE);
    if (fail) { errno = fail; return -1; }
    return real_write(fd, buffer, count);
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    RESOLVE(pwrite);
    int fail = intercept(fd, K_WRITE);
    if (fail) { errno = fail; return -1; }
    return real_pwrite(fd, buffer, count, offset);
}

ssize_t pwrite64(int fd, const void *buffer, size_t count, off64_t offset) {
    RESOLVE(pwrite64);
    int fail = intercept(fd, K_WRITE);
    if (fail) { errno = fail; return -1; }
    return real_pwrite64(fd, buffer, count, offset);
}

ssize_t writev(int fd, const struct iovec *vector, int count) {
    RESOLVE(writev);
    int fail = intercept(fd, K_WRITE);
    if (fail) { errno = fail; return -1; }
    return real_writev(fd, vector, count);
}

ssize_t pwritev(int fd, const struct iovec *vector, int count, off_t offset) {
    RESOLVE(pwritev);
    int fail = intercept(fd, K_WRITE);
    if (fail) { errno = fail; return -1; }
    return real_pwritev(fd, vector, count, offset);
}

ssize_t pwritev64(int fd, const struct iovec *vector, int count, off64_t offset) {
    RESOLVE(pwritev64);
    int fail = intercept(fd, K_WRITE);
    if (fail) { errno = fail; return -1; }
    return real_pwritev64(fd, vector, count, offset);
}

ssize_t read(int fd, void *buffer, size_t count) {
    RESOLVE(read);
    int fail = intercept(fd, K_READ);
    if (fail) { errno = fail; return -1; }
    return real_read(fd, buffer, count);
}

ssize_t pread(int fd, void *buffer, size_t count, off_t offset) {
    RESOLVE(pread);
    int fail = intercept(fd, K_READ);
    if (fail) { errno = fail; return -1; }
    return real_pread(fd, buffer, count, offset);
}

ssize_t pread64(int fd, void *buffer, size_t count, off64_t offset) {
    RESOLVE(pread64);
    int fail = intercept(fd, K_READ);
    if (fail) { errno = fail; return -1; }
    return real_pread64(fd, buffer, count, offset);
}

ssize_t readv(int fd, const struct iovec *vector, int count) {
    RESOLVE(readv);
    int fail = intercept(fd, K_READ);
    if (fail) { errno = fail; return -1; }
    return real_readv(fd, vector, count);
}

ssize_t preadv(int fd, const struct iovec *vector, int count, off_t offset) {
    RESOLVE(preadv);
    int fail = intercept(fd, K_READ);
    if (fail) { errno = fail; return -1; }
    return real_preadv(fd, vector, count, offset);
}

ssize_t preadv64(int fd, const struct iovec *vector, int count, off64_t offset) {
    RESOLVE(preadv64);
    int fail = intercept(fd, K_READ);
    if (fail) { errno = fail; return -1; }
    return real_preadv64(fd, vector, count, offset);
}
