#ifndef CIPHERDB_CLINEEDIT_SHIM_H
#define CIPHERDB_CLINEEDIT_SHIM_H

// Debian's libedit (libedit-dev) through its readline-compatible interface: line editing and
// history for `cipherdb shell` on a terminal.
#include <stdio.h>
#include <editline/readline.h>

// Globals are set here: Swift 6 sees C globals as shared mutable state.
// libedit leaves signals to the shell, which turns Ctrl-C into an interrupt of the running
// statement; the prompt goes to stdout like the results.
static inline void cipherdb_line_editing_setup(const char *name) {
    rl_readline_name = name;
    rl_catch_signals = 0;
    rl_outstream = stdout;
    using_history();
}

// The history's entries, oldest first: history_base and history_length are C globals.
static inline int cipherdb_history_count(void) { return history_length; }
static inline const char *cipherdb_history_entry(int offset) {
    HIST_ENTRY *entry = history_get(history_base + offset);
    return entry ? entry->line : NULL;
}

#endif
