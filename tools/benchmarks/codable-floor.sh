#!/bin/bash
# Swift's Codable by itself (Sources/CoreBenchmark/CodableFloor.swift): instructions a row of
# decoding the benchmark's Player through its synthesized init(from:) from a decoder that holds
# the values, against making the same records with their memberwise initializer. Needs valgrind.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rows="${1:-20000}"
(cd "$here" && swift build -c release --product CoreBenchmark >/dev/null)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
count() {
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/out" \
        "$here/.build/release/CoreBenchmark" --once-side "$1" --rows "$rows" >/dev/null 2>&1
    grep -h "^totals:" "$work/out" | awk '{print $2}'
}
codable=$(count swift.players.codable)
memberwise=$(count swift.players.memberwise)
echo "rows: $rows"
echo "Codable init(from:), instructions a row:      $((codable / rows))"
echo "memberwise init, instructions a row:          $((memberwise / rows))"
echo "Codable's own cost, instructions a row:       $(((codable - memberwise) / rows))"
