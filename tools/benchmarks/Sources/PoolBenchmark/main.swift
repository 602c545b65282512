// DatabasePool figures: opening a pool of 8 connections with a passphrase (derive once vs SQLCipher's
// KDF on every connection), and read throughput of a pool against a queue while a writer writes.
// Run: cd tools/benchmarks && swift run -c release PoolBenchmark
import CipherCrypto
import CipherDB
import Foundation
import Synchronization

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cipherdb-pool-bench-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }

let passphrase = DatabaseKey.passphrase(SecretBytes(utf8: "benchmark passphrase"))
let rawKey = DatabaseKey.raw(SecretBytes(copying: [UInt8](repeating: 0x5A, count: 32)))
let version = SQLCipherVersion.current.map { "\($0)" } ?? "none"

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func median(_ runs: Int, _ body: () throws -> Double) rethrows -> Double {
    var samples: [Double] = []
    for _ in 0..<runs { samples.append(try body()) }
    return samples.sorted()[runs / 2]
}

func time(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    return seconds(ContinuousClock.now - start)
}

/// Makes the pool open `readers` reader connections: that many reads hold a reader at once.
func openReaders(_ pool: DatabasePool, _ readers: Int) {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for _ in 0..<readers {
        done.enter()
        Thread {
            _ = try? pool.read { _ in
                entered.signal()
                release.wait()
            }
            done.leave()
        }.start()
    }
    for _ in 0..<readers { entered.wait() }
    for _ in 0..<readers { release.signal() }
    done.wait()
}

// MARK: - Opening a pool of 8 connections

let openPath = folder.appendingPathComponent("open.db").path
do {
    let db = Database(path: openPath)
    try db.open(key: passphrase)
    try db.executeStatements("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
    db.close()
}

func openPool(derive: Bool) throws -> Double {
    var configuration = DatabaseConfiguration()
    configuration.maximumReaderCount = 7
    configuration.derivesPassphraseKeyOnce = derive
    return try time {
        let pool = try DatabasePool(path: openPath, key: passphrase, configuration: configuration)
        openReaders(pool, 7)
        precondition(pool.openConnectionCount == 8)
        precondition(pool.usesDerivedKey == derive)
        try pool.close()
    }
}

func openOne(_ key: DatabaseKey) throws -> Double {
    try time {
        let db = Database(path: openPath)
        try db.open(key: key)
        db.close()
    }
}

let rawOfFile =
    try PassphraseKeyDerivation.rawKey(
        passphrase: SecretBytes(utf8: "benchmark passphrase"), databaseAt: openPath
    ).map { DatabaseKey.raw($0) } ?? rawKey
let deriveOnce = try median(5) { try openPool(derive: true) }
let keyEach = try median(5) { try openPool(derive: false) }
let onePassphrase = try median(5) { try openOne(passphrase) }
let oneRaw = try median(5) { try openOne(rawOfFile) }
let oneKDF = try median(5) {
    try time {
        _ = try PassphraseKeyDerivation.rawKey(passphrase: SecretBytes(utf8: "benchmark passphrase"), databaseAt: openPath)
    }
}

print("SQLCipher \(version), \(ProcessInfo.processInfo.activeProcessorCount) cores, release build, medians of 5 runs")
print("")
print("Opening a pool of 8 connections (writer + 7 readers) with a passphrase")
print("| case                                   | time      |")
print("|----------------------------------------|-----------|")
print(String(format: "| derive once, raw key per connection    | %6.1f ms |", deriveOnce * 1000))
print(String(format: "| SQLCipher KDF on every connection      | %6.1f ms |", keyEach * 1000))
print(String(format: "| one connection, passphrase             | %6.1f ms |", onePassphrase * 1000))
print(String(format: "| one connection, raw key                | %6.1f ms |", oneRaw * 1000))
print(String(format: "| one PBKDF2 (PassphraseKeyDerivation)   | %6.1f ms |", oneKDF * 1000))
print("")

// MARK: - Read throughput while a writer writes

let rowCount = 10_000
let duration = 3.0
let readerThreads = 4

func seed(_ writer: some DatabaseWriter) throws {
    try writer.write { db in
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, grp INTEGER, amount INTEGER)")
        for id in 0..<rowCount { try db.executeUpdate("INSERT INTO t(id, grp, amount) VALUES (?, ?, ?)", id, id % 100, id % 7) }
        try db.executeUpdate("CREATE TABLE log(id INTEGER PRIMARY KEY, at REAL)")
    }
}

struct Throughput {
    var reads: Int
    var writes: Int
}

func throughput(_ writer: some DatabaseWriter) throws -> Throughput {
    let stop = Atomic<Bool>(false)
    let reads = Atomic<Int>(0)
    let writes = Atomic<Int>(0)
    let failures = Atomic<Int>(0)
    let done = DispatchGroup()
    func spawn(_ body: @escaping @Sendable () throws -> Void) {
        done.enter()
        Thread {
            defer { done.leave() }
            while !stop.load(ordering: .relaxed) {
                do { try body() } catch { failures.add(1, ordering: .relaxed) }
            }
        }.start()
    }
    spawn {
        try writer.write { db in
            try db.executeUpdate("INSERT INTO log(at) VALUES (?)", Date().timeIntervalSince1970)
            try db.executeUpdate("UPDATE t SET amount = amount + 1 WHERE id = ?", Int.random(in: 0..<rowCount))
        }
        writes.add(1, ordering: .relaxed)
    }
    for _ in 0..<readerThreads {
        spawn {
            let group = Int.random(in: 0..<100)
            _ = try writer.read { db in try db.intForQuery("SELECT sum(amount) FROM t WHERE grp = ?", group) }
            reads.add(1, ordering: .relaxed)
        }
    }
    Thread.sleep(forTimeInterval: duration)
    stop.store(true, ordering: .relaxed)
    done.wait()
    precondition(failures.load(ordering: .relaxed) == 0, "errors during the run")
    return Throughput(reads: reads.load(ordering: .relaxed), writes: writes.load(ordering: .relaxed))
}

let queuePath = folder.appendingPathComponent("queue.db").path
let poolPath = folder.appendingPathComponent("pool.db").path
let queue = try DatabaseQueue(path: queuePath, key: rawKey)
try seed(queue)
let pool = try DatabasePool(path: poolPath, key: rawKey)
try seed(pool)
// Warm up both, then measure.
_ = try throughput(queue)
_ = try throughput(pool)
let queueResult = try throughput(queue)
let poolResult = try throughput(pool)

print("Reads while one writer writes: \(readerThreads) reader threads + 1 writer thread, \(Int(duration)) s each, raw key")
print("(read: SELECT sum() over 100 of \(rowCount) rows; write: one INSERT and one UPDATE per transaction)")
print("| database                 | reads/s  | writes/s |")
print("|--------------------------|----------|----------|")
print(
    String(
        format: "| DatabaseQueue            | %8.0f | %8.0f |", Double(queueResult.reads) / duration, Double(queueResult.writes) / duration)
)
print(
    String(
        format: "| DatabasePool (5 readers) | %8.0f | %8.0f |", Double(poolResult.reads) / duration, Double(poolResult.writes) / duration))
