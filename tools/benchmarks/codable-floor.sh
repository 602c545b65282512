#!/bin/bash
# Swift's Codable by itself (CodableFloor/main.swift): instructions a row of decoding the
# benchmark's Player through its synthesized init(from:) from a decoder that holds the values,
# against making the same records with their memberwise initializer. Needs valgrind.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rows="${1:-20000}"
swiftc -O -o "$work/floor" "$here/CodableFloor/main.swift"
count() {
    valgrind --tool=callgrind --callgrind-out-file="$work/out.$1" --toggle-collect="$2" "$work/floor" "$1" "$rows" >/dev/null 2>&1
    grep -h "^totals:" "$work/out.$1" | awk '{print $2}'
}
codable=$(count codable '*decodeAll*')
memberwise=$(count memberwise '*makeAll*')
echo "rows: $rows"
echo "Codable init(from:), instructions a row:      $((codable / rows))"
echo "memberwise init, instructions a row:          $((memberwise / rows))"
echo "Codable's own cost, instructions a row:       $(((codable - memberwise) / rows))"
