import CipherDB
import Foundation
import XCTest

/// A record type's writes reuse the SQL built at its first write, and bind straight into the
/// cached statement; records that encode differently from the first one are still written
/// exactly as they encode.
final class RecordLayoutTests: DatabaseTestCase {
    /// Leaves `note` out of its encoding when it is nil (as a hand-written `encode(to:)` may):
    /// the column keeps its default on insert.
    struct Sparse: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "sparse"
        var id: Int64
        var note: String?
        var score: Int

        enum CodingKeys: String, CodingKey { case id, note, score }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            if let note { try container.encode(note, forKey: .note) }
            try container.encode(score, forKey: .score)
        }
    }

    /// Encodes `score` twice: the last value is the one stored.
    struct Twice: Codable, PersistableRecord {
        static let databaseTableName = "twice"
        var id: Int64
        var score: Int

        enum CodingKeys: String, CodingKey { case id, score }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(-1, forKey: .score)
            try container.encode(score, forKey: .score)
        }
    }

    /// Every kind of value a column takes, through the snake_case naming.
    struct Wide: Codable, Equatable, FetchableRecord, PersistableRecord {
        struct Address: Codable, Equatable { var city: String }
        static let databaseTableName = "wide"
        static let databaseColumnNaming = ColumnNaming.snakeCase
        var id: Int64
        var displayName: String
        var nickName: String?
        var joinedAt: Date
        var token: UUID
        var avatarPNG: Data?
        var homeAddress: Address?
        var ratio: Double
        var isActive: Bool
        var small: Int8
        var counter: UInt64
    }

    /// Leaves `bio` out when it is nil, and `id` when it is nil (SQLite picks one).
    struct Lean: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "lean"
        var id: Int64?
        var bio: String?

        enum CodingKeys: String, CodingKey { case id, bio }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            if let id { try container.encode(id, forKey: .id) }
            if let bio { try container.encode(bio, forKey: .bio) }
        }
    }

    /// A keyed record of a `WITHOUT ROWID` table.
    struct Code: Codable, PersistableRecord {
        static let databaseTableName = "code"
        var id: String
        var label: String
    }

    /// A table whose name the app chooses at run time.
    nonisolated(unsafe) static var shardName = "shard_a"
    struct Sharded: Codable, PersistableRecord {
        static var databaseTableName: String { RecordLayoutTests.shardName }
        var id: Int64
        var value: String
    }

    /// A record whose superclass encodes the shared columns through `superEncoder()`.
    class Base: Encodable {
        var id: Int64
        init(id: Int64) { self.id = id }
        enum CodingKeys: String, CodingKey { case id }
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
        }
    }

    final class Derived: Base, PersistableRecord {
        static let databaseTableName = "derived"
        var label: String
        init(id: Int64, label: String) {
            self.label = label
            super.init(id: id)
        }
        enum DerivedKeys: String, CodingKey { case label }
        override func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: DerivedKeys.self)
            try container.encode(label, forKey: .label)
            try super.encode(to: container.superEncoder())
        }
    }

    private func database() throws -> Database {
        let db = try openDatabase("layout.db", key: rawKey(0x5C))
        try db.executeStatements(
            """
            CREATE TABLE sparse(id INTEGER PRIMARY KEY, note TEXT DEFAULT 'default note', score INTEGER);
            CREATE TABLE twice(id INTEGER PRIMARY KEY, score INTEGER);
            CREATE TABLE wide(id INTEGER PRIMARY KEY, display_name TEXT, nick_name TEXT, joined_at REAL, token TEXT,
                avatar_png BLOB, home_address TEXT, ratio REAL, is_active INTEGER, small INTEGER, counter INTEGER);
            CREATE TABLE shard_a(id INTEGER PRIMARY KEY, value TEXT);
            CREATE TABLE shard_b(id INTEGER PRIMARY KEY, value TEXT);
            CREATE TABLE derived(label TEXT, id INTEGER PRIMARY KEY);
            CREATE TABLE lean(id INTEGER PRIMARY KEY, bio TEXT);
            CREATE TABLE code(id TEXT PRIMARY KEY, label TEXT) WITHOUT ROWID;
            """)
        return db
    }

    private func rows(_ db: Database, _ sql: String) throws -> [[DatabaseValue]] {
        let rows = try db.executeQuery(sql)
        var result: [[DatabaseValue]] = []
        while try rows.next() { result.append(rows.values) }
        return result
    }

    func testARecordThatLeavesAColumnOutBetweenFullOnesIsWrittenAsItEncodes() throws {
        let db = try database()
        try Sparse(id: 1, note: "one", score: 10).insert(db)
        try Sparse(id: 2, note: nil, score: 20).insert(db)  // no note column: the default applies
        try Sparse(id: 3, note: "three", score: 30).insert(db)
        try Sparse(id: 4, note: nil, score: 40).insert(db)
        XCTAssertEqual(
            try rows(db, "SELECT id, note, score FROM sparse ORDER BY id"),
            [
                [.integer(1), .text("one"), .integer(10)], [.integer(2), .text("default note"), .integer(20)],
                [.integer(3), .text("three"), .integer(30)], [.integer(4), .text("default note"), .integer(40)],
            ])
        // An update that leaves note out keeps the stored one.
        try Sparse(id: 3, note: nil, score: 33).update(db)
        try Sparse(id: 1, note: "uno", score: 11).update(db)
        XCTAssertEqual(
            try rows(db, "SELECT note, score FROM sparse WHERE id IN (1, 3) ORDER BY id"),
            [[.text("uno"), .integer(11)], [.text("three"), .integer(33)]])
    }

    func testAKeyEncodedTwiceStoresItsLastValueEveryTime() throws {
        let db = try database()
        for id in 1...3 { try Twice(id: Int64(id), score: id * 100).insert(db) }
        XCTAssertEqual(
            try rows(db, "SELECT id, score FROM twice ORDER BY id"),
            [[.integer(1), .integer(100)], [.integer(2), .integer(200)], [.integer(3), .integer(300)]])
    }

    func testEveryValueKindRoundTripsOnLaterWrites() throws {
        let db = try database()
        db.dateFormatter = utcDateFormatter()
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        var records: [Wide] = []
        for index in 1...3 {
            let nickName: String? = index == 2 ? nil : "nick \(index)"
            let avatar: Data? = index == 3 ? nil : Data([UInt8(index), 0, 0xFF])
            let address: Wide.Address? = index == 1 ? nil : Wide.Address(city: "city \(index)")
            let record = Wide(
                id: Int64(index), displayName: "name \(index)", nickName: nickName, joinedAt: date, token: UUID(),
                avatarPNG: avatar, homeAddress: address, ratio: Double(index) / 4, isActive: index % 2 == 0,
                small: Int8(-index), counter: UInt64.max - UInt64(index))
            records.append(record)
        }
        for record in records { try record.insert(db) }
        XCTAssertEqual(try Wide.fetchAll(db, sql: "SELECT * FROM wide ORDER BY id"), records)
        // The date went through the connection's formatter on every write, not only the first.
        XCTAssertEqual(
            try rows(db, "SELECT DISTINCT joined_at FROM wide"), [[.text(db.dateFormatter?.string(from: date) ?? "?")]])

        var changed = records[1]
        changed.nickName = "changed"
        changed.homeAddress = nil
        try changed.update(db)
        XCTAssertEqual(try Wide.fetchOne(db, key: 2), changed)
        XCTAssertTrue(try changed.exists(db))
        XCTAssertTrue(try changed.delete(db))
        XCTAssertFalse(try changed.exists(db))
        XCTAssertFalse(try changed.delete(db))
    }

    /// After an update that encoded only the key, the layout held the key alone, and the next
    /// update, which sets `bio`, found "nothing to set" in it: no error, nothing written.
    func testAnUpdateAfterAKeyOnlyOneWritesWhatItEncodes() throws {
        let db = try database()
        try db.executeUpdate("INSERT INTO lean(id, bio) VALUES (1, 'a')")
        try Lean(id: 1, bio: nil).update(db)
        try Lean(id: 1, bio: "b").update(db)
        XCTAssertEqual(try db.stringForQuery("SELECT bio FROM lean WHERE id = 1"), "b")
        try Lean(id: 1, bio: nil).update(db)
        try Lean(id: 1, bio: "c").save(db)
        XCTAssertEqual(try db.stringForQuery("SELECT bio FROM lean WHERE id = 1"), "c")
    }

    /// After an insert that left the id out (SQLite picks it), the layout lacked the key, and
    /// every later update, save, delete and exists of the type on that connection threw
    /// `misuse`, although their records encode the key.
    func testAnInsertWithoutTheKeyDoesNotStopLaterKeyedWrites() throws {
        let db = try database()
        var record = Lean(id: nil, bio: "a")
        record.id = try record.insert(db)
        XCTAssertEqual(record.id, 1)
        record.bio = "b"
        try record.update(db)
        XCTAssertEqual(try db.stringForQuery("SELECT bio FROM lean WHERE id = 1"), "b")
        XCTAssertTrue(try record.exists(db))
        try record.save(db)
        XCTAssertTrue(try record.delete(db))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM lean"), 0)
        // A record that really encodes no key is still refused.
        assertThrows(.misuse) { try Lean(id: nil, bio: "x").update(db) }
    }

    /// SQLite leaves its last rowid alone for a `WITHOUT ROWID` table: `insert` returned an
    /// earlier, unrelated insert's rowid (`x.id = try x.insert(db)` kept a wrong id). It returns
    /// 0 there, and still the new rowid when a rowid table reuses the last one.
    func testAnInsertIntoAWithoutRowIDTableReturnsZero() throws {
        let db = try database()
        XCTAssertEqual(try Lean(id: 41, bio: "y").insert(db), 41)
        XCTAssertEqual(try Code(id: "k", label: "z").insert(db), 0)
        XCTAssertEqual(try db.run(Table("code").insert(Column<String>("id") <- "m", Column<String>("label") <- "w")), 0)
        XCTAssertEqual(try Lean(id: 42, bio: "y").insert(db), 42)
        try db.executeUpdate("DELETE FROM lean WHERE id = 42")
        XCTAssertEqual(try Lean(id: nil, bio: "again").insert(db), 42, "the same rowid as the last insert")
        XCTAssertEqual(try db.run(Table("lean").insert(Column<String>("bio") <- "q")), 43)
        try db.executeUpdate("DELETE FROM lean WHERE id = 43")
        XCTAssertEqual(try db.run(Table("lean").insert(Column<String>("bio") <- "q")), 43)
    }

    /// A record that encodes no column made `INSERT INTO "lean"() VALUES ()`, a syntax error;
    /// it inserts the defaults. A composite key's `fetchOne(_:key:)` failed on its argument
    /// count; it is `misuse`, as `filter(key:)` is.
    func testAnEmptyRecordInsertsDefaultsAndACompositeKeyIsNoKeyForFetchOne() throws {
        let db = try database()
        XCTAssertEqual(try Lean(id: nil, bio: nil).insert(db), 1)
        XCTAssertEqual(try Lean(id: nil, bio: nil).insert(db), 2)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM lean WHERE bio IS NULL"), 2)
        struct Pair: Codable, FetchableRecord, PersistableRecord {
            static let databaseTableName = "lean"
            static let databasePrimaryKey = ["id", "bio"]
            var id: Int64
            var bio: String?
        }
        assertThrows(.misuse) { _ = try Pair.fetchOne(db, key: 1) }
        struct Keyless: Codable, PersistableRecord {
            static let databaseTableName = "lean"
            static let databasePrimaryKey: [String] = []
            var bio: String
        }
        assertThrows(SQLiteFeature.upsert.isAvailable ? .misuse : .unsupported) { try Keyless(bio: "x").upsert(db) }
    }

    func testATableNamedAtRunTimeIsFollowed() throws {
        let db = try database()
        defer { Self.shardName = "shard_a" }
        try Sharded(id: 1, value: "a").insert(db)
        Self.shardName = "shard_b"
        try Sharded(id: 1, value: "b").insert(db)
        XCTAssertEqual(try rows(db, "SELECT value FROM shard_a"), [[.text("a")]])
        XCTAssertEqual(try rows(db, "SELECT value FROM shard_b"), [[.text("b")]])
    }

    func testASuperclassesColumnsAreBoundOnLaterWrites() throws {
        let db = try database()
        for id in 1...3 { try Derived(id: Int64(id), label: "label \(id)").insert(db) }
        XCTAssertEqual(
            try rows(db, "SELECT id, label FROM derived ORDER BY id"),
            [[.integer(1), .text("label 1")], [.integer(2), .text("label 2")], [.integer(3), .text("label 3")]])
    }

    func testEachConnectionBuildsItsOwnLayout() throws {
        let first = try database()
        try Sparse(id: 1, note: "first", score: 1).insert(first)
        let second = try openDatabase("other.db", key: rawKey(0x5D))
        try second.executeUpdate("CREATE TABLE sparse(score INTEGER, id INTEGER PRIMARY KEY, note TEXT)")
        try Sparse(id: 1, note: "second", score: 2).insert(second)
        try Sparse(id: 2, note: "second again", score: 3).insert(second)
        XCTAssertEqual(
            try rows(second, "SELECT id, note, score FROM sparse ORDER BY id"),
            [[.integer(1), .text("second"), .integer(2)], [.integer(2), .text("second again"), .integer(3)]])
    }
}
