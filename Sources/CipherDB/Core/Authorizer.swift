import CSQLCipher
import Foundation

/// What a connection's one SQLite authorizer does; SQLite allows one per connection, and
/// several features need it.
///
/// - Refuse key PRAGMAs (``Database/refuseKeyPragmas()``).
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

    /// Installs the policy on `handle` (once is enough; later changes to the flags apply).
    func install(on handle: OpaquePointer) {
        sqlite3_set_authorizer(
            handle,
            { context, action, first, _, _, _ in
                guard let context else { return SQLITE_OK }
                let policy = Unmanaged<Authorizer>.fromOpaque(context).takeUnretainedValue()
                return policy.decide(action, first)
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func decide(_ action: Int32, _ first: UnsafePointer<CChar>?) -> Int32 {
        switch action {
        case SQLITE_PRAGMA where refusesKeyPragmas:
            guard let first else { return SQLITE_OK }
            switch String(cString: first).lowercased() {
            case "key", "rekey", "hexkey", "hexrekey", "textkey", "textrekey": return SQLITE_DENY
            default: return SQLITE_OK
            }
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
}
