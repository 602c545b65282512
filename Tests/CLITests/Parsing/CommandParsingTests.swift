import ArgumentParser
import XCTest

@testable import CipherCLI

/// The command line parsed in process, as swift-argument-parser's own tests do, beside the tests
/// that run the binary: which type each command line becomes, and what is refused before any file
/// or secret is touched.
final class CommandParsingTests: XCTestCase {
    private func parse(_ arguments: [String]) throws -> ParsableCommand {
        try CipherDBCommand.parseAsRoot(arguments)
    }

    func testRekeyWithNewSettingsParsesIntoOneCommand() throws {
        let command = try XCTUnwrap(
            try parse([
                "rekey", "app.db", "--passphrase-env", "OLD", "--new-passphrase-env", "NEW",
                "--page-size", "4096",
            ]) as? RekeyCommand)
        XCTAssertEqual(command.database, "app.db")
        XCTAssertEqual(command.key.source, .environment("OLD"))
        XCTAssertEqual(command.cipher.pageSize, 4096)
    }

    func testKeysCommandsParseAsSubcommands() throws {
        XCTAssertTrue(try parse(["keys", "passwd", "--keep-master-key"]) is KeysPasswdCommand)
        let rotate = try XCTUnwrap(try parse(["keys", "rotate", "app", "--database", "a.db", "--database", "b.db"]) as? KeysRotateCommand)
        XCTAssertEqual(rotate.targets.databases, ["a.db", "b.db"])
    }

    /// The `snapshot` commands of issue 21: secrets by flag only, retention rules required.
    func testSnapshotCommandsParse() throws {
        let create = try XCTUnwrap(
            try parse([
                "snapshot", "create", "app.db", "--key-id", "app", "--repo", "s3:http://127.0.0.1:9000/b/p", "--repo-password-fd", "3",
            ])
                as? SnapshotCreateCommand)
        XCTAssertEqual(create.database, "app.db")
        XCTAssertEqual(create.repository.location, "s3:http://127.0.0.1:9000/b/p")
        XCTAssertEqual(create.repository.passwordFD, 3)
        XCTAssertEqual(create.key.source, .keystore(id: "app"))
        let restore = try XCTUnwrap(try parse(["snapshot", "restore", "1a2b", "--to", "out.db", "--force"]) as? SnapshotRestoreCommand)
        XCTAssertEqual(restore.target, "out.db")
        XCTAssertTrue(restore.force)
        XCTAssertEqual((try parse(["snapshot", "forget", "--keep-daily", "7", "--prune"]) as? SnapshotForgetCommand)?.keepDaily, 7)
        XCTAssertThrowsError(try parse(["snapshot", "forget", "--prune"]), "a rule is required")
        XCTAssertTrue((try parse(["snapshot", "drill", "--latest", "--json"]) as? SnapshotDrillCommand)?.latest ?? false)
        XCTAssertThrowsError(try parse(["snapshot", "drill", "1a2b", "--latest"]))
        XCTAssertThrowsError(try parse(["snapshot", "list", "--repo-password", "secret"]), "no flag takes the password itself")
        XCTAssertTrue(try parse(["snapshot", "init", "--repo-password-env", "P"]) is SnapshotInitCommand)
    }

    /// The `keys` commands of issue 11, by the names scripts use.
    func testKeysSlotAndEntryCommandsParse() throws {
        let add = try XCTUnwrap(
            try parse(["keys", "slots", "add", "--transit", "fleet", "--transit-mount", "kms/transit"]) as? KeysSlotsAddCommand)
        XCTAssertEqual(add.transitKey, "fleet")
        XCTAssertEqual(add.transitMount, "kms/transit")
        XCTAssertEqual((try parse(["keys", "slots", "add", "--key-file", "k"]) as? KeysSlotsAddCommand)?.keyFile, "k")
        XCTAssertEqual((try parse(["keys", "slots", "remove", "2"]) as? KeysSlotsRemoveCommand)?.slot, 2)
        XCTAssertEqual((try parse(["keys", "slots", "rewrap", "3", "--keystore-transit"]) as? KeysSlotsRewrapCommand)?.slot, 3)
        XCTAssertTrue(try parse(["keys", "slots", "list", "--json"]) is KeysSlotsListCommand)
        XCTAssertEqual((try parse(["keys", "rotate-master", "--remove-other-slots"]) as? KeysRotateMasterCommand)?.removeOtherSlots, true)
        XCTAssertEqual((try parse(["keys", "enable", "app", "--version", "2"]) as? KeysEnableCommand)?.version.number, 2)
        XCTAssertEqual((try parse(["keys", "disable", "app", "--version", "1"]) as? KeysDisableCommand)?.id, "app")
        XCTAssertEqual((try parse(["keys", "min-version", "app", "3"]) as? KeysMinVersionCommand)?.minimumVersion, 3)
        XCTAssertTrue(try parse(["keys", "trim", "app"]) is KeysTrimCommand)
        XCTAssertTrue(try parse(["keys", "allow-export", "app"]) is KeysAllowExportCommand)
        XCTAssertTrue(try parse(["keys", "allow-delete", "app"]) is KeysAllowDeleteCommand)
        XCTAssertTrue(try parse(["keys", "info", "app", "--json"]) is KeysInfoCommand)
        let list = try XCTUnwrap(try parse(["keys", "list", "--keystore-transit", "--vault-token-file", "t"]) as? KeysListCommand)
        XCTAssertTrue(list.keystore.transit)
        XCTAssertEqual(list.keystore.vaultTokenFile, "t")
        let pkcs11 = try XCTUnwrap(
            try parse(["keys", "slots", "add", "--pkcs11", "--pkcs11-key-label", "ks", "--pkcs11-token", "laptop", "--pkcs11-pin-fd", "3"])
                as? KeysSlotsAddCommand)
        XCTAssertTrue(pkcs11.pkcs11)
        XCTAssertEqual(pkcs11.pkcs11KeyLabel, "ks")
        XCTAssertEqual(pkcs11.keystore.pkcs11Options.token, "laptop")
        XCTAssertEqual(pkcs11.keystore.pkcs11Options.pinDescriptor, 3)
    }

    /// Refused at parse time, before any file or secret is touched.
    func testConflictingKeysFlagsAreRefused() {
        for arguments in [
            ["keys", "slots", "add", "--passphrase", "--key-file", "k"], ["keys", "slots", "add"],
            ["keys", "slots", "add", "--key-file", "k", "--transit-mount", "m"],
            ["keys", "slots", "add", "--key-file", "k", "--new-keystore-passphrase-env", "X"],
            ["keys", "list", "--keystore-transit", "--keystore-passphrase-env", "X"],
            ["keys", "enable", "app"], ["keys", "enable", "app", "--version", "0"], ["keys", "min-version", "app"],
            ["keys", "list", "--keystore-pkcs11", "--keystore-transit"],
            ["keys", "slots", "add", "--key-file", "k", "--pkcs11-key-label", "x"],
            ["keys", "list", "--keystore-pkcs11", "--pkcs11-pin-env", "A", "--pkcs11-pin-file", "f"],
            ["keys", "init", "--keystore-transit"], ["keys", "init", "--keystore-pkcs11"],
        ] {
            XCTAssertThrowsError(try parse(arguments), arguments.joined(separator: " "))
        }
    }

    /// A secret given as an argument value is not an option: argv is readable by every user.
    func testNoFlagTakesASecretOnTheCommandLine() {
        for arguments in [
            ["query", "app.db", "SELECT 1", "--passphrase", "hunter2"],
            ["rekey", "app.db", "--key", "x"], ["keys", "init", "--keystore-passphrase", "p"],
            ["keys", "list", "--keystore-transit", "--vault-token", "s.secret"], ["keys", "slots", "add", "--pkcs11-pin", "1234"],
        ] {
            XCTAssertThrowsError(try parse(arguments), arguments.joined(separator: " "))
        }
    }

    /// Every flag of every command that concerns a secret (passphrase, PIN, token) takes where to
    /// read it from (VAR, PATH, N), never the secret: the help screens of the whole tree say so.
    func testNoFlagInAnyHelpTakesASecretValue() {
        var secretFlags: [String] = []
        for (path, type) in HelpRecording.commands() {
            let help = CipherDBCommand.helpMessage(for: type, columns: HelpRecording.columns)
            for line in help.split(separator: "\n") {
                let words = line.split(separator: " ")
                guard words.count >= 2, words[0].hasPrefix("--"), words[1].hasPrefix("<") else { continue }
                let flag = words[0]
                guard ["passphrase", "pin", "vault-token"].contains(where: { flag.contains($0) }) else { continue }
                secretFlags.append(String(flag))
                XCTAssertTrue(["<VAR>", "<PATH>", "<N>"].contains(words[1]), "cipherdb \(path.joined(separator: " ")): \(line)")
            }
            XCTAssertFalse(help.contains("--passphrase <"), "no --passphrase VALUE flag")
            XCTAssertFalse(help.contains("--key <"), "no --key VALUE flag")
        }
        XCTAssertGreaterThan(Set(secretFlags).count, 10, Set(secretFlags).sorted().joined(separator: " "))
    }

    func testAPageSizeThatIsNotAPowerOfTwoIsRefusedAtParseTime() {
        XCTAssertThrowsError(try parse(["create", "new.db", "--raw-key-file", "k", "--page-size", "3000"]))
    }
}
