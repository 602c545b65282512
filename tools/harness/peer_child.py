#!/usr/bin/env python3
"""A second SQLCipher process that the harness drives step by step (runs under the SQLCipher 4 venv).

The harness needs a real, independent process that holds a database open while `cipherdb` changes
its key: an application that read once and went idle, one inside a read transaction, one writing in
WAL mode, or one killed in the middle of a write transaction (to leave a hot journal or a -wal).
This program is that process. It reads one JSON request per line on stdin and answers each with
one JSON line on stdout, flushed, so the harness always knows which step has happened. Keys arrive
inside the requests on stdin, never on the command line.

Requests ({"cmd": ...}) and what they do:
  open       path, key, raw (bool: key is 64 hex chars), compat (3|4), page_size, timeout (s),
             pragmas (list of "name = value" run right after the key)
  count      SELECT count(*) FROM r                          -> {"count": n}
  begin_read BEGIN; SELECT count(*) FROM r (holds a read snapshot / SHARED lock)
  end        ROLLBACK the open transaction, if any
  insert     tags: [..]; each tag is INSERT-ed in its own autocommit transaction -> {"acked": [..],
             "errors": [..]}. A tag is "acked" only when its commit returned success.
  hold_write rows (int), cache_size: BEGIN, rewrite `rows` rows with a tiny page cache so SQLite
             spills dirty pages into the database file; answers, then waits (harness SIGKILLs it)
  exec       sql: run one statement, return its rows
  close      close the connection
  exit       leave
Any error is answered as {"ok": false, "error": "..."}; the process keeps going.
"""
import json
import sys

import sqlcipher3


def quote(text):
    """Quote text as an SQL string literal (PRAGMA key takes no bound parameters)."""
    return "'" + text.replace("'", "''") + "'"


class Peer:
    """One connection and the requests that act on it."""

    def __init__(self):
        self.db = None

    def open(self, req):
        # isolation_level=None: autocommit, so each INSERT is its own committed transaction
        # unless we say BEGIN ourselves. A short busy timeout keeps a blocked peer from stalling.
        self.db = sqlcipher3.connect(req["path"], timeout=float(req.get("timeout", 1.0)),
                                     isolation_level=None)
        key = req["key"]
        if req.get("raw"):
            self.db.execute("PRAGMA key = \"x'%s'\"" % key)
        else:
            self.db.execute("PRAGMA key = " + quote(key))
        if req.get("compat"):
            self.db.execute("PRAGMA cipher_compatibility = %d" % int(req["compat"]))
        if req.get("page_size"):
            self.db.execute("PRAGMA cipher_page_size = %d" % int(req["page_size"]))
        for pragma in req.get("pragmas", []):
            self.db.execute("PRAGMA " + pragma).fetchall()
        # Prove the key now, as an application would on its first statement.
        count = self.db.execute("SELECT count(*) FROM r").fetchone()[0]
        return {"count": count}

    def count(self, _req):
        return {"count": self.db.execute("SELECT count(*) FROM r").fetchone()[0]}

    def begin_read(self, _req):
        self.db.execute("BEGIN")
        return {"count": self.db.execute("SELECT count(*) FROM r").fetchone()[0]}

    def end(self, _req):
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
        return {}

    def insert(self, req):
        acked, errors = [], []
        for tag in req["tags"]:
            try:
                self.db.execute("INSERT INTO r(v) VALUES (?)", (tag,))
                acked.append(tag)
            except sqlcipher3.Error as error:
                errors.append("%s: %s" % (tag, error))
        return {"acked": acked, "errors": errors}

    def hold_write(self, req):
        self.db.execute("PRAGMA cache_size = %d" % int(req.get("cache_size", 8)))
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute("UPDATE r SET v = v || '+' WHERE id <= ?", (int(req["rows"]),))
        return {"in_transaction": self.db.in_transaction}

    def exec(self, req):
        return {"rows": [list(row) for row in self.db.execute(req["sql"]).fetchall()]}

    def close(self, _req):
        if self.db is not None:
            self.db.close()
            self.db = None
        return {}


def main():
    peer = Peer()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            cmd = req["cmd"]
            if cmd == "exit":
                print(json.dumps({"ok": True}), flush=True)
                return 0
            answer = getattr(peer, cmd)(req)
            answer["ok"] = True
        except Exception as error:  # report every failure to the harness, never die silently
            answer = {"ok": False, "error": "%s: %s" % (type(error).__name__, error)}
        print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
