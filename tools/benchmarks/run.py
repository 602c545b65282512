#!/usr/bin/env python3
"""CipherDB's benchmarks: the wrapper against SQLCipher's C API, and the CLI's whole-file
operations against the stock sqlcipher shell, in one run on one machine.

  python3 tools/benchmarks/run.py [--quick] [--out docs/performance]

Three kinds of figures:
  * wall times of the core workloads (CoreBenchmark: interleaved runs, medians);
  * instruction counts of the same workloads under valgrind's callgrind (repeatable on a loaded
    machine; only the measured part of each side is counted);
  * wall time and peak memory of `cipherdb rekey | verify | export --format sql` against the
    sqlcipher shell's `PRAGMA rekey`, `PRAGMA integrity_check` and `.dump` on one file.

Writes results.json and ratios.png (when matplotlib can be installed into .build-bench/venv)
into the output folder. The quick mode (CI-sized: 20k rows, 5k under callgrind, a 10 MB file)
finishes in about a minute on two cores.
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.path.join(ROOT, "tools", "benchmarks")
CORE = os.path.join(BENCH, ".build", "release", "CoreBenchmark")
CLI = os.path.join(ROOT, ".build-static", "release", "cipherdb")
RAW_KEY = "5a" * 32
NEW_KEY = "a5" * 32


def log(message):
    print(message, flush=True)


def build():
    subprocess.run(["swift", "build", "-c", "release", "--product", "CoreBenchmark"], cwd=BENCH, check=True)
    # As `make install` builds it.
    subprocess.run(["swift", "build", "-c", "release", "--product", "cipherdb", "--static-swift-stdlib", "--scratch-path", ".build-static"],
                   cwd=ROOT, check=True)


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as info:
            model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "")
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "system": platform.platform(), "date": time.strftime("%Y-%m-%d")}


def wall_times(quick):
    with tempfile.NamedTemporaryFile(suffix=".json") as output:
        command = [CORE, "--json", output.name] + (["--quick"] if quick else [])
        subprocess.run(command, check=True)
        with open(output.name) as handle:
            return json.load(handle)


def instructions(name, side, rows):
    """Instructions of one side's measured part (callgrind, collection on only inside it)."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
             CORE, "--once", name, "--side", side, "--rows", str(rows)],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as handle:
            # "totals" counts what was collected; the "summary" header stays 0 when collection
            # starts late.
            for line in handle:
                match = re.match(r"totals: (\d+)", line)
                if match:
                    return int(match.group(1))
    raise RuntimeError(f"no instruction count for {name} / {side}")


def run_measured(command, stdin_text=None, env=None):
    """Runs a command; returns (seconds, peak RSS in MiB) of that child alone."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    if stdin_text is not None:
        process.stdin.write(stdin_text.encode())
    process.stdin.close()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    stderr = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{command[0]} failed: {stderr.strip()}")
    return elapsed, usage.ru_maxrss / 1024


def shell_key_lines(key):
    return f"PRAGMA key = \"x'{key}'\";\nPRAGMA cipher_page_size = 4096;\n"


def make_file(path, megabytes):
    """A raw-key, 4 KiB-page file of about `megabytes` MB, written by the stock shell."""
    rows = megabytes * 1024 * 1024 // 600
    script = shell_key_lines(RAW_KEY) + (
        "CREATE TABLE t(id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, b BLOB);\n"
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < %d)\n"
        "INSERT INTO t SELECT x, x * 7, x / 3.0, hex(randomblob(100)), randomblob(350) FROM n;\n"
        "CREATE INDEX t_i ON t(i);\n" % rows)
    subprocess.run(["sqlcipher", path], input=script.encode(), check=True, stdout=subprocess.DEVNULL)


def cli_operations(quick, folder):
    megabytes = 10 if quick else 100
    runs = 3
    source = os.path.join(folder, "source.db")
    make_file(source, megabytes)
    size = os.path.getsize(source)
    key_file = os.path.join(folder, "key")
    new_key_file = os.path.join(folder, "new-key")
    for path, key in ((key_file, RAW_KEY), (new_key_file, NEW_KEY)):
        with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as handle:
            handle.write(key)
    work = os.path.join(folder, "work.db")

    def fresh():
        for suffix in ("", "-journal", "-wal", "-shm"):
            if os.path.exists(work + suffix):
                os.unlink(work + suffix)
        shutil.copyfile(source, work)

    cases = [
        ("rekey (raw key to raw key)", "shell PRAGMA rekey", 0.15,
         lambda: [CLI, "rekey", work, "--raw-key-file", key_file, "--new-raw-key-file", new_key_file], None,
         lambda: (["sqlcipher", work], shell_key_lines(RAW_KEY) + f"PRAGMA rekey = \"x'{NEW_KEY}'\";\n")),
        ("verify", "shell PRAGMA integrity_check", 1.0,
         lambda: [CLI, "verify", work, "--raw-key-file", key_file], None,
         lambda: (["sqlcipher", work], shell_key_lines(RAW_KEY) + "PRAGMA integrity_check;\n")),
        ("export --format sql", "shell .dump", 1.2,
         lambda: [CLI, "export", work, os.path.join(folder, "dump.sql"), "--raw-key-file", key_file, "--format", "sql", "--force"],
         None,
         lambda: (["sqlcipher", work], shell_key_lines(RAW_KEY) + ".output " + os.path.join(folder, "shell.sql") + "\n.dump\n")),
    ]
    results = []
    for name, baseline_name, goal, subject, subject_stdin, baseline in cases:
        subject_samples, baseline_samples = [], []
        for _ in range(runs):
            fresh()
            command, script = baseline()
            baseline_samples.append(run_measured(command, script))
            fresh()
            subject_samples.append(run_measured(subject(), subject_stdin))
        baseline_seconds = statistics.median(s for s, _ in baseline_samples)
        subject_seconds = statistics.median(s for s, _ in subject_samples)
        results.append({
            "name": name, "baseline": baseline_name, "goal": goal, "file_bytes": size,
            "baseline_seconds": baseline_seconds, "subject_seconds": subject_seconds,
            "wall_ratio": subject_seconds / baseline_seconds,
            "subject_megabytes_per_second": size / subject_seconds / 1e6,
            "subject_peak_rss_mib": max(r for _, r in subject_samples),
            "baseline_peak_rss_mib": max(r for _, r in baseline_samples),
        })
        row = results[-1]
        log(f"{name:32} {baseline_seconds * 1000:9.1f} ms {subject_seconds * 1000:9.1f} ms  {row['wall_ratio']:6.2f}  "
            f"{goal:5.2f}  {row['subject_megabytes_per_second']:7.1f} MB/s  peak {row['subject_peak_rss_mib']:.0f} MiB")
    return results


def chart(report, path):
    venv = os.path.join(ROOT, ".build-bench", "venv")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    if subprocess.run([python, "-c", "import matplotlib"], capture_output=True).returncode != 0:
        if subprocess.run([python, "-m", "pip", "install", "-q", "matplotlib"], capture_output=True).returncode != 0:
            log("matplotlib could not be installed: no chart")
            return
    code = r'''
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
report = json.load(open(sys.argv[1]))
rows = [(w["name"], w.get("instruction_ratio"), w["wall_ratio"], w["goal"]) for w in report["core"]]
rows += [("cipherdb " + w["name"], None, w["wall_ratio"], w["goal"]) for w in report["cli"]]
fig, ax = plt.subplots(figsize=(10, 0.55 * len(rows) + 1.5))
ys = range(len(rows))
ax.barh([y + 0.2 for y in ys], [r[1] or 0 for r in rows], height=0.4, label="instructions", color="#4c72b0")
ax.barh([y - 0.2 for y in ys], [r[2] for r in rows], height=0.4, label="wall time", color="#dd8452")
for y, r in zip(ys, rows):
    ax.plot([r[3], r[3]], [y - 0.45, y + 0.45], color="black", linewidth=2)
ax.set_yticks(list(ys))
ax.set_yticklabels([r[0] for r in rows])
ax.invert_yaxis()
ax.axvline(1.0, color="grey", linestyle=":")
ax.set_xlabel("cost relative to the baseline (C API, plaintext, or the sqlcipher shell); black: goal")
ax.set_title("CipherDB on SQLCipher %s, %s rows (%s)" % (report["sqlcipher"], report["rows"], report["machine"]["date"]))
ax.legend(loc="lower right")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
'''
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(report, handle)
    subprocess.run([python, "-c", code, handle.name, path], check=True)
    os.unlink(handle.name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="CI-sized run (about a minute)")
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--no-instructions", action="store_true", help="skip callgrind")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "performance"))
    options = parser.parse_args()
    if not options.skip_build:
        build()

    core = wall_times(options.quick)
    if not options.no_instructions and shutil.which("valgrind"):
        rows = 5_000 if options.quick else 20_000
        log(f"\ninstructions (callgrind, {rows} rows): baseline, CipherDB, ratio")
        for workload in core["workloads"]:
            baseline = instructions(workload["name"], "baseline", rows)
            subject = instructions(workload["name"], "subject", rows)
            workload.update(baseline_instructions=baseline, subject_instructions=subject,
                            instruction_ratio=subject / baseline, instruction_rows=rows)
            log(f"{workload['name']:44} {baseline:>13,} {subject:>13,}  {subject / baseline:6.2f}")

    log("\nwhole-file operations against the sqlcipher shell: shell, cipherdb, ratio, goal")
    with tempfile.TemporaryDirectory(prefix="cipherdb-bench-") as folder:
        cli = cli_operations(options.quick, folder)

    report = {"sqlcipher": core["sqlcipher"], "rows": core["rows"], "runs": core["runs"], "quick": options.quick,
              "machine": machine(), "core": core["workloads"], "cli": cli}
    os.makedirs(options.out, exist_ok=True)
    name = "results-quick" if options.quick else "results"
    with open(os.path.join(options.out, name + ".json"), "w") as handle:
        json.dump(report, handle, indent=2, sort_keys=True)
        handle.write("\n")
    chart(report, os.path.join(options.out, ("ratios-quick" if options.quick else "ratios") + ".png"))
    log(f"\nwrote {options.out}/{name}.json")


if __name__ == "__main__":
    main()
