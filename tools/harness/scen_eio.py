"""Real I/O errors: one fsync, directory fsync or write of a writer command fails, then judge.

faultinject.c (an LD_PRELOAD object, compiled once per run into the run's folder) counts the
fsync/fdatasync calls on regular files, on directories, and the writes to regular files of one
process, and makes the K-th call of one kind fail (EIO, or ENOSPC for `enospc`) without doing
it; later calls go through, as on a flaky disk (a program that retries an fsync then "succeeds":
fsyncgate). For each writer a clean run under CIPHERDB_FAULT_LOG lists its calls; then every
fsync and directory fsync is failed in turn (quick mode: at most QUICK_RUNS of each kind, spread
over the calls, the first and last call on each file first), and a sample of the writes (every
write with --full; --eio-writes N sets the sample). A failed directory fsync is labelled by the
call before it: SQLite's own (after it synced a new -journal or -wal; SQLite's unix VFS drops its
result, CipherDB's VFS reports it) or the one after a file was published (renamed or linked into
place).

After each run (the log says whether the fault fired and on which file):
  * no death by signal, no timeout;
  * exit 0 after a fired fault is a failure: the command reported success although a sync or a
    write it depends on failed (the data may not be durable);
  * the exit status is truthful: 0 or 71 ("done, maybe not durable": the directory fsync after
    the rename failed) only with the change complete (new key opens, output complete, keystore
    changed); any other non-zero status only with nothing changed (files byte-identical, or for
    an in-place rewrite the old key opens with every row), a non-zero status must be an I/O one
    (71, 73, 74) and its message must name a file; `keys rotate` may also leave its documented
    pending version (then running it again must finish the rotation);
  * whatever the outcome: the data opens with the old or the new key, integrity ok, every row
    there (count + checksum), an output is complete or absent, no plaintext outside a legitimate
    plaintext output, no temporary left over, the keystore opens (for a rotation its versions
    open the databases); a WAL database rekeyed with exit 0 or 71 is in WAL mode again.
"""
import copy
import json
import os
import re
import shutil

import common
import scen_crash
from common import ENV_KS, ENV_KS_NEW, ENV_OLD
from scen_crash import Spec

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "faultinject.c")
EXIT_NOT_DURABLE = 71  # the change is in place; the directory fsync after the rename failed
IO_EXITS = {EXIT_NOT_DURABLE, 73, 74}
ENV_TRANSFER = "HARNESS_TRANSFER_PASS"
TRANSFER_PASSPHRASE = "harness transfer passphrase 6"

# Fault kinds, the log counter each one uses, and runs per writer in quick mode.
KINDS = [("fsync", "fsync"), ("dirsync", "dirsync"), ("write", "write"), ("enospc", "write")]
QUICK_RUNS = {"fsync": 6, "dirsync": 6, "write": 5, "enospc": 2}


def _crash_spec(name):
    """The crash scenario's spec (command, template, outputs) under an eio- name."""
    spec = copy.copy(next(spec for spec in scen_crash.SPECS if spec.name == "crash-" + name))
    spec.name = "eio-" + name
    return spec


def _keys_spec(name, template, description, argv, added="k2"):
    return Spec("eio-" + name, "keys", template, description, argv=argv, added=added)


WRITERS = [_crash_spec(name) for name in (
    "rekey-pages-delete", "rekey-pages-wal", "rekey-copy-delete", "rekey-copy-wal", "encrypt",
    "decrypt", "export", "export-plaintext", "export-sql")] + [
    Spec("eio-backup", "output", "rollback", "backup (SQLite's online backup) to a new file",
         out="out.db", args=lambda src, out: ["backup", src, out] + common.passphrase_args(ENV_OLD),
         out_key=ENV_OLD),
    _crash_spec("salvage"), _crash_spec("keys-rotate-1"), _crash_spec("keys-rotate-2"),
    _keys_spec("keys-add", "ks", "keys add (a new random key)",
               lambda f, _bundle: ["keys", "add", "k2"] + common.keystore_args(scen_crash.keystore_path(f))),
    _keys_spec("keys-import", "ks", "keys import (a bundle from keys export)",
               lambda f, bundle: ["keys", "import", bundle, "--transfer-passphrase-env", ENV_TRANSFER]
               + common.keystore_args(scen_crash.keystore_path(f))),
    _crash_spec("keys-passwd"),
]


# Writers with I/O-error outcomes still open, {name: why}: run by name (--only 'eio-*'), left out
# of the default run (CI) until fixed, and printed as left out. Empty since issue 19's last five.
KNOWN_OPEN = {}


def scenarios():
    return [(spec.name, "eio", "I/O errors in " + spec.description,
             lambda ctx, sc, spec=spec: run_writer(ctx, sc, spec)) for spec in WRITERS]


# --- the preload object and its log ---------------------------------------------------------------

def preload(ctx):
    """Path of faultinject.so, built once per run into the root ((None, why) when it cannot be)."""
    cached = ctx.cache.get("faultinject")
    if cached is None:
        target = os.path.join(ctx.root, "faultinject.so")
        cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
        if not cc:
            cached = (None, "no C compiler (cc) on PATH to build faultinject.so")
        else:
            built = common.run([cc, "-shared", "-fPIC", "-O2", "-o", target, SOURCE, "-ldl"], timeout=120)
            cached = (target, None) if built.returncode == 0 else (None, "cc failed: " + built.describe())
        ctx.cache["faultinject"] = cached
    return cached


def transfer_bundle(ctx):
    """A `keys export` bundle of key k2 from a keystore of its own (for keys import), built once."""
    cached = ctx.cache.get("eio-bundle")
    if cached is None:
        folder = os.path.join(ctx.root, "eio-bundle")
        keystore = os.path.join(folder, "keystore-dir", "keystore")
        bundle = os.path.join(folder, "k2.bundle")
        env = {ENV_TRANSFER: TRANSFER_PASSPHRASE}
        steps = [["keys", "init", "--scrypt-log2n", "10"] + common.keystore_args(keystore),
                 ["keys", "add", "k2", "--exportable"] + common.keystore_args(keystore),
                 ["keys", "export", "k2", "--to", bundle, "--transfer-passphrase-env", ENV_TRANSFER,
                  "--scrypt-log2n", "10"] + common.keystore_args(keystore)]
        cached = (bundle, None)
        for argv in steps:
            result = common.cli(ctx, argv, env)
            if result.returncode != 0:
                cached = (None, "%s: %s" % (" ".join(argv[:2]), result.describe()))
                break
        ctx.cache["eio-bundle"] = cached
    return cached


def parse_log(path):
    """({kind: [path of each call]}, the injected fault or None).

    The fault is (kind, n, path, previous call as (kind, path) or None): the call before it tells
    whose directory fsync failed (after SQLite's journal sync, or after a file was published).
    """
    calls = {"fsync": [], "dirsync": [], "write": []}
    fault = None
    order = []
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle.read().splitlines():
                if line.startswith("FAULT "):
                    parts = line.split(" ", 3)
                    previous = order[-2] if len(order) > 1 else None
                    fault = (parts[1], int(parts[2]), parts[3] if len(parts) > 3 else "", previous)
                else:
                    kind, _, where = line.partition(" ")
                    if kind in calls:
                        calls[kind].append(where)
                        order.append((kind, where))
    return calls, fault


def dirsync_site(fired, folder):
    """Whose directory fsync failed, from the call before it ('' when not a directory fsync)."""
    if not fired or fired[0] != "dirsync" or not fired[3]:
        return ""
    kind, path = fired[3]
    if kind == "fsync" and path.endswith(("-journal", "-wal")):
        return "SQLite's, after syncing %s" % short_path(path, folder)
    if kind == "fsync":
        return "after publishing %s" % short_path(path, folder)
    return "after %s %s" % (kind, short_path(path, folder))


def short_path(path, folder):
    """A call's file relative to the folder, with anonymous and random temporary names folded."""
    if path.startswith(folder + "/"):
        path = path[len(folder) + 1:]
    elif path == folder:
        path = "."
    path = re.sub(r"#\d+ \(deleted\)", "<anonymous>", path)
    return re.sub(r"(cipherdb-tmp-)[0-9a-f]+", r"\1*", path)


def pick(calls, limit):
    """1-based call numbers to fail: all of them, or `limit` (the first and last on each file first)."""
    count = len(calls)
    if limit is None or count <= limit:
        return list(range(1, count + 1))
    chosen, seen = [], {}
    for index, path in enumerate(calls, 1):
        seen.setdefault(re.sub(r"#\d+ \(deleted\)|cipherdb-tmp-[0-9a-f]+", "", path), []).append(index)
    for indexes in seen.values():
        for index in (indexes[0], indexes[-1]):
            if index not in chosen and len(chosen) < limit:
                chosen.append(index)
    step = 0
    while len(chosen) < limit and step < limit * 4:  # fill with calls spread over the range
        index = 1 + round(step * (count - 1) / (limit * 4 - 1))
        step += 1
        if index not in chosen:
            chosen.append(index)
    return sorted(chosen)[:limit]


# --- commands and states --------------------------------------------------------------------------

def command(ctx, spec, folder):
    if spec.kind == "keys":
        return spec.opts["argv"](folder, ctx.cache.get("eio-bundle", (None,))[0])
    return scen_crash.command(spec, folder)


def run_command(ctx, spec, folder, log, fault=None):
    """Run the writer under faultinject.so; (result, calls, fault that fired or None)."""
    so, _ = preload(ctx)
    if os.path.exists(log):
        os.unlink(log)
    env = scen_crash.tmp_env(folder)
    env.update({"LD_PRELOAD": " ".join(p for p in (so, os.environ.get("LD_PRELOAD")) if p),
                "CIPHERDB_FAULT_LOG": log, ENV_TRANSFER: TRANSFER_PASSPHRASE})
    if fault:
        env["CIPHERDB_FAULT"] = fault
    result = common.cli(ctx, command(ctx, spec, folder), env)
    calls, fired = parse_log(log)
    return result, calls, fired


def keystore_listing(ctx, folder, env_name=ENV_KS):
    listed, _ = scen_crash.keys_listing(ctx, scen_crash.keystore_path(folder), env_name)
    return listed


def db_state(ctx, sc, spec, folder, where):
    """In-place rekey: 'old' / 'new' by the key that opens (rows checked), or None."""
    db = os.path.join(folder, "db.db")
    attempts = [("old", common.passphrase_args(ENV_OLD)), ("new", common.passphrase_args(common.ENV_NEW))]
    state, found = scen_crash.open_with_either(ctx, sc, folder, db, attempts)
    if not sc.check(state is not None, "opens with neither key", "%s: %s" % (where, found)):
        return None
    scen_crash.check_data(sc, found, ctx.fixtures.checksums[spec.template], "%s (%s key)" % (where, state))
    return state


def output_state(ctx, sc, spec, folder, source_before, where):
    """Copying writers: 'old' (no output) / 'new' (complete output), source byte-identical."""
    now = {n: h for n, h in common.snapshot(folder).items() if n in source_before}
    changed = common.diff_snapshots(source_before, now)
    sc.check(not changed, "source changed", "%s: %s" % (where, changed))
    out = os.path.join(folder, spec.opts["out"])
    if not os.path.exists(out):
        return "old"
    complete, why = scen_crash.output_complete(ctx, spec, out)
    if not sc.check(complete, "partial output", "%s: %s" % (where, why)):
        return None
    return "new"


def rotate_state(ctx, sc, spec, folder, reference, where):
    """keys rotate: 'old' (v1 primary, databases on v1), 'pending' (v2 pending), 'new' (v2, all moved)."""
    listed = keystore_listing(ctx, folder)
    if not sc.check(listed is not None, "keystore no longer opens", where):
        return None
    entry = next(e for e in listed["keys"] if e["id"] == "k1")
    raw = ["--raw-key-file", ctx.fixtures.raw_key_file]
    key_id = ["--key-id", "k1"] + common.keystore_args(scen_crash.keystore_path(folder))
    on_old = []
    for name in spec.opts["dbs"]:
        db = os.path.join(folder, name)
        label, found = scen_crash.open_with_either(ctx, sc, folder, db, [("v1", raw), ("--key-id", key_id)])
        if not sc.check(label is not None, "database opens with no key of the keystore",
                        "%s: %s: %s" % (where, name, found)):
            return None
        scen_crash.check_data(sc, found, ctx.fixtures.checksums["ks"], "%s: %s" % (where, name))
        on_old.append(label == "v1")
    if entry.get("pending_version") is not None:
        return "pending"
    if listed == reference and all(on_old):
        return "old"
    # After a failed rotation left a version pending, opening with --key-id may finish or undo it,
    # so a later rotation can make version 3: "new" is any later primary with every database moved.
    if entry.get("primary_version", 1) > 1 and not any(on_old):
        return "new"
    sc.check(False, "keystore and databases disagree",
             "%s: primary %s, pending %s, on v1: %s" % (where, entry.get("primary_version"),
                                                        entry.get("pending_version"), on_old))
    return None


def keys_state(ctx, sc, spec, folder, reference, where):
    """keys add / import: 'old' (keystore as before) / 'new' (k2 added, the rest as before)."""
    listed = keystore_listing(ctx, folder)
    if not sc.check(listed is not None, "keystore no longer opens", where):
        return None
    if listed == reference:
        return "old"
    others = dict(listed, keys=[e for e in listed["keys"] if e["id"] != spec.opts["added"]])
    if others == reference and len(others["keys"]) == len(listed["keys"]) - 1:
        return "new"
    sc.check(False, "keystore content changed", "%s: %s" % (where, json.dumps(listed)[:200]))
    return None


def passwd_state(ctx, sc, folder, reference, where):
    """keys passwd: 'old' / 'new' by the passphrase that opens it (content unchanged)."""
    for label, env_name in (("old", ENV_KS), ("new", ENV_KS_NEW)):
        listed = keystore_listing(ctx, folder, env_name)
        if listed is not None:
            sc.check(listed == reference, "keystore content changed", "%s: %s" % (where, str(listed)[:200]))
            return label
    sc.check(False, "keystore opens with neither passphrase", where)
    return None


def state_of(ctx, sc, spec, folder, source_before, reference, where):
    if spec.kind == "rekey":
        return db_state(ctx, sc, spec, folder, where)
    if spec.kind == "output":
        return output_state(ctx, sc, spec, folder, source_before, where)
    if spec.kind == "rotate":
        return rotate_state(ctx, sc, spec, folder, reference, where)
    if spec.kind == "passwd":
        return passwd_state(ctx, sc, folder, reference, where)
    return keys_state(ctx, sc, spec, folder, reference, where)


def reference_listing(ctx, spec):
    """What the template keystore lists before any command (None for database-only writers)."""
    if spec.template not in ("ks", "ksp"):
        return None
    folder = scen_crash.setup(ctx, spec)
    listed = keystore_listing(ctx, folder)
    common.remove_tree(folder)
    return listed


# --- judging one run ------------------------------------------------------------------------------

def judge(ctx, sc, spec, folder, installed, source_before, reference, result, fault, fired):
    """Every check of one run; returns a short label of what was wrong ('' when nothing)."""
    reasons_before = sc.reasons.copy()
    count_before = sc.failed
    fired_at = "%s:%d on %s" % (fired[0], fired[1], short_path(fired[2], folder)) if fired else None
    site = dirsync_site(fired, folder)
    if site:
        fired_at += " (%s)" % site
    where = "%s %s (%s)" % (spec.name, fault or "no fault", fired_at or "did not fire")
    rc = result.returncode
    if not sc.check(result.signal is None, "killed by a signal", "%s: %s" % (where, result.describe())):
        sc.counters["signal deaths"] += 1
    sc.check(not result.timed_out, "timed out", where)
    if fault:
        sc.counters["fault fired" if fired else "fault did not fire"] += 1
        sc.counters["%s fired -> exit %s" % (fault.split(":")[0], rc) if fired else
                     "not fired -> exit %s" % rc] += 1
    describe = result.describe()
    if fired:
        sqlite_dirsync = site.startswith("SQLite")
        sc.check(rc != 0, "exit 0 after a failed " + fired[0] + (" (SQLite's journal dirsync)" if sqlite_dirsync else ""),
                 "%s: exit 0; stderr: %s" % (where, result.stderr.strip().splitlines()[:1]))
    if rc not in (0, None) and result.signal is None:
        sc.check(rc in IO_EXITS, "exit status not an I/O error (71/73/74)", "%s: %s" % (where, describe))
        # The files on the command line, or the file whose call failed (a folder whose fsync failed).
        names = [os.path.basename(p) for p in result.argv if isinstance(p, str) and p.startswith(folder + "/")]
        if fired and "(deleted)" not in fired[2]:
            names.append(fired[2])
        sc.check(any(n in result.stderr for n in names), "message does not name the file",
                 "%s: %s" % (where, result.stderr.strip()[:200]))
    state = state_of(ctx, sc, spec, folder, source_before, reference, where)
    if state is not None:
        sc.counters["exit %s, state %s" % (rc, state)] += 1
        if rc in (0, EXIT_NOT_DURABLE):
            sc.check(state == "new", "exit %d but the change is not in place" % rc,
                     "%s: state %s; %s" % (where, state, describe))
            # Exit 71 may say that the mode itself could not be restored: then it is not checked.
            says_mode_lost = rc == EXIT_NOT_DURABLE and "could not be put back into WAL mode" in result.stderr
            if state == "new" and spec.template == "wal" and not says_mode_lost:
                mode = common.cli(ctx, ["query", os.path.join(folder, "db.db"), "PRAGMA journal_mode",
                                        "--csv"] + common.passphrase_args(common.ENV_NEW))
                sc.check(mode.stdout.strip().endswith("wal"), "WAL mode not restored after success",
                         "%s: journal_mode %r" % (where, mode.stdout.strip()[-20:]))
        elif result.signal is None and not result.timed_out:
            sc.check(state != "new", "exit %d but the change is in place" % rc, "%s: %s" % (where, describe))
    allowed = [os.path.join(folder, spec.opts["src"])] if spec.opts.get("plaintext_src") else []
    out = spec.opts.get("out")
    if out and spec.opts.get("plaintext_out") and state == "new":
        allowed.append(os.path.join(folder, out))
    leaks = common.scan_plaintext(folder, allowed)
    sc.check(not leaks, "plaintext left in folder", "%s: %s" % (where, "; ".join(leaks[:4])))
    outputs = [out] if out and state == "new" else []
    scen_crash.check_leftovers(sc, folder, installed, outputs, when="after an I/O error" if fired else
                               "after a clean run", detail=where + ": ")
    if state == "pending":
        resume(ctx, sc, spec, folder, reference, where)
    first = next((line for line in result.stderr.splitlines() if line.strip()), "")
    first = first.replace(folder + "/", "").replace(folder, "<folder>")[:150]
    if rc not in (0, None):
        sc.note("exit %s: %s" % (rc, re.sub(r"\b\d+\b", "N", first)))
    if sc.failed > count_before:
        new = [r for r in sc.reasons if sc.reasons[r] > reasons_before[r]]
        sc.note("FAILED %s | %s | exit %s | %s | %s" % (fault or "clean", fired_at or "not fired", rc,
                                                        first, "; ".join(new)))
    return state


def resume(ctx, sc, spec, folder, reference, where):
    """A rotation left pending: running it again (no fault) must finish it."""
    rerun = common.cli(ctx, scen_crash.command(spec, folder), scen_crash.tmp_env(folder))
    if sc.check(rerun.returncode == 0, "resume after a pending rotation fails", "%s: %s" % (where, rerun.describe())):
        sc.check(rotate_state(ctx, sc, spec, folder, reference, where + " resumed") == "new",
                 "resume does not finish the rotation", where)


# --- driver ---------------------------------------------------------------------------------------

def run_writer(ctx, sc, spec):
    so, problem = preload(ctx)
    if so is None:
        sc.skipped = problem
        return
    if spec.kind == "keys" and "import" in spec.name:
        bundle, problem = transfer_bundle(ctx)
        if bundle is None:
            sc.check(False, "harness: cannot make the key bundle", problem)
            return
    reference = reference_listing(ctx, spec)
    if spec.template in ("ks", "ksp") and not sc.check(reference is not None, "template keystore does not open", ""):
        return
    logs = os.path.join(ctx.root, "eio-logs")
    os.makedirs(logs, exist_ok=True)
    log = os.path.join(logs, spec.name + ".log")
    full = getattr(ctx, "full", False)
    # The clean run: lists the calls, and must itself pass every check.
    calls = one_run(ctx, sc, spec, reference, log, None)
    if calls is None:
        return
    if ctx.keep:
        shutil.copy(log, log[:-len(".log")] + ".clean.log")
    sc.note("clean run: %d fsync, %d directory fsync, %d write calls" % (
        len(calls["fsync"]), len(calls["dirsync"]), len(calls["write"])))
    plan = []
    for kind, counter in KINDS:
        limit = None if full else QUICK_RUNS[kind]
        if kind in ("write", "enospc") and getattr(ctx, "eio_writes", None) is not None:
            limit = ctx.eio_writes
        for k in pick(calls[counter], limit):
            plan.append("%s:%d" % (kind, k))
    for fault in plan:
        one_run(ctx, sc, spec, reference, log, fault)


def one_run(ctx, sc, spec, reference, log, fault):
    """One run of the writer (with `fault`, or clean), judged; returns the logged calls."""
    folder = scen_crash.setup(ctx, spec)
    installed = common.listing(folder)
    source_before = common.snapshot(folder) if spec.kind == "output" else None
    failed_before = sc.failed
    result, calls, fired = run_command(ctx, spec, folder, log, fault)
    sc.runs += 1
    if fault is None and not sc.check(result.returncode == 0, "command fails with no fault",
                                      result.describe()):
        common.remove_tree(folder)
        return None
    judge(ctx, sc, spec, folder, installed, source_before, reference, result, fault, fired)
    if ctx.keep and sc.failed > failed_before and sc.counters["kept"] < 3:
        sc.counters["kept"] += 1
        sc.note("kept failing run %s (%s)" % (folder, fault))
    else:
        common.remove_tree(folder)
    return calls
