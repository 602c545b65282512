#!/usr/bin/env bash
# Builds the libFuzzer targets (AddressSanitizer + libFuzzer) and runs each for FUZZ_SECONDS
# (default 120). `make fuzz` runs this. Usage: tools/fuzz/run.sh [target ...]
#
# Seeds are read from corpus/<target>/ (committed, never written); what the fuzzer finds goes to
# .build-fuzz/corpus/<target>/, logs to .build-fuzz/logs/. A crash, trap, leak or timeout is written
# to tools/fuzz/crashes/<target>-<kind>-<sha1>; the script then goes on with the next target and
# exits 1 at the end. Reproduce one with: .build-fuzz/release/<target> tools/fuzz/crashes/<file>
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
scratch="$root/.build-fuzz"
swift="${SWIFT:-swift}"
seconds="${FUZZ_SECONDS:-120}"
all_targets=(FuzzKeystoreFile FuzzKeyExportBundle FuzzSecretSource)
targets=("${@:-${all_targets[@]}}")

# The largest input tried: past every limit the parsers enforce (secrets 4096, bundles 4096 bytes).
max_len() {
    case "$1" in
        FuzzSecretSource) echo 10000 ;;
        *) echo 8192 ;;
    esac
}

# SecretBytes once freed its buffers still marked MADV_DONTDUMP; under ASan's default 256 MB
# quarantine every secret then split a new memory mapping until vm.max_map_count (65530) ran out.
# It now undoes the mark before freeing; a small quarantine stays as a guard and still catches
# use-after-free.
export ASAN_OPTIONS="quarantine_size_mb=16${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

cd "$here"
for target in "${targets[@]}"; do
    echo "== building $target"
    "$swift" build -c release --scratch-path "$scratch" \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --product "$target"
done

mkdir -p "$here/crashes" "$scratch/logs"
failed=()
for target in "${targets[@]}"; do
    work="$scratch/corpus/$target"
    log="$scratch/logs/$target.log"
    mkdir -p "$work"
    echo "== $target for ${seconds}s (log: ${log#"$root"/})"
    status=0
    "$scratch/release/$target" "$work" "$here/corpus/$target" \
        -max_total_time="$seconds" -max_len="$(max_len "$target")" -timeout=30 \
        -artifact_prefix="$here/crashes/$target-" -print_final_stats=1 >"$log" 2>&1 || status=$?
    grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)' "$log" || true
    if [ "$status" -ne 0 ]; then
        echo "!! $target exited with status $status:" >&2
        grep -E '^==[0-9]+==ERROR|^SUMMARY|Test unit written to' "$log" >&2 || tail -n 20 "$log" >&2
        failed+=("$target")
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzzing found problems in: ${failed[*]} (inputs in tools/fuzz/crashes/)" >&2
    exit 1
fi
echo "no crash in ${targets[*]}"
