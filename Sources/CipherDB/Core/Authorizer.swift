import CSQLCipher
import Foundation

/// What a connection's one SQLite authorizer does; SQLite allows one per connection, and
/// several features need it.
///
/// - Refuse key PRAGMAs, cipher settings and `ATTACH … KEY` (``Database/refuseKeyPragmas()``).
/// - Record the tables that statements compiled now read (a ``ValueObservation``'s region).
/// - Make `DELETE` delete row by row: SQLite's truncate optimization empties a table without
///   telling the update hook, and an observation would miss it.
///
/// The authorizer runs when a statement is compiled, not when it runs: statements compiled
/// before a policy changed keep the old one.
final class Authorizer {
    @exclusivity(unchecked) var refusesKeyPragmas = false
    @exclusivity(unchecked) var deletesRowByRow = false
    /// The tables read by statements compiled while this is not `nil`, lowercased.
    @exclusivity(unchecked) var readTables: Set<String>?
    /// Set when an `ATTACH` was compiled while key PRAGMAs are refused: its text is checked for a
    /// `KEY` clause, which the authorizer is not shown (``Database/refuseAttachKey(_:)``).
    @exclusivity(unchecked) var compiledAttach = false

    /// Installs the policy on `handle` (once is enough; later changes to the flags apply).
    func install(on handle: OpaquePointer) {
        sqlite3_set_authorizer(
            handle,
            { context, action, first, second, _, _ in
                guard let context else { return SQLITE_OK }
                let policy = Unmanaged<Authorizer>.fromOpaque(context).takeUnretainedValue()
                return policy.decide(action, first, second)
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func decide(_ action: Int32, _ first: UnsafePointer<CChar>?, _ second: UnsafePointer<CChar>?) -> Int32 {
        switch action {
        case SQLITE_PRAGMA where refusesKeyPragmas:
            guard let first else { return SQLITE_OK }
            return Self.isRefusedPragma(String(cString: first).lowercased(), setting: second != nil) ? SQLITE_DENY : SQLITE_OK
        case SQLITE_ATTACH where refusesKeyPragmas:
            compiledAttach = true
            return SQLITE_OK
        case SQLITE_READ:
            if readTables != nil, let first { readTables?.insert(String(cString: first).lowercased()) }
            return SQLITE_OK
        case SQLITE_DELETE where deletesRowByRow:
            // SQLITE_IGNORE on a DELETE: the rows are deleted, one by one, as the update hook needs.
            return SQLITE_IGNORE
        default:
            return SQLITE_OK
        }
    }

    /// Key PRAGMAs always; cipher settings when given a value (`PRAGMA cipher_page_size = 4096`),
    /// and `cipher_migrate`: after the key they make an intact file read as wrong-keyed or damaged
    /// (or rewrite it), where `cipherdb` has flags with checks. Reading one (`PRAGMA
    /// cipher_version`) stays allowed.
    static func isRefusedPragma(_ name: String, setting: Bool) -> Bool {
        switch name {
        case "key", "rekey", "hexkey", "hexrekey", "textkey", "textrekey", "cipher_migrate": return true
        case "kdf_iter", "fast_kdf_iter", "rekey_kdf_iter": return setting
        default: return setting && name.hasPrefix("cipher_")
        }
    }

    /// Whether the `ATTACH` statement `sql` has a `KEY` clause: a bare word `KEY` outside quotes
    /// and comments (SQLCipher's syntax `ATTACH 'f' AS s KEY 'secret'`).
    static func attachNamesAKey(_ sql: String) -> Bool {
        var word = ""
        var words: [String] = []
        var iterator = Array(sql.utf8)[...]
        func flush() {
            if !word.isEmpty { words.append(word.uppercased()) }
            word = ""
        }
        while let byte = iterator.popFirst() {
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "["):
                flush()
                let close = byte == UInt8(ascii: "[") ? UInt8(ascii: "]") : byte
                while let next = iterator.popFirst(), next != close {}
            case UInt8(ascii: "-") where iterator.first == UInt8(ascii: "-"):
                flush()
                while let next = iterator.popFirst(), next != UInt8(ascii: "\n") {}
            case UInt8(ascii: "/") where iterator.first == UInt8(ascii: "*"):
                flush()
                iterator.removeFirst()
                while let next = iterator.popFirst(), !(next == UInt8(ascii: "*") && iterator.first == UInt8(ascii: "/")) {}
                _ = iterator.popFirst()
            case _
            where byte == UInt8(ascii: "_") || byte >= 0x80 || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20):
                word.append(Character(Unicode.Scalar(byte)))
            default:
                flush()
            }
        }
        flush()
        return words.first == "ATTACH" && words.contains("KEY")
    }
}

extension Database {
    /// Refuses (`notAuthorized`) a just-compiled `ATTACH … KEY` while key PRAGMAs are refused: its
    /// key is a literal in the SQL, on a command line or in a history, as a key PRAGMA's would be.
    /// Attach with a ``DatabaseKey`` through ``attach(_:as:key:settings:)`` instead.
    func refuseAttachKey(_ compiled: OpaquePointer) throws(DatabaseError) {
        guard authorizer.compiledAttach else { return }
        authorizer.compiledAttach = false
        let sql = String(cString: sqlite3_sql(compiled))
        guard Authorizer.attachNamesAKey(sql) else { return }
        sqlite3_finalize(compiled)
        throw DatabaseError(kind: .notAuthorized, resultCode: SQLITE_AUTH, message: "not authorized: ATTACH … KEY", sql: sql)
    }
}
