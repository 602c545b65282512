#!/usr/bin/env python3
"""A SQLCipher 4 client for interoperability tests (PyPI's sqlcipher3-binary bundles SQLCipher 4).

Reads one JSON request on standard input, so that keys never appear on a command line:
  {"path": "...", "key": "passphrase or x'hex'", "pragmas": ["cipher_compatibility = 3", ...],
   "statements": ["CREATE ...", ...], "query": "SELECT ..."}
Prints one JSON object: {"version": "4.x.y community", "rows": [[...], ...]} or {"error": "..."}.
"""
import json
import sys

import sqlcipher3


def main() -> int:
    request = json.load(sys.stdin)
    connection = sqlcipher3.connect(request["path"])
    try:
        if "key" in request:
            # PRAGMA key takes no bound parameters; quote the text as SQL does.
            connection.execute("PRAGMA key = '%s'" % request["key"].replace("'", "''"))
        for pragma in request.get("pragmas", []):
            connection.execute("PRAGMA " + pragma)
        for statement in request.get("statements", []):
            connection.execute(statement)
        connection.commit()
        rows = []
        if "query" in request:
            rows = [list(row) for row in connection.execute(request["query"]).fetchall()]
        version = connection.execute("PRAGMA cipher_version").fetchone()[0]
        print(json.dumps({"version": version, "rows": rows}))
        return 0
    except sqlcipher3.DatabaseError as error:
        print(json.dumps({"error": str(error)}))
        return 1
    finally:
        connection.close()


if __name__ == "__main__":
    sys.exit(main())
