import CipherDB

/// An open database and how it was opened.
struct OpenedDatabase {
    /// The connection.
    let database: Database
    /// The key it was opened with; `nil` for a plaintext database.
    let key: ResolvedKey?
    /// The settings it was opened with.
    let settings: CipherSettings
    /// The path.
    let path: String

    /// Whether it is a database in memory (the shell's new `.connection`s), with no file.
    var isInMemory: Bool { database.path == nil }

    /// A line for `--verbose`: how the database was opened, never the key.
    var summary: String {
        "\(path): " + (key?.summary(settings: settings) ?? "plaintext SQLite database, no key")
    }
}
