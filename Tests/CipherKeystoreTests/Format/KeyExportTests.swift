import CipherCrypto
import CipherDB
import Foundation
import Testing

@testable import CipherKeystore

/// One export's bundles travel as a unit: their place, count, primary and page size are
/// authenticated, and an import is all of them or nothing.
@Suite("Key export bundles")
struct KeyExportTests {
    let dir = TemporaryDirectory()
    let transfer = SecretBytes(utf8: "transfer words")

    /// A source entry "A" of 1024-byte pages with versions 1 and 2 (primary), exportable.
    private func makeSource() throws -> Keystore {
        let store = try Keystore.create(at: dir.file("source"), credential: passphrase("s"), kdf: cheapKDF)
        try store.addKey(id: "A", settings: CipherSettings(pageSize: 1024))
        try store.rotate(id: "A")
        try store.markExportable(id: "A")
        return store
    }

    private func makeTarget(_ name: String = "target") throws -> Keystore {
        try Keystore.create(at: dir.file(name), credential: passphrase("t"), kdf: cheapKDF)
    }

    @Test func theSourcesPrimaryAndPageSizeComeOverWhateverTheOrder() throws {
        let source = try makeSource()
        let bundles = try source.exportKeys(id: "A", versions: [2, 1], transferPassphrase: transfer, scrypt: cheapScrypt)
        #expect(bundles.map(\.membership?.isPrimary) == [true, false])
        #expect(bundles.map(\.membership?.pageSize) == [1024, 1024])
        let target = try makeTarget()
        let result = try target.importKeys(bundles.reversed(), transferPassphrase: transfer)
        #expect(result.imported == [1, 2] && result.alreadyHeld == [])
        #expect(result.entry.primaryVersion == 2 && result.entry.cipherSettings.pageSize == 1024)
        for version in [1, 2] {
            #expect(try target.key(id: "A", version: version).constantTimeEquals(source.key(id: "A", version: version)))
        }
        let again = try target.importKeys(bundles, transferPassphrase: transfer)
        #expect(again.imported == [] && again.alreadyHeld == [2, 1])
    }

    @Test func aFileWithABundleMissingDuplicatedOrFromAnotherExportIsRefusedBeforeAnyKDF() throws {
        let source = try makeSource()
        let bundles = try source.exportKeys(id: "A", versions: [2, 1], transferPassphrase: transfer, scrypt: cheapScrypt)
        let other = try source.exportKeys(id: "A", versions: [2, 1], transferPassphrase: transfer, scrypt: cheapScrypt)
        let target = try makeTarget()
        let before = try Data(contentsOf: URL(fileURLWithPath: target.path))
        // A wrong passphrase would be reported if a KDF ran: these fail before one.
        let wrong = SecretBytes(utf8: "not the transfer passphrase")
        #expect(throws: KeystoreError.bundleMismatch("the export wrote 2 bundle(s), the file holds 1 of them")) {
            try target.importKeys([bundles[1]], transferPassphrase: wrong)
        }
        #expect(throws: KeystoreError.invalidBundle("version 2 appears more than once")) {
            try target.importKeys([bundles[0], bundles[0]], transferPassphrase: wrong)
        }
        #expect(throws: KeystoreError.bundleMismatch("the file mixes bundles of several exports; import one export at a time")) {
            try target.importKeys([bundles[0], other[1]], transferPassphrase: wrong)
        }
        #expect(throws: KeystoreError.bundleMismatch("the bundles are for page size 1024, not 4096")) {
            try target.importKeys(bundles, transferPassphrase: wrong, pageSize: 4096)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: target.path)) == before)
    }

    /// The flags and page size are authenticated: changing either byte fails the tag.
    @Test func thePrimaryFlagAndPageSizeCannotBeChanged() throws {
        let source = try makeSource()
        let bundle = try source.exportKey(id: "A", version: 1, transferPassphrase: transfer, scrypt: cheapScrypt)
        #expect(bundle.membership?.isPrimary == false)
        let flagsOffset = 8 + 2 + 16 + 2 + 1 + 16 + 32 + 16 + 4
        for (offset, value) in [(flagsOffset, UInt8(1)), (flagsOffset + 3, UInt8(0x10))] {
            var forged = bundle.bytes
            forged[offset] = value
            let parsed = try KeyExportBundle(bytes: forged)
            #expect(parsed.membership != bundle.membership)
            #expect(throws: KeystoreError.wrongPassphrase) {
                try makeTarget("t\(offset)").importKeys([parsed], transferPassphrase: transfer)
            }
        }
    }

    /// A version held with another key was "left as it is" and the entry then mixed two
    /// keystores' keys. It stops the whole import; a destroyed one too.
    @Test func aVersionHeldWithAnotherKeyOrDestroyedStopsTheWholeImport() throws {
        let source = try makeSource()
        let bundles = try source.exportKeys(id: "A", versions: [2, 1], transferPassphrase: transfer, scrypt: cheapScrypt)
        let target = try makeTarget()
        try target.addKey(id: "A", settings: CipherSettings(pageSize: 1024))  // its own version 1
        #expect(throws: KeystoreError.versionConflict(id: "A", version: 1)) { try target.importKeys(bundles, transferPassphrase: transfer) }
        #expect(try target.info(id: "A").versions.map(\.version) == [1])

        let second = try makeTarget("second")
        try second.importKeys(
            [try source.exportKey(id: "A", version: 1, transferPassphrase: transfer, scrypt: cheapScrypt)], transferPassphrase: transfer,
            pageSize: nil)
        try second.rotate(id: "A")
        try second.rotate(id: "A")
        try second.destroy(id: "A", version: 1)
        let one = try source.exportKey(id: "A", version: 1, transferPassphrase: transfer, scrypt: cheapScrypt)
        #expect(throws: KeystoreError.versionConflict(id: "A", version: 1)) { try second.importKeys([one], transferPassphrase: transfer) }
    }

    /// A bundle at version 4294967295 left its entry no next number: rotation refused for good,
    /// even after destroying that version. An import refuses versions above 2^31 - 2; rotations
    /// past that still export (the cap sat in the parser at first, and refused them).
    @Test func aVersionAboveTheLargestImportableIsRefused() throws {
        let store = try makeTarget()
        let top = try KeyExportBundle.seal(
            key: try SecretBytes(randomCount: 32), keystoreID: store.keystoreID, id: "app", version: Int(UInt32.max),
            passphrase: transfer, scrypt: cheapScrypt)
        #expect(throws: KeystoreError.invalidBundle("version 4294967295 is above the largest importable, 2147483646")) {
            try store.importKeys([top], transferPassphrase: transfer)
        }
        let largest = try KeyExportBundle.seal(
            key: try SecretBytes(randomCount: 32), keystoreID: store.keystoreID, id: "app", version: KeyExportBundle.largestVersion,
            passphrase: transfer, scrypt: cheapScrypt)
        try store.importKeys([largest], transferPassphrase: transfer)
        #expect(try store.rotate(id: "app") == KeyExportBundle.largestVersion + 1)
        #expect(try store.rotate(id: "app") == KeyExportBundle.largestVersion + 2)
        try store.markExportable(id: "app")
        #expect(try store.exportKey(id: "app", transferPassphrase: transfer, scrypt: cheapScrypt).version == Int(Int32.max) + 1)
    }

    /// A format 1 bundle imported with no page size (`CipherSettings()`) was refused as "page
    /// size 0"; 0 is how an entry records SQLCipher's default.
    @Test func aFormat1BundleImportsWithTheDefaultPageSize() throws {
        let source = try makeSource()
        let bundle = try source.exportKey(id: "A", version: 2, transferPassphrase: transfer, scrypt: cheapScrypt)
        var legacy = bundle.bytes
        legacy[9] = 1  // format 1: no membership
        let membershipRange = (8 + 2 + 16 + 2 + 1 + 16 + 32)..<(8 + 2 + 16 + 2 + 1 + 16 + 32 + 16 + 2 + 2 + 1 + 4)
        legacy.removeSubrange(membershipRange)
        let parsed = try KeyExportBundle(bytes: legacy)
        #expect(parsed.membership == nil)
        let target = try makeTarget()
        // Altered, the bundle no longer authenticates; what matters is that the page size passes.
        #expect(throws: KeystoreError.wrongPassphrase) {
            try target.importKey(bundle: parsed, transferPassphrase: transfer, id: "A", version: 2, settings: CipherSettings())
        }
    }
}

/// A default export of an entry whose recorded database needs a disabled version failed whole
/// (`versionUnavailable`) and wrote nothing. That version is left out, and said.
@Suite("Key export selection")
struct KeyExportSelectionTests {
    let dir = TemporaryDirectory()

    @Test func aNeededVersionThatIsDisabledIsLeftOutAndNamed() throws {
        let store = try Keystore.create(at: dir.file("keystore"), credential: passphrase("s"), kdf: cheapKDF)
        try store.addKey(id: "app")
        try store.markExportable(id: "app")
        let db = try store.openDatabase(path: dir.file("a.db"), id: "app")
        try db.executeUpdate("CREATE TABLE t(x)")
        db.close()
        try store.rotate(id: "app")  // a.db stays on version 1
        #expect(try store.versionsToExport(id: "app") == [2, 1])
        try store.disable(id: "app", version: 1, force: true)
        #expect(try store.versionsToExport(id: "app") == [2])
        #expect(try store.versionsNeededButNotExportable(id: "app").map(\.version) == [1])
        #expect(try store.versionsNeededButNotExportable(id: "app").map(\.reason) == ["disabled"])
        let bundles = try store.exportKeys(id: "app", transferPassphrase: SecretBytes(utf8: "transfer words"), scrypt: cheapScrypt)
        #expect(bundles.map(\.version) == [2])
    }
}
