#!/usr/bin/env python3
"""Adversarial harness for cipherdb's key-changing paths (issue 8, "The harness").

Runs real processes against the binary in $CIPHERDB_BIN (default .build/debug/cipherdb):
  crash-*     SIGKILL at random moments (rekey, export, encrypt, decrypt, salvage, keys rotate/passwd)
  live-*      the same key changes while a second real process holds the database open
  faults-*    full disk, RLIMIT_FSIZE, a held write lock, a read-only folder, for every writer
  wrongkey-*  a wrong key with a hot journal, a -wal, and both, in each journal mode
  verify-*    a damaged WAL frame must not pass `cipherdb verify`
  eio-*       one fsync / directory fsync / write fails with EIO or ENOSPC (LD_PRELOAD), every writer

  python3 tools/harness/harness.py --quick          # 8 kills per crash scenario (CI)
  python3 tools/harness/harness.py --full           # 200 kills per crash scenario
  python3 tools/harness/harness.py --only 'crash-rekey-*,live-rekey-copy-wal' --keep -v

Exit status 0 when every scenario passed, 1 when any failed, 2 when the harness cannot run.
The last line is "N passed, M failed", counting scenarios (the table also counts checks).
"""
import argparse
import fnmatch
import os
import random
import shutil
import signal
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import common  # noqa: E402
import fixtures  # noqa: E402
import scen_crash  # noqa: E402
import scen_eio  # noqa: E402
import scen_faults  # noqa: E402
import scen_live  # noqa: E402
import scen_verify  # noqa: E402
import scen_wrongkey  # noqa: E402

MODULES = [scen_crash, scen_live, scen_faults, scen_wrongkey, scen_verify, scen_eio]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true",
                      help="8 kills per crash scenario, a sample of the I/O faults (default)")
    mode.add_argument("--full", action="store_true",
                      help="200 kills per crash scenario, every fsync and write failed in turn")
    parser.add_argument("--kills", type=int, help="kills per crash scenario (overrides the mode)")
    parser.add_argument("--eio-writes", type=int, metavar="N",
                        help="eio-*: write and enospc faults per writer (default 5 and 2; every write with --full)")
    parser.add_argument("--only", help="comma-separated scenario names or globs (crash-*, live-*)")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument("--rows", type=int, default=12000,
                        help="rows in the fixture database (12000 rows is about 3.3 MB)")
    parser.add_argument("--seed", type=int, help="random seed (printed, to replay a run)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary folder (and up to 3 failing iterations per scenario)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each failure as it happens")
    return parser.parse_args(argv)


def all_scenarios():
    """(name, group, description, function(ctx, scenario)) of every scenario, in run order."""
    found = []
    for module in MODULES:
        found.extend(module.scenarios())
    return found


def select(scenarios, only):
    if not only:
        for name, reason in sorted(scen_eio.KNOWN_OPEN.items()):
            print("harness: %s left out of the default run (known open, run it with --only): %s" % (name, reason))
        return [s for s in scenarios if s[0] not in scen_eio.KNOWN_OPEN]
    patterns = [p.strip() for p in only.split(",") if p.strip()]
    chosen = [s for s in scenarios
              if any(fnmatch.fnmatchcase(s[0], p) or s[1] == p for p in patterns)]
    if not chosen:
        print("harness: --only %r matches no scenario (see --list)" % only, file=sys.stderr)
        raise SystemExit(2)
    return chosen


def find_tools():
    """The binary, the stock shells and the SQLCipher 4 python; an error names what is missing."""
    binary = os.environ.get("CIPHERDB_BIN", os.path.join(REPO, ".build", "debug", "cipherdb"))
    venv = os.environ.get("CIPHERDB_SQLCIPHER4_PYTHON",
                          os.path.join(REPO, ".build-sqlcipher4", "venv", "bin", "python"))
    tools = {"binary": binary, "venv_python": venv,
             "sqlcipher_shell": shutil.which("sqlcipher"), "sqlite_shell": shutil.which("sqlite3")}
    problems = []
    if not os.access(binary, os.X_OK):
        problems.append("no executable cipherdb at %s (set CIPHERDB_BIN)" % binary)
    if not tools["sqlcipher_shell"]:
        problems.append("the stock `sqlcipher` shell is not on PATH")
    if not tools["sqlite_shell"]:
        problems.append("the `sqlite3` shell is not on PATH")
    if not shutil.which("stdbuf"):
        problems.append("`stdbuf` (coreutils) is not on PATH")
    check = common.run([venv, "-c", "import sqlcipher3"], timeout=30) if os.access(venv, os.X_OK) else None
    if check is None or check.returncode != 0:
        problems.append("no python with sqlcipher3 at %s (tools/sqlcipher4-env.sh makes it; "
                        "or set CIPHERDB_SQLCIPHER4_PYTHON)" % venv)
    return tools, problems


def print_table(results, total_time):
    """One row per scenario, then the failure reasons (with one example each) of failing ones."""
    width = max(len(sc.name) for sc in results) + 2
    print()
    print("%-*s %5s %7s %7s  %-6s %7s  %s" % (width, "scenario", "runs", "checks", "failed",
                                               "result", "time", "first failure reason (count)"))
    print("-" * (width + 80))
    for sc in results:
        status = "SKIP" if sc.skipped else ("PASS" if sc.ok else "FAIL")
        reason = ""
        if sc.reasons:
            top, count = sc.reasons.most_common(1)[0]
            reason = "%s (%d)" % (top, count)
        elif sc.skipped:
            reason = sc.skipped
        print("%-*s %5d %7d %7d  %-6s %6.1fs  %s" % (width, sc.name, sc.runs, sc.passed + sc.failed,
                                                    sc.failed, status, sc.elapsed, reason))
    print("-" * (width + 80))
    print("total time %.1fs" % total_time)
    lost = sum(sc.counters["lost commits"] for sc in results if sc.group == "live")
    if any(sc.group == "live" for sc in results):
        print("lost commits (acknowledged to the second process, then missing): %d" % lost)
    for sc in results:
        if not sc.reasons and not sc.notes and not sc.counters:
            continue
        print("\n%s: %s" % (sc.name, sc.description))
        for reason, count in sc.reasons.most_common():
            print("  FAIL %-40s x%-4d e.g. %s" % (reason, count, sc.examples[reason][:300]))
        if sc.counters:
            print("  counts: " + ", ".join("%s %d" % kv for kv in sorted(sc.counters.items())))
        for note in sc.notes:
            print("  note: " + note)


def interrupt(_signum, _frame):
    raise KeyboardInterrupt()


def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    scenarios = select(all_scenarios(), args.only)
    if args.list:
        for name, group, description, _ in scenarios:
            print("%-32s %-9s %s" % (name, group, description))
        return 0
    tools, problems = find_tools()
    if problems:
        for problem in problems:
            print("harness: " + problem, file=sys.stderr)
        return 2
    kills = args.kills if args.kills is not None else (200 if args.full else 8)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    root = tempfile.mkdtemp(prefix="cipherdb-harness-")
    ctx = common.Context(tools["binary"], root, random.Random(seed), kills, args.keep, args.verbose,
                         tools["venv_python"], tools["sqlcipher_shell"], tools["sqlite_shell"])
    ctx.full = args.full  # eio-*: every call, not a sample
    ctx.eio_writes = args.eio_writes
    print("harness: %s, %d kills per crash scenario, seed %d, folder %s"
          % (tools["binary"], kills, seed, root), flush=True)
    started = time.monotonic()
    results = []
    # SIGTERM (a CI timeout) unwinds like Ctrl-C, so tmpfs mounts and the folder are cleaned up.
    signal.signal(signal.SIGTERM, interrupt)
    try:
        ctx.fixtures = fixtures.Fixtures(ctx, args.rows)
        try:
            ctx.fixtures.build()
        except fixtures.FixtureError as error:
            print("harness: cannot build the fixtures: %s" % error, file=sys.stderr)
            return 2
        for name, group, description, function in scenarios:
            sc = common.Scenario(name, group, description)
            sc.verbose = args.verbose
            print("[%s] %s ..." % (name, description), end="", flush=True)
            t0 = time.monotonic()
            try:
                function(ctx, sc)
            except Exception as error:  # a harness bug must show as a failure, not end the run
                import traceback
                sc.check(False, "harness error", "%s: %s" % (type(error).__name__, error))
                if args.verbose:
                    traceback.print_exc()
            sc.elapsed = time.monotonic() - t0
            status = "SKIP" if sc.skipped else ("ok" if sc.ok else "FAIL (%d)" % sc.failed)
            lead = "\n    -> " if args.verbose and sc.failed else " "
            print("%s%s in %.1fs" % (lead, status, sc.elapsed), flush=True)
            results.append(sc)
    except KeyboardInterrupt:
        print("\nharness: interrupted", file=sys.stderr)
    finally:
        scen_faults.unmount_all()
        if args.keep:
            print("harness: kept %s" % root)
        else:
            common.remove_tree(root)
    if not results:
        return 2
    print_table(results, time.monotonic() - started)
    passed = sum(1 for sc in results if sc.ok)
    failed = sum(1 for sc in results if not sc.ok and not sc.skipped)
    skipped = len(results) - passed - failed
    if skipped:
        print("%d scenario(s) skipped (see the table)" % skipped)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
