#include "cprocess_arguments.h"

#include <stddef.h>
// Any libc header defines __GLIBC__ under glibc (stddef.h is the compiler's own and does not).
#include <stdlib.h>

static int saved_argc = 0;
static char *const *saved_argv = NULL;

#if defined(__linux__) && defined(__GLIBC__)
// glibc calls .init_array functions with main's arguments; musl calls them with none, so this is
// glibc only (elsewhere the getters say "not known" and Swift's CommandLine is all there is).
static void cdb_save_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    if (argc > 0 && argv != NULL) {
        saved_argc = argc;
        saved_argv = argv;
    }
}

__attribute__((section(".init_array"), used)) static void (*const cdb_save_arguments_entry)(int, char **, char **) =
    cdb_save_arguments;
#endif

int cdb_saved_argc(void) { return saved_argc; }

char *const *cdb_saved_argv(void) { return saved_argv; }
