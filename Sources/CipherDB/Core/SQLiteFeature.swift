import CSQLCipher

/// A feature of the linked SQLite, asked by name rather than by version number: the one place
/// that knows which SQLite release brought what.
///
/// SQLCipher 3.4.1 (Debian's) is SQLite 3.15; SQLCipher 4.x is 3.4x. Code that needs a newer
/// feature asks here and says so in its error instead of failing on SQL the SQLite cannot parse.
///
/// ```swift
/// if SQLiteFeature.upsert.isAvailable { try record.upsert(db) } else { try record.save(db) }
/// ```
public enum SQLiteFeature: Sendable, CaseIterable {
    /// `INSERT … ON CONFLICT DO UPDATE` (SQLite 3.24).
    case upsert
    /// `ALTER TABLE … RENAME COLUMN` (SQLite 3.25).
    case renameColumn
    /// Window functions, `OVER (…)` (SQLite 3.25).
    case windowFunctions
    /// `RETURNING` and `ALTER TABLE … DROP COLUMN` (SQLite 3.35).
    case returningAndDropColumn
    /// `sqlite3_error_offset`, where in the SQL an error is (SQLite 3.38).
    case errorOffset
    /// `ORDER BY … NULLS FIRST` and `NULLS LAST` (SQLite 3.30).
    case nullsOrdering
    /// `EXPLAIN QUERY PLAN` gives each step its parent (`id`, `parent`), drawn as a tree (SQLite 3.24).
    case queryPlanTree
    /// `SQLITE_DBCONFIG_TRIGGER_EQP`: query plans include the triggers a statement fires (SQLite 3.22).
    case triggerQueryPlans
    /// The schema table answers to `sqlite_schema` as well as `sqlite_master` (SQLite 3.33).
    case schemaTableName

    /// The first SQLite release that has the feature, as `sqlite3_libversion_number` counts
    /// (3.24.0 is 3_024_000).
    public var introducedIn: Int32 {
        switch self {
        case .upsert, .queryPlanTree: return 3_024_000
        case .triggerQueryPlans: return 3_022_000
        case .renameColumn, .windowFunctions: return 3_025_000
        case .returningAndDropColumn: return 3_035_000
        case .nullsOrdering: return 3_030_000
        case .schemaTableName: return 3_033_000
        case .errorOffset: return 3_038_000
        }
    }

    /// Whether the SQLite this process runs has the feature.
    public var isAvailable: Bool { Self.runningVersionNumber >= introducedIn }

    /// The running SQLite's version number (`sqlite3_libversion_number`).
    public static var runningVersionNumber: Int32 { sqlite3_libversion_number() }

    /// The running SQLite's version text (`sqlite3_libversion`), e.g. "3.15.2".
    public static var runningVersion: String { String(cString: sqlite3_libversion()) }
}
