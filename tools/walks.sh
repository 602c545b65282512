#!/usr/bin/env bash
# The two walks of issue 20, measured: how often `query --passphrase-env` and
# `keys rotate --database` open the database file (SQLite connections: read-write opens; raw reads of
# the header or pages: read-only opens), under strace. Usage: tools/walks.sh [path/to/cipherdb]
set -euo pipefail
binary="$(cd "$(dirname "${1:-.build/debug/cipherdb}")" && pwd)/$(basename "${1:-.build/debug/cipherdb}")"
command -v strace >/dev/null || { echo "walks.sh needs strace (apt-get install strace)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
export WALK_PASS='correct horse battery staple 42' WALK_KEYSTORE_PASS='keystore pass phrase 77 x'
keystore=(--keystore "$work/ks" --keystore-passphrase-env WALK_KEYSTORE_PASS)
"$binary" create a.db --passphrase-env WALK_PASS >/dev/null 2>&1
"$binary" query a.db --passphrase-env WALK_PASS "create table t(x); insert into t values (1)" >/dev/null 2>&1
"$binary" keys init "${keystore[@]}" >/dev/null 2>&1
"$binary" keys add app "${keystore[@]}" >/dev/null 2>&1
"$binary" create b.db --key-id app "${keystore[@]}" >/dev/null 2>&1

walk() {
    local file="$1"; shift
    strace -f -e trace=openat -o trace "$binary" "$@" >/dev/null 2>&1
    local opens
    opens="$(grep -E "\"($work/)?$file\"" trace | grep -v ENOENT || true)"
    printf '%-34s connections %d, raw reads %d\n' "$(echo "$@" | cut -d' ' -f1-2)" \
        "$(grep -c 'O_RDWR' <<<"$opens" || true)" "$(grep -vc 'O_RDWR' <<<"$opens" || true)"
}
walk a.db query a.db --passphrase-env WALK_PASS "select count(*) from t"
walk b.db keys rotate app --database b.db "${keystore[@]}"
