import CSQLCipher
import Foundation

/// An error from CipherDB or from SQLite.
///
/// It carries SQLite's primary and extended result codes, SQLite's message and the SQL that
/// failed. It never carries argument values or key material.
///
/// ```swift
/// do { try db.open(key: key) }
/// catch let error as DatabaseError where error.kind == .wrongKey { askAgain() }
/// ```
public struct DatabaseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in the terms a caller acts on.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// An SQLite error without a more specific kind: see ``DatabaseError/resultCode``.
        case sqlite
        /// The key does not open the database (or its first page is damaged).
        case wrongKey
        /// The file looks encrypted and no key was given.
        case keyRequired
        /// The file is a plaintext SQLite database and a key was given.
        case plaintextDatabase
        /// The file is not a database.
        case notADatabase
        /// A page of the database is damaged or was altered ("malformed").
        case corrupt
        /// The key's shape is wrong: empty, or a raw key or salt of the wrong length.
        case invalidKey
        /// The running SQLCipher lacks the requested feature or setting.
        case unsupported
        /// The operation needs an encrypted database.
        case notEncrypted
        /// The database is read-only.
        case readOnly
        /// The database stayed locked for the whole busy timeout.
        case busy
        /// The operation was interrupted.
        case interrupted
        /// The API was used in a way that cannot work: a closed database or result set, say.
        case misuse
        /// Statement arguments do not match the statement's parameters.
        case invalidArguments
        /// No column has that name or index.
        case columnNotFound
        /// A column is NULL where a value was required.
        case unexpectedNull
        /// The database file or its directory cannot be used (missing folder, target exists, ...).
        case fileError
        /// A block called back into the queue or pool that is running it.
        case reentrantAccess
        /// No connection became free within the pool's wait limit.
        case poolTimeout
        /// The disk (or the file size limit) is full: nothing was changed.
        case diskFull
        /// The operating system failed a read or write of the database or its journal.
        case ioError
        /// The change is in place, but the folder that names it could not be flushed
        /// afterwards (`fsync` of the directory failed): it may not survive a crash of the
        /// machine. Not "nothing changed": the new file is there now.
        case notDurable
        /// The change is in place, but a step after it failed (the message says which: the
        /// journal mode could not be restored, say). Not "nothing changed".
        case incomplete
        /// Another connection has the database open, so its file cannot be replaced now.
        case inUse
        /// An authorizer refused the statement (see ``Database/refuseKeyPragmas()``).
        case notAuthorized
        /// An `ATTACH` named a file that does not exist yet, on a connection that makes no new
        /// database files (see ``Database/refuseCreatingDatabaseFiles()``).
        case newFileRefused
        /// The connection was closed by a failure that left it unsafe to use (a failed key
        /// change): open the database again.
        case invalidated
        /// A constraint failed (UNIQUE, PRIMARY KEY, NOT NULL, CHECK, FOREIGN KEY): nothing
        /// of the statement was applied. ``DatabaseError/extendedResultCode`` tells which.
        case constraint
        /// A column's value cannot become the type asked for (a record property, say).
        case typeMismatch
        /// No row has the record's primary key (an update of a deleted record, say).
        case recordNotFound
        /// SQLite rolled back the transaction of an ``Database/inTransaction(_:_:)`` block by
        /// itself (an `ON CONFLICT ROLLBACK` constraint, `RAISE(ROLLBACK)`, a full disk): the
        /// block's later statements are refused, and nothing of it was kept.
        case transactionRolledBack
    }

    /// What went wrong.
    public let kind: Kind
    /// SQLite's primary result code (`SQLITE_OK` when the error is CipherDB's own).
    public let resultCode: Int32
    /// SQLite's extended result code.
    public let extendedResultCode: Int32
    /// A readable message, SQLite's own where there is one.
    public let message: String
    /// The SQL that failed, if any. Argument values are never included.
    public let sql: String?
    /// Where in ``sql`` SQLite located the error, as a UTF-8 byte offset, when it says (SQLite 3.38
    /// and later, and only for some errors: a syntax error, an unknown table or column).
    public internal(set) var offset: Int?

    /// Creates an error.
    public init(kind: Kind, resultCode: Int32 = SQLITE_OK, extendedResultCode: Int32? = nil, message: String, sql: String? = nil) {
        self.kind = kind
        self.resultCode = resultCode
        self.extendedResultCode = extendedResultCode ?? resultCode
        self.message = message
        self.sql = sql
    }

    /// The error for an SQLite call that returned `code` (primary or extended): its kind from
    /// ``kind(for:)``, both codes kept. The one place a result code becomes an error.
    ///
    /// ```swift
    /// let code = sqlite3_step(handle)
    /// if code != SQLITE_ROW && code != SQLITE_DONE { throw DatabaseError(resultCode: code, message: text) }
    /// ```
    public init(resultCode code: Int32, message: String, sql: String? = nil) {
        self.init(kind: Self.kind(for: code), resultCode: code & 0xFF, extendedResultCode: code, message: message, sql: sql)
    }

    /// `SQLITE_NOTADB`, for the offline file-format code, which does not import SQLite.
    package static let notADatabaseResultCode = SQLITE_NOTADB

    /// Kind, codes, message and SQL in one line.
    public var description: String {
        var text = "\(kind.rawValue)"
        if resultCode != SQLITE_OK {
            text += " (SQLite code \(resultCode)"
            if extendedResultCode != resultCode { text += ", extended \(extendedResultCode)" }
            text += ")"
        }
        text += ": \(message)"
        if let sql { text += " [SQL: \(sql)]" }
        return text
    }

    /// Maps a primary (or extended) SQLite result code to the kind a caller can act on.
    public static func kind(for resultCode: Int32) -> Kind {
        switch resultCode & 0xFF {
        case SQLITE_CORRUPT: return .corrupt
        case SQLITE_NOTADB: return .notADatabase
        case SQLITE_READONLY: return .readOnly
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_INTERRUPT: return .interrupted
        case SQLITE_MISUSE: return .misuse
        case SQLITE_RANGE: return .invalidArguments
        case SQLITE_CANTOPEN: return .fileError
        case SQLITE_FULL: return .diskFull
        case SQLITE_IOERR: return .ioError
        case SQLITE_AUTH: return .notAuthorized
        case SQLITE_CONSTRAINT: return .constraint
        default: return .sqlite
        }
    }

    static func misuse(_ message: String, sql: String? = nil) -> DatabaseError {
        DatabaseError(kind: .misuse, resultCode: SQLITE_MISUSE, message: message, sql: sql)
    }
}

extension DatabaseError: LocalizedError {
    /// The same text as ``description``, so `localizedDescription` is readable too.
    public var errorDescription: String? { description }
}

/// Rethrows a `DatabaseError` as is and wraps any other error (from a configuration hook, say).
package func typedDatabaseError<T>(_ body: () throws -> T) throws(DatabaseError) -> T {
    do {
        return try body()
    } catch let error as DatabaseError {
        throw error
    } catch {
        throw DatabaseError(kind: .sqlite, message: "\(error)")
    }
}
