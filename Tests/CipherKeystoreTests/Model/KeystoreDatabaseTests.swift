import CipherCrypto
import CipherDB
import Foundation
import Testing

@testable import CipherKeystore

/// Rows whose content can be checked: `payload` is `id` printed with `width` digits.
func makeCheckableDatabase(_ keystore: Keystore, path: String, id: String, rows: Int, width: Int = 1000) throws {
    let db = try keystore.openDatabase(path: path, id: id)
    defer { db.close() }
    try db.executeStatements(
        """
        CREATE TABLE t(id INTEGER PRIMARY KEY, payload TEXT);
        BEGIN;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
        INSERT INTO t(id, payload) SELECT i, printf('%0\(width)d', i) FROM n;
        COMMIT;
        """)
}

/// The number of rows whose content is intact.
func intactRows(_ db: Database, width: Int = 1000) throws -> Int {
    try db.intForQuery("SELECT count(*) FROM t WHERE payload = printf('%0\(width)d', id)") ?? -1
}

@Suite("Keystore and databases")
struct KeystoreDatabaseTests {
    let dir = TemporaryDirectory()
    var path: String { dir.file("keystore") }

    func makeStore() throws -> Keystore {
        try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
    }

    @Test func openDatabaseUsesTheRawKeyAndStoredSettings() throws {
        let store = try makeStore()
        try store.addKey(id: "app")
        let dbPath = dir.file("app.db")
        try makeCheckableDatabase(store, path: dbPath, id: "app", rows: 50)
        let db = try store.openDatabase(path: dbPath, id: "app")
        #expect(try intactRows(db) == 50)
        #expect(try db.intForQuery("PRAGMA cipher_page_size") == 4096)
        db.close()
        // The raw key and settings open it directly too; a random key does not.
        let direct = Database(path: dbPath)
        try direct.open(key: .raw(store.key(id: "app")), settings: CipherSettings(pageSize: 4096))
        direct.close()
        #expect(throws: DatabaseError.self) {
            try Database(path: dbPath).open(key: .raw(try SecretBytes(randomCount: 32)), settings: CipherSettings(pageSize: 4096))
        }
        let queue = try store.openQueue(path: dbPath, id: "app")
        #expect(try queue.inDatabase { db in try intactRows(db) } == 50)
        let pool = try store.openPool(path: dbPath, id: "app")
        #expect(try pool.read { db in try intactRows(db) } == 50)
    }

    @Test func rotateRekeysAndCommits() throws {
        let store = try makeStore()
        try store.addKey(id: "app")
        let dbPath = dir.file("app.db")
        try makeCheckableDatabase(store, path: dbPath, id: "app", rows: 200)
        let oldKey = try store.key(id: "app")
        let result = try store.rotate(id: "app", databasePath: dbPath)
        #expect(result.previousVersion == 1 && result.newVersion == 2 && result.rekeyedDatabases == [dbPath])
        let info = try store.info(id: "app")
        #expect(info.primaryVersion == 2 && info.pendingVersion == nil)
        #expect(info.versions.map(\.state) == [.enabled, .enabled])
        #expect(try Keystore.opens(path: dbPath, key: oldKey, settings: info.cipherSettings) == false)
        #expect(try Keystore.opens(path: dbPath, key: store.key(id: "app"), settings: info.cipherSettings))
        let db = try store.openDatabase(path: dbPath, id: "app")
        #expect(try intactRows(db) == 200)
        db.close()
        // Passphrase changes keep every database openable.
        try store.changePassphrase(from: passphrase("master"), to: passphrase("changed"))
        let again = try Keystore.open(at: path, credential: passphrase("changed")).openDatabase(path: dbPath, id: "app")
        #expect(try intactRows(again) == 200)
        again.close()
    }

    @Test func rotateSeveralDatabasesAndWAL() throws {
        let store = try makeStore()
        try store.addKey(id: "shard")
        let paths = (0..<3).map { dir.file("shard\($0).db") }
        for path in paths { try makeCheckableDatabase(store, path: path, id: "shard", rows: 30) }
        // One in WAL mode with frames not yet checkpointed.
        let wal = try store.openDatabase(path: paths[0], id: "shard")
        try wal.executeStatements("PRAGMA journal_mode = WAL")
        try wal.executeUpdate("INSERT INTO t(id, payload) VALUES (31, printf('%01000d', 31))")
        wal.close()
        let result = try store.rotate(id: "shard", databasePaths: paths)
        #expect(result.rekeyedDatabases == paths)
        for (index, path) in paths.enumerated() {
            let db = try store.openDatabase(path: path, id: "shard")
            #expect(try intactRows(db) == (index == 0 ? 31 : 30))
            db.close()
        }
    }

    @Test func failedRekeyLeavesTheKeystoreUncommitted() throws {
        let store = try makeStore()
        try store.addKey(id: "app")
        let notADatabase = dir.file("garbage.db")
        writeBytes(try SecureRandom.bytes(count: 8192), to: notADatabase)
        let before = try store.info(id: "app")
        do {
            try store.rotate(id: "app", databasePath: notADatabase)
            Issue.record("rotation of a non-database succeeded")
        } catch {
            guard case .rotationFailed = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        #expect(try store.info(id: "app") == before)
    }

    /// A rekey that fails for lack of room (RLIMIT_FSIZE below what the rekey journal needs) in a
    /// child process: the keystore stays uncommitted and the database on the old key.
    @Test func rekeyFailureFromAFileSizeLimit() throws {
        guard let driver = crashDriverPath() else { return }
        let store = try makeStore()
        try store.addKey(id: "app")
        let dbPath = dir.file("app.db")
        try makeCheckableDatabase(store, path: dbPath, id: "app", rows: 1000)
        let before = try store.info(id: "app")
        let output = try runDriver(driver, ["rotate-limited", path, dbPath, "app", "65536"])
        #expect(output.contains("rotationFailed") && output.contains("keystore is unchanged"), "\(output)")
        let after = try store.info(id: "app")
        #expect(after == before)
        let db = try store.openDatabase(path: dbPath, id: "app")
        #expect(try intactRows(db) == 1000)
        db.close()
    }

    /// A database file the rotating process cannot write: the rekey fails, the pending version is
    /// removed, and the database still opens with the old key. As root, the child drops to `nobody`
    /// first, since root writes through file permissions.
    @Test func rekeyFailureOnAReadOnlyFile() throws {
        guard let driver = crashDriverPath() else { return }
        let store = try makeStore()
        try store.addKey(id: "app")
        let dbPath = dir.file("app.db")
        try makeCheckableDatabase(store, path: dbPath, id: "app", rows: 100)
        let before = try store.info(id: "app")
        let nobody: UInt32 = 65534
        if getuid() == 0 {
            // The keystore stays writable by the child; the database does not.
            chmod(dir.path, 0o755)
            for file in [dir.path, path, path + ".lock"] { chown(file, nobody, nobody) }
        }
        chmod(dbPath, 0o444)
        let output = try runDriver(driver, ["rotate-as-user", path, dbPath, "app", String(nobody)])
        #expect(output.contains("read-only") || output.contains("readonly"), "\(output)")
        #expect(output.contains("rotationFailed") && output.contains("keystore is unchanged"), "\(output)")
        chmod(dbPath, 0o644)
        #expect(try store.info(id: "app") == before)
        let db = try store.openDatabase(path: dbPath, id: "app")
        #expect(try intactRows(db) == 100)
        db.close()
    }

    @Test func interruptedRotationIsFinishedOrUndoneAtOpen() throws {
        let store = try makeStore()
        try store.addKey(id: "app")
        let dbPath = dir.file("app.db")
        try makeCheckableDatabase(store, path: dbPath, id: "app", rows: 20)

        // Crash after "pending" was written, before the rekey: opening undoes the mark.
        try markPending(store, id: "app", version: 2)
        var db = try store.openDatabase(path: dbPath, id: "app")
        #expect(try intactRows(db) == 20)
        db.close()
        var info = try store.info(id: "app")
        #expect(info.primaryVersion == 1 && info.pendingVersion == nil)

        // Crash after the rekey, before the commit: opening finishes the step.
        try markPending(store, id: "app", version: 3)
        let manual = Database(path: dbPath)
        try manual.open(key: .raw(store.key(id: "app")), settings: info.cipherSettings)
        try manual.rekey(to: .raw(store.key(id: "app", version: 3)))
        manual.close()
        db = try store.openDatabase(path: dbPath, id: "app")
        #expect(try intactRows(db) == 20)
        db.close()
        info = try store.info(id: "app")
        #expect(info.primaryVersion == 3 && info.pendingVersion == nil)

        // rotate() resumes a pending version rather than starting another.
        try markPending(store, id: "app", version: 4)
        let result = try store.rotate(id: "app", databasePath: dbPath)
        #expect(result.newVersion == 4)
    }

    @Test func severalDatabasesAreRotatedResumably() throws {
        let store = try makeStore()
        try store.addKey(id: "shard")
        let paths = (0..<2).map { dir.file("shard\($0).db") }
        for path in paths { try makeCheckableDatabase(store, path: path, id: "shard", rows: 10) }
        let settings = try store.cipherSettings(id: "shard")

        // An earlier run moved shard0 to the pending version and died: the rerun skips it.
        try markPending(store, id: "shard", version: 2)
        let manual = Database(path: paths[0])
        try manual.open(key: .raw(store.key(id: "shard", version: 1)), settings: settings)
        try manual.rekey(to: .raw(store.key(id: "shard", version: 2)))
        manual.close()
        let resumed = try store.rotate(id: "shard", databasePaths: paths)
        #expect(resumed.newVersion == 2 && resumed.rekeyedDatabases == [paths[1]])

        // A failure after one database moved keeps the pending version, so nothing is stranded.
        let garbage = dir.file("garbage.db")
        writeBytes(try SecureRandom.bytes(count: 4096), to: garbage)
        do {
            try store.rotate(id: "shard", databasePaths: [paths[0], garbage])
            Issue.record("rotation with a non-database succeeded")
        } catch {
            #expect("\(error)".contains("stays pending"))
        }
        #expect(try store.info(id: "shard").pendingVersion == 3)
        // shard1 is still on version 2 and opens through the older enabled version.
        var db = try store.openDatabase(path: paths[1], id: "shard")
        #expect(try intactRows(db) == 10)
        db.close()
        #expect(try store.info(id: "shard").pendingVersion == nil)
        #expect(try store.info(id: "shard").primaryVersion == 2)
        // shard0 opens on version 3 (enabled, newest first among the fallbacks).
        db = try store.openDatabase(path: paths[0], id: "shard")
        #expect(try intactRows(db) == 10)
        db.close()
    }

    func markPending(_ store: Keystore, id: String, version: Int) throws {
        let key = try SecretBytes(randomCount: 32)
        try store.updateEntry(id) { (entry) throws(KeystoreError) in
            entry.versions.append(KeyVersion(number: version, state: .enabled, origin: .generated, created: 0, key: key))
            entry.pending = version
        }
    }

    @Test func anotherProcessReadsAndWrites() throws {
        guard let driver = crashDriverPath() else { return }
        let store = try makeStore()
        try store.addKey(id: "app")
        let dbPath = dir.file("app.db")
        try makeCheckableDatabase(store, path: dbPath, id: "app", rows: 77)
        #expect(try runDriver(driver, ["count", path, dbPath, "app"]).trimmingCharacters(in: .whitespacesAndNewlines) == "77")
        _ = try runDriver(driver, ["add", path, "from-child"])
        #expect(try store.list().map(\.id) == ["app", "from-child"])
    }

    /// Figures for SECURITY.md: opening with the keystore's raw key versus a SQLCipher passphrase.
    @Test func openTimeRawKeyVersusPassphrase() throws {
        let store = try makeStore()
        try store.addKey(id: "app")
        let rawPath = dir.file("raw.db")
        try makeCheckableDatabase(store, path: rawPath, id: "app", rows: 10)
        let phrasePath = dir.file("phrase.db")
        let phrase = Database(path: phrasePath)
        try phrase.open(key: .passphrase(SecretBytes(utf8: "a passphrase")))
        try phrase.executeStatements("CREATE TABLE t(x)")
        phrase.close()
        let rounds = 5
        var start = monotonicSeconds()
        for _ in 0..<rounds { try store.openDatabase(path: rawPath, id: "app").close() }
        let raw = (monotonicSeconds() - start) / Double(rounds)
        start = monotonicSeconds()
        for _ in 0..<rounds {
            let db = Database(path: phrasePath)
            try db.open(key: .passphrase(SecretBytes(utf8: "a passphrase")))
            db.close()
        }
        let passphrase = (monotonicSeconds() - start) / Double(rounds)
        print(
            String(
                format: "open via keystore raw key: %.1f ms; SQLCipher passphrase (PBKDF2 64,000): %.1f ms", raw * 1000, passphrase * 1000))
        #expect(raw < passphrase)
    }
}

// MARK: - Child processes

/// The crash driver next to the test bundle, or `nil` (the test is then skipped with a note).
func crashDriverPath() -> String? {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent("keystore-crash-driver").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    print("keystore-crash-driver not built; skipping the multi-process test")
    return nil
}

let childPassphrase = "master"

func startDriver(_ driver: String, _ arguments: [String], output: Pipe? = nil) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: driver)
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["CIPHERDB_TEST_PASSPHRASE"] = childPassphrase
    process.environment = environment
    if let output { process.standardOutput = output }
    process.standardError = output ?? FileHandle.nullDevice
    try process.run()
    return process
}

/// Runs the driver to completion and returns what it printed (stdout and stderr).
func runDriver(_ driver: String, _ arguments: [String]) throws -> String {
    let pipe = Pipe()
    let process = try startDriver(driver, arguments, output: pipe)
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}
