// CipherDB against SQLCipher's C API on the same work, in the same process and run.
//
//   CoreBenchmark [--quick] [--json FILE]      wall times, interleaved, median of several runs
//   CoreBenchmark --once NAME --side S [--rows N]
//                                              one side of one workload once, for
//                                              valgrind --tool=callgrind --instr-atstart=no
//
// `make bench` (tools/benchmarks/run.py) runs both and writes docs/performance/.
import CSQLCipherRaw
import CipherCrypto
import CipherDB
import Foundation

/// Times the measured part of a workload, or brackets it for callgrind; set-up stays outside.
final class Meter {
    let counting: Bool
    private(set) var seconds = 0.0
    init(counting: Bool) { self.counting = counting }

    func measure(_ body: () throws -> Void) rethrows {
        if counting { bench_instrumentation_start() }
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        if counting { bench_instrumentation_stop() }
        seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

/// One row of the table: the subject's cost over the baseline's, with the goal of issue 10.
struct Workload {
    let name: String
    let baselineName: String
    let goal: Double
    let baseline: (Meter) throws -> Void
    let subject: (Meter) throws -> Void
}

// MARK: - Set-up

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let quick = arguments.contains("--quick")
let rowCount = option("--rows").flatMap(Int.init) ?? (quick ? 20_000 : 100_000)
let runs = quick ? 3 : 5
let fixture = Fixture(rowCount: rowCount)

let rawKeyBytes = [UInt8](repeating: 0x5A, count: 32)
let rawKeyLiteral = "x'" + rawKeyBytes.map { String(format: "%02x", $0) }.joined() + "'"
let pageSize = 4096
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cipherdb-bench-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }

func freshPath(_ name: String) -> String {
    let path = folder.appendingPathComponent(name).path
    for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
    return path
}

func openRawKeyed(_ path: String) throws -> Database {
    let db = Database(path: path)
    try db.open(key: .raw(SecretBytes(copying: rawKeyBytes)), settings: CipherSettings(pageSize: pageSize))
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

/// The table every read workload reads, written once through the C API.
func filledRawKeyFile() -> String {
    let path = freshPath("filled.db")
    let db = Raw.open(path, key: rawKeyLiteral, pageSize: pageSize)
    Raw.exec(db, Fixture.createTable)
    Raw.insert(db, fixture)
    sqlite3_close(db)
    return path
}

func filledDefaultFile(encrypted: Bool, pageSize: Int? = nil) throws -> String {
    let path = freshPath(encrypted ? "default-encrypted-\(pageSize ?? 0).db" : "default-plain.db")
    let db = try openDefault(path, encrypted: encrypted, pageSize: pageSize)
    try db.executeUpdate(Fixture.createTable)
    try Cipher.insert(db, fixture)
    db.close()
    return path
}

let filled = filledRawKeyFile()
nonisolated(unsafe) var checksums: [String: Checksum] = [:]

func record(_ name: String, _ sum: Checksum) {
    if let previous = checksums[name], previous != sum { fatalError("\(name): the two sides read different values") }
    checksums[name] = sum
}

func insertCase(encrypted: Bool, pageSize: Int? = nil) -> (Meter) throws -> Void {
    { meter in
        let db = try openDefault(freshPath("insert-default.db"), encrypted: encrypted, pageSize: pageSize)
        defer { db.close() }
        try db.executeUpdate(Fixture.createTable)
        try meter.measure { try Cipher.insert(db, fixture) }
    }
}

func scanCase(_ path: @escaping () throws -> String, encrypted: Bool, pageSize: Int? = nil) -> (Meter) throws -> Void {
    { meter in
        let db = try openDefault(try path(), encrypted: encrypted, pageSize: pageSize)
        defer { db.close() }
        try meter.measure { record("default scan", try Cipher.scanByIndex(db)) }
    }
}

nonisolated(unsafe) var defaultFiles: [String: String] = [:]
func defaultFile(encrypted: Bool, pageSize: Int? = nil) throws -> String {
    let name = "\(encrypted)-\(pageSize ?? 0)"
    if let path = defaultFiles[name] { return path }
    let path = try filledDefaultFile(encrypted: encrypted, pageSize: pageSize)
    defaultFiles[name] = path
    return path
}

/// The C side of the insert workloads: a fresh raw-key file, the table made before measuring.
func rawInsert(_ meter: Meter) {
    let db = Raw.open(freshPath("insert-raw.db"), key: rawKeyLiteral, pageSize: pageSize)
    defer { sqlite3_close(db) }
    Raw.exec(db, Fixture.createTable)
    meter.measure { Raw.insert(db, fixture) }
}

/// CipherDB's side of an insert workload, inserting with `insert`.
func cipherInsert(_ insert: @escaping (Database, Fixture) throws -> Void) -> (Meter) throws -> Void {
    { meter in
        let db = try openRawKeyed(freshPath("insert-cipher.db"))
        defer { db.close() }
        try db.executeUpdate(Fixture.createTable)
        try meter.measure { try insert(db, fixture) }
    }
}

/// The C side of a read workload on the filled file.
func rawRead(_ name: String, _ read: @escaping (OpaquePointer) -> Checksum) -> (Meter) throws -> Void {
    { meter in
        let db = Raw.open(filled, key: rawKeyLiteral, pageSize: pageSize)
        defer { sqlite3_close(db) }
        meter.measure { record(name, read(db)) }
    }
}

/// CipherDB's side of a read workload on the same file.
func cipherRead(_ name: String, _ read: @escaping (Database) throws -> Checksum) -> (Meter) throws -> Void {
    { meter in
        let db = try openRawKeyed(filled)
        defer { db.close() }
        try meter.measure { record(name, try read(db)) }
    }
}

let workloads: [Workload] = [
    Workload(
        name: "insert in one transaction", baselineName: "C API", goal: 1.10,
        baseline: rawInsert, subject: cipherInsert(Cipher.insert)),
    Workload(
        name: "insert, prepared statement", baselineName: "C API", goal: 1.10,
        baseline: rawInsert, subject: cipherInsert(Cipher.insertPrepared)),
    Workload(
        name: "scan, columns by index", baselineName: "C API", goal: 1.20,
        baseline: rawRead("scan", Raw.scan), subject: cipherRead("scan", Cipher.scanByIndex)),
    Workload(
        name: "scan, columns by name", baselineName: "C API by index", goal: 1.30,
        baseline: rawRead("scan", Raw.scan), subject: cipherRead("scan", Cipher.scanByName)),
    Workload(
        name: "point lookups in one read transaction", baselineName: "C API", goal: 1.25,
        baseline: rawRead("lookups") { Raw.lookups($0, fixture) }, subject: cipherRead("lookups") { try Cipher.lookups($0, fixture) }),
    Workload(
        name: "point lookups, stringForQuery", baselineName: "C API", goal: 1.25,
        baseline: rawRead("lookups") { Raw.lookups($0, fixture) },
        subject: cipherRead("lookups") { try Cipher.lookupsForQuery($0, fixture) }),
    Workload(
        name: "point lookups, prepared statement", baselineName: "C API", goal: 1.25,
        baseline: rawRead("lookups") { Raw.lookups($0, fixture) },
        subject: cipherRead("lookups") { try Cipher.lookupsPrepared($0, fixture) }),
    Workload(
        name: "insert, encrypted at the default page size", baselineName: "plaintext", goal: 1.25,
        baseline: insertCase(encrypted: false), subject: insertCase(encrypted: true)),
    Workload(
        name: "scan, encrypted at the default page size", baselineName: "plaintext", goal: 1.50,
        baseline: scanCase({ try defaultFile(encrypted: false) }, encrypted: false),
        subject: scanCase({ try defaultFile(encrypted: true) }, encrypted: true)),
    // The same with 4 KiB pages (SQLCipher 4's default): what the default page size costs on 3.x.
    Workload(
        name: "insert, encrypted with 4 KiB pages", baselineName: "plaintext", goal: 1.25,
        baseline: insertCase(encrypted: false), subject: insertCase(encrypted: true, pageSize: 4096)),
    Workload(
        name: "scan, encrypted with 4 KiB pages", baselineName: "plaintext", goal: 1.50,
        baseline: scanCase({ try defaultFile(encrypted: false) }, encrypted: false),
        subject: scanCase({ try defaultFile(encrypted: true, pageSize: 4096) }, encrypted: true, pageSize: 4096)),
]

// MARK: - One side once, for callgrind

if let name = option("--once") {
    guard let workload = workloads.first(where: { $0.name == name }) else {
        FileHandle.standardError.write(Data("unknown workload: \(name)\n".utf8))
        exit(64)
    }
    let meter = Meter(counting: true)
    try (option("--side") == "baseline" ? workload.baseline : workload.subject)(meter)
    exit(0)
}
if arguments.contains("--list") {
    for workload in workloads { print(workload.name) }
    exit(0)
}

// MARK: - Wall times

func median(_ samples: [Double]) -> Double { samples.sorted()[samples.count / 2] }

let version = SQLCipherVersion.current.map { "\($0)" } ?? "unknown"
print("CipherDB / \(version): \(rowCount) rows, median of \(runs) interleaved runs")
print(
    "workload".padding(toLength: 44, withPad: " ", startingAt: 0) + "baseline      CipherDB    ratio   goal")
var results: [[String: Any]] = []
for workload in workloads {
    var baseline: [Double] = []
    var subject: [Double] = []
    for _ in 0..<runs {
        let first = Meter(counting: false)
        try workload.baseline(first)
        baseline.append(first.seconds)
        let second = Meter(counting: false)
        try workload.subject(second)
        subject.append(second.seconds)
    }
    let ratio = median(subject) / median(baseline)
    print(
        workload.name.padding(toLength: 44, withPad: " ", startingAt: 0)
            + String(format: "%8.1f ms %8.1f ms  %6.2f  %5.2f", median(baseline) * 1000, median(subject) * 1000, ratio, workload.goal)
            + (ratio <= workload.goal ? "" : "  (above goal)"))
    results.append([
        "name": workload.name, "baseline": workload.baselineName, "goal": workload.goal,
        "baseline_seconds": median(baseline), "subject_seconds": median(subject), "wall_ratio": ratio,
    ])
}

if let path = option("--json") {
    let report: [String: Any] = ["sqlcipher": version, "rows": rowCount, "runs": runs, "workloads": results]
    let data = try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys])
    try data.write(to: URL(fileURLWithPath: path))
}
