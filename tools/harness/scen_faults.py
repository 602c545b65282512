"""Faults: every writer command under a full disk, a file size limit, a held lock, a read-only folder.

For each writer (create, rekey page by page, rekey by copy, encrypt, decrypt, export in its three
formats, salvage, keys rotate) and each fault:
  disk-full     the folder is on a small tmpfs filled so the command runs out of space (root only);
  fsize         RLIMIT_FSIZE (`ulimit -f`) set in the child: writes beyond it fail with EFBIG and
                SIGXFSZ, which must not kill the process;
  write-lock    the stock sqlcipher (or sqlite3) shell holds BEGIN IMMEDIATE on the source;
  readonly-dir  the folder is mode 0555 (as root the command runs as `nobody`, since root ignores
                permissions);
the checks are: no death by signal, the documented exit code (74 for I/O or a full disk, 75 for a
lock, 73 when an output cannot be created; readers of a locked file may also succeed), a message
that names the file, every file that was there before byte-identical (the keystore of a rotation
must still open), and nothing left in the folder.
"""
import os
import pwd
import resource

import common
from common import ENV_NEW, ENV_OLD
from peers import PeerError, ShellPeer

_MOUNTS = []


def unmount_all():
    """Unmount every tmpfs this module mounted (called by harness.py at the end, always)."""
    while _MOUNTS:
        path = _MOUNTS.pop()
        result = common.run(["umount", path], timeout=30)
        if result.returncode != 0:
            common.run(["umount", "-l", path], timeout=30)


def mount_tmpfs(path, size_mb):
    os.makedirs(path, exist_ok=True)
    result = common.run(["mount", "-t", "tmpfs", "-o", "size=%dm,mode=0700" % size_mb, "tmpfs", path],
                        timeout=30)
    if result.returncode == 0:
        _MOUNTS.append(path)
        return None
    return result.describe()


class Writer:
    """One writer command: template, argv, the output it makes, files a message may name."""

    def __init__(self, name, template, argv, output=None, reads_only=False, in_place=False):
        self.name = name
        self.template = template
        self.argv = argv  # function(folder, schema) -> argv
        self.output = output
        self.reads_only = reads_only  # only reads the source (a lock may let it succeed)
        self.in_place = in_place


def _db(folder, name="db.db"):
    return os.path.join(folder, name)


WRITERS = [
    Writer("create", None, lambda f, schema: ["create", _db(f, "new.db"), "--schema", schema]
           + common.passphrase_args(ENV_OLD), output="new.db"),
    Writer("rekey-pages", "rollback", lambda f, _s: ["rekey", _db(f)] + common.passphrase_args(ENV_OLD)
           + common.new_passphrase_args(ENV_NEW), in_place=True),
    Writer("rekey-copy", "rollback", lambda f, _s: ["rekey", _db(f), "--page-size", "4096"]
           + common.passphrase_args(ENV_OLD) + common.new_passphrase_args(ENV_NEW)),
    Writer("encrypt", "plain", lambda f, _s: ["encrypt", _db(f, "plain.db"), _db(f, "out.db")]
           + common.new_passphrase_args(ENV_NEW), output="out.db", reads_only=True),
    Writer("decrypt", "rollback", lambda f, _s: ["decrypt", _db(f), _db(f, "out.db")]
           + common.passphrase_args(ENV_OLD), output="out.db", reads_only=True),
    Writer("export", "rollback", lambda f, _s: ["export", _db(f), _db(f, "out.db")]
           + common.passphrase_args(ENV_OLD) + common.new_passphrase_args(ENV_NEW),
           output="out.db", reads_only=True),
    Writer("export-plaintext", "rollback", lambda f, _s: ["export", _db(f), _db(f, "out.db"),
                                                          "--plaintext"] + common.passphrase_args(ENV_OLD),
           output="out.db", reads_only=True),
    Writer("export-sql", "rollback", lambda f, _s: ["export", _db(f), _db(f, "out.sql"), "--format",
                                                    "sql"] + common.passphrase_args(ENV_OLD),
           output="out.sql", reads_only=True),
    Writer("salvage", "rollback", lambda f, _s: ["salvage", _db(f), _db(f, "out.db")]
           + common.passphrase_args(ENV_OLD), output="out.db", reads_only=True),
    Writer("keys-rotate", "ks", lambda f, _s: ["keys", "rotate", "k1", "--database", _db(f, "kdb1.db")]
           + common.keystore_args(os.path.join(f, "keystore-dir", "keystore")), in_place=True),
]

FAULTS = [
    ("disk-full", "the folder on a full tmpfs (ENOSPC)"),
    ("fsize", "RLIMIT_FSIZE in the child (EFBIG / SIGXFSZ)"),
    ("write-lock", "another process holds BEGIN IMMEDIATE on the source"),
    ("readonly-dir", "the folder is read-only (0555)"),
]


def scenarios():
    return [("faults-" + name, "faults", what, lambda ctx, sc, name=name: run_fault(ctx, sc, name))
            for name, what in FAULTS]


def expected_codes(fault, writer):
    if fault in ("disk-full", "fsize"):
        return {74}
    if fault == "write-lock":
        return {0, 75} if writer.reads_only else {75}
    return {73, 74} if writer.in_place else {73}


def fsize_limiter(limit):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def as_nobody():
    """preexec_fn: become `nobody`, for whom a 0555 folder really is read-only."""
    entry = pwd.getpwnam("nobody")

    def apply():
        os.setgroups([])
        os.setgid(entry.pw_gid)
        os.setuid(entry.pw_uid)
    return apply, entry


def fill(folder, keep_free):
    """Fill the file system of `folder` until only about keep_free bytes remain."""
    filler = os.path.join(folder, "filler")
    stats = os.statvfs(folder)
    size = max(0, stats.f_bavail * stats.f_frsize - keep_free)
    chunk = b"\0" * (1 << 20)
    with open(filler, "wb") as handle:
        while size > 0:
            try:
                handle.write(chunk[:min(size, len(chunk))])
                handle.flush()
            except OSError:
                break
            size -= min(size, len(chunk))
    return filler


def lock_holder(ctx, writer, folder):
    """Start a shell that holds BEGIN IMMEDIATE on the writer's source, or None if there is none."""
    fx = ctx.fixtures
    if writer.template is None:
        return None, None
    if writer.template == "plain":
        shell = ShellPeer(ctx.sqlite_shell, _db(folder, "plain.db"), label="sqlite3 shell")
        answer = shell.open(None, None)
    elif writer.template == "ks":
        shell = ShellPeer(ctx.sqlcipher_shell, _db(folder, "kdb1.db"))
        answer = shell.open(None, fx.raw_key_hex, raw=True, page_size=fx.key_page_size)
    else:
        shell = ShellPeer(ctx.sqlcipher_shell, _db(folder))
        answer = shell.open(None, common.PASSPHRASES[ENV_OLD])
    lines = shell.step("BEGIN IMMEDIATE;") if answer.get("ok") else ["open failed"]
    if not answer.get("ok") or any("Error" in line for line in lines):
        shell.kill()
        return None, "cannot take the lock: %s %s" % (answer, lines)
    return shell, None


def run_fault(ctx, sc, fault):
    base = os.path.join(ctx.root, "faults-" + fault)
    os.makedirs(base)
    if fault == "disk-full":
        if not ctx.is_root:
            sc.skipped = "not root: no tmpfs; faults-fsize covers running out of space"
            return
        problem = mount_tmpfs(base, 24)
        if problem:
            sc.skipped = "mount tmpfs refused: " + problem
            return
    nobody = None
    if fault == "readonly-dir" and ctx.is_root:
        nobody = as_nobody()
        os.chmod(ctx.root, 0o711)  # let nobody reach its folders (secrets stay 0700)
        sc.note("root: the command runs as nobody so that 0555 is enforced")
    try:
        for writer in WRITERS:
            if fault == "write-lock" and writer.template is None:
                sc.note("create: no existing file to lock, not run under write-lock")
                continue
            run_case(ctx, sc, fault, writer, base, nobody)
    finally:
        if fault == "readonly-dir":
            os.chmod(ctx.root, 0o700)
        if fault == "disk-full":
            unmount_all()


def run_case(ctx, sc, fault, writer, base, nobody):
    where = writer.name
    case_dir = os.path.join(base, writer.name)
    folder = os.path.join(case_dir, "data")
    os.makedirs(folder)
    # The schema for create lives outside the folder under test, readable by whoever runs.
    schema = os.path.join(case_dir, "schema.sql")
    with open(schema, "w") as handle:
        handle.write("CREATE TABLE r(id INTEGER PRIMARY KEY, v TEXT NOT NULL);\n")
    if writer.template:
        ctx.fixtures.install(writer.template, folder)
    sc.runs += 1
    preexec, holder, filler = None, None, None
    if fault == "disk-full":
        filler = fill(case_dir, 0 if writer.name == "create" else 1 << 20)
    elif fault == "fsize":
        preexec = fsize_limiter(1024 if writer.name == "create" else 512 * 1024)
    elif fault == "write-lock":
        holder, problem = lock_holder(ctx, writer, folder)
        if problem:
            sc.check(False, "harness: cannot hold the lock", "%s: %s" % (where, problem))
            return
    elif fault == "readonly-dir":
        if nobody:
            preexec, entry = nobody
            for path in [case_dir, schema] + [os.path.join(b, n) for b, ds, fs in os.walk(folder)
                                              for n in ds + fs] + [folder]:
                os.chown(path, entry.pw_uid, entry.pw_gid)
        os.chmod(folder, 0o555)
    before = common.snapshot(folder)
    listed_before = common.listing(folder)
    try:
        result = common.cli(ctx, writer.argv(folder, schema), preexec_fn=preexec)
    finally:
        if holder:
            try:
                holder.step("ROLLBACK;")
            except PeerError:
                pass
            holder.close()
        if filler:
            os.unlink(filler)
        os.chmod(folder, 0o755)
    judge(ctx, sc, fault, writer, folder, result, before, listed_before)
    common.remove_tree(case_dir)


def judge(ctx, sc, fault, writer, folder, result, before, listed_before):
    where = writer.name
    if not sc.check(result.signal is None, "killed by a signal", "%s: %s" % (where, result.describe())):
        sc.counters["signal deaths"] += 1
    sc.check(not result.timed_out, "timed out", where)
    codes = expected_codes(fault, writer)
    sc.counters["%s exit %s" % (where, result.returncode)] += 1
    sc.check(result.returncode in codes, "wrong exit code",
             "%s: expected %s, got %s" % (where, "/".join(map(str, sorted(codes))), result.describe()))
    if result.returncode not in (0, None) and result.signal is None:
        names = [os.path.basename(p) for p in result.argv if isinstance(p, str) and
                 os.path.dirname(p) == folder]
        sc.check(any(n in result.stderr for n in names), "message does not name the file",
                 "%s: %s" % (where, result.stderr.strip()[:200]))
    after = common.snapshot(folder)
    keep = {n: h for n, h in before.items() if not n.startswith("keystore-dir/")}
    changed = common.diff_snapshots(keep, {n: h for n, h in after.items() if n in keep})
    sc.check(not changed, "original changed", "%s: %s" % (where, changed))
    if writer.template == "ks":
        listed = common.cli(ctx, ["keys", "list"] + common.keystore_args(
            os.path.join(folder, "keystore-dir", "keystore")))
        sc.check(listed.returncode == 0, "keystore no longer opens", "%s: %s" % (where, listed.describe()))
    allowed = set(listed_before) | {"keystore-dir/keystore.lock"}
    if result.returncode == 0 and writer.output:
        allowed.add(writer.output)
    extra = [n for n in common.listing(folder) if n not in allowed]
    sc.check(not extra, "leftover files", "%s: %s" % (where, ", ".join(extra[:5])))
    if result.returncode == 0 and writer.output:
        sc.check(os.path.exists(os.path.join(folder, writer.output)), "success without output", where)
