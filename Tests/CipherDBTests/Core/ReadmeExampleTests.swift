import CipherCrypto
import CipherDB
import Foundation
import TestSupport
import XCTest

/// Compiles and runs the README's example, on files in a temporary folder.
final class ReadmeExampleTests: DatabaseTestCase {
    func testReadmeExample() throws {
        let databasePath = path("people.db")
        let plainPath = path("people-plain.db")
        var printed: [String] = []
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

        // The README's ten lines, with its paths replaced by the test's.
        let db = Database(path: databasePath)
        try db.open(key: .passphrase(SecretBytes(utf8: "correct horse battery staple")))
        try db.executeUpdate("CREATE TABLE IF NOT EXISTS people(name TEXT, age INTEGER)")
        try db.executeUpdate("INSERT INTO people(name, age) VALUES (?, ?)", "Ann", 31)
        try db.executeUpdate("UPDATE people SET age = :age WHERE name = :name", ["age": 32, "name": "Ann"])
        let rs = try db.executeQuery("SELECT name, age FROM people WHERE age > ?", 21)
        while try rs.next() { print(rs.string("name") ?? "", rs.int("age") ?? 0) }
        try db.export(to: plainPath, key: nil, replacing: true)

        XCTAssertEqual(printed, ["Ann 32"])
        // Any number of times: the example replaces its decrypted copy.
        try db.export(to: plainPath, key: nil, replacing: true)
        let plain = Database(path: plainPath)
        try plain.open()
        XCTAssertEqual(try plain.stringForQuery("SELECT name FROM people WHERE age = 32"), "Ann")
    }

    /// The README's code block and this test must not drift apart.
    func testReadmeStillShowsTheseLines() throws {
        let readme = repositoryRoot.appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        for line in [
            #"try db.open(key: .passphrase(SecretBytes(utf8: "correct horse battery staple")))"#,
            #"try db.executeUpdate("UPDATE people SET age = :age WHERE name = :name", ["age": 32, "name": "Ann"])"#,
            #"while try rs.next() { print(rs.string("name") ?? "", rs.int("age") ?? 0) }"#,
            #"try db.export(to: "/tmp/people-plain.db", key: nil, replacing: true)"#,
        ] {
            XCTAssertTrue(text.contains(line), "README lost: \(line)")
        }
    }
}
