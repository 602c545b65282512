// The baseline: the same work through SQLCipher's C API, as a careful C program does it
// (one prepared statement, bind, step, reset; values copied into Swift strings and Data).
import CSQLCipherRaw
import Foundation

enum Raw {
    static func open(_ path: String, key: String?, pageSize: Int?) -> OpaquePointer {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db else {
            fatalError("raw open failed: \(path)")
        }
        if let key {
            sqlite3_key(db, key, Int32(key.utf8.count))
            if let pageSize { exec(db, "PRAGMA cipher_page_size = \(pageSize)") }
        }
        exec(db, "SELECT count(*) FROM sqlite_master")
        return db
    }

    static func exec(_ db: OpaquePointer, _ sql: String) {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            fatalError("raw exec failed: \(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    static func prepare(_ db: OpaquePointer, _ sql: String) -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            fatalError("raw prepare failed: \(sql)")
        }
        return statement
    }

    static func insert(_ db: OpaquePointer, _ fixture: Fixture) {
        exec(db, "BEGIN")
        let statement = prepare(db, Fixture.insert)
        for row in 0..<fixture.rowCount {
            sqlite3_bind_int64(statement, 1, Int64(row))
            sqlite3_bind_int64(statement, 2, fixture.integers[row])
            sqlite3_bind_double(statement, 3, fixture.reals[row])
            var text = fixture.texts[row]
            text.withUTF8 { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    _ = sqlite3_bind_text(statement, 4, $0.baseAddress, Int32($0.count), bench_sqlite_transient())
                }
            }
            fixture.blobs[row].withUnsafeBytes {
                _ = sqlite3_bind_blob(statement, 5, $0.baseAddress, Int32($0.count), bench_sqlite_transient())
            }
            guard sqlite3_step(statement) == SQLITE_DONE else { fatalError("raw insert failed") }
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        exec(db, "COMMIT")
    }

    static func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let text = sqlite3_column_text(statement, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }

    static func data(_ statement: OpaquePointer, _ column: Int32) -> Data {
        guard let bytes = sqlite3_column_blob(statement, column) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_column_bytes(statement, column)))
    }

    static func scan(_ db: OpaquePointer) -> Checksum {
        var sum = Checksum()
        let statement = prepare(db, Fixture.scan)
        while sqlite3_step(statement) == SQLITE_ROW {
            sum.add(sqlite3_column_int64(statement, 0))
            sum.add(sqlite3_column_int64(statement, 1))
            sum.add(sqlite3_column_double(statement, 2))
            sum.add(text(statement, 3))
            sum.add(data(statement, 4))
        }
        sqlite3_finalize(statement)
        return sum
    }

    static func lookups(_ db: OpaquePointer, _ fixture: Fixture) -> Checksum {
        var sum = Checksum()
        exec(db, "BEGIN")
        let statement = prepare(db, Fixture.lookup)
        for id in fixture.lookupIDs {
            sqlite3_bind_int64(statement, 1, id)
            if sqlite3_step(statement) == SQLITE_ROW { sum.add(text(statement, 0)) }
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        exec(db, "COMMIT")
        return sum
    }
}
