"""`cipherdb verify` and a damaged WAL frame: it must not say OK while commits would be dropped.

SQLite stops reading a -wal at the first frame whose checksum fails and silently discards that
commit and every later one. The WAL template holds five commits in its -wal (written by the stock
shell, which was then SIGKILLed so no checkpoint ran). Each case flips one byte in the page data of
a frame (one in the middle commit, one in the last commit) and runs `cipherdb verify` with the right
key. Expected: exit 65, a message naming the bad frame (its number, counted from 0 or 1) and how
many commits would be lost, never "result: OK", and the database and -wal left byte-identical
(verify must not checkpoint the truncated WAL; the -shm index may be rebuilt, as by any reader).
The undamaged copy must verify OK (control).
"""
import os
import re
import shutil
import struct

import common
from common import ENV_OLD


def scenarios():
    return [("verify-wal-frame", "verify", "verify with a damaged frame in the -wal",
             lambda ctx, sc: run(ctx, sc))]


def parse_wal(path):
    """(page size, [(frame index, is commit frame)]) of a WAL file."""
    with open(path, "rb") as handle:
        data = handle.read()
    page_size = struct.unpack(">I", data[8:12])[0]
    frame_size = 24 + page_size
    frames = []
    for index in range((len(data) - 32) // frame_size):
        offset = 32 + index * frame_size
        commit_size = struct.unpack(">I", data[offset + 4:offset + 8])[0]
        frames.append((index, commit_size != 0))
    return page_size, frames


def install(ctx, label):
    folder = ctx.fresh_dir(label)
    for name in ("db.db", "db.db-wal", "db.db-shm"):
        shutil.copy2(ctx.fixtures.path("wal", name), os.path.join(folder, name))
    return folder


def run(ctx, sc):
    verify = lambda db: common.cli(ctx, ["verify", db] + common.passphrase_args(ENV_OLD))
    folder = install(ctx, "verify-control")
    control = verify(os.path.join(folder, "db.db"))
    sc.check(control.returncode == 0, "control: undamaged WAL database does not verify",
             control.describe())
    common.remove_tree(folder)

    page_size, frames = parse_wal(ctx.fixtures.path("wal", "db.db-wal"))
    commit_ends = [index for index, is_commit in frames if is_commit]
    if not sc.check(len(commit_ends) >= 3, "harness: the WAL template has too few commits",
                    "%d commits" % len(commit_ends)):
        return
    sc.note("-wal: %d frames of %d bytes, %d commits" % (len(frames), page_size, len(commit_ends)))
    middle = len(commit_ends) // 2
    for label, commit in (("middle commit", middle), ("last commit", len(commit_ends) - 1)):
        first_frame = commit_ends[commit - 1] + 1 if commit > 0 else 0
        lost = len(commit_ends) - commit
        folder = install(ctx, "verify-damaged")
        db = os.path.join(folder, "db.db")
        with open(db + "-wal", "r+b") as handle:
            handle.seek(32 + first_frame * (24 + page_size) + 24 + 100)
            byte = handle.read(1)
            handle.seek(-1, os.SEEK_CUR)
            handle.write(bytes([byte[0] ^ 0x5A]))
        before = common.snapshot(folder)
        result = verify(db)
        sc.runs += 1
        where = "frame %d (0-based) of %s, %d commit(s) would be lost" % (first_frame, label, lost)
        text = result.output
        sc.counters["verify exit %s" % result.returncode] += 1
        sc.check("result: OK" not in text and result.returncode != 0, "verify says OK",
                 "%s: %s" % (where, result.describe() + " / " + text.strip().splitlines()[-1][:120]
                             if text.strip() else where))
        sc.check(result.returncode == 65, "verify exit not 65", "%s: %s" % (where, result.describe()))
        named = {int(n) for n in re.findall(r"frame\D{0,3}(\d+)", text, re.IGNORECASE)}
        sc.check(bool(named & {first_frame, first_frame + 1}), "bad frame not named",
                 "%s; frames named: %s" % (where, sorted(named) or "none"))
        # "3 commits would be lost", "3 later commits", "commits lost: 3" all count.
        counted = {int(n) for n in re.findall(r"(\d+)\s+(?:\w+\s+){0,2}commits?", text, re.IGNORECASE)}
        counted |= {int(n) for n in re.findall(r"commits?\s+(?:\w+\s*){0,2}:?\s*(\d+)", text,
                                               re.IGNORECASE)}
        sc.check(lost in counted, "lost commits not counted",
                 "%s; counts named: %s" % (where, sorted(counted) or "none"))
        # The -shm is SQLite's shared index, which any reader may rebuild; db and -wal may not move.
        after = common.snapshot(folder)
        changed = common.diff_snapshots({n: h for n, h in before.items() if not n.endswith("-shm")},
                                        {n: h for n, h in after.items() if not n.endswith("-shm")})
        sc.check(not changed, "verify altered the database or its -wal", "%s: %s" % (where, changed))
        if not (ctx.keep and sc.failed):
            common.remove_tree(folder)
