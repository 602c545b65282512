import CipherDB
import Foundation
import XCTest

/// A table joined with itself under an alias, and INTERSECT / EXCEPT beside UNION.
final class QueryInterfaceAliasAndCompoundTests: DatabaseTestCase {
    private let employees = Table("employees")
    private let id = Column<Int64>("id")
    private let fullName = Column<String>("name")
    private let managerID = Column<Int64?>("manager_id")

    private func database() throws -> Database {
        let db = try openDatabase("alias.db", key: passphrase("aliases"))
        try db.executeStatements(
            """
            CREATE TABLE employees(id INTEGER PRIMARY KEY, name TEXT NOT NULL, manager_id INTEGER);
            INSERT INTO employees VALUES (1, 'Ada', NULL), (2, 'Bo', 1), (3, 'Cy', 1), (4, 'Di', 2);
            """)
        return db
    }

    func testATableJoinsItselfUnderAnAlias() throws {
        let db = try database()
        let managers = employees.alias("managers")
        let query = employees.join(managers, on: employees[managerID] == managers[id])
            .select(employees[fullName], managers[fullName].aliased("manager")).order(employees[id])
        XCTAssertEqual(
            query.sql,
            #"SELECT "employees"."name", "managers"."name" AS "manager" FROM "employees" INNER JOIN "employees" AS "managers" ON "#
                + #""employees"."manager_id" = "managers"."id" ORDER BY "employees"."id""#)
        let pairs = try db.fetchAll(query).map { row in "\(try row[self.fullName])<\(try row[Column<String>("manager")])" }
        XCTAssertEqual(pairs, ["Bo<Ada", "Cy<Ada", "Di<Bo"])
        // Without a manager: a left outer join with itself.
        let top = try db.fetchAll(
            employees.join(.leftOuter, managers, on: employees[managerID] == managers[id]).filter(managers[id] == nil)
                .select(employees[fullName]))
        XCTAssertEqual(try top.map { try $0[self.fullName] }, ["Ada"])
    }

    func testIntersectAndExcept() throws {
        let db = try database()
        let managed = employees.select(managerID).filter(managerID != nil)
        let everyone = employees.select(id)
        XCTAssertEqual(
            try db.fetchAll(everyone.intersect(managed).order(id)).map { try $0[self.id] }, [1, 2], "those who manage someone")
        XCTAssertEqual(try db.fetchAll(everyone.except(managed).order(id)).map { try $0[self.id] }, [3, 4], "those who do not")
        XCTAssertEqual(everyone.except(managed).arguments, [], "IS NOT NULL binds nothing")
        let bound = everyone.filter(id > 1).intersect(employees.select(id).filter(id < 4))
        XCTAssertEqual(bound.arguments, [.integer(1), .integer(4)], "both sides' values, in order")
        XCTAssertEqual(try db.fetchAll(bound).count, 2)
    }

    func testACompoundOnTheRightIsOneOperand() throws {
        let db = try database()
        let ids = employees.select(id)
        // (all EXCEPT (1 UNION 2)), not ((all EXCEPT 1) UNION 2): SQLite reads a flat compound left to right.
        let query = ids.except(ids.filter(id == 1).union(ids.filter(id == 2)))
        XCTAssertEqual(try db.fetchAll(query.order(id)).map { try $0[self.id] }, [3, 4])
        XCTAssertEqual(query.arguments, [.integer(1), .integer(2)])
    }

    func testARefinementAfterACompoundAppliesToAllOfItsRows() throws {
        let db = try database()
        let rows = employees.select(id, fullName)
        let both = rows.filter(id <= 2).union(rows.filter(id >= 3))
        XCTAssertEqual(try db.fetchAll(both.filter(id != 1).order(id)).map { try $0[self.id] }, [2, 3, 4])
        XCTAssertEqual(try db.fetchAll(both.filter(id != 4).order(id)).map { try $0[self.id] }, [1, 2, 3])
        XCTAssertEqual(try db.scalar(both.filter(id > 1).select(id.max)), 4)
        XCTAssertEqual(try db.scalar(both.filter(id > 1).count), 3)
        XCTAssertEqual(both.filter(id != 4).arguments, [.integer(2), .integer(3), .integer(4)], "inner values first")
        // An order and a limit set before the refinement apply after it, as on any query.
        let topTwo = both.order(id.desc).limit(2).filter(id != 4)
        XCTAssertEqual(try db.fetchAll(topTwo).map { try $0[self.id] }, [3, 2])
        XCTAssertEqual(try db.fetchAll(both.order(id.desc).limit(2, offset: 1).filter(id != 4)).map { try $0[self.id] }, [2, 1])
        XCTAssertEqual(topTwo.sql.components(separatedBy: "ORDER BY").count, 2, "one ORDER BY, outside: \(topTwo.sql)")
        // Its rows are not one table's: no update or delete through it.
        for compound in [both, both.filter(id != 4)] {
            XCTAssertEqual(captureError { _ = try db.run(compound.delete()) }?.kind, .misuse)
            XCTAssertEqual(captureError { _ = try db.run(compound.update(fullName <- "x")) }?.kind, .misuse)
        }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM employees WHERE name <> 'x'"), 4)
    }

    func testAnUpdateOrDeleteThroughAnAliasedJoinChangesTheAliasedRows() throws {
        let db = try database()
        let managers = employees.alias("managers")
        let salaryless = managers.join(employees, on: employees[managerID] == managers[id]).filter(employees[fullName] == "Di")
        // Di's manager is Bo (2): only Bo's row changes, not Di's.
        XCTAssertEqual(try db.run(salaryless.update(fullName <- "Bo, who manages Di")), 1)
        XCTAssertEqual(try db.stringForQuery("SELECT name FROM employees WHERE id = 2"), "Bo, who manages Di")
        XCTAssertEqual(try db.stringForQuery("SELECT name FROM employees WHERE id = 4"), "Di")
        XCTAssertEqual(try db.run(salaryless.delete()), 1)
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(id) FROM employees"), "1,3,4")
    }
}
