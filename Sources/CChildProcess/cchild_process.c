#define _GNU_SOURCE
#include "cchild_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

// close_range's flag (Linux 5.11), spelled here: older C libraries do not declare it.
#define CDB_CLOSE_RANGE_CLOEXEC (1U << 2)

// The highest descriptor count handled (restic needs five: stdin, stdout, stderr, password, location).
#define CDB_MAX_CHILD_DESCRIPTORS 16

int cdb_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

static void cdb_child_fail(int report) {
    int code = errno;
    ssize_t ignored = write(report, &code, sizeof code);
    (void)ignored;
    _exit(127);
}

pid_t cdb_spawn_tied_child(const char *path, char *const argv[], char *const envp[], const int *sources, int count, int *error) {
    if (count < 0 || count > CDB_MAX_CHILD_DESCRIPTORS) {
        *error = EINVAL;
        return -1;
    }
    // The exec's failure comes back through this pipe; a successful exec closes it (O_CLOEXEC).
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        *error = errno;
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        *error = errno;
        close(report[0]);
        close(report[1]);
        return -1;
    }
    if (pid == 0) {
        // The report's write end may be a low number that a target below replaces: above them first.
        int failure = fcntl(report[1], F_DUPFD_CLOEXEC, CDB_MAX_CHILD_DESCRIPTORS);
        if (failure < 0) _exit(127);
        // SIGINT, not SIGKILL: restic then cancels, removes its repository lock and stores nothing
        // (restic 0.14 cleans up on SIGINT only: on SIGTERM it leaves its lock behind).
        if (prctl(PR_SET_PDEATHSIG, SIGINT) != 0) cdb_child_fail(failure);
        if (getppid() != parent) _exit(127);  // the parent died before the request took effect
        // First out of the way of the targets (a source may be a lower target), then into place.
        int moved[CDB_MAX_CHILD_DESCRIPTORS];
        for (int i = 0; i < count; i++) {
            if (sources[i] < 0) {
                moved[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
            } else {
                moved[i] = fcntl(sources[i], F_DUPFD_CLOEXEC, CDB_MAX_CHILD_DESCRIPTORS);
            }
            if (moved[i] < 0) cdb_child_fail(failure);
        }
        for (int i = 0; i < count; i++) {
            if (dup2(moved[i], i) < 0) cdb_child_fail(failure);  // dup2 clears O_CLOEXEC on the target
        }
        // Every other descriptor closes at the exec: one the caller was handed open (a
        // passphrase's --passphrase-fd) must not reach the child, which could read it.
        if (syscall(SYS_close_range, (unsigned)count, ~0U, CDB_CLOSE_RANGE_CLOEXEC) != 0) {
            long limit = sysconf(_SC_OPEN_MAX);
            if (limit < 0 || limit > 65536) limit = 65536;
            for (int fd = count; fd < limit; fd++) {
                int flags = fcntl(fd, F_GETFD);
                if (flags >= 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
            }
        }
        const int defaults[] = {SIGINT, SIGTERM, SIGHUP, SIGXFSZ};
        for (unsigned i = 0; i < sizeof defaults / sizeof defaults[0]; i++) signal(defaults[i], SIG_DFL);
        // Ignored: after the parent's death its pipes are broken, and a Go program (restic) that
        // starts with SIGPIPE ignored gets EPIPE instead of dying on its cleanup message, so it
        // still removes its repository lock.
        signal(SIGPIPE, SIG_IGN);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execve(path, argv, envp);
        cdb_child_fail(failure);
    }
    close(report[1]);
    int code = 0;
    ssize_t got;
    do {
        got = read(report[0], &code, sizeof code);
    } while (got < 0 && errno == EINTR);
    close(report[0]);
    if (got == (ssize_t)sizeof code) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        *error = code;
        return -1;
    }
    return pid;
}
