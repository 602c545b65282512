import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// `attachDatabase(at:as:key:settings:)`: another encrypted file in the same connection.
final class AttachTests: DatabaseTestCase {
    private func archive(_ name: String, key: DatabaseKey, settings: CipherSettings = .versionDefaults) throws {
        let db = try openDatabase(name, key: key, settings: settings)
        try db.executeUpdate("CREATE TABLE t(v TEXT)")
        try db.executeUpdate("INSERT INTO t VALUES ('from \(name)')")
        db.close()
    }

    func testAnotherKeyAndAJoinAcrossFiles() throws {
        try archive("archive.db", key: passphrase("archive words"))
        let db = try openDatabase("main.db", key: rawKey(0x01))
        try db.executeUpdate("CREATE TABLE t(v TEXT)")
        try db.executeUpdate("INSERT INTO t VALUES ('from main')")
        try db.attachDatabase(at: path("archive.db"), as: "archive", key: passphrase("archive words"))
        XCTAssertEqual(
            try db.stringForQuery("SELECT group_concat(v, ', ') FROM (SELECT v FROM main.t UNION ALL SELECT v FROM archive.t)"),
            "from main, from archive.db")
        try db.detachDatabase("archive")
        assertThrows(.sqlite) { _ = try db.intForQuery("SELECT count(*) FROM archive.t") }
    }

    func testAWrongKeyIsWrongKeyAndNothingStaysAttached() throws {
        try archive("archive.db", key: rawKey(0x02))
        let before = try fileBytes(path("archive.db"))
        let db = try openDatabase("main.db", key: rawKey(0x01))
        assertThrows(.wrongKey) { try db.attachDatabase(at: self.path("archive.db"), as: "archive", key: self.rawKey(0x03)) }
        var schemas: [String] = []
        let list = try db.executeQuery("PRAGMA database_list")
        while try list.next() { schemas.append(list.string("name") ?? "") }
        XCTAssertEqual(schemas, ["main"])
        XCTAssertEqual(try fileBytes(path("archive.db")), before)
    }

    func testOtherSettingsAreRefusedUntouched() throws {
        let settings = CipherSettings(pageSize: 8192, kdfIterations: 4000)
        try archive("big-pages.db", key: passphrase("settings"), settings: settings)
        let before = try fileBytes(path("big-pages.db"))
        let db = try openDatabase("main.db", key: rawKey(0x01))
        assertThrows(.unsupported) {
            try db.attachDatabase(at: self.path("big-pages.db"), as: "big", key: self.passphrase("settings"), settings: settings)
        }
        XCTAssertEqual(try fileBytes(path("big-pages.db")), before)
    }
}

/// `refuseCreatingDatabaseFiles()`: a connection without a key attaches existing SQLite databases
/// and memory, never a new or empty file (which would become a plaintext database).
final class AttachNewFileRefusalTests: DatabaseTestCase {
    func testANewFileIsRefusedAndNotMadeExistingFilesAndMemoryAttach() throws {
        let plain = Database(path: path("plain.db"))
        try plain.open()
        try plain.executeUpdate("CREATE TABLE t(v)")
        try plain.executeUpdate("INSERT INTO t VALUES ('plain')")
        plain.close()
        let db = Database(path: nil)
        try db.open()
        defer { db.close() }
        // Without the refusal SQLite makes the file.
        try db.executeUpdate("ATTACH '\(path("made.db"))' AS made")
        XCTAssertTrue(FileManager.default.fileExists(atPath: path("made.db")))
        try db.executeUpdate("DETACH made")

        try db.refuseCreatingDatabaseFiles()
        assertThrows(.newFileRefused) { try db.executeUpdate("ATTACH '\(self.path("new.db"))' AS n") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("new.db")))
        // A name computed at run time is not known while compiling: refused as well, in a script too.
        assertThrows(.newFileRefused) { try db.executeStatements("SELECT 1; ATTACH '\(self.path("x"))' || '.db' AS n") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("x.db")))
        do {
            try db.executeUpdate("ATTACH '\(path("new.db"))' AS n")
            XCTFail("a new file was attached")
        } catch {
            XCTAssertTrue(error.message.contains("ATTACH of '\(path("new.db"))': this connection makes no files"), error.message)
        }

        // An existing file that is no SQLite database yet would become a plaintext one; a `file:`
        // URI names another file than its text; temporary files stay where they are.
        XCTAssertTrue(FileManager.default.createFile(atPath: path("empty.db"), contents: Data()))
        assertThrows(.newFileRefused) { try db.executeUpdate("ATTACH '\(self.path("empty.db"))' AS e") }
        assertThrows(.newFileRefused) { try db.executeUpdate("ATTACH 'file:\(self.path("plain.db"))' AS u") }
        assertThrows(.newFileRefused) { try db.executeUpdate("PRAGMA temp_store = FILE") }
        XCTAssertEqual(try fileBytes(path("empty.db")).count, 0)
        try db.executeUpdate("ATTACH '\(path("plain.db"))' AS p")
        try db.executeUpdate("ATTACH ':memory:' AS m")
        XCTAssertEqual(try db.stringForQuery("SELECT v FROM p.t"), "plain")
    }
}
