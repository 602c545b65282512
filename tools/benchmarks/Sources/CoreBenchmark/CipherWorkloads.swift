// The same work through CipherDB's FMDB-style API, written as an app would write it.
import CipherDB
import Foundation

enum Cipher {
    static func insert(_ db: Database, _ fixture: Fixture) throws {
        try db.beginDeferredTransaction()
        for row in 0..<fixture.rowCount {
            try db.executeUpdate(
                Fixture.insert, row, fixture.integers[row], fixture.reals[row], fixture.texts[row], fixture.blobs[row])
        }
        try db.commit()
    }

    static func scanByIndex(_ db: Database) throws -> Checksum {
        var sum = Checksum()
        let rows = try db.executeQuery(Fixture.scan)
        while try rows.next() {
            sum.add(rows.int64(at: 0) ?? 0)
            sum.add(rows.int64(at: 1) ?? 0)
            sum.add(rows.double(at: 2) ?? 0)
            sum.add(rows.string(at: 3) ?? "")
            sum.add(rows.data(at: 4) ?? Data())
        }
        return sum
    }

    static func scanByName(_ db: Database) throws -> Checksum {
        var sum = Checksum()
        let rows = try db.executeQuery(Fixture.scan)
        while try rows.next() {
            sum.add(rows.int64("id") ?? 0)
            sum.add(rows.int64("i") ?? 0)
            sum.add(rows.double("r") ?? 0)
            sum.add(rows.string("s") ?? "")
            sum.add(rows.data("b") ?? Data())
        }
        return sum
    }

    static func lookups(_ db: Database, _ fixture: Fixture) throws -> Checksum {
        var sum = Checksum()
        try db.beginDeferredTransaction()
        for id in fixture.lookupIDs {
            let rows = try db.executeQuery(Fixture.lookup, id)
            if try rows.next() { sum.add(rows.string(at: 0) ?? "") }
            rows.close()
        }
        try db.commit()
        return sum
    }

    /// FMDB's one-liner for a single value: `stringForQuery`.
    static func lookupsForQuery(_ db: Database, _ fixture: Fixture) throws -> Checksum {
        var sum = Checksum()
        try db.beginDeferredTransaction()
        for id in fixture.lookupIDs {
            sum.add(try db.stringForQuery(Fixture.lookup, id) ?? "")
        }
        try db.commit()
        return sum
    }

    // MARK: Prepared statements: typed binds, no arguments array

    static func insertPrepared(_ db: Database, _ fixture: Fixture) throws {
        try db.beginDeferredTransaction()
        let insert = try db.makeStatement(Fixture.insert)
        for row in 0..<fixture.rowCount {
            try insert.bind(row, at: 1)
            try insert.bind(fixture.integers[row], at: 2)
            try insert.bind(fixture.reals[row], at: 3)
            try insert.bind(fixture.texts[row], at: 4)
            try insert.bind(fixture.blobs[row], at: 5)
            try insert.execute()
        }
        insert.close()
        try db.commit()
    }

    static func lookupsPrepared(_ db: Database, _ fixture: Fixture) throws -> Checksum {
        var sum = Checksum()
        try db.beginDeferredTransaction()
        let lookup = try db.makeStatement(Fixture.lookup)
        for id in fixture.lookupIDs {
            try lookup.bind(id, at: 1)
            let rows = try lookup.executeQuery()
            if try rows.next() { sum.add(rows.string(at: 0) ?? "") }
            rows.close()
        }
        lookup.close()
        try db.commit()
        return sum
    }

    // MARK: Eight values: above executeUpdate's fixed-arity overloads

    static func insert8(_ db: Database, _ fixture: Fixture) throws {
        try db.beginDeferredTransaction()
        for row in 0..<fixture.rowCount {
            try db.executeUpdate(
                Fixture.insert8, row, fixture.integers[row], fixture.reals[row], fixture.texts[row], fixture.blobs[row],
                fixture.integers[row] * 2, fixture.reals[row] * 2, fixture.texts[row])
        }
        try db.commit()
    }

    // MARK: Codable records

    static func insertPlayers(_ db: Database, _ players: [Player]) throws {
        try db.beginDeferredTransaction()
        var last: Int64 = 0
        for player in players { last &+= try player.insert(db) }
        try db.commit()
        precondition(last != -1)
    }

    static func fetchPlayers(_ db: Database) throws -> Checksum {
        var sum = Checksum()
        for player in try Player.fetchAll(db, sql: Fixture.selectPlayers) { sum.add(player) }
        return sum
    }

    /// Every player with itself through a self-join (`including(required:as:on:)`): two
    /// records a row, each from its own side's columns.
    static let playerPairs: JoinedRecordRequest<Player, Player> = {
        let id = Column<Int64>("id")
        return Player.including(required: Player.self, as: "other", on: Player.databaseTable.alias("other")[id] == Player.databaseTable[id])
    }()

    static func fetchPlayerPairs(_ db: Database) throws -> Checksum {
        var sum = Checksum()
        for (player, other) in try playerPairs.fetchAll(db) {
            sum.add(player)
            sum.add(other)
        }
        return sum
    }

    /// The same rows through a record that reads its own columns (`init(row:)`).
    static func fetchPlayersByColumns(_ db: Database) throws -> Checksum {
        var sum = Checksum()
        for player in try PlayerByColumns.fetchAll(db, sql: Fixture.selectPlayers) { sum.add(player) }
        return sum
    }

    /// `filterPlayers` through the record that reads its own columns.
    static func filterPlayersByColumns(_ db: Database) throws -> Checksum {
        var sum = Checksum()
        for player in try PlayerByColumns.filter(Schema.score >= 0).fetchAll(db) { sum.add(player) }
        return sum
    }

    // MARK: The query interface

    /// The tables and columns as an app declares them once.
    enum Schema {
        static let t = Table("t")
        static let id = Column<Int64>("id")
        static let i = Column<Int64>("i")
        static let r = Column<Double>("r")
        static let s = Column<String>("s")
        static let b = Column<Data>("b")
        static let score = Column<Int>("score")
    }

    /// Point lookups through a builder query, fetched as a typed value (`db.scalar` of a
    /// one-column query: a `String`).
    static func lookupsBuilder(_ db: Database, _ fixture: Fixture) throws -> Checksum {
        var sum = Checksum()
        try db.beginDeferredTransaction()
        for id in fixture.lookupIDs {
            sum.add(try db.scalar(Schema.t.filter(Schema.id == id).select(Schema.s)))
        }
        try db.commit()
        return sum
    }

    /// Every player through `Player.filter(...)` (a condition every row meets).
    static func filterPlayers(_ db: Database) throws -> Checksum {
        var sum = Checksum()
        for player in try Player.filter(Schema.score >= 0).fetchAll(db) { sum.add(player) }
        return sum
    }

    /// Five values inserted with `table.insert(column <- value, ...)` and `db.run`.
    /// The same lookups through a builder query made once into a prepared statement, the id
    /// rebound each time, the text read through the typed subscript.
    static func lookupsBuilderPrepared(_ db: Database, _ fixture: Fixture) throws -> Checksum {
        var sum = Checksum()
        try db.beginDeferredTransaction()
        let lookup = try db.makeStatement(Schema.t.filter(Schema.id == 0).select(Schema.s))
        for id in fixture.lookupIDs {
            try lookup.bind(id, at: 1)
            let rows = try lookup.executeQuery()
            if try rows.next() { sum.add(try rows[Schema.s]) }
            rows.close()
        }
        lookup.close()
        try db.commit()
        return sum
    }

    /// The inserts through a builder insert made once into a prepared statement, rebound per row.
    static func insertBuilderPrepared(_ db: Database, _ fixture: Fixture) throws {
        try db.beginDeferredTransaction()
        let insert = try db.makeStatement(
            Schema.t.insert(Schema.id <- 0, Schema.i <- 0, Schema.r <- 0, Schema.s <- "", Schema.b <- Data()))
        for row in 0..<fixture.rowCount {
            try insert.bind(Int64(row), at: 1)
            try insert.bind(fixture.integers[row], at: 2)
            try insert.bind(fixture.reals[row], at: 3)
            try insert.bind(fixture.texts[row], at: 4)
            try insert.bind(fixture.blobs[row], at: 5)
            try insert.execute()
        }
        insert.close()
        try db.commit()
    }

    static func insertBuilder(_ db: Database, _ fixture: Fixture) throws {
        try db.beginDeferredTransaction()
        for row in 0..<fixture.rowCount {
            try db.run(
                Schema.t.insert(
                    Schema.id <- Int64(row), Schema.i <- fixture.integers[row], Schema.r <- fixture.reals[row],
                    Schema.s <- fixture.texts[row], Schema.b <- fixture.blobs[row]))
        }
        try db.commit()
    }
}
