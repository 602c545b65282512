/// How a record's coding keys become column names.
///
/// ```swift
/// struct Book: Codable, FetchableRecord, PersistableRecord {
///     static let databaseTableName = "book"
///     static let databaseColumnNaming = ColumnNaming.snakeCase   // authorID <-> author_id
///     var id: Int64?
///     var authorID: Int64
/// }
/// ```
public enum ColumnNaming: Sendable, Equatable {
    /// The key as written: `authorID` is the column `authorID` (columns match case-insensitively).
    case exact
    /// snake_case: `authorID` is `author_id`, `createdAt` is `created_at`, `myURLValue` is
    /// `my_url_value` (Foundation's `convertToSnakeCase` rule).
    case snakeCase

    /// The column for coding key `key`.
    public func column(for key: String) -> String {
        switch self {
        case .exact: return key
        case .snakeCase: return Self.snakeCased(key)
        }
    }

    /// Inserts `_` where a lowercase letter or digit meets an uppercase one, and before the last
    /// capital of an acronym followed by a lowercase letter; then lowercases.
    static func snakeCased(_ key: String) -> String {
        let characters = Array(key)
        var result = ""
        result.reserveCapacity(characters.count + 4)
        for (offset, character) in characters.enumerated() {
            if character.isUppercase, offset > 0 {
                let previous = characters[offset - 1]
                let next = offset + 1 < characters.count ? characters[offset + 1] : nil
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) {
                    result.append("_")
                }
            }
            result += character.lowercased()
        }
        return result
    }
}
