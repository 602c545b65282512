import Synchronization

/// A typed column of a table, by name: `Column<Int64>("id")`, `Column<String?>("name")`.
///
/// A column's name is quoted wherever it appears: in expressions between backquotes (SQLite
/// reads a double-quoted name that names no column as a string, and a misspelled column would
/// compare a constant), in an insert's column list and an update's `SET` between double quotes. A column qualified by its table (`users[id]`) renders as
/// `"users"."id"`, for joins.
///
/// ```swift
/// let users = Table("users")
/// let id = Column<Int64>("id"), email = Column<String>("email"), name = Column<String?>("name")
/// let adults = users.select(id, email).filter(name != nil).order(email.desc)
/// ```
public struct Column<Value: SQLValueType>: TypedSQLExpressible {
    /// The column's name, unquoted.
    public let name: String
    /// The table (or alias) that qualifies the column, if any.
    public let tableName: String?
    /// The quoted name, unqualified (as `SET` and an insert's column list take it): quoted once,
    /// when the column is made, not in every query that uses it.
    @usableFromInline
    let quotedName: String
    /// A hash of `quotedName`, for the shape of inserts and updates that set the column.
    @usableFromInline
    let quotedNameHash: Int
    /// The quoted, possibly qualified name as an expression node, with the column's comparisons
    /// to a bound value: made once, when the column is, and compared by identity on every run of
    /// a query that uses them.
    let shape: ColumnShape

    /// A column named `name`.
    public init(_ name: String) {
        self.init(name, table: nil)
    }

    init(_ name: String, table: String?) {
        self.name = name
        self.tableName = table
        let quoted = quoteIdentifier(name)
        self.quotedName = quoted
        self.quotedNameHash = SQLNode.hash(quoted)
        // In expressions a bare name is backquoted (`quoteColumnReference`: never read as a
        // string); a qualified one cannot be.
        self.shape = ColumnShape(node: SQLNode(text: table.map { quoteIdentifier($0) + "." + quoted } ?? quoteColumnReference(name)))
    }

    /// The quoted, possibly qualified name.
    public var sqlExpression: SQLExpression<Void> { SQLExpression(node: shape.node) }

    /// `column op ?` with `value` bound, its node the one this column made for `op` the first
    /// time: a lookup built per call then makes no node, and its shape matches by identity.
    @usableFromInline
    func comparison(_ op: ColumnShape.Comparison, _ value: SQLArgument) -> SQLExpression<Bool> {
        SQLExpression(node: shape.node(for: op), bindings: .one(value))
    }
}

/// A column's node and the nodes of its comparisons with a bound value (`"id" = ?`), each made
/// the first time a query asks for it and kept for the column's life.
///
/// The comparison nodes hold the column's node, so they live here rather than in the node
/// itself, which would make a cycle.
@usableFromInline
final class ColumnShape: Sendable {
    /// The comparisons a column keeps a node for.
    @usableFromInline
    enum Comparison: Sendable {
        case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual

        /// The SQL operator.
        var sql: String {
            switch self {
            case .equal: "="
            case .notEqual: "<>"
            case .less: "<"
            case .lessOrEqual: "<="
            case .greater: ">"
            case .greaterOrEqual: ">="
            }
        }
    }

    let node: SQLNode
    // The comparison nodes made so far, one slot per comparison (noncopyable atomics cannot live
    // in an array): each a retained `SQLNode`'s address, or 0. Plain atomics rather than
    // `AtomicLazyReference`, whose `load()` is not inlinable and looked up generic metadata on
    // every call (about 650 instructions).
    private let equal = Atomic<Int>(0)
    private let notEqual = Atomic<Int>(0)
    private let less = Atomic<Int>(0)
    private let lessOrEqual = Atomic<Int>(0)
    private let greater = Atomic<Int>(0)
    private let greaterOrEqual = Atomic<Int>(0)

    init(node: SQLNode) { self.node = node }

    deinit {
        Self.release(equal)
        Self.release(notEqual)
        Self.release(less)
        Self.release(lessOrEqual)
        Self.release(greater)
        Self.release(greaterOrEqual)
    }

    /// The node of `column op ?`.
    func node(for op: Comparison) -> SQLNode {
        switch op {
        case .equal: node(in: equal, op)
        case .notEqual: node(in: notEqual, op)
        case .less: node(in: less, op)
        case .lessOrEqual: node(in: lessOrEqual, op)
        case .greater: node(in: greater, op)
        case .greaterOrEqual: node(in: greaterOrEqual, op)
        }
    }

    private func node(in slot: borrowing Atomic<Int>, _ op: Comparison) -> SQLNode {
        if let pointer = UnsafeRawPointer(bitPattern: slot.load(ordering: .acquiring)) {
            return Unmanaged<SQLNode>.fromOpaque(pointer).takeUnretainedValue()
        }
        let made = SQLNode.binary(op.sql, node, .placeholder)
        let address = Int(bitPattern: Unmanaged.passRetained(made).toOpaque())
        let (stored, current) = slot.compareExchange(expected: 0, desired: address, ordering: .acquiringAndReleasing)
        guard !stored, let pointer = UnsafeRawPointer(bitPattern: current) else { return made }
        // Another thread stored its node first: use that one, so that every query shares one.
        Unmanaged.passUnretained(made).release()
        return Unmanaged<SQLNode>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Releases the node a slot holds.
    private static func release(_ slot: borrowing Atomic<Int>) {
        if let pointer = UnsafeRawPointer(bitPattern: slot.load(ordering: .acquiring)) {
            Unmanaged<SQLNode>.fromOpaque(pointer).release()
        }
    }
}
