import CipherDB
import Foundation
import XCTest

final class RowDecodingTests: DatabaseTestCase {
    private struct Person: Decodable, Equatable {
        struct Address: Codable, Equatable { var city: String }
        var id: Int64
        var name: String
        var age: Int?
        var score: Double
        var active: Bool
        var photo: Data?
        var address: Address?
    }

    func testDecodesRowsByCaseInsensitiveColumnName() throws {
        let db = try openDatabase(key: rawKey(3))
        try db.executeUpdate(
            "CREATE TABLE people(ID INTEGER PRIMARY KEY, Name TEXT, age INT, score REAL, active INT, photo BLOB, address TEXT)")
        try db.executeUpdate("INSERT INTO people VALUES (1, 'Ann', 31, 1.5, 1, x'00ff', '{\"city\":\"Oslo\"}')")
        try db.executeUpdate("INSERT INTO people VALUES (2, 'Bob', NULL, 0, 0, NULL, NULL)")
        let rs = try db.executeQuery("SELECT * FROM people ORDER BY id")
        var people: [Person] = []
        while try rs.next() { people.append(try rs.decode(Person.self)) }
        XCTAssertEqual(
            people,
            [
                Person(id: 1, name: "Ann", age: 31, score: 1.5, active: true, photo: Data([0, 0xFF]), address: .init(city: "Oslo")),
                Person(id: 2, name: "Bob", age: nil, score: 0, active: false, photo: nil, address: nil),
            ])
    }

    func testMissingColumnAndUnexpectedNullThrow() throws {
        struct Needs: Decodable { var missing: Int }
        struct NonOptional: Decodable { var v: Int }
        let db = try openDatabase()
        let rs = try db.executeQuery("SELECT NULL AS v")
        XCTAssertTrue(try rs.next())
        XCTAssertThrowsError(try rs.decode(Needs.self)) { XCTAssertEqual(($0 as? DatabaseError)?.kind, .columnNotFound) }
        XCTAssertThrowsError(try rs.decode(NonOptional.self)) { XCTAssertEqual(($0 as? DatabaseError)?.kind, .unexpectedNull) }
    }
}
