import CipherDB
import Foundation
import XCTest

/// Builder queries and writes made into prepared statements, rebound and run again.
final class QueryInterfacePreparedStatementTests: DatabaseTestCase {
    func testAPreparedQueryRunsAgainWithNewValues() throws {
        let db = try openQueryDatabase()
        let insert = try db.makeStatement(Fixture.users.insert(Fixture.email <- "", Fixture.score <- 0))
        XCTAssertEqual(insert.parameterCount, 2)
        for (index, address) in ["a@x", "b@x", "c@x"].enumerated() {
            try insert.bind(address, at: 1)
            try insert.bind(Int64(index * 10), at: 2)
            try insert.execute()
        }
        insert.close()

        let byID = try db.makeStatement(Fixture.users.filter(Fixture.id == 0).select(Fixture.email, Fixture.score))
        var found: [String] = []
        for wanted: Int64 in [3, 1, 99] {
            try byID.bind(wanted, at: 1)
            let rows = try byID.executeQuery()
            if try rows.next() { found.append("\(try rows[Fixture.email]):\(try rows[Fixture.score])") }
            rows.close()
        }
        XCTAssertEqual(found, ["c@x:20", "a@x:0"])

        // swift-format-ignore: NoAssignmentInExpressions
        let update = try db.makeStatement(Fixture.users.filter(Fixture.id == 0).update(Fixture.score += 1))
        try update.bind(5, at: 1)  // the increment comes first, then the id
        try update.bind(2, at: 2)
        try update.execute()
        XCTAssertEqual(try db.scalar(Fixture.users.filter(Fixture.id == 2).select(Fixture.score)), 15)

        let delete = try db.makeStatement(Fixture.users.filter(Fixture.score < 100).delete())
        try delete.execute()
        XCTAssertEqual(try db.scalar(Fixture.users.count), 0)
        // The values the query was built with are bound: a hostile one is only a value.
        let hostile = try db.makeStatement(Fixture.users.filter(Fixture.email == "x' OR 1=1; --").select(Fixture.id))
        let rows = try hostile.executeQuery()
        XCTAssertFalse(try rows.next())
    }
}
