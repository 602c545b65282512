#!/usr/bin/env bash
# Prints an LD_PRELOAD value that swaps the system's SQLCipher 3.4.1 for SQLCipher 4.x in a
# process, so the CipherDB test binary can run against the other major version on this machine.
#
# PyPI's sqlcipher3-binary wheel bundles SQLCipher 4 inside its Python extension, which exports
# the whole sqlite3_* API (and sqlite3_key). Preloading it (with the libpython it was built for)
# makes the dynamic linker bind every sqlite3_* call of the test binary to SQLCipher 4.
# Prints nothing and exits 1 when that cannot be set up (no python3, no network to PyPI, ...).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv="${CIPHERDB_SQLCIPHER4_VENV:-$here/../.build-sqlcipher4/venv}"

python=$(command -v python3) || exit 1
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv" >/dev/null 2>&1 || exit 1
fi
if ! "$venv/bin/python" -c "import sqlcipher3" >/dev/null 2>&1; then
    "$venv/bin/pip" install -q --disable-pip-version-check "sqlcipher3-binary==0.6.0" >/dev/null 2>&1 \
        || "$venv/bin/pip" install -q --disable-pip-version-check sqlcipher3-binary >/dev/null 2>&1 || exit 1
fi
extension=$("$venv/bin/python" -c "import sqlcipher3._sqlite3 as m; print(m.__file__)") || exit 1
libpython=$("$venv/bin/python" - <<'PY'
import os, sysconfig
name = sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY") or ""
for folder in (sysconfig.get_config_var("LIBDIR"), "/usr/lib/x86_64-linux-gnu", "/usr/lib"):
    if folder and name and os.path.exists(os.path.join(folder, name)):
        print(os.path.join(folder, name)); break
PY
)
[ -n "$libpython" ] && [ -n "$extension" ] || exit 1
echo "$libpython $extension"
