#define SQLITE_HAS_CODEC 1
#include <sqlite3.h>
#include <valgrind/callgrind.h>
static inline sqlite3_destructor_type bench_sqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type bench_sqlite_static(void) { return SQLITE_STATIC; }
/* Instruction counting of the measured region only (valgrind --tool=callgrind --instr-atstart=no);
   no-ops outside valgrind. */
static inline void bench_instrumentation_start(void) { CALLGRIND_START_INSTRUMENTATION; }
static inline void bench_instrumentation_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
