#!/bin/bash
# Peak memory at the prompt: the sqlcipher shell, Swift alone, Swift with Foundation, a Swift tool
# with Foundation and ArgumentParser that opens and keys a SQLCipher file, and `cipherdb shell`
# (as `make install` builds it). Each waits at its prompt after one answer; the figure is the
# process's peak RSS (VmHWM), the smallest of three runs, with the mapped-file and private parts.
# Usage: run.sh [path to cipherdb], default the repository's .build-static/release/cipherdb.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cipherdb="${1:-$root/.build-static/release/cipherdb}"
(cd "$here" && swift build -c release --static-swift-stdlib >/dev/null)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$here/.build/release" "$cipherdb" "$work" <<'PY'
import os, subprocess, sys, time
products, cipherdb, work = sys.argv[1:]
key = "5a" * 32
key_file = os.path.join(work, "key")
with open(os.open(key_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as handle:
    handle.write(key)
database = os.path.join(work, "floor.db")
keying = f"PRAGMA key = \"x'{key}'\";\nPRAGMA cipher_page_size = 4096;\n"
subprocess.run(["sqlcipher", database], input=(keying + "CREATE TABLE t(x);\n").encode(), check=True)

def peak(command, first_line):
    """VmHWM, RssFile and RssAnon in MiB of `command` once it answered `first_line`."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    process.stdin.write(first_line)
    process.stdin.flush()
    process.stdout.readline()
    time.sleep(0.2)
    with open(f"/proc/{process.pid}/status") as handle:
        status = {line.split(":")[0]: int(line.split()[1]) for line in handle if line.startswith(("VmHWM", "RssFile", "RssAnon"))}
    process.stdin.close()
    process.wait()
    return status["VmHWM"] / 1024, status["RssFile"] / 1024, status["RssAnon"] / 1024

count = b"SELECT count(*) FROM sqlite_master;\n"
for name, command, first_line in [
    ("the sqlcipher shell", ["sqlcipher", database], keying.encode() + count),
    ("Swift alone", [f"{products}/SwiftOnly"], b"x\n"),
    ("Swift with Foundation", [f"{products}/SwiftFoundation", "/etc/hostname"], b"x\n"),
    ("Swift, Foundation, ArgumentParser, SQLCipher keyed", [f"{products}/SwiftTool", database, "--raw-key-file", key_file], count),
    ("cipherdb shell", [cipherdb, "shell", database, "--raw-key-file", key_file], count),
]:
    runs = [peak(command, first_line) for _ in range(3)]
    best = min(runs)
    print(f"{name:52s} peak {best[0]:5.1f} MiB   mapped from files {best[1]:5.1f}   private {best[2]:4.1f}")
PY
