// Wrapper overhead: CipherDB's Database against the raw SQLCipher C API on the same work.
// Run: make bench (release build). Prints the median of several runs per case.
import CSQLCipherRaw
import CipherCrypto
import CipherDB
import Foundation

let rowCount = 100_000
let lookupCount = 100_000
let runs = 5
let key = [UInt8](repeating: 0x5A, count: 32)
let hexKey = "x'" + key.map { String(format: "%02x", $0) }.joined() + "'"
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cipherdb-bench-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }

func measure(_ body: () throws -> Void) rethrows -> Double {
    var samples: [Double] = []
    for _ in 0..<runs {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        samples.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    return samples.sorted()[runs / 2]
}

func freshPath(_ name: String) -> String {
    let path = folder.appendingPathComponent(name).path
    for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
    return path
}

// MARK: - Raw C API

func rawOpen(_ path: String, encrypted: Bool) -> OpaquePointer {
    var db: OpaquePointer?
    sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
    if encrypted {
        sqlite3_key(db, hexKey, Int32(hexKey.utf8.count))
        sqlite3_exec(db, "PRAGMA cipher_page_size = 4096", nil, nil, nil)
    }
    return db!
}

func rawInsert(_ path: String, encrypted: Bool) {
    let db = rawOpen(path, encrypted: encrypted)
    defer { sqlite3_close(db) }
    sqlite3_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL)", nil, nil, nil)
    sqlite3_exec(db, "BEGIN", nil, nil, nil)
    var statement: OpaquePointer?
    sqlite3_prepare_v2(db, "INSERT INTO t(id, name, score) VALUES (?, ?, ?)", -1, &statement, nil)
    for index in 0..<rowCount {
        sqlite3_bind_int64(statement, 1, Int64(index))
        var name = "name \(index)"
        name.withUTF8 { buffer in
            _ = buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                sqlite3_bind_text(statement, 2, $0, Int32(buffer.count), bench_sqlite_transient())
            }
        }
        sqlite3_bind_double(statement, 3, Double(index) * 0.5)
        sqlite3_step(statement)
        sqlite3_reset(statement)
    }
    sqlite3_finalize(statement)
    sqlite3_exec(db, "COMMIT", nil, nil, nil)
}

func rawScan(_ path: String, encrypted: Bool) -> Int {
    let db = rawOpen(path, encrypted: encrypted)
    defer { sqlite3_close(db) }
    var statement: OpaquePointer?
    sqlite3_prepare_v2(db, "SELECT id, name, score FROM t", -1, &statement, nil)
    var total = 0
    while sqlite3_step(statement) == SQLITE_ROW {
        total &+= Int(sqlite3_column_int64(statement, 0))
        let text = sqlite3_column_text(statement, 1)!
        total &+=
            String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, 1))), as: UTF8.self).utf8.count
        total &+= Int(sqlite3_column_double(statement, 2))
    }
    sqlite3_finalize(statement)
    return total
}

func rawLookups(_ path: String, encrypted: Bool) -> Int {
    let db = rawOpen(path, encrypted: encrypted)
    defer { sqlite3_close(db) }
    var statement: OpaquePointer?
    sqlite3_prepare_v2(db, "SELECT name FROM t WHERE id = ?", -1, &statement, nil)
    var total = 0
    for index in 0..<lookupCount {
        sqlite3_bind_int64(statement, 1, Int64((index &* 7919) % rowCount))
        if sqlite3_step(statement) == SQLITE_ROW {
            total &+= Int(sqlite3_column_bytes(statement, 0))
        }
        sqlite3_reset(statement)
    }
    sqlite3_finalize(statement)
    return total
}

// MARK: - CipherDB

func cipherOpen(_ path: String, encrypted: Bool) throws -> Database {
    let db = Database(path: path)
    if encrypted {
        try db.open(key: .raw(SecretBytes(copying: key)), settings: CipherSettings(pageSize: 4096))
    } else {
        try db.open()
    }
    return db
}

func cipherInsert(_ path: String, encrypted: Bool) throws {
    let db = try cipherOpen(path, encrypted: encrypted)
    defer { db.close() }
    try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL)")
    try db.beginDeferredTransaction()
    for index in 0..<rowCount {
        try db.executeUpdate("INSERT INTO t(id, name, score) VALUES (?, ?, ?)", index, "name \(index)", Double(index) * 0.5)
    }
    try db.commit()
}

func cipherScan(_ path: String, encrypted: Bool) throws -> Int {
    let db = try cipherOpen(path, encrypted: encrypted)
    defer { db.close() }
    let rows = try db.executeQuery("SELECT id, name, score FROM t")
    var total = 0
    while try rows.next() {
        total &+= rows.int(at: 0) ?? 0
        total &+= rows.string(at: 1)?.utf8.count ?? 0
        total &+= Int(rows.double(at: 2) ?? 0)
    }
    return total
}

func cipherLookups(_ path: String, encrypted: Bool) throws -> Int {
    let db = try cipherOpen(path, encrypted: encrypted)
    defer { db.close() }
    var total = 0
    for index in 0..<lookupCount {
        let rows = try db.executeQuery("SELECT name FROM t WHERE id = ?", (index &* 7919) % rowCount)
        if try rows.next() { total &+= rows.string(at: 0)?.utf8.count ?? 0 }
        rows.close()
    }
    return total
}

// MARK: - Report

// `CoreBenchmark insert` runs only CipherDB's insert loop, for a profiler.
if CommandLine.arguments.dropFirst().first == "insert" {
    for _ in 0..<20 {
        _ = freshPath("cipher.db")
        try cipherInsert(freshPath("cipher.db"), encrypted: false)
    }
    exit(0)
}

print("CipherDB wrapper overhead, SQLCipher \(SQLCipherVersion.current?.text ?? "?"), \(rowCount) rows, median of \(runs) runs")
print("case                      raw C API    CipherDB    overhead")
for encrypted in [true, false] {
    let label = encrypted ? "encrypted (raw key, 4 KiB)" : "plaintext"
    let rawPath = freshPath("raw.db")
    let cipherPath = freshPath("cipher.db")
    let rawInsertTime = measure {
        _ = freshPath("raw.db")
        rawInsert(rawPath, encrypted: encrypted)
    }
    let cipherInsertTime = try measure {
        _ = freshPath("cipher.db")
        try cipherInsert(cipherPath, encrypted: encrypted)
    }
    var sink = 0
    let rawScanTime = measure { sink &+= rawScan(rawPath, encrypted: encrypted) }
    let cipherScanTime = try measure { sink &+= try cipherScan(cipherPath, encrypted: encrypted) }
    let rawLookupTime = measure { sink &+= rawLookups(rawPath, encrypted: encrypted) }
    let cipherLookupTime = try measure { sink &+= try cipherLookups(cipherPath, encrypted: encrypted) }
    print("-- \(label) (checksum \(sink % 1000))")
    for (name, raw, wrapped) in [
        ("insert", rawInsertTime, cipherInsertTime), ("scan", rawScanTime, cipherScanTime),
        ("point lookup", rawLookupTime, cipherLookupTime),
    ] {
        let overhead = (wrapped / raw - 1) * 100
        print(
            name.padding(toLength: 24, withPad: " ", startingAt: 0)
                + String(format: "%8.1f ms  %8.1f ms  %+7.1f %%", raw * 1000, wrapped * 1000, overhead))
    }
}
