import CipherDB
import Foundation
import XCTest

/// Queries run against an encrypted file: rows written, read back typed, errors naming columns.
final class QueryInterfaceFetchTests: DatabaseTestCase {
    private let users = Fixture.users, posts = Fixture.posts
    private let id = Fixture.id, email = Fixture.email, nickname = Fixture.nickname, score = Fixture.score
    private let authorID = Fixture.authorID, title = Fixture.title

    /// Three users (Ann 5, Bob 12, nameless 20) and three posts by Ann and Bob.
    private func populated() throws -> Database {
        let db = try openQueryDatabase()
        XCTAssertEqual(try db.run(users.insert(email <- "ann@x.org", nickname <- "Ann", score <- 5)), 1)
        XCTAssertEqual(try db.run(users.insert(email <- "bob@x.org", nickname <- "Bob", score <- 12)), 2)
        XCTAssertEqual(try db.run(users.insert(email <- "cy@y.org", nickname <- nil, score <- 20)), 3)
        try db.run(posts.insert(authorID <- 1, title <- "Apples"))
        try db.run(posts.insert(authorID <- 1, title <- "Avocados"))
        try db.run(posts.insert(authorID <- 2, title <- "Bananas"))
        return db
    }

    func testRowsReadBackTypedFromTheEncryptedFile() throws {
        do {
            let db = try populated()
            db.close()
        }
        // Reopened with the key: the rows are in the encrypted file.
        let db = try openDatabase("query.db", key: passphrase("query interface"))
        defer { db.close() }
        let rows = try db.fetchAll(users.select(id, email, nickname).order(id))
        XCTAssertEqual(rows.count, 3)
        XCTAssertEqual(try rows.map { row throws(DatabaseError) in try row[email] }, ["ann@x.org", "bob@x.org", "cy@y.org"])
        XCTAssertEqual(try rows.map { row throws(DatabaseError) in try row[nickname] }, ["Ann", "Bob", nil])
        XCTAssertEqual(try rows[2][id], 3)
        XCTAssertEqual(rows[0].columnNames, ["id", "email", "name"])
        XCTAssertEqual(rows[0]["EMAIL"], .text("ann@x.org"), "names compare case-insensitively")

        let one = try XCTUnwrap(try db.fetchOne(users.filter(email.like("bob%"))))
        XCTAssertEqual(try one[score], 12)
        XCTAssertNil(try db.fetchOne(users.filter(score > 100)))

        XCTAssertEqual(try db.fetchAll(users.filter(nickname == nil)).count, 1)
        XCTAssertEqual(try db.fetchAll(users.filter(nickname != nil && score >= 5)).count, 2)
        XCTAssertEqual(try db.fetchAll(users.filter([1, 3].contains(id))).count, 2)
        XCTAssertEqual(try db.fetchAll(users.filter(score.between(5...12))).count, 2)
        XCTAssertEqual(
            try db.fetchAll(users.order(score.desc).limit(1, offset: 1)).map { row throws(DatabaseError) in try row[score] }, [12])
    }

    func testScalarsAreTyped() throws {
        let db = try populated()
        defer { db.close() }
        let total: Int = try db.scalar(users.count)
        XCTAssertEqual(total, 3)
        XCTAssertEqual(try db.scalar(users.filter(score > 6).count), 2)
        XCTAssertEqual(try db.scalar(users.select(score).distinct.count), 3)
        let best: Int64? = try db.scalar(users.select(score.max))
        XCTAssertEqual(best, 20)
        XCTAssertNil(try db.scalar(users.filter(score > 100).select(score.max)), "max of no rows is NULL")
        XCTAssertEqual(try db.scalar(users.select(score.sum)), 37)
        XCTAssertEqual(try db.scalar(users.filter(score > 100).select(score.total)), 0)
        XCTAssertEqual(try db.scalar(users.select(score.average)) ?? 0, 37.0 / 3, accuracy: 1e-9)
        XCTAssertEqual(try db.scalar(users.select(nickname.count)), 2)
        XCTAssertEqual(try db.scalar(users.select(count(*))), 3)
        XCTAssertTrue(try db.scalar(users.filter(email == "bob@x.org").exists))
        XCTAssertFalse(try db.scalar(users.filter(email == "nobody").exists))
        XCTAssertEqual(try db.scalar(users.filter(id == 3).select(nickname ?? "anonymous")), "anonymous")
        XCTAssertEqual(try db.scalar(users.filter(id == 1).select(nickname + " <" + email + ">")), "Ann <ann@x.org>")
        XCTAssertEqual(try db.scalar(users.filter(id == 1).select(email.uppercased)), "ANN@X.ORG")
        XCTAssertEqual(try db.scalar(users.filter(id == 2).select(score.cast(as: String.self))), "12")
        XCTAssertEqual(try db.scalar(users.filter(id == 2).select((score + 3) * 2 % 7)), 2)
        XCTAssertEqual(try db.scalar(users.filter(id == 2).select(SQLExpression<Int64>(literal: "length(?) + ?", ["four", 1]))), 5)
        // An empty result for a non-optional type is an error, not a made-up value.
        assertThrows(.unexpectedNull) { _ = try db.scalar(users.filter(id == 99).select(email)) }
    }

    func testGroupsJoinsAndSubqueries() throws {
        let db = try populated()
        defer { db.close() }
        let perAuthor = try db.fetchAll(
            posts.select(authorID, count(*)).group(authorID, having: count(*) > 1))
        XCTAssertEqual(perAuthor.count, 1)
        XCTAssertEqual(try perAuthor[0][authorID], 1)
        XCTAssertEqual(try perAuthor[0][count(*)], 2, "an unaliased aggregate is read by its SQL")

        let joined = try db.fetchAll(
            users.select(users[email], posts[title]).join(posts, on: posts[authorID] == users[id]).order(posts[title]))
        XCTAssertEqual(try joined.map { row throws(DatabaseError) in try row[title] }, ["Apples", "Avocados", "Bananas"])
        XCTAssertEqual(try joined.map { row throws(DatabaseError) in try row[users[email]] }, ["ann@x.org", "ann@x.org", "bob@x.org"])

        // Two columns named id: a plain name reads the leftmost; a column qualified by its table
        // cannot tell which is its own (SQLite names both `id`), so it throws instead of
        // reading the other table's; an alias tells them apart.
        let bothQuery = users.select(users[id], posts[id], posts[id].aliased("post_id")).join(posts, on: posts[authorID] == users[id])
            .order(posts[id])
        let both = try db.fetchAll(bothQuery)
        XCTAssertEqual(both[2].columnNames, ["id", "id", "post_id"])
        XCTAssertEqual(try both.map { row throws(DatabaseError) in try row[id] }, [1, 1, 2], "leftmost: the user's id")
        let ambiguous = captureError { _ = try both[0][posts[id]] }
        XCTAssertEqual(ambiguous?.kind, .columnNotFound)
        XCTAssertTrue(ambiguous?.message.contains("2 columns named id") ?? false, ambiguous?.message ?? "no error")
        XCTAssertEqual(try both.map { row throws(DatabaseError) in try row[Column<Int64>("post_id")] }, [1, 2, 3])
        let rows = try db.executeQuery(bothQuery)
        XCTAssertTrue(try rows.next())
        XCTAssertEqual(captureError { _ = try rows[posts[id]] }?.kind, .columnNotFound)
        XCTAssertEqual(try rows[id], 1)
        XCTAssertEqual(try rows[posts[Column<Int64>("post_id")]], 1, "a qualified column named once reads as before")
        rows.close()

        let outer = try db.fetchAll(
            users.select(users[email], posts[title]).join(.leftOuter, posts, on: posts[authorID] == users[id]).filter(posts[id] == nil))
        XCTAssertEqual(try outer.map { row throws(DatabaseError) in try row[email] }, ["cy@y.org"])
        XCTAssertNil(try outer[0][Column<String?>("title")])
        XCTAssertEqual(try db.fetchAll(users.join(.cross, posts)).count, 9)

        let authors = users.filter(posts.select(authorID).filter(title.like("A%")).contains(id))
        XCTAssertEqual(try db.fetchAll(authors).map { row throws(DatabaseError) in try row[email] }, ["ann@x.org"])
    }

    /// A scalar reads its value from the statement, as a `Row` reads it: NULL for a
    /// non-optional type names the column, a value the type rejects is a type mismatch (not a
    /// NULL), no row is its own error, and text in a date column reads through the formatter.
    func testScalarsReportNullMismatchAndNoRowApartAndReadDatesThroughTheFormatter() throws {
        let db = try populated()
        defer { db.close() }
        let null = captureError { _ = try db.scalar(users.filter(id == 3).select(Column<String>("name"))) }
        XCTAssertEqual(null?.kind, .unexpectedNull)
        XCTAssertTrue(null?.message.contains("name") ?? false, null?.message ?? "")
        let mismatch = captureError { _ = try db.scalar(users.filter(id == 1).select(Column<UUID>("email"))) }
        XCTAssertEqual(mismatch?.kind, .typeMismatch, "ann@x.org is no UUID, and no NULL either")
        XCTAssertTrue(mismatch?.message.contains("email") ?? false, mismatch?.message ?? "")
        XCTAssertTrue(null?.sql?.hasPrefix("SELECT `name` FROM \"users\"") ?? false, null?.sql ?? "no SQL")
        XCTAssertTrue(mismatch?.sql?.hasPrefix("SELECT `email` FROM \"users\"") ?? false, mismatch?.sql ?? "no SQL")
        let noRow = captureError { _ = try db.scalar(users.filter(id == 99).select(email)) }
        XCTAssertEqual(noRow?.kind, .unexpectedNull)
        XCTAssertTrue(noRow?.message.contains("no row") ?? false, noRow?.message ?? "")
        XCTAssertNil(try db.scalar(users.filter(id == 99).select(nickname)), "no row for an optional type is nil")
        XCTAssertEqual(db.openResultSetCount, 0)

        let events = Table("events")
        let at = Column<Date>("at")
        let maybe = Column<Date?>("maybe")
        try db.run(
            events.create { t in
                t.column(at)
                t.column(maybe)
            })
        db.dateFormatter = utcDateFormatter()
        let date = Date(timeIntervalSince1970: 1_361_361_600)
        try db.run(events.insert(at <- date, maybe <- nil))
        XCTAssertEqual(try db.scalar(events.select(at)), date)
        XCTAssertEqual(try db.scalar(events.select(Column<String>("at"))), "2013-02-20 12:00:00", "stored as the formatter's text")
        XCTAssertNil(try db.scalar(events.select(maybe)))
        try db.executeUpdate("UPDATE events SET maybe = 'not a date'")
        XCTAssertEqual(captureError { _ = try db.scalar(events.select(maybe)) }?.kind, .typeMismatch)
        XCTAssertEqual(try db.scalar(events.select(at)), try XCTUnwrap(try db.fetchOne(events.select(at)))[at], "as a Row reads it")
    }

    /// A scalar decodes through the same `ColumnDecodable` rules as a result set's typed
    /// subscript: SQLite's own text conversions, an optional type that rejects a value reports
    /// it, and a decoder that runs another scalar while it decodes gets a reader of its own.
    func testScalarsDecodeAsTheResultSetSubscriptDoes() throws {
        let db = try populated()
        defer { db.close() }
        try db.executeUpdate("UPDATE users SET name = ' 42' WHERE id = 1")
        try db.executeUpdate("UPDATE users SET name = '12abc' WHERE id = 2")
        let nameAsNumber = Column<Int>("name")
        for userID in [Int64(1), 2] {
            let rows = try db.executeQuery(users.filter(id == userID).select(nameAsNumber))
            XCTAssertTrue(try rows.next())
            XCTAssertEqual(try db.scalar(users.filter(id == userID).select(nameAsNumber)), try rows[nameAsNumber])
            rows.close()
        }
        XCTAssertEqual(try db.scalar(users.filter(id == 1).select(nameAsNumber)), 42, "SQLite's conversion of ' 42'")
        let rejected = captureError { _ = try db.scalar(users.filter(id == 1).select(Column<UUID?>("email"))) }
        XCTAssertEqual(rejected?.kind, .typeMismatch, "a value UUID? rejects is reported, not read as nil")
        let rows = try db.executeQuery(users.filter(id == 1).select(Column<UUID?>("email")))
        XCTAssertTrue(try rows.next())
        XCTAssertEqual(captureError { _ = try rows[Column<UUID?>("email")] }?.kind, .typeMismatch)
        rows.close()

        struct Echo: SQLValueType {
            static var declaredType: String { "INTEGER" }
            var inner: Int
            var outer: Int
            static func decode(from value: DatabaseValue) -> Echo? { nil }
            static func decode(from row: ResultSet, at index: Int) -> Echo? {
                guard let db = row.database,
                    let inner = try? db.scalar(Table("users").filter(Column<Int64>("id") == 2).select(Column<Int>("score"))),
                    let outer = row.int(at: index)
                else { return nil }
                return Echo(inner: inner, outer: outer)
            }
            var databaseValue: DatabaseValue { .integer(Int64(outer)) }
        }
        let echo = try db.scalar(users.filter(id == 3).select(Column<Echo>("score")))
        XCTAssertEqual(echo.outer, 20, "the outer value read after the nested scalar ran")
        XCTAssertEqual(echo.inner, 12)
        XCTAssertEqual(db.openResultSetCount, 0)
    }

    func testMissingColumnsAndNullsThrowNamingTheColumn() throws {
        let db = try populated()
        defer { db.close() }
        let row = try XCTUnwrap(try db.fetchOne(users.select(id, nickname).filter(id == 3)))
        do {
            _ = try row[email]
            XCTFail("no email column was selected")
        } catch {
            XCTAssertEqual(error.kind, .columnNotFound)
            XCTAssertTrue(error.message.contains("email"), error.message)
        }
        do {
            _ = try row[Column<String>("name")]
            XCTFail("NULL read as String")
        } catch {
            XCTAssertEqual(error.kind, .unexpectedNull)
            XCTAssertTrue(error.message.contains("name"), error.message)
        }
        XCTAssertNil(try row[nickname], "NULL read as String? is nil")

        let rs = try db.executeQuery(users.select(id, nickname).filter(id == 3))
        defer { rs.close() }
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(try rs[id], 3)
        XCTAssertNil(try rs[nickname])
        do {
            _ = try rs[Column<String>("name")]
            XCTFail("NULL read as String")
        } catch {
            XCTAssertEqual(error.kind, .unexpectedNull)
            XCTAssertTrue(error.message.contains("name"), error.message)
        }
        let notAUUID = Column<UUID>("email")
        let wrong = try db.executeQuery(users.select(email).filter(id == 1))
        defer { wrong.close() }
        XCTAssertTrue(try wrong.next())
        do {
            _ = try wrong[notAUUID]
            XCTFail("ann@x.org is no UUID")
        } catch {
            XCTAssertEqual(error.kind, .typeMismatch, "a rejected value is not reported as NULL")
            XCTAssertTrue(error.message.contains("email"), error.message)
        }
        let emailRow = try XCTUnwrap(try db.fetchOne(users.select(email).filter(id == 1)))
        do {
            _ = try emailRow[notAUUID]
            XCTFail("ann@x.org is no UUID")
        } catch {
            XCTAssertEqual(error.kind, .typeMismatch)
        }
        do {
            _ = try rs[score]
            XCTFail("no score column was selected")
        } catch {
            XCTAssertEqual(error.kind, .columnNotFound)
            XCTAssertTrue(error.message.contains("score"), error.message)
        }
    }

    func testTheFMDBLoopAndTheStatementCache() throws {
        let db = try populated()
        defer { db.close() }
        var seen: [String] = []
        for minimum in [0, 6, 15] as [Int64] {
            let rs = try db.executeQuery(users.select(email, nickname).filter(score > minimum).order(email))
            while try rs.next() { seen.append(try rs[email] + "/" + (try rs[nickname] ?? "-")) }
        }
        XCTAssertEqual(seen, ["ann@x.org/Ann", "bob@x.org/Bob", "cy@y.org/-", "bob@x.org/Bob", "cy@y.org/-", "cy@y.org/-"])
        XCTAssertEqual(db.openResultSetCount, 0)
        // One SQL text for every value: the statement cache serves the same shape each time.
        XCTAssertEqual(users.filter(score > 1).sql, users.filter(score > 99).sql)
    }

    func testNullsFirstAndLastOrUnsupported() throws {
        let db = try populated()
        defer { db.close() }
        let query = users.select(nickname).order(nickname.desc.nullsFirst, id.asc.nullsLast)
        XCTAssertEqual(query.sql, #"SELECT `name` FROM "users" ORDER BY `name` DESC NULLS FIRST, `id` ASC NULLS LAST"#)
        XCTAssertEqual(try db.scalar(query.count), 3, "counting needs no order")
        guard SQLiteFeature.nullsOrdering.isAvailable else {
            assertThrows(.unsupported) { _ = try db.fetchAll(query) }
            // An operand keeps its order only with a limit, which it picks its rows by.
            assertThrows(.unsupported) { _ = try db.fetchAll(users.select(nickname).union(query.limit(2))) }
            assertThrows(.unsupported) {
                _ = try db.fetchAll(users.select(nickname).union(users.select(nickname)).order(nickname.asc.nullsLast))
            }
            return
        }
        XCTAssertEqual(try db.fetchAll(query).map { row throws(DatabaseError) in try row[nickname] }, [nil, "Bob", "Ann"])
    }

    /// A right-hand operand's own order and limit pick its rows, not the compound's: after
    /// `UNION`, SQLite would read `ORDER BY ... LIMIT 1` as the whole compound's (one row, not two).
    func testAnOperandsOwnLimitPicksItsRows() throws {
        let db = try populated()
        defer { db.close() }
        let last = users.select(id).order(id.desc).limit(1)
        let both = users.select(id).filter(id == 1).union(last)
        XCTAssertEqual(try db.fetchAll(both.order(id)).map { row throws(DatabaseError) in try row[id] }, [1, 3])
        XCTAssertEqual(try db.fetchAll(both).count, 2)
        // The same on the left: `last` keeps its one row.
        let leftFirst = last.union(users.select(id).filter(id == 1))
        XCTAssertEqual(try db.fetchAll(leftFirst.order(id)).map { row throws(DatabaseError) in try row[id] }, [1, 3])
        // A limit set on a compound is that compound's, when it becomes an operand in turn.
        let firstOfTwo = users.select(id).filter(id == 2).union(users.select(id).filter(id == 3)).order(id).limit(1)
        let withOne = firstOfTwo.union(users.select(id).filter(id == 1))
        XCTAssertEqual(try db.fetchAll(withOne.order(id)).map { row throws(DatabaseError) in try row[id] }, [1, 2])
        // A right-hand operand's order without a limit picks nothing: dropped, NULLS FIRST with it.
        let sortedRight = users.select(id).filter(id == 1).union(users.select(id).filter(id >= 2).order(nickname.desc.nullsFirst))
        XCTAssertFalse(sortedRight.sql.contains("NULLS"), sortedRight.sql)
        XCTAssertEqual(try db.fetchAll(sortedRight).count, 3)
    }

    /// A query's needs follow its SQL: an order that replaces NULLS FIRST leaves no need of it
    /// behind (the old SQLite refused a query that no longer asked for it), while an operand
    /// that asks for it keeps the need through a new order and through `count`.
    func testAReplacedOrderLeavesNoNeedOfNullsOrdering() throws {
        let db = try populated()
        defer { db.close() }
        let replaced = users.select(nickname).order(nickname.desc.nullsFirst).order(id)
        XCTAssertFalse(replaced.sql.contains("NULLS"), replaced.sql)
        XCTAssertEqual(try db.fetchAll(replaced).count, 3)
        let limited = users.select(nickname).order(nickname.desc.nullsFirst).limit(1)
        let compound = users.select(nickname).filter(id == 1).union(limited).order(nickname)
        let counted = limited.count
        guard SQLiteFeature.nullsOrdering.isAvailable else {
            assertThrows(.unsupported) { _ = try db.fetchAll(compound) }
            assertThrows(.unsupported) { _ = try db.scalar(counted) }
            return
        }
        XCTAssertEqual(try db.fetchAll(compound).count, 2)
        XCTAssertEqual(try db.scalar(counted), 1)
    }

    /// Expressions keep no value, one, or several: combined, every value binds in the order of
    /// its `?`, whatever each side holds, and the file returns the rows those values select.
    func testCombinedExpressionsBindEveryValueInOrder() throws {
        let db = try populated()
        defer { db.close() }
        let cases: [(condition: SQLExpression<Bool>, arguments: [DatabaseValue], ids: [Int64])] = [
            (score > 1 && id < 3, [.integer(1), .integer(3)], [1, 2]),
            (nickname != nil && score >= 12, [.integer(12)], [2]),
            (score >= 12 && nickname != nil, [.integer(12)], [2]),
            (score.between(4...12) && id != 1, [.integer(4), .integer(12), .integer(1)], [2]),
            (id == 3 || score.between(4...6), [.integer(3), .integer(4), .integer(6)], [1, 3]),
            ([2, 3].contains(id) && email.like("%y.org"), [.integer(2), .integer(3), .text("%y.org")], [3]),
            (score + 1 > 6 && score - 2 < 11, [.integer(1), .integer(6), .integer(2), .integer(11)], [2]),
            (!(score < 10) && id <= 3, [.integer(10), .integer(3)], [2, 3]),
        ]
        for (condition, arguments, ids) in cases {
            let query = users.select(id).filter(condition).order(id)
            XCTAssertEqual(query.arguments, arguments, query.sql)
            XCTAssertEqual(try db.fetchAll(query).map { row throws(DatabaseError) in try row[id] }, ids, query.sql)
        }
    }

    /// A query that asks for NULLS FIRST keeps that need wherever its SQL goes: a sub-query
    /// inside `contains` (in a filter, a selection, an update's or a delete's condition), the
    /// rowid sub-query of an update or delete with an order and a limit, a view. On SQLite
    /// before 3.30 each throws `unsupported`, not a syntax error; after, each runs.
    func testNullsOrderingInsideSubqueriesViewsAndWritesIsUnsupportedOrRuns() throws {
        let db = try populated()
        defer { db.close() }
        let firstByName = users.select(id).order(nickname.asc.nullsFirst).limit(1)
        let inSubquery = users.select(id).filter(firstByName.contains(id))
        let selected = users.select(id, firstByName.contains(id)).order(id)
        let nested = users.select(id).filter(id > 0 && !firstByName.contains(id))
        let updateWhere = users.filter(firstByName.contains(id)).update(score <- 99)
        let updateOrdered = users.order(nickname.asc.nullsFirst).limit(1).update(score <- 99)
        let deleteWhere = posts.filter(users.select(id).order(nickname.asc.nullsLast).limit(1).contains(authorID)).delete()
        let deleteOrdered = posts.order(title.desc.nullsLast).limit(1).delete()
        let view = View("first_by_name").create(firstByName)
        // Passed through operators that write their operand into their own text.
        let firstAsNumber = firstByName.contains(id).cast(as: Int64.self)
        let castSelected = users.select(id, firstAsNumber.distinct.count).group(id).order(id)
        // In VALUES no row is there to name a column: the sub-query's left side is a value.
        let firstIsThree = firstByName.contains(SQLExpression<Int64>(value: 3)).cast(as: Int64.self)
        let insertOne = users.insert(email <- "dee@z.org", score <- firstIsThree)
        let insertMany = try users.insertMany([[email <- "eve@z.org", score <- firstIsThree]])
        let updateAll = users.update(score <- firstAsNumber)
        guard SQLiteFeature.nullsOrdering.isAvailable else {
            for query in [inSubquery.query, selected, nested.query, castSelected] {
                assertThrows(.unsupported) { _ = try db.fetchAll(query) }
            }
            assertThrows(.unsupported) { _ = try db.scalar(inSubquery.count) }
            assertThrows(.unsupported) { try db.run(updateWhere) }
            assertThrows(.unsupported) { try db.run(updateOrdered) }
            assertThrows(.unsupported) { try db.run(deleteWhere) }
            assertThrows(.unsupported) { try db.run(deleteOrdered) }
            assertThrows(.unsupported) { try db.run(view) }
            assertThrows(.unsupported) { try db.run(insertOne) }
            assertThrows(.unsupported) { try db.run(insertMany) }
            assertThrows(.unsupported) { try db.run(updateAll) }
            assertThrows(.unsupported) { _ = try db.makeStatement(insertOne) }
            assertThrows(.unsupported) { _ = try db.makeStatement(updateWhere) }
            assertThrows(.unsupported) { _ = try db.makeStatement(inSubquery) }
            XCTAssertEqual(try db.scalar(users.select(score.max)), 20, "nothing was written")
            XCTAssertEqual(try db.scalar(posts.count), 3, "nothing was deleted")
            XCTAssertEqual(try db.scalar(users.count), 3, "nothing was inserted")
            return
        }
        XCTAssertEqual(try db.fetchAll(inSubquery).map { row throws(DatabaseError) in try row[id] }, [3])
        XCTAssertEqual(try db.fetchAll(selected).count, 3)
        XCTAssertEqual(try db.fetchAll(nested).map { row throws(DatabaseError) in try row[id] }, [1, 2])
        XCTAssertEqual(try db.run(updateWhere), 1)
        XCTAssertEqual(try db.run(updateOrdered), 1)
        XCTAssertEqual(try db.run(deleteWhere), 2, "Ann's two posts")
        XCTAssertEqual(try db.run(deleteOrdered), 1)
        try db.run(view)
        XCTAssertEqual(try db.scalar(View("first_by_name").count), 1)
        XCTAssertEqual(try db.fetchAll(castSelected).count, 3)
        XCTAssertEqual(try db.run(insertOne), 4)
        XCTAssertEqual(try db.run(insertMany), 5)
        XCTAssertEqual(try db.scalar(users.select(score).filter(id == 4)), 1, "the nameless user comes first")
        XCTAssertEqual(try db.run(updateAll), 5)
    }

    /// A need goes with the text that has it: a query whose sub-query selection was replaced
    /// needs nothing, and shares its shape, its statement and its verdict with a query that
    /// never had one, in either order.
    func testAReplacedSubqueryLeavesNoNeedBehind() throws {
        let db = try populated()
        defer { db.close() }
        let firstByName = users.select(id).order(nickname.asc.nullsFirst).limit(1)
        let one = SQLExpression<Int64>(value: 1)
        let plain = users.select(id).exists.query.select(one)
        let replacedExists = firstByName.exists.query.select(one)
        XCTAssertEqual(plain.sql, replacedExists.sql)
        // The replaced one first, so that a wrong verdict would be the one the cache keeps.
        XCTAssertEqual(try db.scalar(replacedExists), 1)
        XCTAssertEqual(try db.scalar(plain), 1)
        // `count` reads from the sub-query: a new selection keeps it, and its need.
        let keptInCount = firstByName.count.query.select(one)
        let kept = firstByName.exists
        guard SQLiteFeature.nullsOrdering.isAvailable else {
            assertThrows(.unsupported) { _ = try db.scalar(keptInCount) }
            assertThrows(.unsupported) { _ = try db.scalar(kept) }
            return
        }
        XCTAssertEqual(try db.scalar(keptInCount), 1)
        XCTAssertEqual(try db.scalar(kept), true)
    }

    /// A raw fragment that spells out the builder's sub-query has its text but not its need:
    /// the two are different shapes, so the fragment's verdict (none) is not the builder's.
    func testARawFragmentWithTheSameTextDoesNotLendItsVerdict() throws {
        let db = try populated()
        defer { db.close() }
        let firstByName = users.select(id).order(nickname.asc.nullsFirst).limit(1)
        let built = users.select(id).filter(firstByName.contains(id))
        let condition = firstByName.contains(id)
        let raw = users.select(id).filter(SQLExpression<Bool>(literal: condition.sql, [1]))
        XCTAssertEqual(raw.sql, built.sql)
        guard SQLiteFeature.nullsOrdering.isAvailable else {
            assertThrows(.sqlite) { _ = try db.fetchAll(raw) }
            assertThrows(.unsupported) { _ = try db.fetchAll(built) }
            return
        }
        XCTAssertEqual(try db.fetchAll(raw).count, 1)
        XCTAssertEqual(try db.fetchAll(built).count, 1)
    }
}
