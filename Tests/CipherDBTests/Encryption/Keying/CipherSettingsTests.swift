import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// Cipher settings: custom values must match on reopen; settings the library lacks are refused.
final class CipherSettingsTests: DatabaseTestCase {
    private func makeDatabase(key: DatabaseKey, settings: CipherSettings) throws {
        let db = try openDatabase(key: key, settings: settings)
        try db.executeUpdate("CREATE TABLE t(x)")
        for value in 0..<40 { try db.executeUpdate("INSERT INTO t VALUES (?)", String(repeating: "v\(value)", count: 20)) }
        XCTAssertEqual(db.appliedSettings, settings)
        db.close()
    }

    func testDefaultsAreReadBack() throws {
        let db = try openDatabase(key: rawKey(1))
        let settings = try db.cipherSettings()
        XCTAssertEqual(settings.pageSize, runningSQLCipher.defaultPageSize)
        XCTAssertEqual(settings.kdfIterations, runningSQLCipher.defaultKDFIterations)
        XCTAssertEqual(settings.usesHMAC, true)
        XCTAssertEqual(settings.kdfAlgorithm, runningSQLCipher.defaultHashAlgorithm)
        XCTAssertEqual(settings.hmacAlgorithm, runningSQLCipher.defaultHashAlgorithm)
        XCTAssertEqual(db.appliedSettings, .versionDefaults)
    }

    func testACustomPageSizeMustMatchOnReopen() throws {
        let settings = CipherSettings(pageSize: 2048)
        try makeDatabase(key: rawKey(1), settings: settings)
        let size = try fileBytes(path("test.db")).count
        XCTAssertEqual(size % 2048, 0)
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.rawKey(1)) }
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.rawKey(1), settings: CipherSettings(pageSize: 4096)) }
        let db = try openDatabase(key: rawKey(1), settings: settings)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 40)
        XCTAssertEqual(try db.cipherSettings().pageSize, 2048)
        XCTAssertEqual(try db.intForQuery("PRAGMA page_size"), 2048)
    }

    func testACustomKDFIterationCountMustMatchOnReopen() throws {
        let settings = CipherSettings(kdfIterations: 4000)
        try makeDatabase(key: passphrase("iterations"), settings: settings)
        assertThrows(.wrongKey) {
            _ = try self.openDatabase(key: self.passphrase("iterations"), settings: CipherSettings(kdfIterations: 4001))
        }
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.passphrase("iterations")) }
        let db = try openDatabase(key: passphrase("iterations"), settings: settings)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 40)
        XCTAssertEqual(try db.cipherSettings().kdfIterations, 4000)
    }

    func testTheHMACSettingMustMatchOnReopen() throws {
        try makeDatabase(key: rawKey(1), settings: CipherSettings(usesHMAC: false))
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.rawKey(1)) }
        let db = try openDatabase(key: rawKey(1), settings: CipherSettings(usesHMAC: false))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 40)
        XCTAssertEqual(try db.cipherSettings().usesHMAC, false)
    }

    func testAnHMACFileDoesNotOpenWithoutHMAC() throws {
        try makeDatabase(key: rawKey(2), settings: .versionDefaults)
        assertThrows(oneOf: [.wrongKey, .corrupt]) {
            let db = try self.openDatabase(key: self.rawKey(2), settings: CipherSettings(usesHMAC: false))
            _ = try db.intForQuery("SELECT count(*) FROM t")
        }
    }

    func testOutOfRangeValuesAreRefused() throws {
        for pageSize in [0, 256, 1000, 3072, 131_072] {
            assertThrows(.unsupported) { _ = try self.openDatabase(key: self.rawKey(1), settings: CipherSettings(pageSize: pageSize)) }
        }
        assertThrows(.unsupported) { _ = try self.openDatabase(key: self.rawKey(1), settings: CipherSettings(kdfIterations: 0)) }
        assertThrows(.unsupported) { _ = try CipherSettings.compatible(withMajorVersion: 5) }
    }

    func testSQLCipher4OnlySettingsAreRefusedOnSQLCipher3() throws {
        try XCTSkipIf(runningSQLCipher.major >= 4, "SQLCipher \(runningSQLCipher) has the 4.x settings")
        let refused: [CipherSettings] = [
            CipherSettings(kdfAlgorithm: .sha256),
            CipherSettings(kdfAlgorithm: .sha512),
            CipherSettings(hmacAlgorithm: .sha256),
            CipherSettings(hmacAlgorithm: .sha512),
            CipherSettings(compatibility: 3),
            CipherSettings(plaintextHeaderSize: 32),
            CipherSettings(memorySecurity: true),
            CipherSettings(memorySecurity: false),
            try CipherSettings.compatible(withMajorVersion: 4),
        ]
        for settings in refused {
            guard let error = captureError({ _ = try self.openDatabase(key: self.rawKey(1), settings: settings) }) else { continue }
            XCTAssertEqual(error.kind, .unsupported, "\(settings)")
            XCTAssertTrue(error.message.contains("3.4") || error.message.contains("4."), error.message)
            assertThrows(.unsupported) { try self.memoryDatabase().setKey(self.rawKey(1), settings: settings) }
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path("test.db"))[.size] as? Int) ?? 0
        XCTAssertEqual(size, 0, "nothing was written")

        // What SQLCipher 3 does anyway is accepted.
        let same = CipherSettings(kdfAlgorithm: .sha1, hmacAlgorithm: .sha1, plaintextHeaderSize: 0)
        let db = try openDatabase("sha1.db", key: rawKey(1), settings: same)
        try db.executeUpdate("CREATE TABLE t(x)")
    }

    func testCompatibilityPresetOfTheRunningVersionOpensDefaultFiles() throws {
        let db = try openDatabase(key: passphrase("preset"))
        try db.executeUpdate("CREATE TABLE t(x)")
        db.close()
        let preset = try CipherSettings.compatible(withMajorVersion: runningSQLCipher.major)
        XCTAssertTrue(try openDatabase(key: passphrase("preset"), settings: preset).tableExists("t"))
    }

    func testSQLCipher4SettingsMustMatchOnReopen() throws {
        try XCTSkipIf(runningSQLCipher.major < 4, "SQLCipher \(runningSQLCipher) lacks the 4.x settings")
        let settings = CipherSettings(hmacAlgorithm: .sha256)
        try makeDatabase(key: rawKey(1), settings: settings)
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.rawKey(1)) }
        let db = try openDatabase(key: rawKey(1), settings: settings)
        XCTAssertEqual(try db.cipherSettings().hmacAlgorithm, .sha256)
    }
}
