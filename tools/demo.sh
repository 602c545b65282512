#!/bin/sh
# A scripted walk through the cipherdb tool: keystore, create, query, info, rekey, export, verify,
# keys list and rotate. Usage: tools/demo.sh [path/to/cipherdb]
#
# Everything lives in $CIPHERDB_DEMO_DIR (kept afterwards) or a temporary directory (removed).
# Secrets are random, kept in files (mode 0600) and environment variables, and handed to cipherdb
# with --*-env and --*-file flags: never on a command line, where ps and /proc would show them.
set -eu

CIPHERDB=${1:-.build/debug/cipherdb}
case $CIPHERDB in /*) ;; *) CIPHERDB="$(pwd)/$CIPHERDB" ;; esac
[ -x "$CIPHERDB" ] || { echo "demo: $CIPHERDB is not built (swift build --product cipherdb)" >&2; exit 66; }

if [ -n "${CIPHERDB_DEMO_DIR:-}" ]; then
    DIR=$CIPHERDB_DEMO_DIR
    mkdir -p "$DIR"
else
    DIR=$(mktemp -d "${TMPDIR:-/tmp}/cipherdb-demo.XXXXXX")
    trap 'rm -rf "$DIR"' EXIT INT TERM
fi
cd "$DIR"
umask 077

# The keystore lives in the demo directory, not in the user's data directory.
export CIPHERDB_KEYSTORE="$DIR/keystore"
rm -f "$CIPHERDB_KEYSTORE" app.db app-dump.sql vault.db

# Random secrets: the keystore passphrase in a file, database passphrases in variables.
head -c 24 /dev/urandom | base64 > keystore-pass.txt
DB_PASS=$(head -c 18 /dev/urandom | base64)
NEW_DB_PASS=$(head -c 18 /dev/urandom | base64)
export DB_PASS NEW_DB_PASS
KS="--keystore-passphrase-file keystore-pass.txt"

# Prints a step and the command (which holds no secret), then runs it.
step() {
    printf '\n== %s\n$ cipherdb %s\n' "$1" "$2"
    # shellcheck disable=SC2086 # word splitting of the flags is wanted
    eval "\"\$CIPHERDB\" $2"
}

cat > schema.sql <<'SQL'
CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT, created REAL);
CREATE INDEX notes_title ON notes(title);
PRAGMA user_version = 1;
SQL

echo "cipherdb demo in $DIR"
step "version" "--version"

step "a database keyed with a passphrase (from \$DB_PASS)" \
    "create app.db --passphrase-env DB_PASS --schema schema.sql"
step "write rows" \
    "query app.db \"INSERT INTO notes(title, body, created) VALUES ('groceries', 'milk, eggs', julianday('now')), ('ideas', 'an encrypted notebook', julianday('now')), ('it''s quoted', NULL, 0.5)\" --passphrase-env DB_PASS"
step "read them back" \
    "query app.db \"SELECT id, title, body FROM notes ORDER BY id\" --passphrase-env DB_PASS"
step "the same as JSON, for scripts" \
    "query app.db \"SELECT id, title FROM notes\" --passphrase-env DB_PASS --json"
step "what the file is, without a key" "info app.db"
step "what the file is, with the key" "info app.db --passphrase-env DB_PASS"

step "rekey to a new passphrase (from \$NEW_DB_PASS) with 4096-byte pages" \
    "rekey app.db --passphrase-env DB_PASS --new-passphrase-env NEW_DB_PASS --page-size 4096"
step "an SQL dump the sqlite3 shell reads back" \
    "export app.db app-dump.sql --passphrase-env NEW_DB_PASS --format sql"
head -n 6 app-dump.sql
step "every page checked against its HMAC, then integrity_check" \
    "verify app.db --passphrase-env NEW_DB_PASS"

step "a keystore (passphrase from a file)" "keys init $KS"
step "a random key for the vault database" "keys add vault $KS"
step "a database keyed from the keystore: no passphrase KDF at open" \
    "create vault.db --key-id vault $KS"
step "copy the notes into it" \
    "query vault.db \"CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT); INSERT INTO notes VALUES (1, 'from the keystore', 'raw key, 4096-byte pages')\" --key-id vault $KS"
step "the keys (metadata only, never key bytes)" "keys list $KS"
step "rotate: a new key version, the database rekeyed and proved" \
    "keys rotate vault --database vault.db $KS"
step "after rotation" "keys list $KS"
step "the rotated database still opens by id" \
    "query vault.db \"SELECT title, body FROM notes\" --key-id vault $KS"
step "and verifies" "verify vault.db --key-id vault $KS"

printf '\ndemo done: every secret came from a file or an environment variable.\n'
