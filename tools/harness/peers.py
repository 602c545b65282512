"""Second processes that hold a database open while cipherdb works on it.

Two kinds, with one interface (open / count / begin_read / end / insert / close / kill):
  * `Py4Peer`: tools/harness/peer_child.py under the SQLCipher 4 venv (sqlcipher3), driven by JSON
    lines; it opens 3.x files with `PRAGMA cipher_compatibility = 3`.
  * `ShellPeer`: the stock `sqlcipher` shell (SQLCipher 3.4.1, the same library cipherdb links),
    or the plain `sqlite3` shell for plaintext files, driven by SQL on stdin. Each step ends with
    `.print <token>` and the harness reads until it sees the token, so it knows the step is done.
Keys go in on stdin. Every read from a peer has a timeout: a stuck peer is killed, never awaited.
"""
import json
import os
import select
import signal
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STEP_TIMEOUT = 20.0


class PeerError(Exception):
    """The peer did not answer in time or died."""


class _Lines:
    """Line reader over a pipe with a deadline (select + os.read, no blocking readline)."""

    def __init__(self, stream):
        self.fd = stream.fileno()
        self.buffer = b""

    def readline(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise PeerError("no answer within %.0fs" % timeout)
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.fd, 65536)
            if not chunk:
                raise PeerError("peer closed its output (died?)")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode("utf-8", "replace")


class _Process:
    """Common process handling: start, kill by pid, wait with a timeout."""

    label = "peer"

    def _start(self, argv, env=None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=env)
        self.lines = _Lines(self.proc.stdout)

    def _write(self, text):
        try:
            self.proc.stdin.write(text.encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as error:
            raise PeerError("cannot write to %s: %s" % (self.label, error))

    def kill(self):
        """SIGKILL the peer (as a crash would) and reap it."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self._close_pipes()

    def _close_pipes(self):
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def alive(self):
        return self.proc.poll() is None


class Py4Peer(_Process):
    """The sqlcipher3 (SQLCipher 4) child: see peer_child.py for the requests."""

    label = "sqlcipher3 peer"

    def __init__(self, venv_python):
        self._start([venv_python, "-u", os.path.join(HERE, "peer_child.py")])

    def request(self, cmd, **fields):
        fields["cmd"] = cmd
        self._write(json.dumps(fields) + "\n")
        while True:
            line = self.lines.readline(STEP_TIMEOUT)
            if line.startswith("{"):
                return json.loads(line)
            # Anything else (a warning on stderr, merged) is ignored.

    def open(self, path, key, raw=False, page_size=None, pragmas=()):
        return self.request("open", path=path, key=key, raw=raw, compat=3, page_size=page_size,
                            pragmas=list(pragmas), timeout=1.0)

    def count(self):
        return self.request("count")

    def begin_read(self):
        return self.request("begin_read")

    def end(self):
        return self.request("end")

    def insert(self, tags):
        """Insert each tag in its own transaction; return the tags whose commit succeeded."""
        answer = self.request("insert", tags=list(tags))
        return answer.get("acked", []), answer.get("errors", [answer.get("error")])

    def hold_write(self, rows, cache_size=8):
        return self.request("hold_write", rows=rows, cache_size=cache_size)

    def close(self):
        """Close the connection cleanly and end the process."""
        try:
            if self.alive():
                self.request("close")
                self.request("exit")
            self.proc.wait(timeout=10)
        except (PeerError, subprocess.TimeoutExpired):
            self.kill()
        self._close_pipes()


def sql_quote(text):
    return "'" + text.replace("'", "''") + "'"


class ShellPeer(_Process):
    """The stock sqlcipher (or sqlite3) shell, fed SQL on stdin, output unbuffered via stdbuf."""

    def __init__(self, shell, path, label="sqlcipher shell"):
        self.label = label
        self.path = path
        self.token = 0
        # stdbuf -o0: the shell's stdout is a pipe, and we must see each step's answer at once.
        self._start(["stdbuf", "-o0", "-e0", shell, "-batch", path])

    def step(self, sql):
        """Send SQL and dot-commands, wait for our token; return the lines printed before it."""
        self.token += 1
        marker = "HARNESS-STEP-%d" % self.token
        self._write(sql.rstrip() + "\n.print " + marker + "\n")
        lines = []
        while True:
            line = self.lines.readline(STEP_TIMEOUT)
            if line.strip() == marker:
                return lines
            lines.append(line)

    def open(self, _path, key, raw=False, page_size=None, pragmas=()):
        if key is None:
            script = ""
        elif raw:
            script = "PRAGMA key = \"x'%s'\";\n" % key
        else:
            script = "PRAGMA key = %s;\n" % sql_quote(key)
        if page_size:
            script += "PRAGMA cipher_page_size = %d;\n" % page_size
        for pragma in pragmas:
            script += "PRAGMA %s;\n" % pragma
        script += ".timeout 1000\nSELECT 'COUNT', count(*) FROM r;\n"
        return self._count_answer(self.step(script))

    def _count_answer(self, lines):
        for line in lines:
            if line.startswith("COUNT|"):
                return {"ok": True, "count": int(line.split("|")[1])}
        return {"ok": False, "error": " / ".join(lines)[:200]}

    def count(self):
        return self._count_answer(self.step("SELECT 'COUNT', count(*) FROM r;"))

    def begin_read(self):
        return self._count_answer(self.step("BEGIN;\nSELECT 'COUNT', count(*) FROM r;"))

    def end(self):
        self.step("ROLLBACK;")
        return {"ok": True}

    def insert(self, tags):
        """Insert each tag in autocommit; a tag is acked when the shell then reads it back."""
        acked, errors = [], []
        for tag in tags:
            lines = self.step("INSERT INTO r(v) VALUES (%s);\nSELECT 'ACK', count(*) FROM r WHERE v = %s;"
                              % (sql_quote(tag), sql_quote(tag)))
            if "ACK|1" in lines:
                acked.append(tag)
            else:
                errors.append("%s: %s" % (tag, " / ".join(lines)[:160]))
        return acked, errors

    def close(self):
        try:
            if self.alive():
                self._write(".quit\n")
                self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (PeerError, subprocess.TimeoutExpired, OSError):
            self.kill()
        self._close_pipes()
