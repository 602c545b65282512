#ifndef CIPHERDB_CLINEEDIT_SHIM_H
#define CIPHERDB_CLINEEDIT_SHIM_H

// Debian's libedit (libedit-dev) through its readline-compatible interface: line editing and
// history for `cipherdb shell` on a terminal.
#include <stdio.h>
#include <stdlib.h>
#include <editline/readline.h>

// Tab completion: libedit calls cipherdb_attempt_completion, which asks the shell's completer.
// The completer gets the word libedit would replace, the line, the cursor (in characters: libedit
// counts wide characters) and its context; it returns a malloc'd NULL-terminated array of malloc'd
// candidates (libedit frees each), or NULL with *file_names set for libedit's file-name completion,
// or NULL alone for nothing. The state lives in a function static, as a header cannot hold a C
// global for Swift: only one Swift file (LineReader.swift) may call these functions, because in a
// debug build each Swift file gets its own copy of a static inline function and of its statics.
typedef char **(*cipherdb_completer)(const char *word, const char *line, int cursor, int *file_names, void *context);

typedef struct {
    cipherdb_completer completer;  // NULL while no line is being read
    void *context;
    char **pending;  // the candidates rl_completion_matches is taking, one at a time
    size_t next;
} cipherdb_completion_state;

static inline cipherdb_completion_state *cipherdb_completion(void) {
    static cipherdb_completion_state state;
    return &state;
}

// rl_completion_matches' generator: hands out the pending candidates (libedit owns each after).
static inline char *cipherdb_next_candidate(const char *word, int state) {
    cipherdb_completion_state *completion = cipherdb_completion();
    (void)word;
    (void)state;
    if (completion->pending == NULL || completion->pending[completion->next] == NULL) return NULL;
    return completion->pending[completion->next++];
}

static inline char **cipherdb_attempt_completion(const char *word, int start, int end) {
    cipherdb_completion_state *completion = cipherdb_completion();
    (void)start;
    int file_names = 0;
    char **candidates = NULL;
    if (completion->completer != NULL && word != NULL)
        candidates = completion->completer(word, rl_line_buffer ? rl_line_buffer : "", end, &file_names, completion->context);
    if (candidates == NULL) {
        // Without this libedit falls back to file names, which mean nothing in SQL.
        rl_attempted_completion_over = !file_names;
        return NULL;
    }
    rl_attempted_completion_over = 1;
    completion->pending = candidates;
    completion->next = 0;
    // The list libedit wants: the candidates' common start first, then each (NULL when none).
    char **matches = candidates[0] ? rl_completion_matches(word, cipherdb_next_candidate) : NULL;
    for (size_t index = completion->next; candidates[index] != NULL; index++) free(candidates[index]);
    free(candidates);
    completion->pending = NULL;
    return matches;
}

// The shell's completer, while a line is read; NULL: none.
static inline void cipherdb_set_completer(cipherdb_completer completer, void *context) {
    cipherdb_completion()->completer = completer;
    cipherdb_completion()->context = context;
}

// Globals are set here: Swift 6 sees C globals as shared mutable state.
// libedit leaves signals to the shell, which turns Ctrl-C into an interrupt of the running
// statement; the prompt goes to stdout like the results.
static inline void cipherdb_line_editing_setup(const char *name) {
    rl_readline_name = name;
    rl_catch_signals = 0;
    rl_outstream = stdout;
    rl_attempted_completion_function = cipherdb_attempt_completion;
    // libedit's word breaks, and ',' and ')' that end an SQL word ('.' does not: `schema.table`).
    rl_basic_word_break_characters = " \t\n\"\\'`@$><=;|&{(,)";
    using_history();
}

// The history's entries, oldest first: history_base and history_length are C globals.
static inline int cipherdb_history_count(void) { return history_length; }
static inline const char *cipherdb_history_entry(int offset) {
    HIST_ENTRY *entry = history_get(history_base + offset);
    return entry ? entry->line : NULL;
}

#endif
