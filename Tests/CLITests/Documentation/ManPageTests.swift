import Foundation
import TestSupport
import XCTest

@testable import CipherCLI

/// The man pages `make install` installs, made as it makes them (tools/man/make-pages.sh: argument-parser's
/// generate-manual on the built binary, then tools/man/fix-pages.py) and read as man-db and mandoc read them.
final class ManPageTests: CLITestCase {
    /// The folder of the pages made for this test.
    private var pages: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        try XCTSkipIf(Self.binaryIsSanitized, "generate-manual is not built with the sanitizer (make asan-full)")
        let generator = URL(fileURLWithPath: Self.binary).deletingLastPathComponent().appendingPathComponent("generate-manual").path
        XCTAssertTrue(
            FileManager.default.isExecutableFile(atPath: generator),
            "build argument-parser's tool first: swift build --product generate-manual (make test does)")
        pages = directory.appendingPathComponent("man1", isDirectory: true)
        let script = repositoryRoot.appendingPathComponent("tools/man/make-pages.sh").path
        _ = try run(script, [Self.binary, generator, pages.path], env: [:], stdin: nil, expect: 0, file: #filePath, line: #line)
    }

    /// The page files, without their `.1`: `cipherdb-keys-rotate`.
    private func pageNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: pages.path).filter { $0.hasSuffix(".1") }.map { String($0.dropLast(2)) }
            .sorted()
    }

    private func page(_ name: String) throws -> String {
        try String(contentsOf: pages.appendingPathComponent(name + ".1"), encoding: .utf8)
    }

    /// Runs a program found on PATH.
    private func tool(
        _ arguments: [String], env: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line
    ) throws
        -> CommandResult
    {
        try run("/usr/bin/env", arguments, env: env, stdin: nil, expect: nil, file: file, line: line)
    }

    /// `man cipherdb-keys-rotate` finds the page of `cipherdb keys rotate`: a page per command, named with
    /// dashes (man-db looks a name up as a file name), whose title and NAME say the same name.
    func testEveryCommandHasAPageNamedAsManLooksItUp() throws {
        // The words of each command, by its page's name (`rotate-master` is one word).
        var commands = ["cipherdb-help": "cipherdb help"]
        for (path, _) in HelpRecording.commands() {
            commands[(["cipherdb"] + path).joined(separator: "-")] = (["cipherdb"] + path).joined(separator: " ")
        }
        let names = try pageNames()
        // ArgumentParser adds `help` as a subcommand of the root: it has a page too.
        XCTAssertEqual(Set(names), Set(commands.keys))
        XCTAssertGreaterThan(names.count, 40)
        for name in names {
            let text = try page(name)
            XCTAssertTrue(text.contains("\n.Dt \(name.uppercased()) 1\n"), "\(name): title")
            XCTAssertTrue(text.contains("\n.Sh NAME\n.Nm \(name)\n.Nd "), "\(name): NAME")
            // SYNOPSIS shows the command as it is typed.
            XCTAssertTrue(text.contains("\n.Sh SYNOPSIS\n.Nm \(commands[name] ?? "?")\n"), "\(name): SYNOPSIS")
        }
        XCTAssertTrue(try page("cipherdb-keys-rotate-master").contains("\n.Nm cipherdb keys rotate-master\n"))

        // As installed: man finds the page by that name and renders it.
        let root = directory.appendingPathComponent("share/man", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: pages, to: root.appendingPathComponent("man1"))
        pages = root.appendingPathComponent("man1")
        let found = try tool(["man", "-M", root.path, "-w", "cipherdb-keys-rotate"])
        XCTAssertEqual(found.status, 0, found.stderr)
        XCTAssertEqual(
            found.stdout.trimmingCharacters(in: .whitespacesAndNewlines), pages.appendingPathComponent("cipherdb-keys-rotate.1").path)
        let shown = try tool(["man", "-M", root.path, "cipherdb-keys-rotate"], env: ["MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.contains("cipherdb-keys-rotate"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("cipherdb keys rotate id"), shown.stdout)
    }

    /// Every cross reference names a page that exists, and a subcommand's page names its parents.
    func testCrossReferencesNameThePages() throws {
        let names = Set(try pageNames())
        for name in names {
            let references = try page(name).split(separator: "\n").filter { $0.hasPrefix(".Xr ") }.map { $0.split(separator: " ")[1] }
            for reference in references {
                XCTAssertTrue(names.contains(String(reference)), "\(name) refers to \(reference)(1), which is no page")
            }
        }
        let seeAlso = try XCTUnwrap(try page("cipherdb-keys-slots-add").components(separatedBy: ".Sh \"SEE ALSO\"\n").last)
        let references = seeAlso.split(separator: "\n").filter { $0.hasPrefix(".Xr ") }
        XCTAssertEqual(references, [".Xr cipherdb 1 ,", ".Xr cipherdb-keys 1 ,", ".Xr cipherdb-keys-slots 1"])
        XCTAssertTrue(try page("cipherdb").contains("\n.Xr cipherdb-keys 1 ,\n"))
    }

    /// Neither man-db (groff's warnings) nor mandoc's linter has anything to say about any page.
    func testNoPageHasAWarning() throws {
        let names = try pageNames()
        for name in names {
            let file = pages.appendingPathComponent(name + ".1").path
            let man = try tool(["man", "--warnings", "-l", file], env: ["MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"])
            XCTAssertEqual(man.status, 0, "\(name): \(man.stderr)")
            XCTAssertEqual(man.stderr, "", "\(name): man --warnings")
            XCTAssertFalse(man.stdout.isEmpty, "\(name) renders")
            let lint = try tool(["mandoc", "-T", "lint", "-W", "warning", file])
            XCTAssertEqual(lint.status, 0, "\(name): \(lint.stdout)\(lint.stderr)")
            XCTAssertEqual(lint.stdout + lint.stderr, "", "\(name): mandoc -T lint")
        }
    }

    /// The top page's EXIT STATUS is the exit code table (`ExitStatus`), code by code, and no longer
    /// the generator's "exits 0 on success, and >0 if an error occurs"; the other pages point to it.
    func testExitStatusIsTheExitCodeTable() throws {
        let text = try page("cipherdb")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try XCTUnwrap(lines.firstIndex(of: ".Sh \"EXIT STATUS\""), "no EXIT STATUS section")
        let end = try XCTUnwrap(lines[(start + 1)...].firstIndex { $0.hasPrefix(".Sh ") })
        var rows: [(code: String, meaning: String)] = []
        for line in lines[(start + 1)..<end] {
            if line.hasPrefix(".It ") {
                rows.append((String(line.dropFirst(4)), ""))
            } else if !line.hasPrefix("."), let last = rows.popLast() {
                let words = line.replacingOccurrences(of: "\\&", with: "")
                rows.append((last.code, last.meaning.isEmpty ? words : last.meaning + " " + words))
            }
        }
        XCTAssertEqual(rows.map(\.code), ExitStatus.allCases.map { String($0.rawValue) })
        XCTAssertEqual(rows.map(\.meaning), ExitStatus.allCases.map(\.summary))
        XCTAssertFalse(text.contains(".Ex -std"))
        XCTAssertFalse(text.contains("Exit codes:"), "the table moved out of DESCRIPTION")

        let rendered = try tool(
            ["man", "-l", pages.appendingPathComponent("cipherdb.1").path], env: ["MANWIDTH": "80", "MANPAGER": "cat"])
        let section = try XCTUnwrap(rendered.stdout.range(of: "EXIT STATUS\n")).upperBound
        let shown = rendered.stdout[section...]
        XCTAssertTrue(shown.contains("     77      wrong key or passphrase"), String(shown))
        XCTAssertTrue(shown.contains("     64      usage error"), String(shown))

        for name in try pageNames() where name != "cipherdb" {
            let text = try page(name)
            XCTAssertFalse(text.contains(".Ex -std"), name)
            XCTAssertTrue(text.contains("one of the codes listed in EXIT STATUS of\n.Xr cipherdb 1\n"), name)
        }
    }

    /// generate-manual drops every character that is not ASCII from a help text (`--pkcs11-pin-…`
    /// became `--pkcs11-pin-`), and no later step can bring it back: help texts are ASCII. Nor does a
    /// line of prose end with a backslash (a `\\` where a Swift line continuation `\` was meant): only
    /// an indented example's shell continuation does.
    func testHelpTextsAreASCIIWithoutStrayBackslashes() throws {
        let dump = try cipherdb(["--experimental-dump-help"])
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var offending: [String] = []
        func walk(_ command: [String: Any], _ path: [String]) {
            var texts: [(String, String)] = []
            for key in ["abstract", "discussion"] { if let text = command[key] as? String { texts.append((key, text)) } }
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                let name = (argument["valueName"] as? String) ?? "?"
                for key in ["abstract", "discussion"] { if let text = argument[key] as? String { texts.append(("\(name) \(key)", text)) } }
            }
            for (key, text) in texts {
                let strayBackslash = text.split(separator: "\n").contains { !$0.hasPrefix(" ") && $0.hasSuffix("\\") }
                if strayBackslash || text.unicodeScalars.contains(where: { !$0.isASCII }) {
                    offending.append("\(path.joined(separator: " ")): \(key): \(text)")
                }
            }
            for subcommand in command["subcommands"] as? [[String: Any]] ?? [] {
                walk(subcommand, path + [(subcommand["commandName"] as? String) ?? "?"])
            }
        }
        walk(try XCTUnwrap(object["command"] as? [String: Any]), ["cipherdb"])
        XCTAssertEqual(offending, [], "help texts with characters the man pages would lose")
    }
}
