#!/usr/bin/env python3
"""CipherDB's benchmarks: the wrapper against a C baseline written in C, and the CLI's whole-file
operations and .import against the stock sqlcipher shell, in one run on one machine.

  python3 tools/benchmarks/run.py [--quick | --large] [--out docs/performance]

The figures:
  * wall times of the core workloads (CoreBenchmark: interleaved runs; median ratio and the
    min-max of the per-run ratios);
  * instruction counts of each side of each workload under valgrind's callgrind (deterministic;
    only the measured part is counted; every thread, and for observation the writer's thread
    alone as well);
  * ValueObservation's notification latency (median, p95);
  * `.import` of 1M CSV rows (100k in the quick mode) by `cipherdb shell` and the sqlcipher shell;
  * `cipherdb rekey | verify | export --format sql` against the shell's `PRAGMA rekey`,
    `PRAGMA integrity_check` and `.dump` at 10 MB and 100 MB (and 1 GB with --large; 10 MB
    only with --quick); rekey both with the second core idle and with it busy (a spinning
    process); wall time, CPU time and peak RSS of each process.

Writes results.json and ratios.png (results-quick.json, ratios-quick.png in the quick mode;
results-large.json, ratios-large.png with --large) into the output folder, with the goals of
issues 23 and 24. The quick mode (CI-sized: 10k rows, 2k and 50 commits under callgrind, a 10 MB file, 100k
rows to import) takes about one and a half minutes on two cores once built.
"""
import argparse
import concurrent.futures
import glob
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
# GNU time (Debian's `time`): the peak RSS of the measured process alone (see run_measured).
TIME = "/usr/bin/time"

# The goals of issue 23 (Goals) and issue 24 (Speed), as results.json states them; each row of
# the tables below carries its own `goal` too. Rows are found by name in results.json's `core`
# and `cli`, but "rekey CPU / codec design floor" in `rekey_cpu` (a CPU ratio, not a wall one).
GOALS = [
    {"issue": 23, "workload": "Codable insert / C, instructions", "goal": "<= 1.5", "rows": ["Codable insert, one transaction"]},
    {"issue": 23, "workload": "Codable fetchAll / C", "goal": "<= 1.5", "rows": ["Codable fetchAll (SQL)"]},
    {"issue": 23, "workload": "scan by index / C copying", "goal": "<= 1.15", "rows": ["scan, columns by index"]},
    {"issue": 23, "workload": "lookups with cached pages / C copying", "goal": "<= 1.15",
     "rows": ["lookups, cached pages, executeQuery", "lookups, cached pages, stringForQuery", "lookups, cached pages, PreparedStatement"]},
    {"issue": 23, "workload": "insert of 8 values / C", "goal": "<= 1.10", "rows": ["insert of 8 values, executeUpdate"]},
    {"issue": 23, "workload": "one-row write transaction with 1 / 10 observers, against none", "goal": "<= 1.15 / <= 2.0",
     "rows": ["write txs, DatabaseQueue, 1 observer", "write txs, DatabaseQueue, 10 observers",
              "write txs, DatabasePool, 1 observer", "write txs, DatabasePool, 10 observers"]},
    {"issue": 23, "workload": ".import 1M rows: time / sqlcipher shell, peak memory", "goal": "<= 1.0, <= 2x the shell's",
     "rows": [".import CSV"]},
    {"issue": 23, "workload": "verify 1 GB: peak memory", "goal": "<= 64 MiB, time <= 1.0 of integrity_check",
     "rows": ["verify", "verify, an index in random order"]},
    {"issue": 23, "workload": "rekey / shell PRAGMA rekey, 10 MB / 100 MB / 1 GB, idle and busy",
     "goal": "report both; <= 0.30 idle at every size, CPU <= 1.1x the codec's design floor",
     "rows": ["rekey, second core idle", "rekey, second core busy", "rekey CPU / codec design floor"]},
    {"issue": 24, "workload": "100k point lookups through a builder query, typed values", "goal": "<= 1.10 of executeQuery with SQL, <= 1.15 of C",
     "rows": ["builder lookups / executeQuery with SQL", "builder lookups (scalar), cached pages"]},
    {"issue": 24, "workload": "Player.filter(...).fetchAll(db) of 100k rows", "goal": "<= 1.5 of C building the same structs",
     "rows": ["Player.filter(...).fetchAll, all rows"]},
    {"issue": 24, "workload": "100k inserts through table.insert(...) in one transaction", "goal": "<= 1.15 of C",
     "rows": ["table.insert(...) + run, one transaction"]},
]


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


def core_json(arguments):
    with tempfile.NamedTemporaryFile(suffix=".json") as output:
        subprocess.run([CORE, "--json", output.name] + arguments, check=True)
        with open(output.name) as handle:
            return json.load(handle)


def instructions(side, rows, commits, files):
    """Instructions of one side's measured part (callgrind, collection on only inside it):
    (every thread, the main thread). The main thread is the one that runs the workload (for
    observation: the writer; its fetches run on other threads)."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes", f"--callgrind-out-file={out}",
             CORE, "--once-side", side, "--rows", str(rows), "--commits", str(commits), "--files", files],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        per_thread = {}
        for path in glob.glob(out + "-*"):
            with open(path) as handle:
                # "totals" counts what was collected; the "summary" header stays 0 when
                # collection starts late.
                for line in handle:
                    match = re.match(r"totals: (\d+)", line)
                    if match:
                        per_thread[int(path.rsplit("-", 1)[1])] = int(match.group(1))
                        break
        if 1 not in per_thread:
            raise RuntimeError(f"no instruction count for {side}")
        return sum(per_thread.values()), per_thread[1]


def core_instructions(workloads, rows, commits):
    """Counts every side once (sides shared by several rows are counted once), two at a time."""
    sides = sorted({w["baseline_side"] for w in workloads} | {w["subject_side"] for w in workloads})
    with tempfile.TemporaryDirectory(prefix="cipherdb-bench-files-") as files:
        subprocess.run([CORE, "--make-files", "--files", files, "--rows", str(rows)], check=True)
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            counts = dict(zip(sides, pool.map(lambda side: instructions(side, rows, commits, files), sides)))
    for w in workloads:
        (base_all, base_main), (subject_all, subject_main) = counts[w["baseline_side"]], counts[w["subject_side"]]
        observation = w["group"] == "observation"
        # The headline: every thread's instructions; for observation the writer's thread's (the
        # observers' fetches, on other threads, are reported beside it).
        base, subject = (base_main, subject_main) if observation else (base_all, subject_all)
        w.update(baseline_instructions=base, subject_instructions=subject, instruction_ratio=subject / base,
                 instruction_rows=rows, instructions_counted="writer thread" if observation else "all threads")
        if observation:
            w.update(instruction_commits=commits, baseline_instructions_all_threads=base_all,
                     subject_instructions_all_threads=subject_all, instruction_ratio_all_threads=subject_all / base_all)


def run_measured(command, stdin_text=None, env=None, sample_memory=False):
    """Runs a command; returns (seconds, peak RSS in MiB, CPU seconds, peak private MiB, user CPU
    seconds) of that child alone (private memory 0 unless `sample_memory`).

    The command runs under GNU time, which reports its child's peak RSS. A process Python forks
    keeps the interpreter's high-water mark in its `ru_maxrss` after exec (Linux records the
    old memory's peak at exec), so `os.wait4` on it reported at least Python's own RSS, about
    17 MiB: the stock shell's 9 MiB read as 17. The peak of private (anonymous) memory is sampled
    from /proc every 5 ms: shared library code, which dominates a Swift binary's RSS, is not in it.
    That sampling wakes this process 200 times a second, which on two cores takes time from a
    command running two threads (the rekey's codec) and not from a one-thread shell: the timed
    runs leave it out (`sample_memory` False) and wait for the command instead.
    """
    with tempfile.NamedTemporaryFile(mode="r", suffix=".time") as report:
        start = time.perf_counter()
        process = subprocess.Popen([TIME, "-f", "%M", "-o", report.name, *command], stdin=subprocess.PIPE,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        if stdin_text is not None:
            process.stdin.write(stdin_text.encode())
        process.stdin.close()
        private_kib = 0
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG if sample_memory else 0)
            if pid != 0:
                break
            private_kib = max(private_kib, private_memory_kib(process.pid))
            time.sleep(0.005)
        elapsed = time.perf_counter() - start
        stderr = process.stderr.read().decode(errors="replace")
        process.stderr.close()
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"{command[0]} failed: {stderr.strip()}")
        peak_kib = int(report.read().split()[-1])
    return elapsed, peak_kib / 1024, usage.ru_utime + usage.ru_stime, private_kib / 1024, usage.ru_utime


def private_memory_kib(time_pid):
    """RssAnon of GNU time's child (the measured command), 0 before it starts or after it ends."""
    try:
        with open(f"/proc/{time_pid}/task/{time_pid}/children") as handle:
            children = handle.read().split()
        if not children:
            return 0
        with open(f"/proc/{children[0]}/status") as handle:
            for line in handle:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, ValueError):
        pass
    return 0


def shell_key_lines(key):
    return f"PRAGMA key = \"x'{key}'\";\nPRAGMA cipher_page_size = 4096;\n"


def shell_query(path, sql):
    result = subprocess.run(["sqlcipher", path], input=(shell_key_lines(RAW_KEY) + sql + "\n").encode(), check=True,
                            capture_output=True)
    return result.stdout.decode().strip().splitlines()[-1]


def make_file(path, megabytes, random_index=False):
    """A raw-key, 4 KiB-page file of about `megabytes` MB, written by the stock shell. Its index is
    in the table's order (`i` grows with the rowid); with `random_index`, a second index on the
    random text `s`, whose entries point at the table in random order."""
    rows = megabytes * 1024 * 1024 // 600
    script = shell_key_lines(RAW_KEY) + (
        "CREATE TABLE t(id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, b BLOB);\n"
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < %d)\n"
        "INSERT INTO t SELECT x, x * 7, x / 3.0, hex(randomblob(100)), randomblob(350) FROM n;\n"
        "CREATE INDEX t_i ON t(i);\n" % rows)
    if random_index:
        script += "CREATE INDEX t_s ON t(s);\n"
    subprocess.run(["sqlcipher", path], input=script.encode(), check=True, stdout=subprocess.DEVNULL)


def write_keys(folder):
    key_file = os.path.join(folder, "key")
    new_key_file = os.path.join(folder, "new-key")
    for path, key in ((key_file, RAW_KEY), (new_key_file, NEW_KEY)):
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as handle:
            handle.write(key)
    return key_file, new_key_file


class Spinner:
    """A process spinning on one core (the second core busy) while the block runs."""

    def __enter__(self):
        self.process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(0.2)
        return self

    def __exit__(self, *exc):
        self.process.kill()
        self.process.wait()


def compare(name, baseline_name, goal, runs, fresh, baseline, subject, extra=None):
    """`runs` interleaved runs of both commands (each on a fresh copy); medians, per-run ratio
    spread, peak RSS, peak private memory and CPU of each."""
    subject_samples, baseline_samples = [], []
    for _ in range(runs):
        fresh()
        command, script = baseline()
        baseline_samples.append(run_measured(command, script))
        fresh()
        command, script = subject()
        subject_samples.append(run_measured(command, script))
    # Private memory from one more run of each, sampled (see run_measured), times not kept.
    fresh()
    command, script = baseline()
    baseline_private = run_measured(command, script, sample_memory=True)[3]
    fresh()
    command, script = subject()
    subject_private = run_measured(command, script, sample_memory=True)[3]
    baseline_seconds = statistics.median(s[0] for s in baseline_samples)
    subject_seconds = statistics.median(s[0] for s in subject_samples)
    ratios = [s[0] / b[0] for s, b in zip(subject_samples, baseline_samples)]
    row = {
        "name": name, "baseline": baseline_name, "goal": goal, "runs": runs,
        "baseline_seconds": baseline_seconds, "subject_seconds": subject_seconds,
        "wall_ratio": subject_seconds / baseline_seconds, "wall_ratio_min": min(ratios), "wall_ratio_max": max(ratios),
        "subject_cpu_seconds": statistics.median(s[2] for s in subject_samples),
        "subject_user_cpu_seconds": statistics.median(s[4] for s in subject_samples),
        "baseline_cpu_seconds": statistics.median(s[2] for s in baseline_samples),
        "subject_peak_rss_mib": max(s[1] for s in subject_samples),
        "baseline_peak_rss_mib": max(s[1] for s in baseline_samples),
        "subject_peak_private_mib": subject_private,
        "baseline_peak_private_mib": baseline_private,
    }
    row.update(extra or {})
    goal_text = f"{goal:5.2f}" if goal is not None else "    -"
    log(f"{name:34} {row.get('size', ''):>7} {baseline_seconds * 1000:9.1f} ms {subject_seconds * 1000:9.1f} ms  "
        f"{row['wall_ratio']:5.2f} ({row['wall_ratio_min']:.2f}-{row['wall_ratio_max']:.2f})  {goal_text}  "
        f"peak {row['baseline_peak_rss_mib']:5.0f} / {row['subject_peak_rss_mib']:5.0f} MiB "
        f"(private {row['baseline_peak_private_mib']:.0f} / {row['subject_peak_private_mib']:.0f})  "
        f"cpu {row['baseline_cpu_seconds']:.2f} / {row['subject_cpu_seconds']:.2f} s")
    return row


def codec_floor():
    """One core's CPU per byte of a file for the crypto that `cipherdb rekey`'s design does to
    every page, from OpenSSL's own speed at 4 KiB (the pages' size): under the old key an HMAC-SHA1
    check and an AES-256-CBC decryption; under the new key an encryption and an HMAC; then the
    read-back that proves the copy, an HMAC check and a decryption again. Three HMACs, two
    decryptions, one encryption (the shell's `PRAGMA rekey` does two HMACs, one decryption, one
    encryption: `shell_seconds_per_byte`)."""
    def bytes_per_second(*algorithm):
        output = subprocess.run(["openssl", "speed", "-mr", "-seconds", "2", "-bytes", "4096", *algorithm],
                                capture_output=True, text=True, check=True).stdout
        return float(re.search(r"^\+F:\d+:[^:]+:([\d.]+)$", output, re.MULTILINE).group(1))
    hmac = 1 / bytes_per_second("-hmac", "sha1")
    encrypt = 1 / bytes_per_second("-evp", "aes-256-cbc")
    decrypt = 1 / bytes_per_second("-decrypt", "-evp", "aes-256-cbc")
    return {"hmac_sha1_seconds_per_byte": hmac, "aes_encrypt_seconds_per_byte": encrypt,
            "aes_decrypt_seconds_per_byte": decrypt, "design_seconds_per_byte": 3 * hmac + 2 * decrypt + encrypt,
            "shell_seconds_per_byte": 2 * hmac + decrypt + encrypt}


def rekey_cpu_row(rekey, floor):
    """The rekey's CPU against its design floor at one size: every CPU second of the process (start,
    parse, I/O in the kernel included), and its user time alone."""
    floor_seconds = rekey["file_bytes"] * floor["design_seconds_per_byte"]
    row = {"name": "rekey CPU / codec design floor", "size": rekey["size"], "file_bytes": rekey["file_bytes"], "goal": 1.1,
           "floor_cpu_seconds": floor_seconds, "cpu_seconds": rekey["subject_cpu_seconds"],
           "user_cpu_seconds": rekey["subject_user_cpu_seconds"], "cpu_ratio": rekey["subject_cpu_seconds"] / floor_seconds,
           "user_cpu_ratio": rekey["subject_user_cpu_seconds"] / floor_seconds,
           "shell_cpu_over_its_floor": rekey["baseline_cpu_seconds"] / (rekey["file_bytes"] * floor["shell_seconds_per_byte"])}
    log(f"{row['name']:34} {row['size']:>7}  floor {floor_seconds * 1000:7.1f} ms  cpu {row['cpu_seconds'] * 1000:7.1f} ms "
        f"({row['cpu_ratio']:.2f}), user {row['user_cpu_seconds'] * 1000:7.1f} ms ({row['user_cpu_ratio']:.2f})  goal 1.10;  "
        f"shell over its own floor {row['shell_cpu_over_its_floor']:.2f}")
    return row


def cli_operations(sizes, folder, floor):
    key_file, new_key_file = write_keys(folder)
    work = os.path.join(folder, "work.db")
    results, rekey_cpu = [], []
    for megabytes in sizes:
        source = os.path.join(folder, f"source-{megabytes}.db")
        make_file(source, megabytes)
        size = os.path.getsize(source)
        runs = 3 if megabytes <= 100 else 1

        def fresh():
            for suffix in ("", "-journal", "-wal", "-shm"):
                if os.path.exists(work + suffix):
                    os.unlink(work + suffix)
            shutil.copyfile(source, work)

        rekey = (lambda: ([CLI, "rekey", work, "--raw-key-file", key_file, "--new-raw-key-file", new_key_file], None),
                 lambda: (["sqlcipher", work], shell_key_lines(RAW_KEY) + f"PRAGMA rekey = \"x'{NEW_KEY}'\";\n"))
        cases = [
            ("rekey, second core idle", "shell PRAGMA rekey", 0.30, rekey[1], rekey[0], False),
            ("rekey, second core busy", "shell PRAGMA rekey", None, rekey[1], rekey[0], True),
            ("verify", "shell PRAGMA integrity_check", 1.0,
             lambda: (["sqlcipher", work], shell_key_lines(RAW_KEY) + "PRAGMA integrity_check;\n"),
             lambda: ([CLI, "verify", work, "--raw-key-file", key_file], None), False),
            ("export --format sql", "shell .dump", 1.2,
             lambda: (["sqlcipher", work], shell_key_lines(RAW_KEY) + ".output " + os.path.join(folder, "shell.sql") + "\n.dump\n"),
             lambda: ([CLI, "export", work, os.path.join(folder, "dump.sql"), "--raw-key-file", key_file, "--format", "sql", "--force"],
                      None), False),
        ]
        for name, baseline_name, goal, baseline, subject, busy in cases:
            extra = {"file_bytes": size, "size": f"{megabytes} MB", "second_core_busy": busy}
            if busy:
                with Spinner():
                    row = compare(name, baseline_name, goal, runs, fresh, baseline, subject, extra)
            else:
                row = compare(name, baseline_name, goal, runs, fresh, baseline, subject, extra)
            row["subject_megabytes_per_second"] = size / row["subject_seconds"] / 1e6
            results.append(row)
            if name == "rekey, second core idle":
                rekey_cpu.append(rekey_cpu_row(row, floor))
        # integrity_check looks up every index entry in its table: in an index of random order,
        # at random pages, which SQLite's page cache size decides (the shell's 2 MB default
        # against verify's 16 MiB, VerifyCommand.integrityCheckCacheBytes).
        os.unlink(source)
        make_file(source, megabytes, random_index=True)
        random_size = os.path.getsize(source)
        row = compare("verify, an index in random order", "shell PRAGMA integrity_check", 1.0, runs, fresh,
                      lambda: (["sqlcipher", work], shell_key_lines(RAW_KEY) + "PRAGMA integrity_check;\n"),
                      lambda: ([CLI, "verify", work, "--raw-key-file", key_file], None),
                      {"file_bytes": random_size, "size": f"{megabytes} MB", "second_core_busy": False})
        row["subject_megabytes_per_second"] = random_size / row["subject_seconds"] / 1e6
        results.append(row)
        os.unlink(source)
        for path in glob.glob(os.path.join(folder, "*.sql")):
            os.unlink(path)
    return results, rekey_cpu


def import_csv(rows, folder):
    """`.import` of `rows` CSV records into an existing table of a new raw-key file: the stock
    shell (`.mode csv`, `.import FILE t`) against `cipherdb shell` (`.import --csv FILE t`); both
    counted afterwards."""
    key_file, _ = write_keys(folder)
    csv = os.path.join(folder, "import.csv")
    with open(csv, "w") as handle:
        for i in range(rows):
            email = "" if i % 4 == 0 else f"player{i}@example.com"
            handle.write(f"{i},Player number {i},{email},{(i * 2654435761) % 1000003},{i * 0.25}\n")
    empty = os.path.join(folder, "empty.db")
    subprocess.run(["sqlcipher", empty], input=(shell_key_lines(RAW_KEY) +
                   "CREATE TABLE t(id INTEGER, name TEXT, email TEXT, score INTEGER, rating REAL);\n").encode(),
                   check=True, stdout=subprocess.DEVNULL)
    work = os.path.join(folder, "import.db")

    def fresh():
        for suffix in ("", "-journal", "-wal", "-shm"):
            if os.path.exists(work + suffix):
                os.unlink(work + suffix)
        shutil.copyfile(empty, work)

    row = compare(".import CSV", "sqlcipher shell .import", 1.0, 3, fresh,
                  lambda: (["sqlcipher", work], shell_key_lines(RAW_KEY) + f".mode csv\n.import {csv} t\n"),
                  lambda: ([CLI, "shell", work, "--raw-key-file", key_file], f".import --csv {csv} t\n"),
                  {"rows": rows, "csv_bytes": os.path.getsize(csv), "size": f"{rows // 1000}k rows"})
    # The last run was cipherdb's: every record in.
    count = int(shell_query(work, "SELECT count(*) FROM t;"))
    if count != rows:
        raise RuntimeError(f"cipherdb shell imported {count} rows of {rows}")
    fresh()
    subprocess.run(["sqlcipher", work], input=(shell_key_lines(RAW_KEY) + f".mode csv\n.import {csv} t\n").encode(), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    count = int(shell_query(work, "SELECT count(*) FROM t;"))
    if count != rows:
        raise RuntimeError(f"the sqlcipher shell imported {count} rows of {rows}")
    os.unlink(csv)
    return row


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
rows = [(w["name"] + " / " + w["baseline"], w.get("instruction_ratio"), w["wall_ratio"],
         w.get("wall_ratio_min", w["wall_ratio"]), w.get("wall_ratio_max", w["wall_ratio"]), w["goal"]) for w in report["core"]]
rows += [("cipherdb " + w["name"] + " " + w.get("size", "") + " / shell", None, w["wall_ratio"],
          w.get("wall_ratio_min", w["wall_ratio"]), w.get("wall_ratio_max", w["wall_ratio"]), w["goal"]) for w in report["cli"]]
fig, ax = plt.subplots(figsize=(11, 0.42 * len(rows) + 1.5))
ys = range(len(rows))
ax.barh([y + 0.2 for y in ys], [r[1] or 0 for r in rows], height=0.4, label="instructions (callgrind)", color="#4c72b0")
ax.barh([y - 0.2 for y in ys], [r[2] for r in rows], height=0.4, label="wall time, median; whiskers: min-max of the runs",
        color="#dd8452", xerr=[[r[2] - r[3] for r in rows], [r[4] - r[2] for r in rows]], error_kw={"elinewidth": 0.8})
for y, r in zip(ys, rows):
    if r[5] is not None:
        ax.plot([r[5], r[5]], [y - 0.45, y + 0.45], color="black", linewidth=2)
ax.set_yticks(list(ys))
ax.set_yticklabels([r[0] for r in rows], fontsize=8)
ax.invert_yaxis()
ax.axvline(1.0, color="grey", linestyle=":")
ax.set_xscale("log")
ax.set_xlabel("cost relative to the baseline named in the row (log scale); black: goal")
ax.set_title("CipherDB on SQLCipher %s, %s rows (%s)" % (report["sqlcipher"], report["rows"], report["machine"]["date"]))
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
'''
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(report, handle)
    subprocess.run([python, "-c", code, handle.name, path], check=True)
    os.unlink(handle.name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="CI-sized run (under two minutes once built)")
    mode.add_argument("--large", action="store_true", help="the full run plus the whole-file operations at 1 GB (long)")
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--no-instructions", action="store_true", help="skip callgrind")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "performance"))
    options = parser.parse_args()
    if not options.skip_build:
        build()
    # First, so that a missing `openssl` fails the run before the long measurements.
    floor = codec_floor()
    quick = ["--quick"] if options.quick else []

    core = core_json(quick)
    log("")
    latency = core_json(["--latency"] + quick)
    if not options.no_instructions and shutil.which("valgrind"):
        rows, commits = (2_000, 50) if options.quick else (20_000, 1_000)
        log(f"\ninstructions (callgrind, {rows} rows, {commits} commits): baseline, CipherDB, ratio, goal")
        core_instructions(core["workloads"], rows, commits)
        for w in core["workloads"]:
            goal = f"{w['goal']:5.2f}" if w["goal"] is not None else "    -"
            extra = ""
            if "instruction_ratio_all_threads" in w:
                extra = f"  (writer thread; every thread {w['instruction_ratio_all_threads']:.2f})"
            log(f"{w['name']:44} {w['baseline_instructions']:>14,} {w['subject_instructions']:>14,}  "
                f"{w['instruction_ratio']:6.2f}  {goal}{'' if w['goal'] is None or w['instruction_ratio'] <= w['goal'] else '  (above goal)'}"
                f"{extra}")

    sizes = [10] if options.quick else [10, 100, 1000] if options.large else [10, 100]
    import_rows = 100_000 if options.quick else 1_000_000
    with tempfile.TemporaryDirectory(prefix="cipherdb-bench-") as folder:
        log(f"\n.import of {import_rows:,} CSV rows and whole-file operations against the sqlcipher shell:"
            "\n  shell, cipherdb, ratio (min-max), goal, peak RSS shell / cipherdb, CPU shell / cipherdb")
        cli = [import_csv(import_rows, folder)]
        operations, rekey_cpu = cli_operations(sizes, folder, floor)
        cli += operations

    report = {"sqlcipher": core["sqlcipher"], "rows": core["rows"], "commits": core["commits"], "runs": core["runs"],
              "quick": options.quick, "large": options.large, "machine": machine(), "goals": GOALS,
              "core": core["workloads"], "latency": latency["latency"], "cli": cli, "codec_floor": floor,
              "rekey_cpu": rekey_cpu}
    os.makedirs(options.out, exist_ok=True)
    suffix = "-quick" if options.quick else "-large" if options.large else ""
    with open(os.path.join(options.out, f"results{suffix}.json"), "w") as handle:
        json.dump(report, handle, indent=2, sort_keys=True)
        handle.write("\n")
    chart(report, os.path.join(options.out, f"ratios{suffix}.png"))
    log(f"\nwrote {options.out}/results{suffix}.json")


if __name__ == "__main__":
    main()
