#define SQLITE_HAS_CODEC 1
#include "cbaseline.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

#define START(count) \
    do { if (count) CALLGRIND_START_INSTRUMENTATION; } while (0)
#define STOP(count) \
    do { if (count) CALLGRIND_STOP_INSTRUMENTATION; } while (0)

void cb_instrumentation_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void cb_instrumentation_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }

static void die(sqlite3 *db, const char *what) {
    fprintf(stderr, "C baseline: %s: %s\n", what, db ? sqlite3_errmsg(db) : "");
    abort();
}

static void *checked_malloc(size_t size) {
    void *pointer = malloc(size ? size : 1);
    if (!pointer) abort();
    return pointer;
}

/* ---- The fixture: Fixture.swift's formulas ---- */

cb_fixture *cb_fixture_make(int count) {
    cb_fixture *f = checked_malloc(sizeof *f);
    f->count = count;
    f->integers = checked_malloc(sizeof(int64_t) * count);
    f->reals = checked_malloc(sizeof(double) * count);
    f->texts = checked_malloc(sizeof(char *) * count);
    f->text_lengths = checked_malloc(sizeof(int) * count);
    f->blobs = checked_malloc(sizeof(uint8_t *) * count);
    f->blob_lengths = checked_malloc(sizeof(int) * count);
    f->lookup_ids = checked_malloc(sizeof(int64_t) * count);
    f->emails = checked_malloc(sizeof(char *) * count);
    f->email_lengths = checked_malloc(sizeof(int) * count);
    for (int i = 0; i < count; i++) {
        f->integers[i] = (int64_t)(((uint64_t)i * 2654435761u) % 1000003u);
        f->reals[i] = (double)i * 0.25;
        char digits[24];
        int n = snprintf(digits, sizeof digits, "%d", i);
        f->texts[i] = checked_malloc(33);
        memcpy(f->texts[i], "text-", 5);
        memset(f->texts[i] + 5, 'x', 27 - n);
        memcpy(f->texts[i] + 5 + 27 - n, digits, n);
        f->texts[i][32] = 0;
        f->text_lengths[i] = 32;
        f->blobs[i] = checked_malloc(64);
        for (int j = 0; j < 64; j++) f->blobs[i][j] = (uint8_t)(i * 31 + j);
        f->blob_lengths[i] = 64;
        f->lookup_ids[i] = (int64_t)(((int64_t)i * 7919) % count);
        if (i % 4 == 0) {
            f->emails[i] = NULL;
            f->email_lengths[i] = 0;
        } else {
            char email[64];
            int length = snprintf(email, sizeof email, "player%d@example.com", i);
            f->emails[i] = checked_malloc(length + 1);
            memcpy(f->emails[i], email, length + 1);
            f->email_lengths[i] = length;
        }
    }
    return f;
}

void cb_fixture_free(cb_fixture *f) {
    for (int i = 0; i < f->count; i++) {
        free(f->texts[i]);
        free(f->blobs[i]);
        free(f->emails[i]);
    }
    free(f->integers); free(f->reals); free(f->texts); free(f->text_lengths); free(f->blobs);
    free(f->blob_lengths); free(f->lookup_ids); free(f->emails); free(f->email_lengths);
    free(f);
}

/* ---- Set-up ---- */

void cb_exec(sqlite3 *db, const char *sql) {
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) die(db, sql);
}

sqlite3 *cb_open(const char *path, const char *hex_key, int page_size) {
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) die(db, path);
    // As CipherDB's connections do: readers opening a WAL file at once can meet another's
    // recovery and be refused with SQLITE_BUSY instead of waiting (seen at a few hundred rows).
    sqlite3_busy_timeout(db, 10000);
    if (hex_key) {
        char key[80];
        int length = snprintf(key, sizeof key, "x'%s'", hex_key);
        if (sqlite3_key(db, key, length) != SQLITE_OK) die(db, "sqlite3_key");
        if (page_size) {
            char pragma[64];
            snprintf(pragma, sizeof pragma, "PRAGMA cipher_page_size = %d", page_size);
            cb_exec(db, pragma);
        }
    }
    cb_exec(db, "SELECT count(*) FROM sqlite_master");
    return db;
}

void cb_close(sqlite3 *db) { sqlite3_close(db); }

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql) {
    sqlite3_stmt *statement = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &statement, NULL) != SQLITE_OK) die(db, sql);
    return statement;
}

/* The Swift side's Checksum: integers add, reals add truncated, text and blobs add their length
   and last byte; wrapping. */
static inline void add_integer(uint64_t *sum, int64_t value) { *sum += (uint64_t)value; }
static inline void add_real(uint64_t *sum, double value) { *sum += (uint64_t)(int64_t)value; }
static inline void add_bytes(uint64_t *sum, const uint8_t *bytes, int length) {
    *sum += (uint64_t)length + (length > 0 ? bytes[length - 1] : 0);
}

/* Text and blobs copied out of SQLite, as Swift copies them into String and Data. */
static char *copy_text(sqlite3_stmt *statement, int column, int *length) {
    const unsigned char *text = sqlite3_column_text(statement, column);
    int bytes = sqlite3_column_bytes(statement, column);
    *length = bytes;
    if (!text) return NULL;
    char *copy = checked_malloc((size_t)bytes + 1);
    memcpy(copy, text, (size_t)bytes);
    copy[bytes] = 0;
    return copy;
}

static uint8_t *copy_blob(sqlite3_stmt *statement, int column, int *length) {
    const void *blob = sqlite3_column_blob(statement, column);
    int bytes = sqlite3_column_bytes(statement, column);
    *length = bytes;
    if (!blob) return NULL;
    uint8_t *copy = checked_malloc((size_t)bytes);
    memcpy(copy, blob, (size_t)bytes);
    return copy;
}

int64_t cb_checksum_query(sqlite3 *db, const char *sql) {
    uint64_t sum = 0;
    sqlite3_stmt *statement = prepare(db, sql);
    int columns = sqlite3_column_count(statement);
    while (sqlite3_step(statement) == SQLITE_ROW) {
        for (int c = 0; c < columns; c++) {
            switch (sqlite3_column_type(statement, c)) {
            case SQLITE_INTEGER: add_integer(&sum, sqlite3_column_int64(statement, c)); break;
            case SQLITE_FLOAT: add_real(&sum, sqlite3_column_double(statement, c)); break;
            case SQLITE_TEXT:
            case SQLITE_BLOB: {
                const uint8_t *bytes = sqlite3_column_blob(statement, c);
                add_bytes(&sum, bytes, sqlite3_column_bytes(statement, c));
                break;
            }
            default: break;
            }
        }
    }
    sqlite3_finalize(statement);
    return (int64_t)sum;
}

/* ---- Inserts ---- */

void cb_insert5(sqlite3 *db, const cb_fixture *f, int count) {
    START(count);
    cb_exec(db, "BEGIN");
    sqlite3_stmt *statement = prepare(db, "INSERT INTO t(id, i, r, s, b) VALUES (?, ?, ?, ?, ?)");
    for (int row = 0; row < f->count; row++) {
        sqlite3_bind_int64(statement, 1, row);
        sqlite3_bind_int64(statement, 2, f->integers[row]);
        sqlite3_bind_double(statement, 3, f->reals[row]);
        sqlite3_bind_text(statement, 4, f->texts[row], f->text_lengths[row], SQLITE_TRANSIENT);
        sqlite3_bind_blob(statement, 5, f->blobs[row], f->blob_lengths[row], SQLITE_TRANSIENT);
        if (sqlite3_step(statement) != SQLITE_DONE) die(db, "insert");
        sqlite3_reset(statement);
    }
    sqlite3_finalize(statement);
    cb_exec(db, "COMMIT");
    STOP(count);
}

void cb_insert8(sqlite3 *db, const cb_fixture *f, int count) {
    START(count);
    cb_exec(db, "BEGIN");
    sqlite3_stmt *statement =
        prepare(db, "INSERT INTO t8(id, i, r, s, b, i2, r2, s2) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    for (int row = 0; row < f->count; row++) {
        sqlite3_bind_int64(statement, 1, row);
        sqlite3_bind_int64(statement, 2, f->integers[row]);
        sqlite3_bind_double(statement, 3, f->reals[row]);
        sqlite3_bind_text(statement, 4, f->texts[row], f->text_lengths[row], SQLITE_TRANSIENT);
        sqlite3_bind_blob(statement, 5, f->blobs[row], f->blob_lengths[row], SQLITE_TRANSIENT);
        sqlite3_bind_int64(statement, 6, f->integers[row] * 2);
        sqlite3_bind_double(statement, 7, f->reals[row] * 2);
        sqlite3_bind_text(statement, 8, f->texts[row], f->text_lengths[row], SQLITE_TRANSIENT);
        if (sqlite3_step(statement) != SQLITE_DONE) die(db, "insert8");
        sqlite3_reset(statement);
    }
    sqlite3_finalize(statement);
    cb_exec(db, "COMMIT");
    STOP(count);
}

/* ---- Reads ---- */

int64_t cb_scan(sqlite3 *db, int count) {
    START(count);
    uint64_t sum = 0;
    sqlite3_stmt *statement = prepare(db, "SELECT id, i, r, s, b FROM t");
    while (sqlite3_step(statement) == SQLITE_ROW) {
        int length;
        add_integer(&sum, sqlite3_column_int64(statement, 0));
        add_integer(&sum, sqlite3_column_int64(statement, 1));
        add_real(&sum, sqlite3_column_double(statement, 2));
        char *text = copy_text(statement, 3, &length);
        add_bytes(&sum, (const uint8_t *)text, text ? length : 0);
        free(text);
        uint8_t *blob = copy_blob(statement, 4, &length);
        add_bytes(&sum, blob, blob ? length : 0);
        free(blob);
    }
    sqlite3_finalize(statement);
    STOP(count);
    return (int64_t)sum;
}

int64_t cb_lookups(sqlite3 *db, const int64_t *ids, int n, int batch, int count) {
    START(count);
    uint64_t sum = 0;
    if (batch <= 0) batch = n;
    sqlite3_stmt *statement = prepare(db, "SELECT s FROM t WHERE id = ?");
    for (int start = 0; start < n; start += batch) {
        cb_exec(db, "BEGIN");
        int end = start + batch < n ? start + batch : n;
        for (int k = start; k < end; k++) {
            sqlite3_bind_int64(statement, 1, ids[k]);
            if (sqlite3_step(statement) == SQLITE_ROW) {
                int length;
                char *text = copy_text(statement, 0, &length);
                add_bytes(&sum, (const uint8_t *)text, text ? length : 0);
                free(text);
            }
            sqlite3_reset(statement);
        }
        cb_exec(db, "COMMIT");
    }
    sqlite3_finalize(statement);
    STOP(count);
    return (int64_t)sum;
}

/* ---- Records ---- */

void cb_players_insert(sqlite3 *db, const cb_fixture *f, int count) {
    /* The player structs exist before the measured part, as the Swift side's records do. */
    cb_player *players = checked_malloc(sizeof(cb_player) * (size_t)f->count);
    for (int i = 0; i < f->count; i++) {
        players[i] = (cb_player){
            .id = i + 1, .name = f->texts[i], .name_length = f->text_lengths[i], .email = f->emails[i],
            .email_length = f->email_lengths[i], .score = f->integers[i], .rating = f->reals[i],
            .avatar = f->blobs[i], .avatar_length = f->blob_lengths[i]};
    }
    START(count);
    cb_exec(db, "BEGIN");
    sqlite3_stmt *statement =
        prepare(db, "INSERT INTO player(id, name, email, score, rating, avatar) VALUES (?, ?, ?, ?, ?, ?)");
    int64_t last = 0;
    for (int i = 0; i < f->count; i++) {
        const cb_player *p = &players[i];
        sqlite3_bind_int64(statement, 1, p->id);
        sqlite3_bind_text(statement, 2, p->name, p->name_length, SQLITE_TRANSIENT);
        if (p->email)
            sqlite3_bind_text(statement, 3, p->email, p->email_length, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(statement, 3);
        sqlite3_bind_int64(statement, 4, p->score);
        sqlite3_bind_double(statement, 5, p->rating);
        sqlite3_bind_blob(statement, 6, p->avatar, p->avatar_length, SQLITE_TRANSIENT);
        if (sqlite3_step(statement) != SQLITE_DONE) die(db, "player insert");
        sqlite3_reset(statement);
        last += sqlite3_last_insert_rowid(db); /* what `insert` returns */
    }
    sqlite3_finalize(statement);
    cb_exec(db, "COMMIT");
    STOP(count);
    if (last == -1) abort(); /* keeps `last` */
    free(players);
}

/* The six player columns from `first` on. */
static void read_player(sqlite3_stmt *statement, int first, cb_player *p) {
    p->id = sqlite3_column_int64(statement, first);
    p->name = copy_text(statement, first + 1, &p->name_length);
    p->email = copy_text(statement, first + 2, &p->email_length);
    p->score = sqlite3_column_int64(statement, first + 3);
    p->rating = sqlite3_column_double(statement, first + 4);
    p->avatar = copy_blob(statement, first + 5, &p->avatar_length);
}

/* Adds a player to the checksum and frees what it holds. */
static void sum_and_free_player(uint64_t *sum, cb_player *p) {
    add_integer(sum, p->id);
    add_bytes(sum, (const uint8_t *)p->name, p->name ? p->name_length : 0);
    add_bytes(sum, (const uint8_t *)p->email, p->email ? p->email_length : 0);
    add_integer(sum, p->score);
    add_real(sum, p->rating);
    add_bytes(sum, p->avatar, p->avatar ? p->avatar_length : 0);
    free(p->name);
    free(p->email);
    free(p->avatar);
}

/* Every row of `sql` as `per_row` players (their columns side by side) in a growing array,
   checksummed and freed. */
static int64_t fetch_players(sqlite3 *db, const char *sql, int64_t minimum_score, int per_row, int count) {
    START(count);
    sqlite3_stmt *statement = prepare(db, sql);
    if (sqlite3_bind_parameter_count(statement) > 0) sqlite3_bind_int64(statement, 1, minimum_score);
    size_t capacity = 16, n = 0;
    cb_player *players = checked_malloc(sizeof(cb_player) * capacity);
    while (sqlite3_step(statement) == SQLITE_ROW) {
        for (int side = 0; side < per_row; side++) {
            if (n == capacity) {
                capacity *= 2;
                players = realloc(players, sizeof(cb_player) * capacity);
                if (!players) abort();
            }
            read_player(statement, side * 6, &players[n++]);
        }
    }
    sqlite3_finalize(statement);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) sum_and_free_player(&sum, &players[i]);
    free(players);
    STOP(count);
    return (int64_t)sum;
}

int64_t cb_players_fetch_all(sqlite3 *db, const char *sql, int64_t minimum_score, int count) {
    return fetch_players(db, sql, minimum_score, 1, count);
}

int64_t cb_player_pairs_fetch_all(sqlite3 *db, const char *sql, int count) {
    return fetch_players(db, sql, 0, 2, count);
}
