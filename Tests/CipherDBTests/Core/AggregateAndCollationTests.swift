import CSQLCipher
import CipherDB
import Foundation
import XCTest

/// Custom aggregates and collations, from SQL and from typed expressions, on an encrypted file.
final class AggregateAndCollationTests: DatabaseTestCase {
    private let people = Table("people")
    private let personName = Column<String>("name")
    private let team = Column<String>("team")
    private let age = Column<Int64>("age")

    private func database() throws -> Database {
        let db = try openDatabase("aggregates.db", key: rawKey(0x41))
        try db.executeStatements(
            """
            CREATE TABLE people(name TEXT, team TEXT, age INTEGER);
            INSERT INTO people VALUES ('ann', 'red', 30), ('Bob', 'red', 41), ('cy', 'blue', 25), ('Dorothea', 'blue', 52);
            """)
        return db
    }

    func testAnAggregateFoldsEachGroupFromItsInitialState() throws {
        let db = try database()
        try db.createAggregate(
            "longest", argumentCount: 1, initial: { "" },
            step: { longest, arguments in
                if case .text(let text) = arguments[0], text.count > longest.count { longest = text }
            },
            result: { longest -> Bindable? in
                if longest.isEmpty { return nil }
                return longest
            })
        XCTAssertEqual(try db.stringForQuery("SELECT longest(name) FROM people"), "Dorothea")
        let rows = try db.executeQuery("SELECT team, longest(name) FROM people GROUP BY team ORDER BY team")
        var groups: [String] = []
        while try rows.next() { groups.append("\(rows.string(at: 0) ?? "?")=\(rows.string(at: 1) ?? "NULL")") }
        XCTAssertEqual(groups, ["blue=Dorothea", "red=ann"], "each group starts afresh")
        // No row at all: the result of the initial state.
        XCTAssertNil(try db.stringForQuery("SELECT longest(name) FROM people WHERE 0"))
        // From the query builder.
        let longest = SQLExpression<String?>(function: "longest", personName)
        XCTAssertEqual(try db.scalar(people.filter(team == "red").select(longest)), "ann", "the first of equal lengths")
    }

    func testAnAggregateThatThrowsFailsItsStatementWithItsMessage() throws {
        let db = try database()
        try db.createAggregate(
            "strict_sum", argumentCount: 1, initial: { Int64(0) },
            step: { total, arguments in
                guard case .integer(let value) = arguments[0] else { throw FunctionError("strict_sum takes integers") }
                total += value
            },
            result: { $0 })
        XCTAssertEqual(try db.intForQuery("SELECT strict_sum(age) FROM people"), 148)
        let error = captureError { _ = try db.intForQuery("SELECT strict_sum(name) FROM people") }
        XCTAssertTrue(error?.message.contains("strict_sum takes integers") ?? false, "\(String(describing: error))")
        // The connection goes on working, and a replaced aggregate is the one called.
        try db.createAggregate(
            "strict_sum", argumentCount: 1, initial: { Int64(100) }, step: { total, _ in total += 1 }, result: { $0 })
        XCTAssertEqual(try db.intForQuery("SELECT strict_sum(name) FROM people"), 104)
    }

    func testACollationOrdersComparesAndIndexes() throws {
        let db = try database()
        try db.createCollation("length_first") { a, b in
            if a.count != b.count { return a.count < b.count ? .orderedAscending : .orderedDescending }
            return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        }
        let ordered = try db.fetchAll(people.select(personName).order(personName.collating("length_first"))).map { try $0[personName] }
        XCTAssertEqual(ordered, ["cy", "Bob", "ann", "Dorothea"])
        XCTAssertEqual(try db.scalar(people.filter(personName.collating("NOCASE") == "BOB").count), 1)
        // In SQL, in an index and a column definition.
        try db.executeUpdate("CREATE INDEX people_by_length ON people(name COLLATE length_first)")
        XCTAssertEqual(
            try db.stringForQuery("SELECT group_concat(name, ',') FROM (SELECT name FROM people ORDER BY name COLLATE length_first DESC)"),
            "Dorothea,ann,Bob,cy")
        XCTAssertEqual(try db.integrityCheck(), [])
    }

    func testAFunctionCallFromTheBuilderQuotesItsNameAndBindsItsValues() throws {
        let db = try database()
        try db.createFunction("times", argumentCount: 2, deterministic: true) { arguments in
            guard case .integer(let a) = arguments[0], case .integer(let b) = arguments[1] else { return nil }
            return a * b
        }
        let doubled = SQLExpression<Int64>(function: "times", age, SQLExpression<Int64>(value: 2))
        XCTAssertEqual(doubled.sql, "\"times\"(`age`, ?)")
        XCTAssertEqual(try db.fetchAll(people.select(doubled).filter(team == "blue").order(age)).map { try $0[doubled] }, [50, 104])
        let hostile = SQLExpression<Int64>(function: "times\"(1,1); DROP TABLE people; --", age)
        assertThrows(.sqlite) { _ = try db.fetchAll(self.people.select(hostile)) }
        XCTAssertTrue(try db.tableExists("people"))
    }
}
