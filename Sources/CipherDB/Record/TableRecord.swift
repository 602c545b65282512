/// A type stored in one table: its name, its primary key and how its properties name columns.
///
/// ```swift
/// struct Player: Codable, FetchableRecord, PersistableRecord {
///     static let databaseTableName = "player"
///     var id: Int64?
///     var name: String
/// }
/// ```
public protocol TableRecord {
    /// The table's name.
    static var databaseTableName: String { get }
    /// The primary key's columns; `["id"]` unless declared.
    static var databasePrimaryKey: [String] { get }
    /// How coding keys become column names; ``ColumnNaming/exact`` unless declared.
    static var databaseColumnNaming: ColumnNaming { get }
}

extension TableRecord {
    /// `["id"]`.
    public static var databasePrimaryKey: [String] { ["id"] }
    /// ``ColumnNaming/exact``.
    public static var databaseColumnNaming: ColumnNaming { .exact }
}
