import CipherDB

/// A key ready to hand to the database, with settings that come with it (keystore keys carry a page size).
struct ResolvedKey {
    /// The key.
    let key: DatabaseKey
    /// Settings the key's origin prescribes, if any.
    let settings: CipherSettings?
    /// The key id, when it came from the keystore.
    let keyID: String?
    /// The key version, when it came from the keystore and opens an existing database.
    var keyVersion: Int? = nil
    /// The keystore the key came from, which records the databases written with it.
    var keystore: KeystoreAccess? = nil
    /// Where the key came from, for `--verbose` (never the key).
    var origin = ""

    /// Records `database`, just written with this key, in the keystore the key came from (nothing
    /// for other keys): so that no version it needs is retired without a word. A keystore that
    /// cannot be written is reported, and the command ends with 71: the database is written.
    func recordWritten(_ database: String) {
        guard let keyID, let keystore else { return }
        keystore.record(database, id: keyID)
    }

    /// The settings the key's origin prescribes (the version's defaults when none) with the values
    /// `explicit` gives over them.
    func settings(overriddenBy explicit: CipherSettings) -> CipherSettings {
        (settings ?? .versionDefaults).overridden(by: explicit)
    }

    /// A line for `--verbose`: the key's kind and origin and the settings, never key material.
    func summary(settings: CipherSettings) -> String {
        let version = SQLCipherVersion.current?.text ?? "?"
        let layout = CipherLayout(settings: settings)
        switch key {
        case .passphrase where !key.isDerived:
            return "key: key literal from \(origin), no KDF; page size \(layout.pageSize); SQLCipher \(version)"
        case .passphrase:
            return
                "key: passphrase from \(origin), PBKDF2 \(layout.kdfIterations) iterations; page size \(layout.pageSize); SQLCipher \(version)"
        case .raw, .rawWithSalt:
            return "key: raw key from \(origin), no KDF; page size \(layout.pageSize); SQLCipher \(version)"
        }
    }
}
