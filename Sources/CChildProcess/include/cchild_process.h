// Starting a child process that cannot outlive its parent.
//
// posix_spawn cannot ask for a parent-death signal: a child started with it keeps running when its
// parent is SIGKILLed. For restic reading a snapshot on its standard input, that means a stream cut
// short, which restic stores as a whole snapshot. Here the child is forked, asks the kernel for
// SIGINT (restic's signal to cancel and unlock) when the thread that started it ends (PR_SET_PDEATHSIG; the caller blocks in waitpid on
// that thread until the child ends, so in practice when the process dies), and execs.
#ifndef CCHILD_PROCESS_H
#define CCHILD_PROCESS_H

#include <sys/types.h>

/// Starts `path` (an absolute or relative path: no PATH search) with `argv` and `envp`.
///
/// The child's descriptor i (0 <= i < count) is `sources[i]`, or /dev/null read-only when it is -1;
/// SIGINT, SIGTERM, SIGHUP and SIGXFSZ have their default action, SIGPIPE is ignored (a write to a
/// dead parent's pipe fails with EPIPE), and no signal is blocked.
/// Between fork and exec only async-signal-safe calls run.
///
/// Returns the child's pid, or -1 with `*error` set to the errno of the fork or of the exec
/// (ENOENT: no such program).
pid_t cdb_spawn_tied_child(const char *path, char *const argv[], char *const envp[], const int *sources, int count, int *error);

/// pipe2(fds, O_CLOEXEC): a pipe whose ends no child started meanwhile by another thread inherits
/// (glibc declares pipe2 only under _GNU_SOURCE, which Swift's Glibc module does not set).
int cdb_pipe_cloexec(int fds[2]);

#endif
