"""Shared plumbing for the harness: running cipherdb, keys, probing databases, scanning folders.

Everything here exists so that the scenario modules can say *what* they check in a few lines:
  * `Context` holds the binary, the temporary root, the passphrases (handed to cipherdb only through
    environment variables named on its command line, never as values on argv) and the RNG.
  * `run` starts any child with a timeout, so the harness never hangs, and reports a death by
    signal separately from an exit code.
  * `probe` opens a database with one key through `cipherdb query` and returns integrity_check, the
    row count and checksum of the fixture rows, and the peer rows present.
  * `snapshot`, `scan_plaintext` and `listing` look at every file of a folder, hidden ones included.
  * `Scenario` records checks and failures; the summary table is built from it.
"""
import collections
import csv
import hashlib
import io
import os
import shutil
import signal
import subprocess
import time

# The marker stored in every fixture row. Finding it in a file other than an expected plaintext
# output means plaintext leaked.
CANARY = "PLAINTEXT-CANARY-"
SQLITE_HEADER = b"SQLite format 3\x00"

# Environment variable names through which passphrases reach cipherdb.
ENV_OLD, ENV_NEW, ENV_WRONG = "HARNESS_OLD_PASS", "HARNESS_NEW_PASS", "HARNESS_WRONG_PASS"
ENV_KS, ENV_KS_NEW = "HARNESS_KS_PASS", "HARNESS_KS_NEW_PASS"

PASSPHRASES = {
    ENV_OLD: "harness old passphrase 1",
    ENV_NEW: "harness new passphrase 2",
    ENV_WRONG: "harness WRONG passphrase 3",
    ENV_KS: "harness keystore passphrase 4",
    ENV_KS_NEW: "harness keystore passphrase 5",
}

# Rows of the fixture table carry the canary; rows a second process inserts carry this prefix.
PEER_PREFIX = "peer-"

# The probe: integrity_check, then count and checksum of the fixture rows, then every peer row.
CHECKSUM_SQL = (
    "PRAGMA integrity_check; "
    "SELECT count(*) AS n, total(id) AS ids, total(length(v)) AS len, "
    "total(unicode(substr(v, 18 + id % 61, 1)) * (id % 1009)) AS mix "
    "FROM r WHERE v NOT LIKE '" + PEER_PREFIX + "%'; "
    "SELECT v AS peer FROM r WHERE v LIKE '" + PEER_PREFIX + "%' ORDER BY v"
)

DEFAULT_TIMEOUT = 60.0


class Context:
    """What every scenario needs: the binary, the temp root, the RNG, and run options."""

    def __init__(self, binary, root, rng, kills, keep, verbose, venv_python, sqlcipher_shell,
                 sqlite_shell):
        self.binary = binary
        self.root = root
        self.rng = rng
        self.kills = kills
        self.keep = keep
        self.verbose = verbose
        self.venv_python = venv_python
        self.sqlcipher_shell = sqlcipher_shell
        self.sqlite_shell = sqlite_shell
        self.is_root = os.geteuid() == 0
        self._counter = 0
        self.fixtures = None  # set by harness.py once the templates are built
        self.cache = {}  # states that scenarios build once and share (hot journals)
        # TMPDIR of every child points inside the root, so no temporary escapes the cleanup.
        self.tmpdir = os.path.join(root, "tmp")
        os.makedirs(self.tmpdir)
        os.chmod(self.tmpdir, 0o1777)  # the read-only-folder fault runs cipherdb as nobody

    def env(self, extra=None):
        """The environment for a cipherdb child: ours, the passphrases, no stray CIPHERDB_*."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("CIPHERDB_")}
        env.update(PASSPHRASES)
        env["LC_ALL"] = "C.UTF-8"
        env["TMPDIR"] = env["SQLITE_TMPDIR"] = self.tmpdir
        if extra:
            env.update(extra)
        return env

    def fresh_dir(self, label):
        """A new, empty folder under the root for one iteration (names never repeat)."""
        self._counter += 1
        path = os.path.join(self.root, "%s-%05d" % (label, self._counter))
        os.makedirs(path)
        return path


class Result:
    """How a child ended: exit code or signal, its output, and how long it ran."""

    def __init__(self, argv, returncode, stdout, stderr, duration, timed_out=False):
        self.argv = argv
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.duration = duration
        self.timed_out = timed_out

    @property
    def signal(self):
        """The signal that killed the child, or None when it exited by itself."""
        return -self.returncode if self.returncode is not None and self.returncode < 0 else None

    @property
    def output(self):
        return self.stdout + self.stderr

    def describe(self):
        """One short line for failure reports: exit code or signal, and the first error line."""
        if self.timed_out:
            how = "timed out after %.0fs" % self.duration
        elif self.signal:
            how = "killed by %s" % signal.Signals(self.signal).name
        else:
            how = "exit %d" % self.returncode
        first = next((line for line in self.stderr.splitlines() if line.strip()), "")
        return how + (": " + first[:160] if first else "")


def run(argv, env=None, timeout=DEFAULT_TIMEOUT, preexec_fn=None, stdin_text=None, cwd=None):
    """Run a child to completion with a hard timeout (killed, never waited on forever)."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, preexec_fn=preexec_fn,
                            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(stdin_text.encode() if stdin_text is not None else None,
                                    timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        timed_out = True
    return Result(argv, proc.returncode, out.decode("utf-8", "replace"),
                  err.decode("utf-8", "replace"), time.monotonic() - start, timed_out)


def cli(ctx, args, extra_env=None, timeout=DEFAULT_TIMEOUT, preexec_fn=None):
    """Run cipherdb with args (keys named by environment variable only)."""
    return run([ctx.binary] + list(args), env=ctx.env(extra_env), timeout=timeout,
               preexec_fn=preexec_fn)


def run_and_kill(ctx, args, delay, extra_env=None):
    """Start cipherdb, SIGKILL it `delay` seconds later (if still running); say if it was killed."""
    proc = subprocess.Popen([ctx.binary] + list(args), env=ctx.env(extra_env),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    start = time.monotonic()
    deadline = start + delay
    while True:
        if proc.poll() is not None:
            break
        now = time.monotonic()
        if now >= deadline:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(min(0.002, deadline - now))
    try:
        _, err = proc.communicate(timeout=DEFAULT_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    killed = proc.returncode == -signal.SIGKILL
    return killed, proc.returncode, err.decode("utf-8", "replace")


def passphrase_args(env_name):
    return ["--passphrase-env", env_name]


def new_passphrase_args(env_name):
    return ["--new-passphrase-env", env_name]


def keystore_args(keystore, env_name=ENV_KS):
    return ["--keystore", keystore, "--keystore-passphrase-env", env_name]


class Probe:
    """What one key attempt found: exit code, integrity, fixture count/checksum, peer rows."""

    def __init__(self, result):
        self.result = result
        self.rc = result.returncode
        self.integrity = None
        self.checksum = None
        self.peer_rows = []
        if self.rc == 0:
            self._parse(result.stdout)

    def _parse(self, text):
        # --csv prints one block per statement (header row, rows), blocks separated by a blank line.
        blocks = [b for b in text.strip().split("\n\n") if b.strip()]
        for block in blocks:
            rows = list(csv.reader(io.StringIO(block)))
            header, body = rows[0], rows[1:]
            if header == ["integrity_check"]:
                self.integrity = [row[0] for row in body]
            elif header[:1] == ["n"]:
                self.checksum = tuple(body[0]) if body else None
            elif header == ["peer"]:
                self.peer_rows = [row[0] for row in body]

    @property
    def opened(self):
        return self.rc == 0 and self.integrity is not None

    @property
    def integrity_ok(self):
        return self.integrity == ["ok"]


def probe(ctx, db, key_args, extra_env=None):
    """Open db with one key through `cipherdb query` and measure it (see Probe)."""
    return Probe(cli(ctx, ["query", db, CHECKSUM_SQL, "--csv"] + key_args, extra_env))


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def walk_files(folder):
    """Every regular file under folder (hidden ones and subfolders included), sorted."""
    found = []
    for base, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(base, name)
            if os.path.isfile(path) and not os.path.islink(path):
                found.append(path)
    return sorted(found)


def listing(folder):
    """Relative names of every file under folder, for leftover reports."""
    return sorted(os.path.relpath(p, folder) for p in walk_files(folder))


def snapshot(folder):
    """Name -> sha256 of every file under folder: to prove a failed command changed nothing."""
    return {os.path.relpath(p, folder): sha256_file(p) for p in walk_files(folder)}


def diff_snapshots(before, after):
    """Describe how two snapshots differ ('' when identical)."""
    parts = []
    for name in sorted(set(before) | set(after)):
        if name not in after:
            parts.append("%s removed" % name)
        elif name not in before:
            parts.append("%s appeared" % name)
        elif before[name] != after[name]:
            parts.append("%s changed" % name)
    return ", ".join(parts)


def scan_plaintext(folder, allowed=()):
    """Files under folder that hold the canary or an SQLite plaintext header, except `allowed`."""
    allowed = {os.path.abspath(p) for p in allowed}
    marker = CANARY.encode()
    leaks = []
    for path in walk_files(folder):
        if os.path.abspath(path) in allowed:
            continue
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        reasons = []
        if marker in data:
            reasons.append("canary x%d" % data.count(marker))
        if SQLITE_HEADER in data:
            reasons.append("'SQLite format 3' header")
        if reasons:
            leaks.append("%s (%s, %d bytes)" % (os.path.relpath(path, folder), ", ".join(reasons),
                                                len(data)))
    return leaks


class Scenario:
    """Checks of one scenario: counts, the failures (with a reason key for the table), notes."""

    def __init__(self, name, group, description):
        self.name = name
        self.group = group
        self.description = description
        self.runs = 0
        self.passed = 0
        self.failed = 0
        self.reasons = collections.Counter()
        self.examples = {}
        self.counters = collections.Counter()
        self.notes = []
        self.skipped = None
        self.elapsed = 0.0
        self.verbose = False  # print each failure as it happens (harness.py -v)

    def check(self, ok, reason, detail=""):
        """Record one check; `reason` groups failures in the summary, `detail` is one example."""
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            self.reasons[reason] += 1
            self.examples.setdefault(reason, detail)
            if self.verbose:
                print("\n    FAIL %s: %s" % (reason, detail[:300]), end="", flush=True)
        return ok

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)

    @property
    def ok(self):
        return self.failed == 0 and self.skipped is None


def copy_files(src_folder, names, dst_folder, rename=None):
    """Copy named files (those that exist) from one folder to another, keeping their modes."""
    for name in names:
        src = os.path.join(src_folder, name)
        if os.path.exists(src):
            dst_name = rename(name) if rename else name
            shutil.copy2(src, os.path.join(dst_folder, dst_name))


def remove_tree(path):
    """Remove a folder even if a scenario left it read-only."""
    if not os.path.exists(path):
        return
    for base, dirs, _files in os.walk(path):
        for name in dirs:
            try:
                os.chmod(os.path.join(base, name), 0o700)
            except OSError:
                pass
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass
    shutil.rmtree(path, ignore_errors=True)
