import Foundation
import XCTest

@testable import CipherDB

/// One query shape is one SQL text, so the statement cache compiles it once whatever the values.
final class QueryInterfaceStatementCacheTests: DatabaseTestCase {
    func testOneShapeCompilesOnce() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        let users = Fixture.users
        let email = Fixture.email
        let score = Fixture.score
        let id = Fixture.id
        for index in 0..<50 { try db.run(users.insert(email <- "u\(index)@x", score <- Int64(index))) }
        let afterInserts = db.statementCache.count
        for minimum in 0..<50 {
            _ = try db.fetchAll(users.select(email).filter(score >= Int64(minimum)).limit(3))
            _ = try db.scalar(users.filter(id == Int64(minimum + 1)).select(email))
            try db.run(users.filter(id == Int64(minimum + 1)).update(score <- Int64(minimum)))
        }
        XCTAssertEqual(db.statementCache.count, afterInserts + 3, "three shapes, three statements, for 150 runs")
    }
}
