import CipherCrypto
import CipherDB
import Foundation
import Synchronization
import XCTest

/// A thread-safe list, for what worker threads observe.
final class ConcurrentList<Element: Sendable>: Sendable {
    private let storage = LockedValue<[Element]>([])

    func append(_ element: Element) { storage.withLock { $0.append(element) } }
    var all: [Element] { storage.withLock { $0 } }
    var count: Int { storage.withLock { $0.count } }
}

/// A value behind an `NSLock`. Not `Synchronization.Mutex`: ThreadSanitizer on Linux cannot see
/// `Mutex`'s locking and reports every access under it as a race.
final class LockedValue<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A flag threads can set and read.
final class SharedFlag: Sendable {
    private let storage: Atomic<Bool>
    init(_ value: Bool = false) { storage = Atomic(value) }
    var value: Bool {
        get { storage.load(ordering: .sequentiallyConsistent) }
        set { storage.store(newValue, ordering: .sequentiallyConsistent) }
    }
}

/// Runs `body` on `count` fresh threads (not the dispatch pool, which has as many threads as
/// cores) and waits for all of them, for at most `timeout` seconds. Returns the errors thrown.
/// A deadline guards against a hang; it is not a timed assertion.
func runThreads(
    _ count: Int, timeout: Double = 120, file: StaticString = #filePath, line: UInt = #line,
    _ body: @escaping @Sendable (Int) throws -> Void
) -> [String] {
    let errors = ConcurrentList<String>()
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            defer { group.leave() }
            do { try body(index) } catch { errors.append("thread \(index): \(error)") }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    if group.wait(timeout: .now() + timeout) == .timedOut {
        XCTFail("threads did not finish within \(timeout) s: deadlock?", file: file, line: line)
    }
    return errors.all
}

/// Runs `body` on its own thread and waits for it for at most `timeout` seconds, so that a
/// deadlock fails the test instead of hanging it. Returns `body`'s result, or `nil` on a hang.
func withDeadline<T: Sendable>(
    _ timeout: Double = 30, file: StaticString = #filePath, line: UInt = #line,
    _ body: @escaping @Sendable () -> T
) -> T? {
    let result = LockedValue<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread {
        let value = body()
        result.withLock { $0 = value }
        done.signal()
    }.start()
    guard done.wait(timeout: .now() + timeout) == .success else {
        XCTFail("the call did not return within \(timeout) s: deadlock?", file: file, line: line)
        return nil
    }
    return result.withLock { $0 }
}

/// The kind of a `DatabaseError` that `body` throws, `nil` when it returns, or `.sqlite` for a
/// foreign error (described in the diagnostics of the failing assertion).
func thrownKind(_ body: () throws -> Void) -> DatabaseError.Kind? {
    do {
        try body()
        return nil
    } catch let error as DatabaseError {
        return error.kind
    } catch {
        return .sqlite
    }
}

/// A configuration whose diagnostics land in `collector` instead of standard error.
func collectingConfiguration(
    collecting collector: ConcurrentList<DatabaseDiagnostic>,
    _ change: (inout DatabaseConfiguration) -> Void = { _ in }
) -> DatabaseConfiguration {
    var configuration = DatabaseConfiguration()
    configuration.diagnosticHandler = { collector.append($0) }
    change(&configuration)
    return configuration
}

// MARK: - Checks written once for queues and pools

/// An error thrown by test blocks.
struct TestBlockError: Error {}

enum WriterChecks {
    /// `threads` threads each run `operations` inserts, in every transaction flavour, while as many
    /// threads read: no error, and the final count is exact.
    static func manyThreadsManyOperations(_ writer: some DatabaseWriter, threads: Int = 8, operations: Int = 50) throws {
        try writer.write { db in try db.executeUpdate("CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, thread INTEGER, n INTEGER)")
        }
        let errors = runThreads(threads * 2) { index in
            if index >= threads {
                // Readers: the count only grows.
                var last = 0
                for _ in 0..<operations {
                    let count = try writer.read { db in try db.intForQuery("SELECT count(*) FROM items") ?? -1 }
                    guard count >= last else { throw DatabaseError(kind: .sqlite, message: "count went back from \(last) to \(count)") }
                    last = count
                }
                return
            }
            for n in 0..<operations {
                let insert = { (db: Database) throws in try db.executeUpdate("INSERT INTO items(thread, n) VALUES (?, ?)", index, n) }
                switch n % 6 {
                case 0: try writer.write { db in try insert(db) }
                case 1: try writer.inDatabase { db in try insert(db) }
                case 2: try writer.inTransaction { db, _ in try insert(db) }
                case 3: try writer.inDeferredTransaction { db, _ in try insert(db) }
                case 4: try writer.inImmediateTransaction { db, _ in try insert(db) }
                default: try writer.inSavePoint { db, _ in try insert(db) }
                }
            }
        }
        XCTAssertEqual(errors, [])
        let (count, distinct) = try writer.read { db in
            (try db.intForQuery("SELECT count(*) FROM items"), try db.intForQuery("SELECT count(DISTINCT thread * 100000 + n) FROM items"))
        }
        XCTAssertEqual(count, threads * operations)
        XCTAssertEqual(distinct, threads * operations)
    }

    /// Tasks write and read concurrently through the async API: the count is exact.
    static func asyncReadsAndWrites(_ writer: some DatabaseWriter, tasks: Int = 16, operations: Int = 25) async throws {
        try await writer.write { db in try db.executeUpdate("CREATE TABLE IF NOT EXISTS counter(id INTEGER PRIMARY KEY, n INTEGER)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for n in 0..<operations {
                        try await writer.write { db in try db.executeUpdate("INSERT INTO counter(n) VALUES (?)", task * 1000 + n) }
                        _ = try await writer.read { db in try db.intForQuery("SELECT count(*) FROM counter") }
                    }
                }
            }
            try await group.waitForAll()
        }
        let count = try await writer.read { db in try db.intForQuery("SELECT count(*) FROM counter") }
        XCTAssertEqual(count, tasks * operations)
    }

    /// Transactions commit, honour the rollback flag, roll back on a throw, and return the block's value.
    static func transactionBlocks(_ writer: some DatabaseWriter) throws {
        try writer.inDatabase { db in try db.executeUpdate("CREATE TABLE t(x)") }
        typealias Block = (Int, Bool, Bool) throws -> Int  // value, rollback, throw
        let flavours: [(String, Block)] = [
            ("inTransaction", { v, r, t in try writer.inTransaction { db, rollback in try body(db, v, r, t, &rollback) } }),
            ("inDeferredTransaction", { v, r, t in try writer.inDeferredTransaction { db, rollback in try body(db, v, r, t, &rollback) } }),
            (
                "inImmediateTransaction",
                { v, r, t in try writer.inImmediateTransaction { db, rollback in try body(db, v, r, t, &rollback) } }
            ),
            (
                "inExclusiveTransaction",
                { v, r, t in try writer.inExclusiveTransaction { db, rollback in try body(db, v, r, t, &rollback) } }
            ),
            ("inSavePoint", { v, r, t in try writer.inSavePoint { db, rollback in try body(db, v, r, t, &rollback) } }),
        ]
        func body(_ db: Database, _ value: Int, _ rollBack: Bool, _ fail: Bool, _ rollback: inout Bool) throws -> Int {
            try db.executeUpdate("INSERT INTO t VALUES (?)", value)
            if fail { throw TestBlockError() }
            rollback = rollBack
            return value * 2
        }
        func contains(_ value: Int) throws -> Bool {
            try writer.read { db in try db.intForQuery("SELECT count(*) FROM t WHERE x = ?", value) } == 1
        }
        for (index, (name, run)) in flavours.enumerated() {
            let committed = index * 10 + 1
            let rolledBack = index * 10 + 2
            let thrown = index * 10 + 3
            XCTAssertEqual(try run(committed, false, false), committed * 2, name)
            XCTAssertTrue(try contains(committed), name)
            XCTAssertEqual(try run(rolledBack, true, false), rolledBack * 2, name)
            XCTAssertFalse(try contains(rolledBack), name)
            XCTAssertThrowsError(try run(thrown, false, true), name) { XCTAssertTrue($0 is TestBlockError, name) }
            XCTAssertFalse(try contains(thrown), name)
            XCTAssertFalse(try writer.inDatabase { $0.isInTransaction }, name)
        }
        // `write` commits and returns; a throw rolls back.
        XCTAssertEqual(
            try writer.write { db in
                try db.executeUpdate("INSERT INTO t VALUES (100)")
                return "ok"
            }, "ok")
        XCTAssertThrowsError(
            try writer.write { db in
                try db.executeUpdate("INSERT INTO t VALUES (101)")
                throw TestBlockError()
            })
        XCTAssertTrue(try contains(100))
        XCTAssertFalse(try contains(101))
    }

    /// Every entry point, called from inside every kind of block, throws `reentrantAccess` and does
    /// not hang. Returns the number of combinations checked.
    @discardableResult
    static func reentrancy(_ writer: some DatabaseWriter, file: StaticString = #filePath, line: UInt = #line) -> Int {
        typealias Entry = @Sendable () throws -> Void
        let key = DatabaseKey.raw(SecretBytes(copying: [UInt8](repeating: 7, count: 32)))
        let inner: [(String, Entry)] = [
            ("inDatabase", { try writer.inDatabase { _ in } }),
            ("writeWithoutTransaction", { try writer.writeWithoutTransaction { _ in } }),
            ("write", { try writer.write { _ in } }),
            ("read", { try writer.read { _ in } }),
            ("inTransaction", { try writer.inTransaction { _, _ in } }),
            ("inDeferredTransaction", { try writer.inDeferredTransaction { _, _ in } }),
            ("inImmediateTransaction", { try writer.inImmediateTransaction { _, _ in } }),
            ("inExclusiveTransaction", { try writer.inExclusiveTransaction { _, _ in } }),
            ("inSavePoint", { try writer.inSavePoint { _, _ in } }),
            ("barrierWrite", { try writer.barrierWrite { _ in } }),
            ("close", { try writer.close() }),
            ("rekey", { try writer.rekey(to: key) }),
        ]
        typealias Outer = @Sendable (@escaping Entry) throws -> Void
        let outer: [(String, Outer)] = [
            ("inDatabase", { call in try writer.inDatabase { _ in try call() } }),
            ("write", { call in try writer.write { _ in try call() } }),
            ("read", { call in try writer.read { _ in try call() } }),
            ("inTransaction", { call in try writer.inTransaction { _, _ in try call() } }),
            ("inDeferredTransaction", { call in try writer.inDeferredTransaction { _, _ in try call() } }),
            ("inImmediateTransaction", { call in try writer.inImmediateTransaction { _, _ in try call() } }),
            ("inExclusiveTransaction", { call in try writer.inExclusiveTransaction { _, _ in try call() } }),
            ("inSavePoint", { call in try writer.inSavePoint { _, _ in try call() } }),
            ("barrierWrite", { call in try writer.barrierWrite { _ in try call() } }),
        ]
        var checked = 0
        for (outerName, runOuter) in outer {
            for (innerName, runInner) in inner {
                let kind = withDeadline(10, file: file, line: line) { () -> DatabaseError.Kind? in
                    let seen = LockedValue<DatabaseError.Kind?>(nil)
                    // The inner error is caught inside the block, so the outer block's own outcome
                    // is checked too: it must still work after the refusal.
                    let outerKind = thrownKind {
                        try runOuter {
                            let kind = thrownKind(runInner)
                            seen.withLock { $0 = kind }
                        }
                    }
                    return outerKind ?? seen.withLock { $0 }
                }
                XCTAssertEqual(kind, .reentrantAccess, "\(innerName) inside \(outerName)", file: file, line: line)
                checked += 1
            }
        }
        return checked
    }
}
