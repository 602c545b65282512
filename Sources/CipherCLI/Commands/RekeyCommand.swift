import ArgumentParser
import CipherDB

/// `cipherdb rekey DB [key] [new key] [--page-size N] [--kdf-iter N]`.
struct RekeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rekey",
        abstract: "Change the key of an encrypted database, and optionally its page size or KDF iterations.",
        discussion: """
            With the same settings, SQLCipher's own rekey rewrites every page in one transaction; the result \
            is proved by reopening with the new key. With a new page size or KDF iteration count (or a new \
            key from the keystore, whose settings differ), the database is exported to a new file \
            beside DB with the new key and settings, verified, and renamed over DB. A file is only replaced \
            while no other connection can write it: if another process has DB open in WAL mode, or holds a \
            lock on it, rekey stops with exit code 75 and changes nothing (a write into the replaced file \
            would be lost). Either way a crash leaves DB openable with the old key or the new one. For keystore keys, `cipherdb keys rotate` \
            also records the new version.

            With new settings and no new-key flag, the key stays as it is. If both keys come from stdin, \
            the old passphrase is the first line and the new one the second.

            Examples:
              cipherdb rekey app.db --passphrase-env OLD_PASS --new-passphrase-env NEW_PASS
              cipherdb rekey app.db --passphrase-file old.txt \\
                --new-raw-key-file app.key --page-size 4096
              printf '%s\\n%s\\n' "$OLD" "$NEW" | \\
                cipherdb rekey app.db --passphrase-stdin --new-passphrase-stdin
            """
    )

    @Argument(help: "The encrypted database.")
    var database: String

    @OptionGroup(title: "Key") var key: KeyOptions
    @OptionGroup(title: "New key") var newKey: NewKeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup(title: "New cipher settings") var cipher: CipherOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let access = KeystoreAccess(keystore)
        let opened = try DatabaseAccess.open(database, keyOptions: key, keystore: access, readOnly: false, allowPlaintext: false)
        common.detail(opened.summary)
        defer { opened.database.close() }
        // New settings alone keep the key: asking for it again would only invite a typo.
        let resolved: ResolvedKey
        if !newKey.isGiven, cipher.isGiven, let sameKey = opened.key {
            resolved = sameKey
        } else {
            resolved = try KeyResolver.resolveNew(newKey, keystore: access, label: "New passphrase for \(database)")
            try cipher.checkStrength(of: resolved)
        }
        let current: CipherSettings
        do { current = try opened.database.cipherSettings() } catch { throw CLIError.database(error, path: database) }
        // The new key's own settings (keystore keys carry a page size), then the flags.
        var target = opened.settings
        if let fromKey = resolved.settings { target = DatabaseAccess.merge(target, fromKey) }
        target = try cipher.settings(base: target)
        common.detail("\(database): new " + resolved.summary(settings: target))
        let (currentLayout, targetLayout) = (CipherLayout(settings: current), CipherLayout(settings: target))
        let (currentPageSize, targetPageSize) = (currentLayout.pageSize, targetLayout.pageSize)
        let (currentIterations, targetIterations) = (currentLayout.kdfIterations, targetLayout.kdfIterations)
        let newIsPassphrase: Bool
        if case .passphrase = resolved.key { newIsPassphrase = true } else { newIsPassphrase = false }
        let needsCopy =
            currentPageSize != targetPageSize || (newIsPassphrase && currentIterations != targetIterations)
            || (cipher.compat != nil) || currentLayout.hmacAlgorithm != targetLayout.hmacAlgorithm
            || (newIsPassphrase && currentLayout.kdfAlgorithm != targetLayout.kdfAlgorithm)
        let progress = ProgressReporter(quiet: common.quiet)
        if !needsCopy {
            progress.phase("rekeying \(database) in place")
            do { try opened.database.rekey(to: resolved.key) } catch { throw CLIError.database(error, path: database) }
            progress.finish("done")
            common.info("rekeyed \(database) in place (page size \(currentPageSize))")
            return
        }
        progress.phase("rewriting \(database) with the new key and settings")
        do {
            try opened.database.reencrypt(to: resolved.key, settings: target)
        } catch {
            // A file error here is the replacement that cannot be created beside DB (73).
            throw CLIError.database(error, path: database, output: true)
        }
        progress.finish("done")
        common.info(
            "rekeyed \(database) by copy (page size \(currentPageSize) → \(targetPageSize)\(newIsPassphrase ? ", \(targetIterations) KDF iterations" : ""))"
        )
        if let note = LaterOpens.note(database: database, key: resolved, settings: target) { common.info(note) }
    }
}
