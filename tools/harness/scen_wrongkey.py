"""Wrong key with a hot journal, a -wal, or both, in each journal mode: nothing may change.

The states are made by real processes: a hot rollback journal by the SQLCipher 4 python child that
runs a large UPDATE with an 8-page cache (so SQLite spills changed pages into the database file)
in journal mode DELETE, TRUNCATE or PERSIST and is SIGKILLed inside the transaction; a -wal with
committed transactions by the stock sqlcipher shell with wal_autocheckpoint=0, SIGKILLed (the WAL
template). Combinations that one process cannot make (a -wal beside a rollback-mode file, as
issue 8's finding 1 leaves behind, or a hot journal beside a WAL-mode file) are assembled from
those files; they are marked "grafted".

For each state, each of `cipherdb query`, `info` and `verify` runs with a wrong passphrase on a
fresh copy: exit 77 expected, and every file (database, -journal, -wal, -shm) byte-identical and
still present. For the states a process made by itself the right key must then still open the
database with every committed row (rolled back / recovered).
"""
import os
import shutil

import common
from common import ENV_OLD, ENV_WRONG
from peers import Py4Peer

MODES = ["delete", "truncate", "persist", "wal"]
COMMANDS = [
    ("query", lambda db: ["query", db, "SELECT count(*) FROM r"]),
    ("info", lambda db: ["info", db]),
    ("verify", lambda db: ["verify", db]),
]


def scenarios():
    return [("wrongkey-" + mode, "wrongkey",
             "wrong key with a hot journal, a -wal, and both (%s mode)" % mode.upper(),
             lambda ctx, sc, mode=mode: run_mode(ctx, sc, mode)) for mode in MODES]


def hot_journal(ctx, mode):
    """Folder with db.db + db.db-journal left by a writer killed mid-transaction (cached per mode)."""
    cache = ctx.cache.setdefault("hot_journals", {})
    if mode in cache:
        return cache[mode]
    folder = ctx.fresh_dir("hot-journal-" + mode)
    ctx.fixtures.install("rollback", folder)
    db = os.path.join(folder, "db.db")
    peer = Py4Peer(ctx.venv_python)
    try:
        opened = peer.open(db, common.PASSPHRASES[ENV_OLD], pragmas=["journal_mode = %s" % mode])
        held = peer.hold_write(rows=ctx.fixtures.rows // 2) if opened.get("ok") else opened
    finally:
        peer.kill()
    journal = db + "-journal"
    problem = None
    if not held.get("ok"):
        problem = "writer failed: %s" % held
    elif not os.path.exists(journal) or os.path.getsize(journal) == 0:
        problem = "no hot journal was left (%s)" % common.listing(folder)
    cache[mode] = (folder, problem)
    return cache[mode]


def states(ctx, mode):
    """(label, natural?, {file name: source path}) of the three states of this journal mode."""
    tpl = ctx.fixtures.path
    wal_files = {"db.db-wal": tpl("wal", "db.db-wal"), "db.db-shm": tpl("wal", "db.db-shm")}
    if mode == "wal":
        jfolder, problem = hot_journal(ctx, "delete")
        journal = {"db.db-journal": os.path.join(jfolder, "db.db-journal")}
        wal_db = {"db.db": tpl("wal", "db.db")}
        return problem, [
            ("wal", True, dict(wal_db, **wal_files)),
            ("journal (grafted)", False, dict(wal_db, **journal)),
            ("both (grafted)", False, dict(dict(wal_db, **wal_files), **journal)),
        ]
    jfolder, problem = hot_journal(ctx, mode)
    hot = {"db.db": os.path.join(jfolder, "db.db"), "db.db-journal": os.path.join(jfolder, "db.db-journal")}
    return problem, [
        ("journal", True, hot),
        ("wal (grafted)", False, dict({"db.db": tpl("rollback", "db.db")}, **wal_files)),
        ("both (grafted)", False, dict(hot, **wal_files)),
    ]


def lay_out(ctx, label, files):
    """A fresh folder holding copies of `files` (name -> source)."""
    folder = ctx.fresh_dir("wrongkey-" + label.split()[0])
    for name, source in files.items():
        shutil.copy2(source, os.path.join(folder, name))
    return folder


def run_mode(ctx, sc, mode):
    problem, cases = states(ctx, mode)
    if not sc.check(problem is None, "harness: could not make the state", problem or ""):
        return
    expected = ctx.fixtures.checksums["wal" if mode == "wal" else "rollback"]
    for label, natural, files in cases:
        if natural:
            # Control: the right key opens the untouched state (else the state itself is wrong).
            folder = lay_out(ctx, label, files)
            found = common.probe(ctx, os.path.join(folder, "db.db"), common.passphrase_args(ENV_OLD))
            sc.check(found.opened and found.integrity_ok and found.checksum == expected,
                     "control: right key fails on the untouched state",
                     "%s: %s %s %s" % (label, found.result.describe(), found.integrity, found.checksum))
            common.remove_tree(folder)
        for command, argv in COMMANDS:
            where = "%s, %s" % (label, command)
            folder = lay_out(ctx, label, files)
            db = os.path.join(folder, "db.db")
            before = common.snapshot(folder)
            result = common.cli(ctx, argv(db) + common.passphrase_args(ENV_WRONG))
            sc.runs += 1
            sc.check(result.returncode == 77, "wrong key: exit not 77", "%s: %s" % (where, result.describe()))
            changed = common.diff_snapshots(before, common.snapshot(folder))
            sc.counters["files altered by a wrong key"] += bool(changed)
            sc.check(not changed, "wrong key altered files", "%s: %s" % (where, changed))
            if natural:
                after = common.probe(ctx, db, common.passphrase_args(ENV_OLD))
                sc.check(after.opened and after.integrity_ok and after.checksum == expected,
                         "right key fails after a wrong-key attempt",
                         "%s: %s, integrity %s, rows %s (expected %s)" % (
                             where, after.result.describe(), after.integrity, after.checksum, expected))
            if not (ctx.keep and changed):
                common.remove_tree(folder)
