import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// The tracing hook shows SQL as written, never argument values or keys.
final class TracingTests: DatabaseTestCase {
    private let secret = "s3cr3t-ARGUMENT-0815"

    func testTraceShowsStatementsWithPlaceholders() throws {
        let db = try memoryDatabase()
        let lines = TestBox<[String]>([])
        try db.trace { lines.value.append($0) }
        try db.executeUpdate("CREATE TABLE t(a, b)")
        try db.executeUpdate("INSERT INTO t VALUES (?, :b)", secret, secret)
        try db.executeUpdate("INSERT INTO t VALUES (:a, @b)", ["a": secret, "b": Data(secret.utf8)])
        XCTAssertEqual(try db.stringForQuery("SELECT a FROM t WHERE b = ?", secret), secret)
        try db.executeStatements("UPDATE t SET a = 'x'; DELETE FROM t WHERE b = 'y'")
        XCTAssertEqual(
            lines.value,
            [
                "CREATE TABLE t(a, b)",
                "INSERT INTO t VALUES (?, :b)",
                "INSERT INTO t VALUES (:a, @b)",
                "SELECT a FROM t WHERE b = ?",
                "UPDATE t SET a = 'x';",
                " DELETE FROM t WHERE b = 'y'",
            ])
        XCTAssertFalse(lines.value.contains { $0.contains(secret) })
    }

    func testTraceCanBeTurnedOff() throws {
        let db = try memoryDatabase()
        let lines = TestBox<[String]>([])
        try db.trace { lines.value.append($0) }
        _ = try db.intForQuery("SELECT 1")
        try db.trace(nil)
        _ = try db.intForQuery("SELECT 2")
        XCTAssertEqual(lines.value, ["SELECT 1"])
        db.close()
        assertThrows(.misuse) { try db.trace { _ in } }
    }

    func testKeyingExportAndRekeyNeverTraceKeyMaterial() throws {
        let phrase = "traced-passphrase-never-shown"
        let rawBytes = rawKeyBytes(0x51)
        let exportPhrase = "export-passphrase-never-shown"
        let db = Database(path: path("test.db"))
        try db.open()
        let lines = TestBox<[String]>([])
        try db.trace { lines.value.append($0) }
        try db.setKey(passphrase(phrase), settings: CipherSettings(kdfIterations: 1000))
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (?)", secret)
        try db.export(to: path("copy.db"), key: passphrase(exportPhrase))
        try db.export(to: path("raw.db"), key: .raw(SecretBytes(copying: rawBytes)))
        try db.rekey(to: .raw(SecretBytes(copying: rawBytes)))
        XCTAssertGreaterThan(lines.value.count, 5)
        for line in lines.value {
            for material in [phrase, exportPhrase, hex(rawBytes), hex(rawBytes).uppercased(), secret] {
                XCTAssertFalse(line.contains(material), "\(material) leaked into the trace: \(line)")
            }
        }
        _ = try db.intForQuery("SELECT count(*) FROM t")
        XCTAssertEqual(lines.value.last, "SELECT count(*) FROM t", "tracing goes on after an export")
    }

    /// SQLCipher 3.4.1's sqlcipher_export calls a NULL trace callback when a trace_v2 hook is set:
    /// export must detach the hook for the copy (this test crashed the process before it did).
    func testExportWithTracingOnDoesNotCrash() throws {
        let db = try openDatabase(key: rawKey(1))
        let lines = TestBox<[String]>([])
        try db.trace { lines.value.append($0) }
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("CREATE INDEX t_x ON t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (1), (2)")
        try db.export(to: path("plain.db"), key: nil)
        try db.export(to: path("copy.db"), key: rawKey(2))
        XCTAssertEqual(try openDatabase("plain.db").intForQuery("SELECT count(*) FROM t"), 2)
        XCTAssertEqual(try openDatabase("copy.db", key: rawKey(2)).intForQuery("SELECT count(*) FROM t"), 2)
        try db.executeUpdate("DELETE FROM t")
        XCTAssertEqual(lines.value.last, "DELETE FROM t")
    }
}
