import CSQLCipher
import CipherDB
import Foundation
import XCTest

/// Records: Codable structs fetched from and written to encrypted tables.
/// A value encoded as one single value, as a wrapper type does.
struct SingleValue<Value: Codable & Equatable>: Codable, Equatable {
    var value: Value
    init(_ value: Value) { self.value = value }
    init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Value.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

final class RecordTests: DatabaseTestCase {
    struct Address: Codable, Equatable {
        var city: String
        var zip: String
    }

    struct Player: Codable, Equatable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "player"
        static let databaseColumnNaming = ColumnNaming.snakeCase
        var id: Int64?
        var displayName: String
        var score: Int?
        var joinedAt: Date
        var token: UUID
        var avatarPNG: Data?
        var homeAddress: Address?
        var bigCounter: UInt64
    }

    /// A table keyed by two columns, with exact names.
    struct Membership: Codable, Equatable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "membership"
        static let databasePrimaryKey = ["team", "member"]
        var team: String
        var member: Int64
        var role: String
    }

    /// A link table: every column is part of the key.
    struct Follow: Codable, Equatable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "follow"
        static let databasePrimaryKey = ["follower", "followed"]
        var follower: Int64
        var followed: Int64
    }

    /// A record whose own `encode(to:)` leaves a nil biography out.
    struct Profile: Codable, Equatable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "profile"
        var id: Int64
        var bio: String?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encodeIfPresent(bio, forKey: .bio)
        }
    }

    /// A tag whose name is unique, a second one ignored.
    struct Tag: Codable, Equatable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "tag"
        var id: Int64?
        var name: String
    }

    /// Encodes its optionals with `encode(_:forKey:)`, nil included, as custom code may.
    struct Shelf: Codable, Equatable, FetchableRecord, PersistableRecord {
        struct Size: Codable, Equatable { var width: Int }
        static let databaseTableName = "shelf"
        var id: Int64
        var tags: [String]?
        var size: Size?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(tags, forKey: .tags)
            try container.encode(size, forKey: .size)
        }
    }

    /// Single values of their own types: stored as the value, as GRDB stores them.
    struct Swatch: Codable, Equatable, FetchableRecord, PersistableRecord {
        enum Color: String, Codable { case red, blue }
        enum Level: Int, Codable {
            case low = 1
            case high = 2
        }
        static let databaseTableName = "swatch"
        var id: Int64
        var color: Color
        var level: Level?
        var name: SingleValue<String>
        var link: URL
    }

    private func database() throws -> Database {
        let db = try openDatabase("records.db", key: rawKey(0x7E))
        try db.executeStatements(
            """
            CREATE TABLE player(
                id INTEGER PRIMARY KEY, display_name TEXT NOT NULL UNIQUE, score INTEGER, joined_at REAL NOT NULL,
                token TEXT NOT NULL, avatar_png BLOB, home_address TEXT, big_counter INTEGER NOT NULL);
            CREATE TABLE membership(team TEXT, member INTEGER, role TEXT, PRIMARY KEY (team, member));
            CREATE TABLE follow(follower INTEGER, followed INTEGER, PRIMARY KEY (follower, followed));
            CREATE TABLE profile(id INTEGER PRIMARY KEY, bio TEXT);
            CREATE TABLE tag(id INTEGER PRIMARY KEY, name TEXT UNIQUE ON CONFLICT IGNORE);
            CREATE TABLE shelf(id INTEGER PRIMARY KEY, tags TEXT, size TEXT);
            CREATE TABLE swatch(id INTEGER PRIMARY KEY, color TEXT, level INTEGER, name TEXT, link TEXT);
            """)
        return db
    }

    private func player(_ name: String) -> Player {
        Player(
            id: nil, displayName: name, score: 10, joinedAt: Date(timeIntervalSince1970: 1_700_000_000.5), token: UUID(),
            avatarPNG: Data([0x89, 0x50, 0x4E, 0x47]), homeAddress: Address(city: "Lyon", zip: "69001"), bigCounter: UInt64.max - 1)
    }

    /// A record made only of its key has nothing to set: `update` tells whether its row exists
    /// (it returned without a word, so `save` never inserted the row).
    func testARecordOfKeyColumnsOnlyIsSavedAndItsUpdateFindsItsRow() throws {
        let db = try database()
        try Follow(follower: 1, followed: 2).save(db)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM follow WHERE follower = 1 AND followed = 2"), 1)
        try Follow(follower: 1, followed: 2).save(db)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM follow"), 1, "saved again: the row is there, nothing to change")
        XCTAssertNoThrow(try Follow(follower: 1, followed: 2).update(db))
        assertThrows(.recordNotFound) { try Follow(follower: 9, followed: 9).update(db) }
    }

    /// An update that encodes only the key (a nil left out by the record's own `encode(to:)`)
    /// leaves later updates of the type alone: each writes what its record encodes (when the
    /// connection's layout of the type was made from a key-only record, later updates found
    /// nothing to set in it and wrote nothing). A column left out is NULL, as for synthesized
    /// Codable, which leaves nils out too.
    func testAnUpdateOfOnlyTheKeyDoesNotStopLaterUpdates() throws {
        let db = try database()
        try db.executeUpdate("INSERT INTO profile(id, bio) VALUES (1, 'a')")
        try Profile(id: 1, bio: nil).update(db)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM profile WHERE id = 1 AND bio IS NULL"), 1)
        try Profile(id: 1, bio: "b").update(db)
        XCTAssertEqual(try db.stringForQuery("SELECT bio FROM profile WHERE id = 1"), "b")
        try Profile(id: 1, bio: nil).update(db)
        try Profile(id: 1, bio: "c").save(db)
        XCTAssertEqual(try db.stringForQuery("SELECT bio FROM profile WHERE id = 1"), "c")
        assertThrows(.recordNotFound) { try Profile(id: 2, bio: nil).update(db) }
    }

    /// A nil optional of a type stored as JSON, encoded with `encode(_:forKey:)`, was stored as
    /// the text `null`, which then failed to decode. It is NULL, on the first write and on the
    /// later ones that bind into the cached statement.
    func testANilOptionalStoredAsJSONIsNULL() throws {
        let db = try database()
        let shelves = [
            Shelf(id: 1, tags: nil, size: nil), Shelf(id: 2, tags: ["a"], size: .init(width: 3)), Shelf(id: 3, tags: nil, size: nil),
        ]
        for shelf in shelves { try shelf.insert(db) }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM shelf WHERE tags IS NULL AND size IS NULL"), 2)
        XCTAssertEqual(try Shelf.fetchAll(db, sql: "SELECT * FROM shelf ORDER BY id"), shelves)
        try Shelf(id: 2, tags: nil, size: nil).update(db)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM shelf WHERE tags IS NULL AND size IS NULL"), 3)
    }

    /// An enum with raw values and a URL were stored as JSON text, quotes and escaped slashes
    /// included: `WHERE color = 'red'` found nothing, and a row written by SQL (or by GRDB) as
    /// `'blue'` failed to decode. They are stored as their raw value and text now, read back
    /// only from their own storage class; rows stored the old way still decode. Other single
    /// values (a wrapper) stay JSON, so nothing SQLite would convert loosely is read as them.
    func testEnumsAndURLsAreStoredAsTheirValuesAndOldJSONStillReads() throws {
        let db = try database()
        let link = try XCTUnwrap(URL(string: "https://example.com/a"))
        let red = Swatch(id: 1, color: .red, level: .high, name: .init("Ann"), link: link)
        try red.insert(db)
        try Swatch(id: 2, color: .blue, level: nil, name: .init(#""quoted""#), link: link).insert(db)
        XCTAssertEqual(try db.intForQuery(#"SELECT count(*) FROM swatch WHERE color = 'red' AND level = 2 AND name = '"Ann"'"#), 1)
        XCTAssertEqual(try db.stringForQuery("SELECT link FROM swatch WHERE id = 1"), "https://example.com/a")
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(level) FROM swatch WHERE id = 1"), "integer")
        try db.executeUpdate(
            #"INSERT INTO swatch VALUES (3, 'blue', 1, '"Cy"', 'https://example.com/c'), (4, '"red"', '2', '"Di"', '"https:\/\/example.com\/d"')"#
        )
        let fetched = try Swatch.fetchAll(db, sql: "SELECT * FROM swatch ORDER BY id")
        XCTAssertEqual(fetched.first, red)
        XCTAssertEqual(fetched.map(\.color), [.red, .blue, .blue, .red])
        XCTAssertEqual(fetched.map(\.level), [.high, nil, .low, .high])
        XCTAssertEqual(fetched.map(\.name.value), ["Ann", #""quoted""#, "Cy", "Di"])
        XCTAssertEqual(fetched.map(\.link.absoluteString).last, "https://example.com/d")
        // Not a case, and not its storage class: refused, never converted.
        try db.executeUpdate("UPDATE swatch SET color = 'green' WHERE id = 3")
        assertThrows(.typeMismatch) { _ = try Swatch.fetchAll(db, sql: "SELECT * FROM swatch WHERE id = 3") }
        try db.executeUpdate("UPDATE swatch SET color = 'blue', level = 2.5 WHERE id = 3")
        assertThrows(.typeMismatch) { _ = try Swatch.fetchAll(db, sql: "SELECT * FROM swatch WHERE id = 3") }
    }

    /// The encoder stored any raw value that binds as itself, the decoder read back only text
    /// and integers: a `Bool` raw value was stored as 1 and then failed to decode. Both follow
    /// one rule now (text and integers as themselves, other raw values as JSON).
    func testRawValuesOtherThanTextAndIntegersRoundTrip() throws {
        struct Switch: RawRepresentable, Codable, Equatable { var rawValue: Bool }
        enum Ratio: Double, Codable {
            case half = 0.5
            case whole = 1
        }
        struct Panel: Codable, Equatable, FetchableRecord, PersistableRecord {
            static let databaseTableName = "panel"
            var id: Int64
            var power: Switch
            var ratio: Ratio
        }
        let db = try database()
        try db.executeUpdate("CREATE TABLE panel(id INTEGER PRIMARY KEY, power, ratio)")
        let panels = [
            Panel(id: 1, power: Switch(rawValue: true), ratio: .half), Panel(id: 2, power: Switch(rawValue: false), ratio: .whole),
        ]
        for panel in panels { try panel.insert(db) }
        XCTAssertEqual(try Panel.fetchAll(db, sql: "SELECT * FROM panel ORDER BY id"), panels)
    }

    /// Single values that are not raw-value enums stay JSON: read from the column with SQLite's
    /// conversions, a date wrapper came back 31 years off and a JSON-like enum's number read as
    /// `true` (a review of the first version of the change above).
    func testOtherSingleValuesRoundTripAsJSON() throws {
        enum Value: Codable, Equatable {
            case flag(Bool)
            case number(Int)
            case text(String)
            case none
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if container.decodeNil() {
                    self = .none
                } else if let flag = try? container.decode(Bool.self) {
                    self = .flag(flag)
                } else if let number = try? container.decode(Int.self) {
                    self = .number(number)
                } else {
                    self = .text(try container.decode(String.self))
                }
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case .flag(let flag): try container.encode(flag)
                case .number(let number): try container.encode(number)
                case .text(let text): try container.encode(text)
                case .none: try container.encodeNil()
                }
            }
        }
        struct Note: Codable, Equatable, FetchableRecord, PersistableRecord {
            static let databaseTableName = "note"
            var id: Int64
            var stamp: SingleValue<Date>
            var value: Value
        }
        let db = try database()
        try db.executeUpdate("CREATE TABLE note(id INTEGER PRIMARY KEY, stamp, value)")
        let notes = [
            Note(id: 1, stamp: .init(Date(timeIntervalSince1970: 1_700_000_000)), value: .number(42)),
            Note(id: 2, stamp: .init(Date(timeIntervalSince1970: 0)), value: .text("hello")),
            Note(id: 3, stamp: .init(Date(timeIntervalSince1970: 5)), value: .none),
        ]
        for note in notes { try note.insert(db) }
        XCTAssertEqual(try Note.fetchAll(db, sql: "SELECT * FROM note ORDER BY id"), notes)
    }

    /// Bytes as `[UInt8]` round-trip: written as a blob, read back from it (they were parsed
    /// as JSON text and failed, or read as other values when the bytes happened to be JSON).
    func testBytesAsAnArrayRoundTrip() throws {
        struct Packet: Codable, Equatable, FetchableRecord, PersistableRecord {
            static let databaseTableName = "packet"
            var id: Int64
            var bytes: [UInt8]
            var optionalBytes: [UInt8]?
        }
        let db = try database()
        try db.executeUpdate("CREATE TABLE packet(id INTEGER PRIMARY KEY, bytes BLOB, optionalBytes BLOB)")
        let packets = [
            Packet(id: 1, bytes: [0x89, 0x50, 0x00, 0xFF], optionalBytes: nil),
            Packet(id: 2, bytes: Array("[1,2]".utf8), optionalBytes: []),
        ]
        for packet in packets { try packet.insert(db) }
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(bytes) FROM packet WHERE id = 1"), "blob")
        XCTAssertEqual(try Packet.fetchAll(db, sql: "SELECT * FROM packet ORDER BY id"), packets)
    }

    /// An insert that inserted no row returns 0, not the rowid of an earlier insert (which
    /// `record.id = try record.insert(db)` then pointed at another row).
    func testAnInsertThatInsertsNoRowReturnsZero() throws {
        let db = try database()
        XCTAssertEqual(try Tag(id: nil, name: "x").insert(db), 1)
        XCTAssertEqual(try Tag(id: nil, name: "z").insert(db), 2)
        var duplicate = Tag(id: nil, name: "x")
        duplicate.id = try duplicate.insert(db)
        XCTAssertEqual(duplicate.id, 0, "ignored by the UNIQUE ... ON CONFLICT IGNORE")
        XCTAssertEqual(try db.stringForQuery("SELECT name FROM tag WHERE id = 2"), "z")
    }

    func testInsertFetchUpdateDeleteRoundTripEveryType() throws {
        let db = try database()
        var arthur = player("Arthur")
        arthur.id = try arthur.insert(db)
        XCTAssertEqual(arthur.id, 1)
        // Stored as a shell user would expect: snake_case columns, UUID text, JSON for the nested value.
        XCTAssertEqual(try db.stringForQuery("SELECT token FROM player"), arthur.token.uuidString)
        XCTAssertEqual(try db.stringForQuery("SELECT home_address FROM player"), #"{"city":"Lyon","zip":"69001"}"#)
        XCTAssertEqual(try Player.fetchOne(db, key: 1), arthur)

        arthur.score = nil
        arthur.homeAddress = nil
        arthur.displayName = "Arthur Dent"
        try arthur.update(db)
        let fetched = try XCTUnwrap(try Player.fetchOne(db, key: arthur.id))
        XCTAssertNil(fetched.score, "nil is written as NULL, not left out")
        XCTAssertNil(fetched.homeAddress)
        XCTAssertEqual(fetched, arthur)

        XCTAssertTrue(try arthur.exists(db))
        XCTAssertTrue(try arthur.delete(db))
        XCTAssertFalse(try arthur.delete(db))
        XCTAssertFalse(try arthur.exists(db))
        assertThrows(.recordNotFound) { try arthur.update(db) }
    }

    func testSaveInsertsThenUpdates() throws {
        let db = try database()
        var ford = player("Ford")
        // The new rowid comes back (it was thrown away, so a second save inserted again).
        ford.id = try ford.save(db)
        XCTAssertEqual(ford.id, 1)
        XCTAssertEqual(try Player.fetchCount(db), 1)
        ford.score = 42
        XCTAssertNil(try ford.save(db), "an update returns no rowid")
        XCTAssertEqual(try Player.fetchCount(db), 1)
        XCTAssertEqual(try Player.fetchOne(db, key: 1)?.score, 42)
    }

    func testFetchWithSQLAndArguments() throws {
        let db = try database()
        for (name, score) in [("a", 1), ("b", 5), ("c", 9)] {
            var record = player(name)
            record.score = score
            try record.insert(db)
        }
        let high = try Player.fetchAll(db, sql: "SELECT * FROM player WHERE score > ? ORDER BY score", arguments: [2])
        XCTAssertEqual(high.map(\.displayName), ["b", "c"])
        XCTAssertEqual(try Player.fetchCount(db, sql: "SELECT * FROM player WHERE score > ?", arguments: [2]), 2)
        XCTAssertNil(try Player.fetchOne(db, sql: "SELECT * FROM player WHERE score > 100"))
        XCTAssertEqual(try Player.fetchAll(db).count, 3)
    }

    func testMissingAndMistypedColumnsAreClearErrors() throws {
        let db = try database()
        try player("x").insert(db)
        do {
            _ = try Player.fetchAll(db, sql: "SELECT id, display_name FROM player")
            XCTFail("a missing column must throw")
        } catch let error as DatabaseError {
            XCTAssertEqual(error.kind, .columnNotFound)
            XCTAssertTrue(error.message.contains("joined_at"), error.message)
            XCTAssertTrue(error.message.contains("joinedAt"), error.message)
        }
        do {
            _ = try Player.fetchAll(
                db,
                sql: "SELECT id, display_name, score, joined_at, 'not a uuid' AS token, avatar_png, home_address, big_counter FROM player")
            XCTFail("a mistyped column must throw")
        } catch let error as DatabaseError {
            XCTAssertEqual(error.kind, .typeMismatch)
            XCTAssertTrue(error.message.contains("token"), error.message)
        }
    }

    /// A record keyed by a column its table does not have (a misspelled key): its fetch by key,
    /// update and delete fail with `no such column`, where SQLite read the double-quoted name as
    /// a string and they found nothing, silently (review).
    func testAKeyColumnTheTableLacksIsAnError() throws {
        struct Misspelled: Codable, FetchableRecord, PersistableRecord {
            static let databaseTableName = "membership"
            static let databasePrimaryKey = ["teem"]
            var teem: String
            var role: String
        }
        let db = try database()
        try db.executeUpdate("INSERT INTO membership VALUES ('teem', 1, 'r')")
        for attempt in [
            { _ = try Misspelled.fetchOne(db, key: "teem") },
            { try Misspelled(teem: "teem", role: "x").update(db) },
            { _ = try Misspelled(teem: "teem", role: "x").delete(db) },
        ] as [() throws -> Void] {
            XCTAssertThrowsError(try attempt()) { error in
                XCTAssertTrue("\(error)".contains("no such column"), "\(error)")
            }
        }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM membership"), 1)
    }

    func testCompositePrimaryKeyAndConstraintViolation() throws {
        let db = try database()
        var membership = Membership(team: "red", member: 7, role: "captain")
        try membership.insert(db)
        assertThrows(.constraint) { try membership.insert(db) }
        membership.role = "coach"
        try membership.update(db)
        XCTAssertEqual(try Membership.fetchAll(db), [membership])
        XCTAssertTrue(try membership.delete(db))
    }

    func testUpsertWhereTheSQLiteHasIt() throws {
        let db = try database()
        var membership = Membership(team: "blue", member: 1, role: "player")
        if sqlite3_libversion_number() < 3_024_000 {
            assertThrows(.unsupported) { try membership.upsert(db) }
            return
        }
        try membership.upsert(db)
        membership.role = "captain"
        try membership.upsert(db)
        XCTAssertEqual(try Membership.fetchAll(db), [membership])
    }

    func testUnsignedIntegersKeepTheirBits() throws {
        let db = try database()
        try db.executeUpdate("CREATE TABLE u(v INTEGER)")
        try db.executeUpdate("INSERT INTO u VALUES (?), (?)", UInt64.max, UInt(12))
        let rows = try db.executeQuery("SELECT v FROM u ORDER BY rowid")
        XCTAssertTrue(try rows.next())
        XCTAssertEqual(rows.uint64(at: 0), UInt64.max)
        XCTAssertEqual(rows.int64(at: 0), -1, "stored as its bit pattern, as FMDB does")
        XCTAssertTrue(try rows.next())
        XCTAssertEqual(try rows.get(at: 0, as: UInt.self), 12)
        rows.close()
    }

    func testSnakeCaseNaming() {
        XCTAssertEqual(ColumnNaming.snakeCase.column(for: "displayName"), "display_name")
        XCTAssertEqual(ColumnNaming.snakeCase.column(for: "authorID"), "author_id")
        XCTAssertEqual(ColumnNaming.snakeCase.column(for: "myURLValue"), "my_url_value")
        XCTAssertEqual(ColumnNaming.snakeCase.column(for: "id"), "id")
        XCTAssertEqual(ColumnNaming.snakeCase.column(for: "avatarPNG"), "avatar_png")
        XCTAssertEqual(ColumnNaming.exact.column(for: "avatarPNG"), "avatarPNG")
    }
}
