import ArgumentParser
import CipherDB

/// `cipherdb rekey DB [key] [new key] [--page-size N] [--kdf-iter N]`.
struct RekeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rekey",
        abstract: "Change the key of an encrypted database, and optionally its page size or KDF iterations.",
        discussion: """
            DB is rewritten into a new file beside it with the new key and settings, verified, and renamed \
            over DB. When the page size stays (a new key, passphrase or KDF iteration count), every page is \
            decrypted and encrypted again by CipherDB's page codec on every core; each page's HMAC is checked \
            under the old key first, and a damaged page stops the rekey with DB unchanged. A new page size goes \
            through SQLCipher's export. A file is only replaced while no other connection can write it: if \
            another process has DB open in WAL mode, or holds a lock on it, rekey stops with exit code 75 and \
            changes nothing (a write into the replaced file would be lost). A crash leaves DB as it was or \
            rekeyed, never in between. For keystore keys, `cipherdb keys rotate` also records the new version.

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

    @Argument(help: "The encrypted database.", completion: .file())
    var database: String

    @OptionGroup(title: "Key") var key: KeyOptions
    @OptionGroup(title: "New key") var newKey: NewKeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup(title: "New cipher settings") var cipher: CipherOptions
    @OptionGroup var common: CommonOptions
    @OptionGroup var progressOptions: ProgressOptions

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
            resolved = try KeyResolver.resolveNew(
                newKey, keystore: access, label: "New passphrase for \(database)", allowWeakPassphrase: cipher.allowWeakPassphrase)
            try cipher.checkStrength(of: resolved)
        }
        let current: CipherSettings
        do { current = try opened.database.cipherSettings() } catch { throw CLIError.database(error, path: database) }
        // The new key's own settings (keystore keys carry a page size), then the flags.
        var target = opened.settings
        if let fromKey = resolved.settings { target = target.overridden(by: fromKey) }
        target = try cipher.settings(base: target)
        common.detail("\(database): new " + resolved.summary(settings: target))
        let (currentLayout, targetLayout) = (CipherLayout(settings: current), CipherLayout(settings: target))
        let (currentPageSize, targetPageSize) = (currentLayout.pageSize, targetLayout.pageSize)
        let targetIterations = targetLayout.kdfIterations
        let newIsPassphrase: Bool
        if case .passphrase = resolved.key { newIsPassphrase = true } else { newIsPassphrase = false }
        let progress = ProgressReporter(common, progressOptions)
        progress.phase("rewriting \(database) with the new key and settings")
        progress.begin("rekeying", unit: .bytes)
        let rewrite: Database.Rewrite
        do {
            rewrite = try opened.database.reencrypt(to: resolved.key, settings: target) {
                progress.copy($0, checking: "checking the new file")
            }
        } catch {
            // In place whatever followed: the keystore records it as a success would.
            if error.kind == .incomplete || error.kind == .notDurable { resolved.recordWritten(database) }
            // A file error here is the replacement that cannot be created beside DB (73).
            throw CLIError.database(error, path: database, output: true)
        }
        progress.complete("rekeyed")
        let how = rewrite == .pageByPage ? "page by page" : "by copy"
        common.info(
            "rekeyed \(database) \(how) (page size \(currentPageSize) → \(targetPageSize)\(newIsPassphrase ? ", \(targetIterations) KDF iterations" : ""))"
        )
        LaterOpens.tell(database: database, key: resolved, settings: target, common: common)
    }
}
