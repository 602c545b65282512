import Foundation
import XCTest

/// The completion scripts `make install` installs (`cipherdb --generate-completion-script SHELL`)
/// offer file names where a command takes a file: a database, an output, `--passphrase-file`,
/// `--keystore`, `--to`. bash and fish run the script for real, in a folder with files; zsh's
/// script is read (its completion system needs an interactive shell).
final class CompletionScriptTests: CLITestCase {
    /// Runs `_cipherdb` as bash's programmable completion would for the line typed so far, and
    /// prints what it offers, one a line. extglob is on, as bash-completion sets it for every script.
    private static let bashRunner = """
        shopt -s extglob progcomp
        source "$1"
        shift
        COMP_LINE="$1"
        COMP_POINT=${#COMP_LINE}
        read -r -a COMP_WORDS <<< "$COMP_LINE"
        case "$COMP_LINE" in *" ") COMP_WORDS+=("") ;; esac
        COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
        COMPREPLY=()
        _cipherdb "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf '%s\\n' "${COMPREPLY[@]}"
        """

    override func setUpWithError() throws {
        try super.setUpWithError()
        for name in ["app.db", "archive.db", "pass.txt", "keys.store", "module.so", "restored.db"] {
            try writeFile(name, "")
        }
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("sub"), withIntermediateDirectories: false)
    }

    /// The scripts written so far, by shell.
    private var scripts: [String: String] = [:]

    /// The script for `shell`, written to a file.
    private func script(_ shell: String) throws -> String {
        if let written = scripts[shell] { return written }
        let generated = try cipherdb(["--generate-completion-script", shell])
        XCTAssertFalse(generated.stdout.isEmpty)
        scripts[shell] = try writeFile(".completion.\(shell)", generated.stdout)
        return try script(shell)
    }

    /// What bash offers for `line` (the cursor at its end), sorted.
    private func bash(_ line: String, file: StaticString = #filePath, line sourceLine: UInt = #line) throws -> [String] {
        if scripts["runner"] == nil { scripts["runner"] = try writeFile(".runner.bash", Self.bashRunner) }
        let runner = try XCTUnwrap(scripts["runner"])
        let result = try run(
            "/usr/bin/env", ["bash", "--norc", "--noprofile", runner, try script("bash"), line], env: [:], stdin: nil, expect: 0,
            file: file, line: sourceLine)
        return result.stdout.split(separator: "\n").map(String.init).filter { !$0.hasPrefix(".") }.sorted()
    }

    func testBashOffersFileNamesForFileArguments() throws {
        XCTAssertEqual(try bash("cipherdb info a"), ["app.db", "archive.db"])
        XCTAssertEqual(try bash("cipherdb query app.db --passphrase-file p"), ["pass.txt"])
        XCTAssertEqual(try bash("cipherdb keys list --keystore k"), ["keys.store"])
        XCTAssertEqual(try bash("cipherdb snapshot restore latest --to r"), ["restored.db"])
        XCTAssertEqual(try bash("cipherdb rekey "), ["app.db", "archive.db", "keys.store", "module.so", "pass.txt", "restored.db", "sub"])
        XCTAssertEqual(try bash("cipherdb encrypt app.db a"), ["app.db", "archive.db"], "the second file argument too")
        // A PKCS#11 module is a shared object: .so files, and folders to find one in.
        XCTAssertEqual(try bash("cipherdb info app.db --pkcs11-module "), ["module.so", "sub"])
        // Not where a value is no file: an environment variable's name, a key id.
        XCTAssertEqual(try bash("cipherdb info app.db --passphrase-env "), [])
        XCTAssertEqual(try bash("cipherdb keys info a"), [])
    }

    func testFishOffersFileNamesForFileArguments() throws {
        let fish = try script("fish")
        func complete(_ line: String, file: StaticString = #filePath, line sourceLine: UInt = #line) throws -> [String] {
            let result = try run(
                "/usr/bin/env", ["fish", "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", fish, line], env: [:], stdin: nil,
                expect: 0, file: file, line: sourceLine)
            return result.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
                .filter { !$0.hasPrefix(".") }.sorted()
        }
        XCTAssertEqual(try complete("cipherdb info a"), ["app.db", "archive.db"])
        XCTAssertEqual(try complete("cipherdb query app.db --passphrase-file p"), ["pass.txt"])
        XCTAssertEqual(try complete("cipherdb keys list --keystore k"), ["keys.store"])
        XCTAssertEqual(try complete("cipherdb snapshot restore latest --to r"), ["restored.db"])
    }

    func testZshScriptOffersFilesForFileArguments() throws {
        let text = try String(contentsOfFile: try script("zsh"), encoding: .utf8)
        let info = try XCTUnwrap(text.components(separatedBy: "\n_cipherdb_info() {\n").last?.components(separatedBy: "\n}\n").first)
        XCTAssertTrue(info.contains("':database:_files'"), info)
        XCTAssertTrue(
            info.contains("'--passphrase-file[Read the passphrase from a file (one trailing newline is ignored).]:PATH:_files'"), info)
        XCTAssertTrue(info.contains("'--keystore[The keystore file"), info)
        XCTAssertTrue(info.contains("$CIPHERDB_KEYSTORE, else $XDG_DATA_HOME/cipherdb/keystore).]:PATH:_files'"), info)
        XCTAssertTrue(
            info.contains("'--passphrase-env[Read the passphrase from environment variable VAR.]:VAR:'"), "no files for a variable's name")
        let restore = try XCTUnwrap(
            text.components(separatedBy: "\n_cipherdb_snapshot_restore() {\n").last?.components(separatedBy: "\n}\n").first)
        XCTAssertTrue(restore.contains("'--to[The file to write.]:PATH:_files'"), restore)
    }
}
