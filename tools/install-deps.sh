#!/usr/bin/env bash
# Installs the system packages CipherDB needs on a bare Debian machine; does nothing when all are there.
#   libsqlcipher-dev  SQLCipher headers and library (pkg-config: sqlcipher)
#   libssl-dev        OpenSSL 3 libcrypto (pkg-config: libcrypto)
#   libedit-dev       line editing and history for `cipherdb shell` (pkg-config: libedit)
#   pkg-config        how the package manager finds both
#   sqlcipher         the stock shell, for interoperability tests
#   sqlite3           the stock SQLite shell, reads back `cipherdb export --format sql`
#   valgrind          callgrind instruction counts in `make bench` (and callgrind.h for its build)
#   time              GNU time: the peak RSS of each process `make bench` measures
#   openssl           `openssl speed`: the codec's design floor in `make bench`'s rekey CPU row
#   libcurl4-openssl-dev  libcurl for the keystore's Transit slots (pkg-config: libcurl)
#   softhsm2          a software PKCS#11 token for the PKCS#11 slot tests
#   libp11-kit-dev    the PKCS#11 header (p11-kit-1/p11-kit/pkcs11.h) for the PKCS#11 slots
#   python3-venv      the virtual environments of tools/sqlcipher4-env.sh, tools/openbao-env.sh and tools/rclone-env.sh
#   restic            the backup engine under `cipherdb snapshot` (CipherSnapshots runs it; Debian 12 has 0.14)
#   man-db, mandoc    `man --warnings -l` and `mandoc -T lint`: ManPageTests checks the generated man pages
#   fish              CompletionScriptTests runs the fish completion script (bash's too; zsh's is read)
# With `docs-check` (make docs-check) also:
#   chromium          headless, for tools/docs/check-site.py
set -euo pipefail

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if command -v pkg-config >/dev/null 2>&1; then
    pkg-config --exists sqlcipher || missing+=(libsqlcipher-dev)
    pkg-config --exists libcrypto || missing+=(libssl-dev)
    pkg-config --exists libedit || missing+=(libedit-dev)
    pkg-config --exists libcurl || missing+=(libcurl4-openssl-dev)
else
    missing+=(libsqlcipher-dev libssl-dev libedit-dev libcurl4-openssl-dev)
fi
[ -f /usr/include/p11-kit-1/p11-kit/pkcs11.h ] || missing+=(libp11-kit-dev)
[ -f /usr/lib/softhsm/libsofthsm2.so ] || missing+=(softhsm2)
if ! command -v python3 >/dev/null 2>&1; then
    missing+=(python3 python3-venv)
elif ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
    missing+=(python3-venv)
fi
command -v sqlcipher >/dev/null 2>&1 || missing+=(sqlcipher)
command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
[ -f /usr/include/valgrind/callgrind.h ] || missing+=(valgrind)
[ -x /usr/bin/time ] || missing+=(time)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v restic >/dev/null 2>&1 || missing+=(restic)
command -v man >/dev/null 2>&1 || missing+=(man-db)
command -v mandoc >/dev/null 2>&1 || missing+=(mandoc)
command -v fish >/dev/null 2>&1 || missing+=(fish)
for target in "$@"; do
    case "$target" in
    docs-check) command -v chromium >/dev/null 2>&1 || missing+=(chromium) ;;
    *) echo "install-deps: unknown target $target" >&2; exit 64 ;;
    esac
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "install-deps: run as root or install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
