#!/usr/bin/env bash
# Off-site snapshot figures (issue 21): bytes restic ships per snapshot after a 1-row change, after
# 1 % of the rows changed and after a rekey; `cipherdb snapshot create` and `snapshot restore`
# against plain `restic backup --stdin` / `restic dump` of the same file; the drill's time.
# Usage: tools/benchmarks/snapshots.sh [MB ...]   (default: 20 200; CIPHERDB=path to the binary)
# A local restic repository with restic's own key derivation; medians of 3 for the times.
set -euo pipefail
CIPHERDB=${CIPHERDB:-.build/release/cipherdb}
[ -x "$CIPHERDB" ] || CIPHERDB=.build/debug/cipherdb
case $CIPHERDB in /*) ;; *) CIPHERDB="$(pwd)/$CIPHERDB" ;; esac
command -v restic >/dev/null || { echo "snapshots.sh: restic is not installed (tools/install-deps.sh)" >&2; exit 69; }
DIR=$(mktemp -d "${TMPDIR:-/tmp}/cipherdb-snapbench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
cd "$DIR"
umask 077
export DB_PASS="snapshot benchmark passphrase 4471" DB_PASS2="snapshot benchmark passphrase two 8812" REPO_PASS="snapshot benchmark repository 9203" XDG_CACHE_HOME="$DIR/cache"
export RESTIC_PASSWORD_FILE="$DIR/restic-pass"
printf '%s' "$REPO_PASS" > "$RESTIC_PASSWORD_FILE"
KEY=(--passphrase-env DB_PASS)
now() { date +%s.%N; }
median() { sort -n | sed -n 2p; }
# Seconds of "$@" (stdout discarded), median of three runs.
calc() { python3 -c "print(round($1, 3))"; }
timed() { for _ in 1 2 3; do local s; s=$(now); "$@" > /dev/null; calc "$(now) - $s"; done | median; }
added() { python3 -c 'import json,sys; print(json.load(sys.stdin)["bytes_added"])'; }

echo "| database | change | shipped (bytes) | of the file |"
echo "|---|---|---|---|"
TIMES=()
for MB in "${@:-20 200}"; do
    for MBV in $MB; do
        rows=$((MBV * 1024 * 1024 / 4200))
        db="db-$MBV.db"; repo="$DIR/repo-$MBV"; KEY=(--passphrase-env DB_PASS)
        "$CIPHERDB" create "$db" "${KEY[@]}" --page-size 4096 >/dev/null 2>&1
        "$CIPHERDB" query "$db" "CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $rows) INSERT INTO t(b) SELECT randomblob(4000) FROM n" "${KEY[@]}" >/dev/null
        size=$(stat -c %s "$db")
        R=(--repo "$repo" --repo-password-env REPO_PASS)
        "$CIPHERDB" snapshot init "${R[@]}" >/dev/null 2>&1
        first=$("$CIPHERDB" snapshot create "$db" "${KEY[@]}" "${R[@]}" --json 2>/dev/null | added)
        echo "| $MBV MB | first snapshot | $first | $(calc "100 * $first / $size") % |"
        "$CIPHERDB" query "$db" "UPDATE t SET b = randomblob(4000) WHERE id = $((rows / 2))" "${KEY[@]}" >/dev/null
        one=$("$CIPHERDB" snapshot create "$db" "${KEY[@]}" "${R[@]}" --json 2>/dev/null | added)
        echo "| $MBV MB | 1 row updated | $one | $(calc "100 * $one / $size") % |"
        "$CIPHERDB" query "$db" "UPDATE t SET b = randomblob(4000) WHERE id % 100 = 7" "${KEY[@]}" >/dev/null
        pct=$("$CIPHERDB" snapshot create "$db" "${KEY[@]}" "${R[@]}" --json 2>/dev/null | added)
        echo "| $MBV MB | 1 % of rows updated | $pct | $(calc "100 * $pct / $size") % |"
        "$CIPHERDB" rekey "$db" "${KEY[@]}" --new-passphrase-env DB_PASS2 >/dev/null 2>&1
        KEY=(--passphrase-env DB_PASS2)
        rekeyed=$("$CIPHERDB" snapshot create "$db" "${KEY[@]}" "${R[@]}" --json 2>/dev/null | added)
        echo "| $MBV MB | after a rekey | $rekeyed | $(calc "100 * $rekeyed / $size") % |"
        # Times: an unchanged snapshot against restic backing up the same bytes from stdin.
        c=$(timed "$CIPHERDB" snapshot create "$db" "${KEY[@]}" "${R[@]}")
        r=$(timed sh -c "restic -r '$repo' backup --stdin --stdin-filename '$db' < '$db'")
        id=$("$CIPHERDB" snapshot list "${R[@]}" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["snapshots"][-1]["short_id"])')
        cr=$(timed sh -c "rm -f '$DIR/restored.db'; '$CIPHERDB' snapshot restore $id --to '$DIR/restored.db' --repo '$repo' --repo-password-env REPO_PASS")
        rr=$(timed sh -c "restic -r '$repo' dump $id '/$db' > '$DIR/dumped.db'")
        # restore flushes the file before it gets its name; restic's dump into a shell redirection does not.
        rs=$(timed sh -c "restic -r '$repo' dump $id '/$db' > '$DIR/dumped.db' && sync '$DIR/dumped.db'")
        dr=$(timed "$CIPHERDB" snapshot drill "$id" "${KEY[@]}" "${R[@]}")
        TIMES+=("| $MBV MB | $c | $r | $(calc "$c / $r") | $cr | $rr | $(calc "$cr / $rr") | $rs | $(calc "$cr / $rs") | $dr |")
    done
done
echo
echo "| database | snapshot create (s) | restic backup --stdin (s) | ratio | snapshot restore (s) | restic dump (s) | ratio | restic dump, then sync FILE (s) | ratio | drill (s) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${TIMES[@]}"
echo
echo "binary: $CIPHERDB; restic $(restic version | cut -d' ' -f2); medians of 3"
