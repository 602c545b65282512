import CipherDB
import Foundation
import XCTest

/// The tables and columns the query interface tests share.
enum Fixture {
    static let users = Table("users")
    static let posts = Table("posts")
    static let id = Column<Int64>("id")
    static let email = Column<String>("email")
    static let nickname = Column<String?>("name")
    static let score = Column<Int64>("score")
    static let authorID = Column<Int64?>("author_id")
    static let title = Column<String>("title")
}

extension DatabaseTestCase {
    /// An encrypted database with `users` and `posts` tables, empty.
    func openQueryDatabase(_ file: String = "query.db") throws -> Database {
        let db = try openDatabase(file, key: passphrase("query interface"))
        try db.executeUpdate(
            "CREATE TABLE users(id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL UNIQUE, name TEXT, score INTEGER NOT NULL DEFAULT 0)"
        )
        try db.executeUpdate("CREATE TABLE posts(id INTEGER PRIMARY KEY, author_id INTEGER, title TEXT NOT NULL)")
        return db
    }
}
