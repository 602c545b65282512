import Foundation

/// Applies named schema migrations in order, once each, and records them in the database.
///
/// Register migrations in the order they must run, then call ``migrate(_:)-(Database)`` every time
/// the app opens its database: migrations already applied are skipped. Each migration runs in its
/// own transaction with foreign key enforcement suspended (so tables can be rebuilt), and a
/// `PRAGMA foreign_key_check` before its commit: a migration that leaves a broken reference is
/// rolled back. The names of applied migrations live in the table `cipherdb_migrations`, inside
/// the encrypted file. A database migrated by a newer version of the app (it holds migrations this
/// migrator does not know) is refused rather than migrated backwards.
///
/// ```swift
/// var migrator = DatabaseMigrator()
/// migrator.registerMigration("create player") { db in
///     try db.executeUpdate("CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
/// }
/// migrator.registerMigration("add score") { db in
///     try db.executeUpdate("ALTER TABLE player ADD COLUMN score INTEGER NOT NULL DEFAULT 0")
/// }
/// try migrator.migrate(queue)
/// ```
///
/// The names are GRDB's (`DatabaseMigrator`, `registerMigration(_:migrate:)`, `migrate(_:)`,
/// `appliedMigrations(_:)`); the table is CipherDB's own.
public struct DatabaseMigrator: Sendable {
    /// One registered migration.
    private struct Migration: Sendable {
        let identifier: String
        let migrate: @Sendable (Database) throws -> Void
    }

    private var registered: [Migration] = []

    /// The table that records applied migrations.
    public static let tableName = "cipherdb_migrations"

    /// An empty migrator.
    public init() {}

    /// The identifiers of the registered migrations, in order.
    public var migrations: [String] { registered.map(\.identifier) }

    /// Registers a migration to run after those registered before it.
    ///
    /// - Precondition: `identifier` is not registered yet (a programming error, caught at once).
    public mutating func registerMigration(_ identifier: String, migrate: @escaping @Sendable (Database) throws -> Void) {
        precondition(!registered.contains { $0.identifier == identifier }, "migration \"\(identifier)\" is registered twice")
        registered.append(Migration(identifier: identifier, migrate: migrate))
    }

    // MARK: - Migrating

    /// Applies every registered migration that the database has not applied yet.
    ///
    /// - Throws: `unsupported` when the database holds migrations this migrator does not know;
    ///   `constraint` when a migration leaves a foreign key unsatisfied (it is rolled back);
    ///   `misuse` inside a transaction; the error a migration throws (it is rolled back, and the
    ///   migrations before it stay applied).
    public func migrate(_ db: Database) throws {
        try migrate(db, upTo: nil)
    }

    /// Applies the registered migrations up to and including `target`.
    public func migrate(_ db: Database, upTo target: String) throws {
        guard registered.contains(where: { $0.identifier == target }) else {
            throw DatabaseError.misuse("no migration named \"\(target)\" is registered")
        }
        try migrate(db, upTo: Optional(target))
    }

    /// Applies every pending migration through the queue's or pool's writer.
    public func migrate(_ writer: some DatabaseWriter) throws {
        try writer.writeWithoutTransaction { db in try migrate(db) }
    }

    /// Applies the pending migrations up to and including `target` through the writer.
    public func migrate(_ writer: some DatabaseWriter, upTo target: String) throws {
        try writer.writeWithoutTransaction { db in try migrate(db, upTo: target) }
    }

    private func migrate(_ db: Database, upTo target: String?) throws {
        guard !db.isInTransaction else { throw DatabaseError.misuse("migrate inside a transaction") }
        try db.executeUpdate("CREATE TABLE IF NOT EXISTS \(Self.tableName) (identifier TEXT NOT NULL PRIMARY KEY)")
        let applied = Set(try appliedMigrations(db))
        let unknown = applied.subtracting(migrations).sorted()
        guard unknown.isEmpty else {
            throw DatabaseError(
                kind: .unsupported,
                message:
                    "the database holds migration(s) this app does not know (\(unknown.joined(separator: ", "))): it was migrated by a newer version"
            )
        }
        let foreignKeys = (try db.intForQuery("PRAGMA foreign_keys") ?? 0) != 0
        // PRAGMA foreign_keys does nothing inside a transaction: switch it off before BEGIN.
        if foreignKeys { try db.executeUpdate("PRAGMA foreign_keys = OFF") }
        defer { if foreignKeys { _ = try? db.executeUpdate("PRAGMA foreign_keys = ON") } }
        for migration in registered {
            if !applied.contains(migration.identifier) {
                try run(migration, in: db)
            }
            if migration.identifier == target { break }
        }
    }

    /// Runs one migration in its own transaction, recorded in the same one. As an
    /// ``Database/inTransaction(_:_:)`` block: once the transaction is gone (the migration
    /// ended it, or SQLite rolled it back on an error the migration caught), nothing more of it
    /// runs, it is not recorded, and `migrate` throws.
    ///
    /// Whether it is applied is read again under the transaction's write lock: another process
    /// (or pool) migrating the same file at once may have applied it since the first read, and
    /// running it twice failed the second app's launch ("table … already exists").
    private func run(_ migration: Migration, in db: Database) throws {
        try db.inTransaction(.immediate) {
            guard try db.intForQuery("SELECT count(*) FROM \(Self.tableName) WHERE identifier = ?", migration.identifier) == 0 else {
                return .commit
            }
            // Only references the migration breaks count: one broken before it (written while
            // foreign keys were off) made every later migration fail, whatever it did.
            let brokenBefore = try foreignKeyViolations(db)
            try migration.migrate(db)
            if let violation = try foreignKeyViolations(db).first(where: { !brokenBefore.contains($0) }) {
                throw DatabaseError(
                    kind: .constraint, resultCode: 19,
                    message: "migration \"\(migration.identifier)\" leaves a broken foreign key: row \(violation.rowID) of "
                        + "\(violation.table) refers to a missing row of \(violation.parent)")
            }
            try db.executeUpdate("INSERT INTO \(Self.tableName)(identifier) VALUES (?)", migration.identifier)
            return .commit
        }
    }

    /// One row `PRAGMA foreign_key_check` reports.
    private struct ForeignKeyViolation: Hashable {
        let table: String
        let rowID: String
        let parent: String
        let key: Int64
    }

    private func foreignKeyViolations(_ db: Database) throws(DatabaseError) -> Set<ForeignKeyViolation> {
        let rows = try db.executeQuery("PRAGMA foreign_key_check")
        defer { rows.close() }
        var violations: Set<ForeignKeyViolation> = []
        while try rows.next() {
            violations.insert(
                ForeignKeyViolation(
                    table: rows.string(at: 0) ?? "?", rowID: rows.int64(at: 1).map(String.init) ?? "?", parent: rows.string(at: 2) ?? "?",
                    key: rows.int64(at: 3) ?? -1))
        }
        return violations
    }

    // MARK: - Inspecting

    /// The identifiers of the migrations applied to the database, in the order they were registered
    /// (unknown ones last, sorted).
    public func appliedMigrations(_ db: Database) throws -> [String] {
        guard try db.tableExists(Self.tableName) else { return [] }
        var applied: Set<String> = []
        let rows = try db.executeQuery("SELECT identifier FROM \(Self.tableName)")
        while try rows.next() {
            if let identifier = rows.string(at: 0) { applied.insert(identifier) }
        }
        let known = migrations.filter { applied.contains($0) }
        return known + applied.subtracting(known).sorted()
    }

    /// The applied migrations, read through a queue or pool.
    public func appliedMigrations(_ reader: some DatabaseReader) throws -> [String] {
        try reader.read { db in try appliedMigrations(db) }
    }

    /// Whether every registered migration is applied.
    public func hasCompletedMigrations(_ db: Database) throws -> Bool {
        Set(try appliedMigrations(db)).isSuperset(of: migrations)
    }

    /// Whether every registered migration is applied, read through a queue or pool.
    public func hasCompletedMigrations(_ reader: some DatabaseReader) throws -> Bool {
        try reader.read { db in try hasCompletedMigrations(db) }
    }
}
