"""Crash scenarios: SIGKILL a key-changing or copying command at a random moment, then judge.

For each command the typical duration is measured once (median of three complete runs on fresh
copies); each iteration copies the template into a new folder, starts the command, and SIGKILLs it
at a moment drawn uniformly from [0, duration]. After the kill:
  * the data opens with the old key or the new one (both tried; the order alternates, as a user
    might try either), integrity_check is ok, and every row committed before the command is there
    (count + checksum); a key that is refused must leave every file byte-identical;
  * an output (export, decrypt, ...) is either absent or complete, never partial;
  * no file in the folder, hidden ones included, holds plaintext (the canary stored in every row,
    or an "SQLite format 3" header) except the expected plaintext input/output;
  * running the command again succeeds (the same command if the old state survived, the reverse
    rekey / passwd if the new one did, --force when a complete output exists), and afterwards no
    file is left beside the expected ones.
"""
import json
import os
import statistics

import common
from common import ENV_KS, ENV_KS_NEW, ENV_NEW, ENV_OLD

TMP_SUBDIR = "tmpdir"  # TMPDIR of the command points inside the folder, so it is scanned too


class Spec:
    """One crash scenario: how to build the folder, the command, and how to judge the state."""

    def __init__(self, name, kind, template, description, **opts):
        self.name = name
        self.kind = kind  # rekey | output | rotate | passwd
        self.template = template
        self.description = description
        self.opts = opts


SPECS = [
    Spec("crash-rekey-pages-delete", "rekey", "rollback", "rekey page by page (new passphrase), rollback journal"),
    Spec("crash-rekey-pages-wal", "rekey", "wal", "rekey page by page (new passphrase), WAL with commits in the -wal"),
    Spec("crash-rekey-copy-delete", "rekey", "rollback", "rekey by copy (--page-size 4096), rollback",
         extra=["--page-size", "4096"]),
    Spec("crash-rekey-copy-wal", "rekey", "wal", "rekey by copy (--page-size 4096), WAL",
         extra=["--page-size", "4096"]),
    Spec("crash-export", "output", "rollback", "export to an encrypted copy under a new key",
         out="out.db", args=lambda src, out: ["export", src, out] + common.passphrase_args(ENV_OLD)
         + common.new_passphrase_args(ENV_NEW), out_key=ENV_NEW),
    Spec("crash-export-plaintext", "output", "rollback", "export --plaintext",
         out="out.db", args=lambda src, out: ["export", src, out, "--plaintext"]
         + common.passphrase_args(ENV_OLD), out_key=None, plaintext_out=True),
    Spec("crash-export-sql", "output", "rollback", "export --format sql",
         out="out.sql", args=lambda src, out: ["export", src, out, "--format", "sql"]
         + common.passphrase_args(ENV_OLD), sql_out=True, plaintext_out=True),
    Spec("crash-encrypt", "output", "plain", "encrypt a plaintext file",
         src="plain.db", out="out.db", args=lambda src, out: ["encrypt", src, out]
         + common.new_passphrase_args(ENV_NEW), out_key=ENV_NEW, plaintext_src=True),
    Spec("crash-decrypt", "output", "rollback", "decrypt to a plaintext file",
         out="out.db", args=lambda src, out: ["decrypt", src, out] + common.passphrase_args(ENV_OLD),
         out_key=None, plaintext_out=True),
    Spec("crash-salvage", "output", "rollback", "salvage into a new encrypted file",
         out="out.db", args=lambda src, out: ["salvage", src, out] + common.passphrase_args(ENV_OLD),
         out_key=ENV_OLD),
    Spec("crash-keys-rotate-1", "rotate", "ks", "keys rotate with one database", dbs=["kdb1.db"]),
    Spec("crash-keys-rotate-2", "rotate", "ks", "keys rotate with two databases",
         dbs=["kdb1.db", "kdb2.db"]),
    Spec("crash-keys-passwd", "passwd", "ksp", "keys passwd (keystore passphrase change)"),
]


def scenarios():
    return [(spec.name, "crash", spec.description, lambda ctx, sc, spec=spec: run_spec(ctx, sc, spec))
            for spec in SPECS]


# --- commands -------------------------------------------------------------------------------------

def keystore_path(folder):
    return os.path.join(folder, "keystore-dir", "keystore")


def command(spec, folder, reverse=False, force=False):
    """The argv (after the binary) of a spec in a folder; `reverse` swaps old and new keys."""
    if spec.kind == "rekey":
        old, new = (ENV_NEW, ENV_OLD) if reverse else (ENV_OLD, ENV_NEW)
        return (["rekey", os.path.join(folder, "db.db")] + common.passphrase_args(old)
                + common.new_passphrase_args(new) + spec.opts.get("extra", []))
    if spec.kind == "output":
        src = os.path.join(folder, spec.opts.get("src", "db.db"))
        argv = spec.opts["args"](src, os.path.join(folder, spec.opts["out"]))
        return argv + (["--force"] if force else [])
    if spec.kind == "rotate":
        argv = ["keys", "rotate", "k1"]
        for name in spec.opts["dbs"]:
            argv += ["--database", os.path.join(folder, name)]
        return argv + common.keystore_args(keystore_path(folder))
    if spec.kind == "passwd":
        old, new = (ENV_KS_NEW, ENV_KS) if reverse else (ENV_KS, ENV_KS_NEW)
        return (["keys", "passwd", "--keystore", keystore_path(folder), "--keystore-passphrase-env",
                 old, "--new-keystore-passphrase-env", new])
    raise ValueError(spec.kind)


def setup(ctx, spec):
    folder = ctx.fresh_dir(spec.name)
    ctx.fixtures.install(spec.template, folder)
    os.makedirs(os.path.join(folder, TMP_SUBDIR))
    return folder


def tmp_env(folder):
    tmp = os.path.join(folder, TMP_SUBDIR)
    return {"TMPDIR": tmp, "SQLITE_TMPDIR": tmp}


def measure(ctx, spec, sc):
    """Median duration of three complete runs; None (and a failed check) when the command fails."""
    durations = []
    for _ in range(3):
        folder = setup(ctx, spec)
        result = common.cli(ctx, command(spec, folder), tmp_env(folder))
        common.remove_tree(folder)
        if not sc.check(result.returncode == 0, "command fails with no kill", result.describe()):
            return None
        durations.append(result.duration)
    return statistics.median(durations)


# --- judging states -------------------------------------------------------------------------------

def open_with_either(ctx, sc, folder, db, attempts):
    """Try each (label, key args) in order; return (label, probe) of the first that opens.

    A refused key (exit 77) must leave every file of the folder byte-identical: otherwise the
    attempt itself destroyed something (issue 8, finding 3), which is reported on its own.
    """
    tried = []
    for label, key_args in attempts:
        before = common.snapshot(folder)
        found = common.probe(ctx, db, key_args)
        if found.opened:
            return label, found
        changed = common.diff_snapshots(before, common.snapshot(folder))
        sc.check(not changed, "refused key altered files",
                 "%s key on %s: %s" % (label, os.path.basename(db), changed))
        tried.append("%s: %s" % (label, found.result.describe()))
    return None, "; ".join(tried)


def check_data(sc, found, expected, what):
    """integrity_check ok and the fixture rows all there."""
    sc.check(found.integrity_ok, "integrity_check not ok", "%s: %s" % (what, found.integrity))
    sc.check(found.checksum == expected, "rows lost or changed",
             "%s: count/checksum %s, expected %s" % (what, found.checksum, expected))


def check_no_plaintext(sc, folder, allowed, when):
    leaks = common.scan_plaintext(folder, allowed)
    sc.check(not leaks, "plaintext left in folder", "%s: %s" % (when, "; ".join(leaks[:4])))
    sc.counters["plaintext files " + when] += len(leaks)


def check_leftovers(sc, folder, installed, outputs=(), when="after a successful re-run", detail=""):
    """After a successful re-run only the installed files (their -wal/-shm), outputs may remain."""
    expected = set(outputs) | {"keystore-dir/keystore.lock"}
    for name in installed:
        expected |= {name, name + "-wal", name + "-shm"}
    extra = [n for n in common.listing(folder) if n not in expected]
    sc.check(not extra, "leftover files " + when, detail + ", ".join(extra[:6]))
    sc.counters["leftovers " + when.replace("after a successful ", "after ")] += len(extra)


def key_attempts(order, pairs):
    return pairs if order % 2 == 0 else list(reversed(pairs))


# --- per kind -------------------------------------------------------------------------------------

def iterate_rekey(ctx, sc, spec, folder, installed, index):
    db = os.path.join(folder, "db.db")
    expected = ctx.fixtures.checksums[spec.template]
    attempts = key_attempts(index, [("old", common.passphrase_args(ENV_OLD)),
                                    ("new", common.passphrase_args(ENV_NEW))])
    state, found = open_with_either(ctx, sc, folder, db, attempts)
    if not sc.check(state is not None, "opens with neither key", found):
        return
    sc.counters["state after kill: " + state] += 1
    check_data(sc, found, expected, "after kill (%s key)" % state)
    check_no_plaintext(sc, folder, [], "after kill")
    rerun = common.cli(ctx, command(spec, folder, reverse=(state == "new")), tmp_env(folder))
    if not sc.check(rerun.returncode == 0, "re-run after kill fails",
                    "%s re-run: %s; files: %s" % ("reverse" if state == "new" else "same",
                                                  rerun.describe(), common.listing(folder))):
        return
    final_key = ENV_OLD if state == "new" else ENV_NEW
    after = common.probe(ctx, db, common.passphrase_args(final_key))
    if sc.check(after.opened, "re-run result does not open", after.result.describe()):
        check_data(sc, after, expected, "after re-run")
    check_leftovers(sc, folder, installed)


def output_complete(ctx, spec, out):
    """(complete?, why not): an output must hold every fixture row, or not exist at all."""
    expected = ctx.fixtures.checksums["rollback"]
    if spec.opts.get("sql_out"):
        with open(out, "rb") as handle:
            data = handle.read()
        rows = data.count(common.CANARY.encode())
        if rows == ctx.fixtures.rows and data.rstrip().endswith(b"COMMIT;"):
            return True, ""
        return False, "SQL dump with %d of %d rows, %d bytes" % (rows, ctx.fixtures.rows, len(data))
    key = spec.opts.get("out_key")
    found = common.probe(ctx, out, common.passphrase_args(key) if key else [])
    if found.opened and found.integrity_ok and found.checksum == expected:
        return True, ""
    return False, "output %s: %s, integrity %s, rows %s" % (
        os.path.basename(out), found.result.describe(), found.integrity, found.checksum)


def iterate_output(ctx, sc, spec, folder, installed, source_before):
    src = os.path.join(folder, spec.opts.get("src", "db.db"))
    out = os.path.join(folder, spec.opts["out"])
    changed = common.diff_snapshots(source_before, {os.path.basename(src): common.sha256_file(src)})
    sc.check(not changed, "source changed", changed)
    allowed = [src] if spec.opts.get("plaintext_src") else []
    exists = os.path.exists(out)
    complete = False
    if exists:
        complete, why = output_complete(ctx, spec, out)
        sc.check(complete, "partial output after kill", why)
    sc.counters["output after kill: " + ("complete" if complete else "partial" if exists else "absent")] += 1
    plaintext_out = spec.opts.get("plaintext_out")
    check_no_plaintext(sc, folder, allowed + ([out] if plaintext_out and complete else []), "after kill")
    sc.counters["files left after kill"] += len([n for n in common.listing(folder)
                                                 if n not in (os.path.basename(src), spec.opts["out"])])
    rerun = common.cli(ctx, command(spec, folder, force=exists), tmp_env(folder))
    if not sc.check(rerun.returncode == 0, "re-run after kill fails",
                    "%s; files: %s" % (rerun.describe(), common.listing(folder))):
        return
    complete, why = output_complete(ctx, spec, out)
    sc.check(complete, "re-run output incomplete", why)
    check_no_plaintext(sc, folder, allowed + ([out] if plaintext_out else []), "after re-run")
    check_leftovers(sc, folder, installed, [spec.opts["out"]])


def iterate_rotate(ctx, sc, spec, folder, installed):
    keystore = keystore_path(folder)
    expected = ctx.fixtures.checksums["ks"]
    key_id = ["--key-id", "k1"] + common.keystore_args(keystore)
    raw = ["--raw-key-file", ctx.fixtures.raw_key_file]
    for name in spec.opts["dbs"]:
        db = os.path.join(folder, name)
        state, found = open_with_either(ctx, sc, folder, db, [("--key-id", key_id)])
        if state is None:
            old_raw = common.probe(ctx, db, raw)
            sc.check(False, "--key-id does not open after kill",
                     "%s: %s (old raw key %s)" % (name, found, "opens" if old_raw.opened else "fails"))
            continue
        check_data(sc, found, expected, "%s after kill" % name)
    check_no_plaintext(sc, folder, [], "after kill")
    rerun = common.cli(ctx, command(spec, folder), tmp_env(folder))
    if not sc.check(rerun.returncode == 0, "re-run (resume) after kill fails",
                    "%s; files: %s" % (rerun.describe(), common.listing(folder))):
        return
    for name in spec.opts["dbs"]:
        after = common.probe(ctx, os.path.join(folder, name), key_id)
        if sc.check(after.opened, "--key-id does not open after resume",
                    "%s: %s" % (name, after.result.describe())):
            check_data(sc, after, expected, "%s after resume" % name)
    check_leftovers(sc, folder, installed)


def keys_listing(ctx, keystore, env_name):
    """`keys list --json` minus the keystore path: what must survive a passwd unchanged."""
    result = common.cli(ctx, ["keys", "list", "--json"] + common.keystore_args(keystore, env_name))
    if result.returncode != 0:
        return None, result
    data = json.loads(result.stdout)
    data.pop("keystore", None)
    return data, result


def iterate_passwd(ctx, sc, spec, folder, installed, index, reference):
    keystore = keystore_path(folder)
    pairs = key_attempts(index, [("old", ENV_KS), ("new", ENV_KS_NEW)])
    state, tried = None, []
    for label, env_name in pairs:
        listed, result = keys_listing(ctx, keystore, env_name)
        if listed is not None:
            state = label
            sc.check(listed == reference, "keystore content changed", str(listed)[:200])
            break
        tried.append("%s: %s" % (label, result.describe()))
    if not sc.check(state is not None, "keystore opens with neither passphrase", "; ".join(tried)):
        return
    sc.counters["state after kill: " + state] += 1
    rerun = common.cli(ctx, command(spec, folder, reverse=(state == "new")), tmp_env(folder))
    if not sc.check(rerun.returncode == 0, "re-run after kill fails",
                    "%s; files: %s" % (rerun.describe(), common.listing(folder))):
        return
    listed, result = keys_listing(ctx, keystore, ENV_KS if state == "new" else ENV_KS_NEW)
    sc.check(listed == reference, "keystore wrong after re-run",
             result.describe() if listed is None else str(listed)[:200])
    check_leftovers(sc, folder, installed)


# --- driver ---------------------------------------------------------------------------------------

def run_spec(ctx, sc, spec):
    duration = measure(ctx, spec, sc)
    if duration is None:
        return
    sc.note("typical duration %.0f ms" % (duration * 1000))
    reference = None
    if spec.kind == "passwd":
        folder = setup(ctx, spec)
        reference, result = keys_listing(ctx, keystore_path(folder), ENV_KS)
        common.remove_tree(folder)
        if not sc.check(reference is not None, "template keystore does not open", result.describe()):
            return
    kept = 0
    for index in range(ctx.kills):
        folder = setup(ctx, spec)
        installed = common.listing(folder)
        src = os.path.join(folder, spec.opts.get("src", "db.db"))
        source_before = ({os.path.basename(src): common.sha256_file(src)}
                         if spec.kind == "output" else None)
        failed_before = sc.failed
        delay = ctx.rng.uniform(0, duration)
        killed, rc, err = common.run_and_kill(ctx, command(spec, folder), delay, tmp_env(folder))
        sc.runs += 1
        sc.counters["killed" if killed else "finished before the kill"] += 1
        if not killed:
            sc.check(rc == 0, "command failed without a kill", "exit %s: %s" % (rc, err.strip()[:160]))
        if spec.kind == "rekey":
            iterate_rekey(ctx, sc, spec, folder, installed, index)
        elif spec.kind == "output":
            iterate_output(ctx, sc, spec, folder, installed, source_before)
        elif spec.kind == "rotate":
            iterate_rotate(ctx, sc, spec, folder, installed)
        else:
            iterate_passwd(ctx, sc, spec, folder, installed, index, reference)
        if ctx.keep and sc.failed > failed_before and kept < 3:
            kept += 1
            sc.note("kept failing iteration %s (killed at %.0f ms)" % (folder, delay * 1000))
        else:
            common.remove_tree(folder)
