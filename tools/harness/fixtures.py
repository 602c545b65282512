"""Template databases and keystores, built once per run and copied into each iteration's folder.

Every template is made with the binary under test (create, query, decrypt, encrypt, keys ...) except
the WAL frames, which the stock sqlcipher shell writes and is then SIGKILLed, so that the -wal keeps
committed transactions that no checkpoint has copied into the database yet (what an application
crash leaves). The reference checksum of each template is measured on a scratch copy, so a check
compares a database after a command with what it held before.
"""
import json
import os
import shutil

import common
from common import CANARY, ENV_OLD
from peers import ShellPeer

SCHEMA = "CREATE TABLE r(id INTEGER PRIMARY KEY, v TEXT NOT NULL);\n"


def fill_sql(first, last):
    """Rows first..last: the canary, the row number, 100 random bytes in hex (~230 bytes a row)."""
    return ("WITH RECURSIVE c(i) AS (SELECT %d UNION ALL SELECT i + 1 FROM c WHERE i < %d) "
            "INSERT INTO r(v) SELECT '%s' || printf('%%08d', i) || '-' || hex(randomblob(100)) FROM c"
            % (first, last, CANARY))


class FixtureError(Exception):
    """A template could not be built: the harness cannot run at all."""


class Fixtures:
    """Paths of the templates and what each holds (checksum of the fixture rows)."""

    def __init__(self, ctx, rows):
        self.ctx = ctx
        self.rows = rows
        self.dir = os.path.join(ctx.root, "templates")
        self.secrets = os.path.join(ctx.root, "secrets")
        os.makedirs(self.dir)
        os.makedirs(self.secrets, mode=0o700)
        self.checksums = {}
        self.raw_key_hex = os.urandom(32).hex()
        self.raw_key_file = os.path.join(self.secrets, "k1.key")
        with open(os.open(self.raw_key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
            f.write(self.raw_key_hex)
        self.schema_file = os.path.join(self.secrets, "schema.sql")
        with open(self.schema_file, "w") as f:
            f.write(SCHEMA)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def _ok(self, result, what):
        if result.returncode != 0:
            raise FixtureError("%s: %s" % (what, result.describe()))
        return result

    def build(self):
        """Build every template (a few seconds)."""
        ctx = self.ctx
        cli = lambda args, **kw: common.cli(ctx, args, **kw)
        # 1. Rollback-journal database under a passphrase, page size 1024 (SQLCipher 3 default).
        os.makedirs(self.path("rollback"))
        db = self.path("rollback", "db.db")
        self._ok(cli(["create", db, "--schema", self.schema_file] + common.passphrase_args(ENV_OLD)),
                 "create template")
        self._ok(cli(["query", db, fill_sql(1, self.rows)] + common.passphrase_args(ENV_OLD)),
                 "fill template")
        self.checksums["rollback"] = self._measure("rollback", ["db.db"])

        # 2. The same in WAL mode, with committed transactions still in the -wal.
        os.makedirs(self.path("wal"))
        wal_db = self.path("wal", "db.db")
        shutil.copy2(db, wal_db)
        self._ok(cli(["query", wal_db, "PRAGMA journal_mode = WAL"] + common.passphrase_args(ENV_OLD)),
                 "switch template to WAL")
        self.leave_wal_frames(wal_db, common.PASSPHRASES[ENV_OLD], commits=5, first=self.rows + 1)
        if not os.path.exists(wal_db + "-wal"):
            raise FixtureError("the WAL template has no -wal file")
        self.checksums["wal"] = self._measure("wal", ["db.db", "db.db-wal", "db.db-shm"])

        # 3. A plaintext copy (input of encrypt).
        os.makedirs(self.path("plain"))
        self._ok(cli(["decrypt", db, self.path("plain", "plain.db")] + common.passphrase_args(ENV_OLD)),
                 "decrypt template")

        # 4. Keystores: a fast one (scrypt 2^10) for rotations with two databases under key k1, and
        #    a slower one (2^15) for `keys passwd`, so that it runs for some 100s of ms.
        #    k1 is imported from a raw key file so that a second process can open its databases.
        for name, log2n in (("ks", 10), ("ksp", 15)):
            os.makedirs(self.path(name, "keystore-dir"))
            keystore = self.path(name, "keystore-dir", "keystore")
            self._ok(cli(["keys", "init", "--scrypt-log2n", str(log2n)] + common.keystore_args(keystore)),
                     "keys init")
            self._ok(cli(["keys", "add", "k1", "--from-raw-key-file", self.raw_key_file]
                         + common.keystore_args(keystore)), "keys add")
        for db_name in ("kdb1.db", "kdb2.db"):
            self._ok(cli(["encrypt", self.path("plain", "plain.db"), self.path("ks", db_name),
                          "--new-key-id", "k1"] + common.keystore_args(self.path("ks", "keystore-dir",
                                                                                   "keystore"))),
                     "encrypt under k1")
        self.checksums["ks"] = self.checksums["rollback"]
        info = cli(["info", self.path("ks", "kdb1.db"), "--json", "--key-id", "k1"]
                   + common.keystore_args(self.path("ks", "keystore-dir", "keystore")))
        self.key_page_size = 4096
        if info.returncode == 0 and '"page_size":' in info.stdout:
            self.key_page_size = json.loads(info.stdout).get("page_size", 4096)

    def leave_wal_frames(self, db, key, commits, first, raw=False, page_size=None):
        """Commit `commits` transactions into db's -wal with the stock shell, then SIGKILL it."""
        shell = ShellPeer(self.ctx.sqlcipher_shell, db)
        try:
            answer = shell.open(db, key, raw=raw, page_size=page_size,
                                pragmas=["wal_autocheckpoint = 0"])
            if not answer.get("ok"):
                raise FixtureError("shell cannot open %s: %s" % (db, answer.get("error")))
            for n in range(commits):
                start = first + n * 20
                shell.step(fill_sql(start, start + 19) + ";")
        finally:
            shell.kill()

    def _measure(self, name, files):
        """Checksum of a template, measured on a scratch copy (opening checkpoints the WAL)."""
        scratch = os.path.join(self.ctx.root, "measure-" + name)
        os.makedirs(scratch)
        common.copy_files(self.path(name), files, scratch)
        found = common.probe(self.ctx, os.path.join(scratch, "db.db"), common.passphrase_args(ENV_OLD))
        common.remove_tree(scratch)
        if not found.opened or not found.integrity_ok:
            raise FixtureError("template %s does not open: %s" % (name, found.result.describe()))
        return found.checksum

    def install(self, template, folder, names=None):
        """Copy a template's files into an iteration folder."""
        src = self.path(template)
        names = names or [n for n in os.listdir(src) if os.path.isfile(os.path.join(src, n))]
        common.copy_files(src, names, folder)
        if template in ("ks", "ksp"):
            shutil.copytree(os.path.join(src, "keystore-dir"), os.path.join(folder, "keystore-dir"))
            os.chmod(os.path.join(folder, "keystore-dir"), 0o700)
