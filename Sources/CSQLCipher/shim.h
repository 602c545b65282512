#ifndef CIPHERDB_CSQLCIPHER_SHIM_H
#define CIPHERDB_CSQLCIPHER_SHIM_H

// sqlite3_key and sqlite3_rekey are declared only when SQLITE_HAS_CODEC is defined first.
#define SQLITE_HAS_CODEC 1
#include <sqlite3.h>

// SQLITE_TRANSIENT and SQLITE_STATIC are casts of integers to function pointers: Swift cannot import them.
static inline sqlite3_destructor_type cipherdb_sqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type cipherdb_sqlite_static(void) { return SQLITE_STATIC; }

#endif
