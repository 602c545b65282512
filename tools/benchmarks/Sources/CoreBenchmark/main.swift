// CipherDB against a C baseline written in C (Sources/CBaseline) on the same work, in the same
// process and run; a few rows compare other baselines (Swift over the C API, plaintext files,
// CipherDB itself with no observers).
//
//   CoreBenchmark [--quick] [--json FILE]       wall times, interleaved runs, medians and spread
//   CoreBenchmark --latency [--quick] [--json FILE]
//                                               ValueObservation's notification latency
//   CoreBenchmark --once-side SIDE [--rows N] [--commits N]
//                                               one side once, for
//                                               valgrind --tool=callgrind --instr-atstart=no
//   CoreBenchmark --make-files --files DIR [--rows N]
//                                               the files the read sides read, made once in DIR
//                                               (then pass --files DIR to the runs above)
//   CoreBenchmark --list                        the workloads and their sides
//
// `make bench` (tools/benchmarks/run.py) runs them all and writes docs/performance/.
import CBaseline
import CSQLCipherRaw
import CipherCrypto
import CipherDB
import Foundation

/// Times the measured part of a workload, or brackets it for callgrind; set-up stays outside.
final class Meter: @unchecked Sendable {
    let counting: Bool
    private(set) var seconds = 0.0
    init(counting: Bool) { self.counting = counting }

    func measure(_ body: () throws -> Void) rethrows {
        if counting { bench_instrumentation_start() }
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        if counting { bench_instrumentation_stop() }
        seconds = CoreBenchmark.seconds(elapsed)
    }

    /// Times `body`, which brackets itself for callgrind (the C baseline's functions do, given
    /// `cCount`).
    func time(_ body: () throws -> Void) rethrows {
        let start = ContinuousClock.now
        try body()
        seconds = CoreBenchmark.seconds(ContinuousClock.now - start)
    }

    /// The C functions' `count` argument: whether they bracket themselves for callgrind.
    var cCount: Int32 { counting ? 1 : 0 }
}

// MARK: - Set-up

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let quick = arguments.contains("--quick")
let rowCount = option("--rows").flatMap(Int.init) ?? (quick ? 10_000 : 100_000)
let commitCount = option("--commits").flatMap(Int.init) ?? (quick ? 200 : 1_000)
let runs = quick ? 3 : 5
let fixture = Fixture(rowCount: rowCount)
nonisolated(unsafe) let cFixture = cb_fixture_make(Int32(rowCount))

let rawKeyBytes = [UInt8](repeating: 0x5A, count: 32)
let rawKeyHex = rawKeyBytes.map { String(format: "%02x", $0) }.joined()
let rawKeyLiteral = "x'" + rawKeyHex + "'"
let rawKey = DatabaseKey.raw(SecretBytes(copying: rawKeyBytes))
let pageSize = 4096
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cipherdb-bench-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }

nonisolated(unsafe) var pathCount = 0
/// A path of its own: a connection of the previous run may still be closing.
func uniquePath(_ name: String) -> String {
    pathCount += 1
    return freshPath("\(pathCount)-" + name)
}

func freshPath(_ name: String) -> String {
    let path = folder.appendingPathComponent(name).path
    for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
    return path
}

func openRawKeyed(_ path: String) throws -> Database {
    let db = Database(path: path)
    try db.open(key: rawKey, settings: CipherSettings(pageSize: pageSize))
    return db
}

/// A new passphrase file keeps the running SQLCipher's defaults (1 KiB pages on 3.x, 4 KiB on 4.x)
/// unless a page size is given; a plaintext one SQLite's (4 KiB).
func openDefault(_ path: String, encrypted: Bool, pageSize: Int? = nil) throws -> Database {
    let db = Database(path: path)
    try db.open(
        key: encrypted ? .passphrase(SecretBytes(utf8: "benchmark passphrase")) : nil,
        settings: encrypted ? CipherSettings(pageSize: pageSize) : .versionDefaults)
    return db
}

/// Files made once, when a side first needs them (a side run alone under callgrind makes only its
/// own). With `--files DIR` they are kept in DIR and reused by later runs (run.py makes them once,
/// outside valgrind); they are only read.
nonisolated(unsafe) var madeFiles: [String: String] = [:]
let keptFiles = option("--files")
func made(_ name: String, _ make: (String) throws -> Void) rethrows -> String {
    if let path = madeFiles[name] { return path }
    let path: String
    if let keptFiles {
        path = keptFiles + "/\(rowCount)-" + name
        if !FileManager.default.fileExists(atPath: path) {
            let partial = path + ".partial"
            for suffix in ["", "-journal", "-wal", "-shm"] { unlink(partial + suffix) }
            try make(partial)
            rename(partial, path)
            for suffix in ["-wal", "-shm"] { rename(partial + suffix, path + suffix) }
        }
    } else {
        path = freshPath(name)
        try make(path)
    }
    madeFiles[name] = path
    return path
}

/// The table every read workload reads, written by the C baseline.
func filled() -> String {
    made("filled.db") { path in
        let db = cb_open(path, rawKeyHex, Int32(pageSize))
        cb_exec(db, Fixture.createTable)
        cb_insert5(db, cFixture, 0)
        cb_close(db)
    }
}

/// The player table of the record reads, written by the C baseline.
func playersFile() -> String {
    made("players.db") { path in
        let db = cb_open(path, rawKeyHex, Int32(pageSize))
        cb_exec(db, Fixture.createPlayers)
        cb_players_insert(db, cFixture, 0)
        cb_close(db)
    }
}

/// A copy of the filled file in WAL mode, for the pool's readers.
func walFile() -> String {
    made("wal.db") { path in
        try? FileManager.default.copyItem(atPath: filled(), toPath: path)
        let db = cb_open(path, rawKeyHex, Int32(pageSize))
        cb_exec(db, "PRAGMA journal_mode = WAL")
        cb_close(db)
    }
}

func defaultFile(encrypted: Bool, pageSize: Int? = nil) throws -> String {
    try made(encrypted ? "default-encrypted-\(pageSize ?? 0).db" : "default-plain.db") { path in
        let db = try openDefault(path, encrypted: encrypted, pageSize: pageSize)
        try db.executeUpdate(Fixture.createTable)
        try Cipher.insert(db, fixture)
        db.close()
    }
}

nonisolated(unsafe) var checksums: [String: Checksum] = [:]

/// Both sides of a read must read the same values, and both sides of an insert write the same rows.
func record(_ name: String, _ sum: Checksum) {
    if let previous = checksums[name], previous != sum {
        fatalError("\(name): the two sides differ (\(previous.value) and \(sum.value))")
    }
    checksums[name] = sum
}

/// What an insert side wrote, read back by C (outside the measured part).
func recordTable(_ name: String, _ path: String, _ sql: String) {
    let db = cb_open(path, rawKeyHex, Int32(pageSize))
    record(name, Checksum(value: Int(truncatingIfNeeded: cb_checksum_query(db, sql))))
    cb_close(db)
}

let cachePages = "PRAGMA cache_size = -65536"  // 64 MiB: the whole file stays in SQLite's cache
let missPages = "PRAGMA cache_size = 10"  // 40 KiB: lookups miss it, even over the 2,000 rows of the quick callgrind runs

// MARK: - The sides

typealias Side = (Meter) throws -> Void
nonisolated(unsafe) var sides: [String: Side] = [:]

// The C baseline.
sides["c.insert5"] = { meter in
    let path = freshPath("insert-c.db")
    let db = cb_open(path, rawKeyHex, Int32(pageSize))
    cb_exec(db, Fixture.createTable)
    meter.time { cb_insert5(db, cFixture, meter.cCount) }
    cb_close(db)
    recordTable("insert5", path, Fixture.scan)
}
sides["c.insert8"] = { meter in
    let path = freshPath("insert8-c.db")
    let db = cb_open(path, rawKeyHex, Int32(pageSize))
    cb_exec(db, Fixture.createTable8)
    meter.time { cb_insert8(db, cFixture, meter.cCount) }
    cb_close(db)
    recordTable("insert8", path, "SELECT * FROM t8")
}
sides["c.scan"] = { meter in
    let db = cb_open(filled(), rawKeyHex, Int32(pageSize))
    defer { cb_close(db) }
    var sum: Int64 = 0
    meter.time { sum = cb_scan(db, meter.cCount) }
    record("scan", Checksum(value: Int(truncatingIfNeeded: sum)))
}
func cLookups(cached: Bool) -> Side {
    { meter in
        let db = cb_open(filled(), rawKeyHex, Int32(pageSize))
        defer { cb_close(db) }
        cb_exec(db, cached ? cachePages : missPages)
        if cached { _ = cb_checksum_query(db, Fixture.scan) }
        var sum: Int64 = 0
        fixture.lookupIDs.withUnsafeBufferPointer { ids in
            meter.time { sum = cb_lookups(db, ids.baseAddress, Int32(ids.count), 0, meter.cCount) }
        }
        record("lookups", Checksum(value: Int(truncatingIfNeeded: sum)))
    }
}
sides["c.lookups.cached"] = cLookups(cached: true)
sides["c.lookups.misses"] = cLookups(cached: false)
sides["c.players.insert"] = { meter in
    let path = freshPath("players-c.db")
    let db = cb_open(path, rawKeyHex, Int32(pageSize))
    cb_exec(db, Fixture.createPlayers)
    meter.time { cb_players_insert(db, cFixture, meter.cCount) }
    cb_close(db)
    recordTable("players.insert", path, Fixture.selectPlayers)
}
func cPlayers(_ sql: String) -> Side {
    { meter in
        let db = cb_open(playersFile(), rawKeyHex, Int32(pageSize))
        defer { cb_close(db) }
        var sum: Int64 = 0
        meter.time { sum = cb_players_fetch_all(db, sql, 0, meter.cCount) }
        record("players", Checksum(value: Int(truncatingIfNeeded: sum)))
    }
}
sides["c.players.fetchAll"] = cPlayers(Fixture.selectPlayers)
sides["c.players.filter"] = cPlayers(Fixture.selectPlayers + " WHERE score >= ?")
sides["c.players.pairs"] = { meter in
    let db = cb_open(playersFile(), rawKeyHex, Int32(pageSize))
    defer { cb_close(db) }
    let sql = Cipher.playerPairs.sql
    var sum: Int64 = 0
    meter.time { sum = cb_player_pairs_fetch_all(db, sql, meter.cCount) }
    record("player pairs", Checksum(value: Int(truncatingIfNeeded: sum)))
}
sides["c.pool.readers"] = { meter in
    record("pool.lookups", try PoolReaders.c(path: walFile(), key: rawKeyHex, ids: fixture.lookupIDs, meter: meter))
}

// CipherDB.
func cipherInsert(_ table: String, _ insert: @escaping (Database) throws -> Void) -> Side {
    { meter in
        let (create, check, name) =
            switch table {
            case "t8": (Fixture.createTable8, "SELECT * FROM t8", "insert8")
            case "player": (Fixture.createPlayers, Fixture.selectPlayers, "players.insert")
            default: (Fixture.createTable, Fixture.scan, "insert5")
            }
        let path = freshPath("insert-cipher.db")
        let db = try openRawKeyed(path)
        try db.executeUpdate(create)
        try meter.measure { try insert(db) }
        db.close()
        recordTable(name, path, check)
    }
}
sides["cipher.insert5"] = cipherInsert("t") { try Cipher.insert($0, fixture) }
sides["cipher.insert5.prepared"] = cipherInsert("t") { try Cipher.insertPrepared($0, fixture) }
sides["cipher.insert8"] = cipherInsert("t8") { try Cipher.insert8($0, fixture) }
sides["cipher.qi.insert"] = cipherInsert("t") { try Cipher.insertBuilder($0, fixture) }
sides["cipher.qi.insert.prepared"] = cipherInsert("t") { try Cipher.insertBuilderPrepared($0, fixture) }
let players = fixture.players
sides["cipher.players.insert"] = cipherInsert("player") { try Cipher.insertPlayers($0, players) }

func cipherRead(
    _ name: String, file: @escaping () -> String, pragma: String? = nil, _ read: @escaping (Database) throws -> Checksum
)
    -> Side
{
    { meter in
        let db = try openRawKeyed(file())
        defer { db.close() }
        if let pragma { try db.executeUpdate(pragma) }
        if pragma == cachePages { _ = try Cipher.scanByIndex(db) }
        var sum = Checksum()
        try meter.measure { sum = try read(db) }
        record(name, sum)
    }
}
sides["cipher.scan.index"] = cipherRead("scan", file: filled, Cipher.scanByIndex)
sides["cipher.scan.name"] = cipherRead("scan", file: filled, Cipher.scanByName)
for (suffix, pragma) in [("cached", cachePages), ("misses", missPages)] {
    sides["cipher.lookups.\(suffix)"] = cipherRead("lookups", file: filled, pragma: pragma) { try Cipher.lookups($0, fixture) }
    sides["cipher.lookups.\(suffix).forQuery"] = cipherRead("lookups", file: filled, pragma: pragma) {
        try Cipher.lookupsForQuery($0, fixture)
    }
    sides["cipher.lookups.\(suffix).prepared"] = cipherRead("lookups", file: filled, pragma: pragma) {
        try Cipher.lookupsPrepared($0, fixture)
    }
}
sides["cipher.qi.lookups"] = cipherRead("lookups", file: filled, pragma: cachePages) { try Cipher.lookupsBuilder($0, fixture) }
sides["cipher.qi.lookups.prepared"] = cipherRead("lookups", file: filled, pragma: cachePages) {
    try Cipher.lookupsBuilderPrepared($0, fixture)
}
sides["cipher.players.fetchAll"] = cipherRead("players", file: playersFile, Cipher.fetchPlayers)
sides["cipher.qi.players.filter"] = cipherRead("players", file: playersFile, Cipher.filterPlayers)
sides["cipher.qi.players.pairs"] = cipherRead("player pairs", file: playersFile, Cipher.fetchPlayerPairs)
sides["cipher.players.fetchAll.byColumns"] = cipherRead("players", file: playersFile, Cipher.fetchPlayersByColumns)
sides["cipher.qi.players.filter.byColumns"] = cipherRead("players", file: playersFile, Cipher.filterPlayersByColumns)
sides["cipher.pool.readers"] = { meter in
    record("pool.lookups", try PoolReaders.cipher(path: walFile(), key: rawKey, ids: fixture.lookupIDs, meter: meter))
}

// Codable by itself, no database (CodableFloor.swift; tools/benchmarks/codable-floor.sh).
func constantPlayers(_ make: @escaping (Int, ConstantValues) throws -> [Player]) -> Side {
    { meter in
        let values = ConstantValues()
        var players: [Player] = []
        try meter.measure { players = try make(rowCount, values) }
        var sum = Checksum()
        for player in players { sum.add(player) }
        record("constant players", sum)
    }
}
sides["swift.players.codable"] = constantPlayers(CodableFloor.decode)
sides["swift.players.memberwise"] = constantPlayers(CodableFloor.make)

// Swift over the C API: the baseline before issue 23 (values copied into String and Data).
sides["swiftc.insert5"] = { meter in
    let path = freshPath("insert-swiftc.db")
    let db = Raw.open(path, key: rawKeyLiteral, pageSize: pageSize)
    Raw.exec(db, Fixture.createTable)
    meter.measure { Raw.insert(db, fixture) }
    sqlite3_close(db)
    recordTable("insert5", path, Fixture.scan)
}
sides["swiftc.scan"] = { meter in
    let db = Raw.open(filled(), key: rawKeyLiteral, pageSize: pageSize)
    defer { sqlite3_close(db) }
    var sum = Checksum()
    meter.measure { sum = Raw.scan(db) }
    record("scan", sum)
}
sides["swiftc.lookups.misses"] = { meter in
    let db = Raw.open(filled(), key: rawKeyLiteral, pageSize: pageSize)
    defer { sqlite3_close(db) }
    Raw.exec(db, missPages)
    var sum = Checksum()
    meter.measure { sum = Raw.lookups(db, fixture) }
    record("lookups", sum)
}

// Encryption's cost: CipherDB on a plaintext file against CipherDB on an encrypted one.
func defaultInsert(encrypted: Bool, pageSize: Int? = nil) -> Side {
    { meter in
        let db = try openDefault(freshPath("insert-default.db"), encrypted: encrypted, pageSize: pageSize)
        defer { db.close() }
        try db.executeUpdate(Fixture.createTable)
        try meter.measure { try Cipher.insert(db, fixture) }
    }
}
func defaultScan(encrypted: Bool, pageSize: Int? = nil) -> Side {
    { meter in
        let db = try openDefault(try defaultFile(encrypted: encrypted, pageSize: pageSize), encrypted: encrypted, pageSize: pageSize)
        defer { db.close() }
        var sum = Checksum()
        try meter.measure { sum = try Cipher.scanByIndex(db) }
        record("default scan", sum)
    }
}
sides["plain.insert"] = defaultInsert(encrypted: false)
sides["encrypted.insert.default"] = defaultInsert(encrypted: true)
sides["encrypted.insert.4k"] = defaultInsert(encrypted: true, pageSize: 4096)
sides["plain.scan"] = defaultScan(encrypted: false)
sides["encrypted.scan.default"] = defaultScan(encrypted: true)
sides["encrypted.scan.4k"] = defaultScan(encrypted: true, pageSize: 4096)

// Observation: one-row write transactions with 0, 1 and 10 observers.
for kind in [Observing.Writer.queue, .pool] {
    for observers in [0, 1, 10] {
        sides["observation.\(kind.rawValue).\(observers)"] = { meter in
            try Observing.writes(
                kind, path: uniquePath("observed.db"), key: rawKey, observers: observers, commits: commitCount, meter: meter)
        }
    }
}

for workload in workloads {
    precondition(sides[workload.baseline] != nil && sides[workload.subject] != nil, "\(workload.name): unknown side")
}

// MARK: - One side once, for callgrind

if let name = option("--once-side") {
    guard let side = sides[name] else {
        FileHandle.standardError.write(Data("unknown side: \(name)\n".utf8))
        exit(64)
    }
    try side(Meter(counting: true))
    exit(0)
}
if arguments.contains("--make-files") {
    _ = (filled(), playersFile(), walFile())
    _ = try (defaultFile(encrypted: false), defaultFile(encrypted: true), defaultFile(encrypted: true, pageSize: 4096))
    exit(0)
}
if arguments.contains("--list") {
    for workload in workloads { print("\(workload.name)\t\(workload.baseline)\t\(workload.subject)") }
    exit(0)
}

let version = SQLCipherVersion.current.map { "\($0)" } ?? "unknown"

func percentile(_ samples: [Double], _ fraction: Double) -> Double {
    let sorted = samples.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
}

func write(_ report: [String: Any]) throws {
    guard let path = option("--json") else { return }
    let data = try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys])
    try data.write(to: URL(fileURLWithPath: path))
}

// MARK: - Notification latency

if arguments.contains("--latency") {
    let commits = quick ? 100 : 500
    print("ValueObservation latency: \(commits) one-row commits, one at a time; from the end of the write block (COMMIT) to onChange")
    print("writer".padding(toLength: 16, withPad: " ", startingAt: 0) + "observers   median      p95      max   write median")
    var results: [[String: Any]] = []
    for kind in [Observing.Writer.queue, .pool] {
        for observers in [1, 10] {
            let (latencies, writes) = try Observing.latency(
                kind, path: uniquePath("latency.db"), key: rawKey, observers: observers, commits: commits)
            let row: [String: Any] = [
                "writer": kind.rawValue, "observers": observers, "commits": commits,
                "median_seconds": percentile(latencies, 0.5), "p95_seconds": percentile(latencies, 0.95),
                "max_seconds": percentile(latencies, 1), "min_seconds": percentile(latencies, 0),
                "write_median_seconds": percentile(writes, 0.5),
            ]
            results.append(row)
            print(
                kind.rawValue.padding(toLength: 16, withPad: " ", startingAt: 0)
                    + String(
                        format: "%9d %6.0f µs %6.0f µs %6.0f µs %8.0f µs", observers, percentile(latencies, 0.5) * 1e6,
                        percentile(latencies, 0.95) * 1e6, percentile(latencies, 1) * 1e6, percentile(writes, 0.5) * 1e6))
        }
    }
    try write(["sqlcipher": version, "latency": results])
    exit(0)
}

// MARK: - Wall times

func median(_ samples: [Double]) -> Double { samples.sorted()[samples.count / 2] }

print("CipherDB / \(version): \(rowCount) rows, \(commitCount) commits, median of \(runs) interleaved runs")
print("workload".padding(toLength: 44, withPad: " ", startingAt: 0) + "baseline      CipherDB    ratio  (min-max)   goal")
var results: [[String: Any]] = []
let only = option("--only")
for workload in workloads where only == nil || workload.group == only {
    var baseline: [Double] = []
    var subject: [Double] = []
    for _ in 0..<runs {
        let first = Meter(counting: false)
        try sides[workload.baseline]?(first)
        baseline.append(first.seconds)
        let second = Meter(counting: false)
        try sides[workload.subject]?(second)
        subject.append(second.seconds)
    }
    let ratio = median(subject) / median(baseline)
    let perRun = zip(subject, baseline).map { $0 / $1 }
    let goal = workload.goal.map { String(format: "%5.2f", $0) } ?? "    -"
    print(
        workload.name.padding(toLength: 44, withPad: " ", startingAt: 0)
            + String(
                format: "%8.1f ms %8.1f ms  %6.2f  (%4.2f-%4.2f)  ", median(baseline) * 1000, median(subject) * 1000, ratio,
                perRun.min() ?? 0, perRun.max() ?? 0) + goal + (ratio <= (workload.goal ?? .infinity) ? "" : "  (above goal)"))
    var row: [String: Any] = [
        "group": workload.group, "name": workload.name, "baseline": workload.baselineName,
        "baseline_side": workload.baseline, "subject_side": workload.subject,
        "baseline_seconds": median(baseline), "subject_seconds": median(subject), "wall_ratio": ratio,
        "wall_ratio_min": perRun.min() ?? 0, "wall_ratio_max": perRun.max() ?? 0,
        "baseline_samples": baseline, "subject_samples": subject,
    ]
    row["goal"] = workload.goal ?? NSNull()
    results.append(row)
}
try write(["sqlcipher": version, "rows": rowCount, "commits": commitCount, "runs": runs, "workloads": results])
