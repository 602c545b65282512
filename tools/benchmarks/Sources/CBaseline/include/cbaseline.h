/* The C baseline: each workload as a careful C program does it on SQLCipher's C API (one prepared
   statement, bind, step, reset; text and blobs copied with malloc + memcpy where Swift makes a
   String or Data; records read into and written from an array of C structs). The functions that
   a workload measures bracket their own work with callgrind's start/stop instrumentation when
   `count` is non-zero, so set-up and tear-down stay outside the count, as on the Swift side. */
#ifndef CBASELINE_H
#define CBASELINE_H

#include <stdint.h>

typedef struct sqlite3 sqlite3;

/* The rows the workloads write, the same values as the Swift side's Fixture (tools/benchmarks/
   Sources/CoreBenchmark/Fixture.swift); made before any measurement. */
typedef struct cb_fixture {
    int count;
    int64_t *integers;
    double *reals;
    char **texts; /* 32 bytes each, NUL-terminated */
    int *text_lengths;
    uint8_t **blobs; /* 64 bytes each */
    int *blob_lengths;
    int64_t *lookup_ids;
    char **emails; /* NULL for every fourth player */
    int *email_lengths;
} cb_fixture;

/* The Swift side's Player record, as a C program holds it. */
typedef struct cb_player {
    int64_t id;
    char *name;
    char *email; /* NULL for SQL NULL */
    int name_length;
    int email_length;
    int64_t score;
    double rating;
    uint8_t *avatar;
    int avatar_length;
} cb_player;

cb_fixture *cb_fixture_make(int count);
void cb_fixture_free(cb_fixture *fixture);

/* Opening and set-up (never measured). `hex_key` is 64 hex digits (a raw key). */
sqlite3 *cb_open(const char *path, const char *hex_key, int page_size);
void cb_close(sqlite3 *db);
void cb_exec(sqlite3 *db, const char *sql);
/* A checksum of every value the query returns (the Swift side's Checksum rules): how the insert
   workloads prove that both sides wrote the same rows. */
int64_t cb_checksum_query(sqlite3 *db, const char *sql);

/* The measured workloads; `count` brackets them for callgrind. */
void cb_insert5(sqlite3 *db, const cb_fixture *fixture, int count);
void cb_insert8(sqlite3 *db, const cb_fixture *fixture, int count);
int64_t cb_scan(sqlite3 *db, int count);
/* `batch` lookups per read transaction (0: all in one). */
int64_t cb_lookups(sqlite3 *db, const int64_t *ids, int n, int batch, int count);
void cb_players_insert(sqlite3 *db, const cb_fixture *fixture, int count);
/* Reads every row of `sql` (the six player columns in order; `?1` bound to `minimum_score` when
   the query has a parameter) into a growing array of cb_player, checksums it, frees it. */
int64_t cb_players_fetch_all(sqlite3 *db, const char *sql, int64_t minimum_score, int count);
/* The same for a join's rows of two players side by side (twelve columns), both checksummed. */
int64_t cb_player_pairs_fetch_all(sqlite3 *db, const char *sql, int count);

/* Callgrind's instrumentation, for the Swift side (no-ops outside valgrind). */
void cb_instrumentation_start(void);
void cb_instrumentation_stop(void);

#endif
