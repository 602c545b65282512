"""Live second process: change a key while another real process has the database open.

For each key change (rekey page by page, rekey by copy with --page-size 4096, keys rotate) in rollback
(DELETE) and WAL mode, and for each second process (the SQLCipher 4 python child and the stock
SQLCipher 3.4.1 shell), in each state:
  idle     opened the database and read once, then waits;
  readtxn  inside a read transaction (BEGIN; SELECT) while the command runs, ended afterwards;
  writing  committed some inserts before the command;
the command runs, then the second process (which only knows the old key, like any application that
was not told) tries to insert again. The outcome must be either "refused with exit 75" or "done",
and in both cases EVERY insert the second process saw acknowledged must be present when the
database is opened with the key that now works ("lost commits" must be 0). The next open while the
second process is still there, and the final open after it closed, must both succeed: an old
-wal/-shm left beside a replaced file must not break them. The fixture rows must all be there.
encrypt has no in-place form in this CLI, so it has no live scenario.
"""
import os

import common
from common import ENV_NEW, ENV_OLD, PASSPHRASES, PEER_PREFIX
from peers import PeerError, Py4Peer, ShellPeer

OPS = [
    ("rekey-pages", "rekey page by page (new passphrase)"),
    ("rekey-copy", "rekey by copy (--page-size 4096)"),
    ("keys-rotate", "keys rotate of one database"),
]
MODES = ["delete", "wal"]
PEERS = ["sqlcipher3", "shell"]
STATES = ["idle", "readtxn", "writing"]


def scenarios():
    found = []
    for op, what in OPS:
        for mode in MODES:
            name = "live-%s-%s" % (op, mode)
            description = "%s, %s mode, under a second process" % (what, mode.upper())
            found.append((name, "live", description,
                          lambda ctx, sc, op=op, mode=mode: run_op(ctx, sc, op, mode)))
    return found


class Case:
    """One database set up for a live case: where it is, how each party opens it, the command."""

    def __init__(self, ctx, op, mode, label):
        self.ctx = ctx
        self.folder = ctx.fresh_dir(label)
        fx = ctx.fixtures
        if op == "keys-rotate":
            fx.install("ks", self.folder)
            self.db = os.path.join(self.folder, "kdb1.db")
            self.keystore = os.path.join(self.folder, "keystore-dir", "keystore")
            self.old_args = ["--key-id", "k1"] + common.keystore_args(self.keystore)
            self.new_args = self.old_args
            self.peer_key = dict(key=fx.raw_key_hex, raw=True, page_size=fx.key_page_size)
            self.argv = (["keys", "rotate", "k1", "--database", self.db]
                         + common.keystore_args(self.keystore))
            self.expected = fx.checksums["ks"]
            if mode == "wal":
                common.cli(ctx, ["query", self.db, "PRAGMA journal_mode = WAL"] + self.old_args)
        else:
            fx.install("wal" if mode == "wal" else "rollback", self.folder)
            self.db = os.path.join(self.folder, "db.db")
            self.old_args = common.passphrase_args(ENV_OLD)
            self.new_args = common.passphrase_args(ENV_NEW)
            self.peer_key = dict(key=PASSPHRASES[ENV_OLD], raw=False, page_size=None)
            self.argv = (["rekey", self.db] + self.old_args + common.new_passphrase_args(ENV_NEW)
                         + (["--page-size", "4096"] if op == "rekey-copy" else []))
            self.expected = fx.checksums["wal" if mode == "wal" else "rollback"]
        self.installed = common.listing(self.folder)

    def start_peer(self, kind):
        if kind == "sqlcipher3":
            return Py4Peer(self.ctx.venv_python)
        return ShellPeer(self.ctx.sqlcipher_shell, self.db)


def run_op(ctx, sc, op, mode):
    for kind in PEERS:
        for state in STATES:
            label = "live-%s-%s-%s-%s" % (op, mode, kind, state)
            case = Case(ctx, op, mode, label)
            sc.runs += 1
            failed_before = sc.failed
            peer = case.start_peer(kind)
            try:
                run_case(ctx, sc, case, peer, "%s/%s" % (kind, state), state)
            except PeerError as error:
                sc.check(False, "second process stopped answering", "%s/%s: %s" % (kind, state, error))
            finally:
                peer.kill()
            if not (ctx.keep and sc.failed > failed_before):
                common.remove_tree(case.folder)


def run_case(ctx, sc, case, peer, where, state):
    opened = peer.open(case.db, **case.peer_key)
    if not sc.check(opened.get("ok"), "second process cannot open", "%s: %s" % (where, opened)):
        return
    acked = []
    tag = lambda when, n: "%s%s-%s-%d" % (PEER_PREFIX, where.replace("/", "-"), when, n)
    if state == "readtxn":
        sc.check(peer.begin_read().get("ok"), "second process cannot begin a read", where)
    elif state == "writing":
        done, errors = peer.insert([tag("before", n) for n in range(5)])
        sc.check(len(done) == 5, "second process cannot write before the command", "%s: %s" % (where, errors))
        acked += done
    inode = os.stat(case.db).st_ino
    result = common.cli(ctx, case.argv)
    outcome = {0: "done", 75: "refused (75)"}.get(result.returncode, result.describe().split(":")[0])
    sc.counters["%s: %s" % (state, outcome)] += 1
    sc.check(result.returncode in (0, 75), "command neither succeeded nor refused with 75",
             "%s: %s" % (where, result.describe()))
    if os.path.exists(case.db) and os.stat(case.db).st_ino != inode:
        sc.counters["database replaced by rename"] += 1
    if state == "readtxn":
        peer.end()
    done, _errors = peer.insert([tag("after", n) for n in range(3)])
    acked += done
    sc.counters["acknowledged commits after the command"] += len(done)
    key_now, key_other = ((case.new_args, case.old_args) if result.returncode == 0
                          else (case.old_args, case.new_args))
    # The next opener, while the second process is still there.
    nxt = common.probe(ctx, case.db, key_now)
    sc.check(nxt.opened and nxt.integrity_ok, "next open fails while the second process is open",
             "%s after %s: %s, integrity %s, files %s" % (where, outcome, nxt.result.describe(),
                                                           nxt.integrity, common.listing(case.folder)))
    peer.close()
    leftover_wal = [n for n in common.listing(case.folder) if n.endswith(("-wal", "-shm"))]
    sc.counters["-wal/-shm beside the database after close"] += bool(leftover_wal)
    final = common.probe(ctx, case.db, key_now)
    if not final.opened and key_other is not key_now:
        other = common.probe(ctx, case.db, key_other)
        if other.opened:
            sc.check(False, "opens only with the other key",
                     "%s: command said %s, but the %s key opens" % (
                         where, outcome, "old" if result.returncode == 0 else "new"))
            final = other
    if not sc.check(final.opened, "database opens with no key afterwards",
                    "%s after %s: %s" % (where, outcome, final.result.describe())):
        sc.counters["lost commits"] += len(acked)
        return
    sc.check(final.integrity_ok, "integrity_check not ok", "%s: %s" % (where, final.integrity))
    sc.check(final.checksum == case.expected, "fixture rows lost or changed",
             "%s: %s, expected %s" % (where, final.checksum, case.expected))
    lost = [t for t in acked if t not in final.peer_rows]
    sc.counters["lost commits"] += len(lost)
    sc.check(not lost, "lost commits", "%s after %s: %d of %d acknowledged inserts missing (%s)" % (
        where, outcome, len(lost), len(acked), ", ".join(lost[:3])))
    extra = [n for n in common.listing(case.folder)
             if n not in case.installed and not n.endswith(("-wal", "-shm", ".lock"))]
    sc.check(not extra, "leftover files", "%s: %s" % (where, ", ".join(extra[:5])))
