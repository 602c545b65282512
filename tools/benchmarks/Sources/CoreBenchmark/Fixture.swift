// The rows every workload writes or reads, made before any measurement so that neither side pays
// for them: an integer key, an integer, a real, a 32-byte text (long enough that Swift allocates
// it, as real text is) and a 64-byte blob.
import CipherDB
import Foundation

struct Fixture {
    let rowCount: Int
    let integers: [Int64]
    let reals: [Double]
    let texts: [String]
    let blobs: [Data]
    /// The ids the point lookups ask for, in a scattered order.
    let lookupIDs: [Int64]

    init(rowCount: Int) {
        self.rowCount = rowCount
        integers = (0..<rowCount).map { Int64(($0 &* 2_654_435_761) % 1_000_003) }
        reals = (0..<rowCount).map { Double($0) * 0.25 }
        texts = (0..<rowCount).map { index in
            let digits = String(index)
            return "text-" + String(repeating: "x", count: 27 - digits.count) + digits
        }
        blobs = (0..<rowCount).map { index in
            Data((0..<64).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) })
        }
        lookupIDs = (0..<rowCount).map { Int64(($0 &* 7919) % rowCount) }
    }

    /// The records of the Codable workloads, made from the same values (every fourth email NULL).
    var players: [Player] {
        (0..<rowCount).map { row in
            Player(
                id: Int64(row + 1), name: texts[row], email: row % 4 == 0 ? nil : "player\(row)@example.com",
                score: Int(integers[row]), rating: reals[row], avatar: blobs[row])
        }
    }

    static let createTable = "CREATE TABLE t(id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, b BLOB)"
    /// The same with three more columns: an insert of eight values, above `executeUpdate`'s
    /// fixed-arity overloads (one to six).
    static let createTable8 =
        "CREATE TABLE t8(id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, b BLOB, i2 INTEGER, r2 REAL, s2 TEXT)"
    static let insert8 = "INSERT INTO t8(id, i, r, s, b, i2, r2, s2) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    static let createPlayers =
        "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, score INTEGER NOT NULL, rating REAL NOT NULL, avatar BLOB NOT NULL)"
    static let selectPlayers = "SELECT id, name, email, score, rating, avatar FROM player"
    static let insert = "INSERT INTO t(id, i, r, s, b) VALUES (?, ?, ?, ?, ?)"
    static let scan = "SELECT id, i, r, s, b FROM t"
    static let lookup = "SELECT s FROM t WHERE id = ?"
}

/// The record of the Codable and query-interface workloads: six fields of the usual kinds.
struct Player: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var email: String?
    var score: Int
    var rating: Double
    var avatar: Data
}

/// The same record reading its own columns (`FetchableRecord.init(row:)`) instead of through
/// Codable, as GRDB's records do without Codable.
struct PlayerByColumns: Decodable, FetchableRecord, TableRecord {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var email: String?
    var score: Int
    var rating: Double
    var avatar: Data

    enum Columns {
        static let id = Column<Int64>("id")
        static let name = Column<String>("name")
        static let email = Column<String?>("email")
        static let score = Column<Int>("score")
        static let rating = Column<Double>("rating")
        static let avatar = Column<Data>("avatar")
    }

    init(row: ResultSet) throws {
        id = try row[Columns.id]
        name = try row[Columns.name]
        email = try row[Columns.email]
        score = try row[Columns.score]
        rating = try row[Columns.rating]
        avatar = try row[Columns.avatar]
    }
}

/// What the reads computed, so the optimizer keeps them and both sides can be compared.
struct Checksum: Equatable {
    var value: Int = 0
    mutating func add(_ integer: Int64) { value &+= Int(truncatingIfNeeded: integer) }
    mutating func add(_ real: Double) { value &+= Int(real) }
    /// The length and last byte, as C's `add_bytes` reads them: from the string's contiguous bytes
    /// (`utf8.last` walks back through the generic collection code, about 78 instructions).
    mutating func add(_ text: String) {
        let last = text.utf8.withContiguousStorageIfAvailable { $0.last ?? 0 } ?? text.utf8.last ?? 0
        value &+= text.utf8.count &+ Int(last)
    }
    mutating func add(_ data: Data) { value &+= data.count &+ Int(data.last ?? 0) }
    mutating func add(_ player: Player) {
        add(player.id)
        add(player.name)
        add(player.email ?? "")
        add(Int64(player.score))
        add(player.rating)
        add(player.avatar)
    }
    mutating func add(_ player: PlayerByColumns) {
        add(player.id)
        add(player.name)
        add(player.email ?? "")
        add(Int64(player.score))
        add(player.rating)
        add(player.avatar)
    }
}
