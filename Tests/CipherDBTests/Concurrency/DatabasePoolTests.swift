import CipherCrypto
import Foundation
import Synchronization
import XCTest

@testable import CipherDB

final class DatabasePoolTests: DatabaseTestCase {
    private func makePool(
        _ name: String = "pool.db", key: DatabaseKey? = nil,
        diagnostics: ConcurrentList<DatabaseDiagnostic> = ConcurrentList(),
        _ change: (inout DatabaseConfiguration) -> Void = { _ in }
    ) throws -> DatabasePool {
        try DatabasePool(
            path: path(name), key: key ?? passphrase("pool secret"),
            configuration: collectingConfiguration(collecting: diagnostics, change))
    }

    // MARK: - Opening and keys

    func testInitOpensTheWriterInWALModeAndThrowsOnWrongKey() throws {
        let pool = try makePool()
        XCTAssertEqual(try pool.inDatabase { db in try db.journalMode() }, "wal")
        XCTAssertEqual(pool.openConnectionCount, 1)
        XCTAssertEqual(pool.readerCount, 0)
        try pool.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        try pool.close()

        assertThrows(.wrongKey) { _ = try self.makePool(key: self.passphrase("wrong")) }
        assertThrows(.wrongKey) { _ = try self.makePool(key: self.rawKey(1)) }
        assertThrows(.fileError) { _ = try self.makePool("missing/dir/pool.db") }
        assertThrows(.unsupported) { _ = try DatabasePool(path: ":memory:") }
        assertThrows(.misuse) { _ = try self.makePool { $0.maximumReaderCount = 0 } }
    }

    func testPassphraseIsDerivedOnceAndTheRawKeyOpensTheFile() throws {
        // A new file: the pool chooses the salt and creates the file with the derived key.
        let pool = try makePool()
        XCTAssertTrue(pool.usesDerivedKey)
        try pool.write { db in
            try db.executeUpdate("CREATE TABLE t(x)")
            try db.executeUpdate("INSERT INTO t VALUES ('derived')")
        }
        XCTAssertEqual(try pool.read { db in try db.stringForQuery("SELECT x FROM t") }, "derived")
        try pool.close()

        // The derived raw key opens the file, and so does the passphrase through SQLCipher's own KDF.
        let secret = SecretBytes(utf8: "pool secret")
        let raw = try XCTUnwrap(PassphraseKeyDerivation.rawKey(passphrase: secret, databaseAt: path("pool.db")))
        XCTAssertEqual(raw.count, 32)
        XCTAssertEqual(try openDatabase("pool.db", key: .raw(raw)).stringForQuery("SELECT x FROM t"), "derived")
        XCTAssertEqual(try openDatabase("pool.db", key: .passphrase(secret)).stringForQuery("SELECT x FROM t"), "derived")

        // A file made by a plain connection with the passphrase: same derivation.
        let db = try openDatabase("plain.db", key: .passphrase(secret))
        try db.executeUpdate("CREATE TABLE t(x)")
        db.close()
        let salt = try XCTUnwrap(PassphraseKeyDerivation.salt(ofDatabaseAt: path("plain.db")))
        let derived = try PassphraseKeyDerivation.rawKey(passphrase: secret, salt: salt)
        XCTAssertTrue(try openDatabase("plain.db", key: .raw(derived)).tableExists("t"))
        let existing = try makePool("plain.db")
        XCTAssertTrue(existing.usesDerivedKey)
        XCTAssertTrue(try existing.read { db in try db.tableExists("t") })

        // Opting out keys every connection with the passphrase.
        let perConnection = try makePool("plain.db") { $0.derivesPassphraseKeyOnce = false }
        XCTAssertFalse(perConnection.usesDerivedKey)
        XCTAssertTrue(try perConnection.read { db in try db.tableExists("t") })
    }

    func testDerivedKeyRejectedFallsBackToThePassphrase() throws {
        let db = try openDatabase("fallback.db", key: passphrase("right"))
        try db.executeUpdate("CREATE TABLE t(x)")
        db.close()
        let diagnostics = ConcurrentList<DatabaseDiagnostic>()
        let configuration = collectingConfiguration(collecting: diagnostics)
        // A deliberately wrong "derived" key, as when SQLCipher derived differently than assumed.
        let keys = PoolKeys(connection: rawKey(9), fallback: passphrase("right"), derived: true)
        let opened = try keys.openConnection(
            path: path("fallback.db"), flags: .readWrite, settings: .versionDefaults,
            configuration: configuration
        ) { _ in }
        XCTAssertTrue(try opened.tableExists("t"))
        XCTAssertFalse(keys.isDerived)
        XCTAssertEqual(diagnostics.all.map(\.kind), [.derivedKeyRejected])
        // Later connections use the passphrase directly.
        let again = try keys.openConnection(
            path: path("fallback.db"), flags: .readOnly, settings: .versionDefaults,
            configuration: configuration
        ) { _ in }
        XCTAssertTrue(try again.tableExists("t"))
        XCTAssertEqual(diagnostics.count, 1)
    }

    func testRawKeyPool() throws {
        let pool = try makePool(key: rawKey(5))
        XCTAssertFalse(pool.usesDerivedKey)
        try pool.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        XCTAssertTrue(try pool.read { db in try db.tableExists("t") })
    }

    func testPrepareDatabaseRunsOnEveryConnectionAndItsErrorsThrow() throws {
        let prepared = ConcurrentList<Bool>()
        let pool = try makePool {
            $0.prepareDatabase = { db in
                try db.executeUpdate("PRAGMA cache_size = 123")
                prepared.append(db.isReadOnly)
            }
        }
        XCTAssertEqual(try pool.read { db in try db.intForQuery("PRAGMA cache_size") }, 123)
        XCTAssertEqual(try pool.inDatabase { db in try db.intForQuery("PRAGMA cache_size") }, 123)
        XCTAssertEqual(prepared.all.sorted { !$0 && $1 }, [false, true], "the writer, then one read-only reader")

        assertThrows(.sqlite) {
            _ = try self.makePool("other.db") { $0.prepareDatabase = { _ in throw TestBlockError() } }
        }
        assertThrows(.sqlite) {
            _ = try DatabaseQueue(
                path: self.path("queue.db"),
                configuration: {
                    var configuration = DatabaseConfiguration()
                    configuration.prepareDatabase = { db in try db.executeUpdate("NOT SQL") }
                    return configuration
                }())
        }
    }

    // MARK: - Blocks

    func testTransactionBlocks() throws {
        try WriterChecks.transactionBlocks(makePool())
    }

    func testReadersAreReadOnly() throws {
        let pool = try makePool()
        try pool.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        assertThrows(.readOnly) { try pool.read { db in try db.executeUpdate("INSERT INTO t VALUES (1)") } }
        XCTAssertEqual(try pool.read { db in try db.intForQuery("SELECT count(*) FROM t") }, 0)
    }

    func testLeftOpenResultSetsAreClosedAndReported() throws {
        let diagnostics = ConcurrentList<DatabaseDiagnostic>()
        let pool = try makePool(diagnostics: diagnostics)
        try pool.write { db in try db.executeStatements("CREATE TABLE t(x); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2);") }
        let escaped = try pool.read { db in try db.executeQuery("SELECT x FROM t") }
        XCTAssertTrue(escaped.isClosed)
        try pool.inDatabase { db in try db.beginTransaction() }
        XCTAssertEqual(diagnostics.all.map(\.kind), [.resultSetsLeftOpen(count: 1), .transactionLeftOpen])
        try pool.write { db in try db.executeUpdate("INSERT INTO t VALUES (3)") }
    }

    // MARK: - Reentrancy

    func testReentrancyFromEveryEntryPointThrows() throws {
        let pool = try makePool()
        try pool.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        XCTAssertEqual(WriterChecks.reentrancy(pool), 9 * 12)
        // Pool-only entry points.
        let entries: [(String, @Sendable () throws -> Void)] = [
            ("releaseMemory", { @Sendable () throws -> Void in try pool.releaseMemory() }),
            ("checkpoint", { @Sendable () throws -> Void in _ = try pool.checkpoint() }),
            ("releaseAllDatabases", { @Sendable () throws -> Void in try pool.releaseAllDatabases() }),
        ]
        for (name, entry) in entries {
            let kind = withDeadline { () -> DatabaseError.Kind? in
                var inner: DatabaseError.Kind?
                _ = thrownKind { try pool.read { _ in inner = thrownKind(entry) } }
                return inner
            }
            XCTAssertEqual(kind, .reentrantAccess, name)
        }
        try pool.write { db in try db.executeUpdate("INSERT INTO t VALUES (1)") }
        XCTAssertEqual(try pool.read { db in try db.intForQuery("SELECT count(*) FROM t") }, 1)
    }

    func testAsyncReentrancyThrows() async throws {
        let pool = try makePool()
        for nested in [{ try pool.read { _ in } }, { try pool.write { _ in } }] as [@Sendable () throws -> Void] {
            do {
                try await pool.read { _ in try nested() }
                XCTFail("expected reentrantAccess")
            } catch let error as DatabaseError {
                XCTAssertEqual(error.kind, .reentrantAccess)
            }
        }
    }

    // MARK: - Concurrency

    func testManyThreadsManyOperations() throws {
        try WriterChecks.manyThreadsManyOperations(makePool())
    }

    func testAsyncReadsAndWrites() async throws {
        try await WriterChecks.asyncReadsAndWrites(makePool { $0.maximumReaderCount = 3 })
    }

    func testSnapshotIsolationWhileAWriterMovesAmounts() throws {
        let accounts = 10
        let initial = 1000
        let pool = try makePool { $0.maximumReaderCount = 4 }
        try pool.write { db in
            try db.executeUpdate("CREATE TABLE accounts(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL)")
            for id in 0..<accounts { try db.executeUpdate("INSERT INTO accounts VALUES (?, ?)", id, initial) }
        }
        let invariant = accounts * initial
        let done = SharedFlag()
        let sums = ConcurrentList<Int>()
        let errors = runThreads(5) { index in
            if index == 0 {
                defer { done.value = true }
                var generator = SystemRandomNumberGenerator()
                for _ in 0..<400 {
                    let from = Int.random(in: 0..<accounts, using: &generator)
                    let to = (from + Int.random(in: 1..<accounts, using: &generator)) % accounts
                    let amount = Int.random(in: 1...50, using: &generator)
                    // Two statements: a reader that saw between them would see money vanish.
                    try pool.write { db in
                        try db.executeUpdate("UPDATE accounts SET balance = balance - ? WHERE id = ?", amount, from)
                        try db.executeUpdate("UPDATE accounts SET balance = balance + ? WHERE id = ?", amount, to)
                    }
                }
                return
            }
            var reads = 0
            while !done.value || reads < 20 {
                let (total, again) = try pool.read { db in
                    let first = try db.intForQuery("SELECT sum(balance) FROM accounts") ?? -1
                    // Row by row, in the same snapshot.
                    var rowTotal = 0
                    let rows = try db.executeQuery("SELECT balance FROM accounts")
                    while try rows.next() { rowTotal += rows.int(at: 0) ?? 0 }
                    return (first, rowTotal)
                }
                sums.append(total)
                sums.append(again)
                reads += 1
            }
        }
        XCTAssertEqual(errors, [])
        XCTAssertGreaterThan(sums.count, 0)
        XCTAssertEqual(sums.all.filter { $0 != invariant }, [])
    }

    func testReadsDoNotWaitForWritesAndSeeTheLastCommit() throws {
        let pool = try makePool()
        try pool.write { db in try db.executeStatements("CREATE TABLE t(x); INSERT INTO t VALUES (1);") }
        let writing = DispatchSemaphore(value: 0)
        let readDone = DispatchSemaphore(value: 0)
        let writeDone = DispatchSemaphore(value: 0)
        Thread {
            try? pool.write { db in
                try db.executeUpdate("INSERT INTO t VALUES (2)")
                writing.signal()
                readDone.wait()  // the write stays open until the read is over
            }
            writeDone.signal()
        }.start()
        writing.wait()
        let count = withDeadline { try? pool.read { db in try db.intForQuery("SELECT count(*) FROM t") } }
        readDone.signal()
        XCTAssertEqual(writeDone.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(count, 1)
        XCTAssertEqual(try pool.read { db in try db.intForQuery("SELECT count(*) FROM t") }, 2)
    }

    func testWritesDoNotWaitForReads() throws {
        let pool = try makePool()
        try pool.write { db in try db.executeStatements("CREATE TABLE t(x); INSERT INTO t VALUES (1);") }
        let reading = DispatchSemaphore(value: 0)
        let writeDone = DispatchSemaphore(value: 0)
        let seenByReader = LockedValue<Int?>(nil)
        Thread {
            let seen = try? pool.read { db -> Int? in
                reading.signal()  // the snapshot is taken when the block starts
                writeDone.wait()  // the read transaction stays open across the write
                return try db.intForQuery("SELECT count(*) FROM t")
            }
            seenByReader.withLock { $0 = seen ?? nil }
            reading.signal()
        }.start()
        reading.wait()
        let written = withDeadline { (try? pool.write { db in try db.executeUpdate("INSERT INTO t VALUES (2)") }) != nil }
        writeDone.signal()
        reading.wait()
        XCTAssertEqual(written, true)
        XCTAssertEqual(seenByReader.withLock { $0 }, 1, "the reader keeps its snapshot")
    }

    func testAllReadersBusyWaitsThenTimesOut() throws {
        let pool = try makePool {
            $0.maximumReaderCount = 2
            $0.readerWaitTimeout = 0.3
        }
        try pool.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        for _ in 0..<2 {
            finished.enter()
            Thread {
                _ = try? pool.read { _ in
                    holding.signal()
                    release.wait()
                }
                finished.leave()
            }.start()
        }
        holding.wait()
        holding.wait()
        XCTAssertEqual(pool.readerCount, 2)
        XCTAssertEqual(pool.checkedOutConnectionCount, 2)
        assertThrows(.poolTimeout) { try pool.read { _ in } }
        release.signal()
        release.signal()
        XCTAssertEqual(finished.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(try pool.read { db in try db.intForQuery("SELECT 1") }, 1)
        XCTAssertEqual(pool.checkedOutConnectionCount, 0)
    }

    func testAsyncReadTimesOutWithoutBlockingAndWaitersAreServed() async throws {
        let pool = try makePool {
            $0.maximumReaderCount = 1
            $0.readerWaitTimeout = 0.3
        }
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        Thread {
            _ = try? pool.read { _ in
                holding.signal()
                release.wait()
            }
        }.start()
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                holding.wait()
                continuation.resume()
            }
        }
        do {
            _ = try await pool.read { _ in 1 }
            XCTFail("expected poolTimeout")
        } catch let error as DatabaseError {
            XCTAssertEqual(error.kind, .poolTimeout)
        }
        release.signal()
        // Many async reads through one reader (with the default wait limit): each waits its turn
        // without holding a thread.
        let single = try makePool { $0.maximumReaderCount = 1 }
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 { group.addTask { try await single.read { db in try db.intForQuery("SELECT 1") ?? 0 } } }
            return try await group.reduce(0, +)
        }
        XCTAssertEqual(total, 50)
    }

    func testCancelledAsyncReadStopsWaitingForAReader() async throws {
        let pool = try makePool { $0.maximumReaderCount = 1 }
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        Thread {
            _ = try? pool.read { _ in
                holding.signal()
                release.wait()
            }
            held.signal()
        }.start()
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                holding.wait()
                continuation.resume()
            }
        }
        let waiting = Task { try await pool.read { _ in 1 } }
        try await Task.sleep(nanoseconds: 50_000_000)  // most likely waiting by now; either way it must stop
        waiting.cancel()
        do {
            _ = try await waiting.value
            XCTFail("expected CancellationError")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        release.signal()
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                held.wait()
                continuation.resume()
            }
        }
        XCTAssertEqual(pool.checkedOutConnectionCount, 0)
        let value = try await pool.read { _ in 2 }
        XCTAssertEqual(value, 2)
    }

    func testReadWaitingForABusyReaderGetsTheReturnedOne() throws {
        let pool = try makePool { $0.maximumReaderCount = 1 }
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let order = ConcurrentList<String>()
        Thread {
            _ = try? pool.read { _ in
                holding.signal()
                release.wait()
                order.append("first")
            }
        }.start()
        holding.wait()
        let waiter = DispatchSemaphore(value: 0)
        Thread {
            _ = try? pool.read { _ in order.append("second") }
            waiter.signal()
        }.start()
        release.signal()
        XCTAssertEqual(waiter.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(order.all, ["first", "second"])
        XCTAssertEqual(pool.readerCount, 1)
    }

    func testBarrierWriteWaitsForReadsAndHoldsOffNewOnes() throws {
        let pool = try makePool()
        try pool.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        let reading = DispatchSemaphore(value: 0)
        let releaseRead = DispatchSemaphore(value: 0)
        let barrierRan = SharedFlag()
        let barrierOver = SharedFlag()
        let readerSawBarrierRunning = SharedFlag()
        let barrierRanBeforeReadEnded = SharedFlag()
        Thread {
            _ = try? pool.read { _ in
                reading.signal()
                releaseRead.wait()
                if barrierRan.value { barrierRanBeforeReadEnded.value = true }
            }
        }.start()
        reading.wait()
        let barrierDone = DispatchSemaphore(value: 0)
        let lateReadDone = DispatchSemaphore(value: 0)
        Thread {
            _ = try? pool.barrierWrite { db in
                barrierRan.value = true
                // A read started now must wait for the barrier to end.
                Thread {
                    _ = try? pool.read { _ in if !barrierOver.value { readerSawBarrierRunning.value = true } }
                    lateReadDone.signal()
                }.start()
                usleep(100_000)  // gives a broken barrier the chance to let the read in
                try db.executeUpdate("INSERT INTO t VALUES (1)")
                barrierOver.value = true
            }
            barrierDone.signal()
        }.start()
        usleep(100_000)  // gives a broken barrier the chance to run during the read
        releaseRead.signal()
        XCTAssertEqual(barrierDone.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(lateReadDone.wait(timeout: .now() + 30), .success)
        XCTAssertFalse(barrierRanBeforeReadEnded.value, "the barrier ran while a read was in flight")
        XCTAssertFalse(readerSawBarrierRunning.value, "a read ran during the barrier")
        XCTAssertEqual(try pool.read { db in try db.intForQuery("SELECT count(*) FROM t") }, 1)
    }

    // MARK: - Rekey

    func testRekeyWhileReadersAreActive() throws {
        let pool = try makePool { $0.maximumReaderCount = 4 }
        try pool.write { db in
            try db.executeUpdate("CREATE TABLE t(x)")
            for value in 0..<100 { try db.executeUpdate("INSERT INTO t VALUES (?)", value) }
        }
        let stop = SharedFlag()
        let readsAfterRekey = ConcurrentList<Int>()
        let rekeyed = SharedFlag()
        let errors = runThreads(5) { index in
            if index == 0 {
                defer { stop.value = true }
                usleep(20_000)
                try pool.rekey(to: .passphrase(SecretBytes(utf8: "new secret")))
                rekeyed.value = true
                try pool.write { db in try db.executeUpdate("INSERT INTO t VALUES (100)") }
                try pool.rekey(to: .raw(SecretBytes(copying: [UInt8](repeating: 0xAB, count: 32))))
                try pool.write { db in try db.executeUpdate("INSERT INTO t VALUES (101)") }
                return
            }
            while !stop.value {
                let count = try pool.read { db in try db.intForQuery("SELECT count(*) FROM t") ?? 0 }
                guard (100...102).contains(count) else { throw DatabaseError(kind: .sqlite, message: "count \(count)") }
                if rekeyed.value { readsAfterRekey.append(count) }
            }
        }
        XCTAssertEqual(errors, [], "no reader may see an error during a rekey")
        XCTAssertEqual(try pool.read { db in try db.intForQuery("SELECT count(*) FROM t") }, 102)
        try pool.close()

        assertThrows(.wrongKey) { _ = try self.openDatabase("pool.db", key: self.passphrase("pool secret")) }
        assertThrows(.wrongKey) { _ = try self.openDatabase("pool.db", key: self.passphrase("new secret")) }
        let newKey = DatabaseKey.raw(SecretBytes(copying: [UInt8](repeating: 0xAB, count: 32)))
        XCTAssertEqual(try openDatabase("pool.db", key: newKey).intForQuery("SELECT count(*) FROM t"), 102)
        // The pool reopens with the new key after close.
        XCTAssertEqual(try pool.read { db in try db.intForQuery("SELECT count(*) FROM t") }, 102)
    }

    func testRekeyToAPassphraseIsDerivedOnce() throws {
        let pool = try makePool(key: rawKey(1))
        try pool.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        try pool.rekey(to: passphrase("after"))
        XCTAssertTrue(pool.usesDerivedKey)
        XCTAssertTrue(try pool.read { db in try db.tableExists("t") })
        try pool.close()
        XCTAssertTrue(try openDatabase("pool.db", key: passphrase("after")).tableExists("t"))
    }

    // MARK: - Connections

    func testCloseThenReadAndWriteReopen() throws {
        let pool = try makePool()
        try pool.write { db in try db.executeStatements("CREATE TABLE t(x); INSERT INTO t VALUES (7);") }
        XCTAssertEqual(try pool.read { db in try db.intForQuery("SELECT x FROM t") }, 7)
        XCTAssertEqual(pool.openConnectionCount, 2)
        try pool.close()
        XCTAssertEqual(pool.openConnectionCount, 0)
        XCTAssertEqual(pool.readerCount, 0)
        // A reader first, while the writer is still closed.
        XCTAssertEqual(try pool.read { db in try db.intForQuery("SELECT x FROM t") }, 7)
        try pool.write { db in try db.executeUpdate("INSERT INTO t VALUES (8)") }
        XCTAssertEqual(try pool.read { db in try db.intForQuery("SELECT sum(x) FROM t") }, 15)
        XCTAssertEqual(pool.countOfOpenDatabases, 2)
    }

    func testCountsAndReleaseMemory() throws {
        let pool = try makePool { $0.maximumReaderCount = 3 }
        try pool.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        let errors = runThreads(6) { _ in
            for _ in 0..<20 { _ = try pool.read { db in try db.intForQuery("SELECT count(*) FROM t") } }
        }
        XCTAssertEqual(errors, [])
        XCTAssertLessThanOrEqual(pool.readerCount, 3)
        XCTAssertGreaterThanOrEqual(pool.readerCount, 1)
        XCTAssertEqual(pool.countOfCheckedOutDatabases, 0)
        XCTAssertEqual(pool.countOfCheckedInDatabases, pool.openConnectionCount)
        XCTAssertEqual(pool.maximumNumberOfDatabasesToCreate, 3)
        let (insideCount, insideCheckedOut) = try pool.read { _ in (pool.openConnectionCount, pool.checkedOutConnectionCount) }
        XCTAssertGreaterThanOrEqual(insideCount, 2)
        XCTAssertEqual(insideCheckedOut, 1)
        try pool.releaseMemory()
        XCTAssertEqual(pool.readerCount, 0)
        XCTAssertEqual(pool.openConnectionCount, 1)
        XCTAssertEqual(try pool.read { db in try db.intForQuery("SELECT count(*) FROM t") }, 0)
    }

    func testStarvedCheckpointTruncatesTheLogOnceReadersLetGo() throws {
        let diagnostics = ConcurrentList<DatabaseDiagnostic>()
        let pool = try makePool(diagnostics: diagnostics) {
            $0.checkpointPageThreshold = 4
            $0.checkpointStarvationPageLimit = 20
            $0.busyTimeout = 0.05
        }
        try pool.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let readerDone = DispatchSemaphore(value: 0)
        Thread {
            _ = try? pool.read { db in
                _ = try db.intForQuery("SELECT count(*) FROM t")  // takes the snapshot
                holding.signal()
                release.wait()
            }
            readerDone.signal()
        }.start()
        holding.wait()
        for value in 0..<60 {
            try pool.write { db in try db.executeUpdate("INSERT INTO t VALUES (?)", String(repeating: "x", count: 500) + "\(value)") }
        }
        XCTAssertTrue(diagnostics.all.contains { if case .checkpointStarved = $0.kind { return true } else { return false } })
        release.signal()
        XCTAssertEqual(readerDone.wait(timeout: .now() + 30), .success)
        // With the reader gone, the next checkpoint that finds the log large empties it.
        try pool.write { db in try db.executeUpdate("INSERT INTO t VALUES ('last')") }
        let result = try pool.barrierWrite { db in try db.checkpoint(.truncate) }
        XCTAssertEqual(result.logFrames, 0)
        XCTAssertEqual(try pool.read { db in try db.intForQuery("SELECT count(*) FROM t") }, 61)
    }
}
