// The process's argument vector as the C library handed it to the program, read without /proc.
//
// Swift's CommandLine reads /proc/self/cmdline on Linux: in a chroot or container without /proc
// it has no arguments at all (argc 0). glibc passes (argc, argv, envp) to every .init_array
// function (Rust's standard library relies on the same), so one saves them here.
#ifndef CPROCESS_ARGUMENTS_H
#define CPROCESS_ARGUMENTS_H

/// The argc the C library started the program with; 0 where it is not known (not glibc).
int cdb_saved_argc(void);

/// The argv the C library started the program with (NULL-terminated); NULL where it is not known.
char *const *cdb_saved_argv(void);

#endif
