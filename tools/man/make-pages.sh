#!/bin/sh
# The man pages of cipherdb, one per command, named as man-db looks them up (cipherdb-keys-rotate.1):
# swift-argument-parser's generate-manual (the tool behind its generate-manual plugin, run on an
# already built cipherdb: the plugin would build the whole package again in release mode, 8 minutes
# on 2 cores) writes them, tools/man/fix-pages.py fixes their names, mdoc and EXIT STATUS.
#
#   tools/man/make-pages.sh CIPHERDB GENERATE_MANUAL DIR
#
# DIR is emptied of pages first. The pages' date is the last commit's (the same pages for the same
# source), else today's. Used by `make man` / `make install` and by ManPageTests.
set -eu

if [ $# -ne 3 ]; then
    echo "usage: $0 CIPHERDB GENERATE_MANUAL DIR" >&2
    exit 64
fi
binary=$1
generator=$2
directory=$3
here=$(cd "$(dirname "$0")" && pwd)

for tool in "$binary" "$generator"; do
    if [ ! -x "$tool" ]; then
        echo "make-pages: $tool is not built" >&2
        exit 66
    fi
done

date=$(git -C "$here" log -1 --format=%cs 2>/dev/null || true)
[ -n "$date" ] || date=$(date +%Y-%m-%d)

mkdir -p "$directory"
rm -f "$directory"/*.1
"$generator" "$binary" --multi-page --date "$date" -o "$directory"
python3 "$here/fix-pages.py" "$directory"
