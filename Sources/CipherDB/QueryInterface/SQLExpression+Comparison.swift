// Comparisons take operands whose types agree once optionals are removed: `Column<Int64>` with
// `Column<Int64?>` or an `Int64`, never with a `String`. `id == "x"` does not compile because no
// overload accepts a `String` where the column's `Int64` is expected (XCTest cannot test a
// compile failure, so this note records it).

/// `left = right`.
public func == <L: TypedSQLExpressible, R: TypedSQLExpressible>(left: L, right: R) -> SQLExpression<Bool>
where L.Value.Unwrapped == R.Value.Unwrapped {
    .binary("=", left, right)
}

/// `left = ?` with `right` bound.
public func == <L: TypedSQLExpressible>(left: L, right: L.Value.Unwrapped) -> SQLExpression<Bool> {
    .binary("=", left, value: right)
}

/// `left IS NULL`.
public func == <L: TypedSQLExpressible>(left: L, right: _OptionalNilComparisonType) -> SQLExpression<Bool> {
    .suffix(left, " IS NULL")
}

/// `left <> right`.
public func != <L: TypedSQLExpressible, R: TypedSQLExpressible>(left: L, right: R) -> SQLExpression<Bool>
where L.Value.Unwrapped == R.Value.Unwrapped {
    .binary("<>", left, right)
}

/// `left <> ?` with `right` bound.
public func != <L: TypedSQLExpressible>(left: L, right: L.Value.Unwrapped) -> SQLExpression<Bool> {
    .binary("<>", left, value: right)
}

/// `left IS NOT NULL`.
public func != <L: TypedSQLExpressible>(left: L, right: _OptionalNilComparisonType) -> SQLExpression<Bool> {
    .suffix(left, " IS NOT NULL")
}

/// `left < right`.
public func < <L: TypedSQLExpressible, R: TypedSQLExpressible>(left: L, right: R) -> SQLExpression<Bool>
where L.Value.Unwrapped == R.Value.Unwrapped {
    .binary("<", left, right)
}

/// `left < ?` with `right` bound.
public func < <L: TypedSQLExpressible>(left: L, right: L.Value.Unwrapped) -> SQLExpression<Bool> {
    .binary("<", left, value: right)
}

/// `left <= right`.
public func <= <L: TypedSQLExpressible, R: TypedSQLExpressible>(left: L, right: R) -> SQLExpression<Bool>
where L.Value.Unwrapped == R.Value.Unwrapped {
    .binary("<=", left, right)
}

/// `left <= ?` with `right` bound.
public func <= <L: TypedSQLExpressible>(left: L, right: L.Value.Unwrapped) -> SQLExpression<Bool> {
    .binary("<=", left, value: right)
}

/// `left > right`.
public func > <L: TypedSQLExpressible, R: TypedSQLExpressible>(left: L, right: R) -> SQLExpression<Bool>
where L.Value.Unwrapped == R.Value.Unwrapped {
    .binary(">", left, right)
}

/// `left > ?` with `right` bound.
public func > <L: TypedSQLExpressible>(left: L, right: L.Value.Unwrapped) -> SQLExpression<Bool> {
    .binary(">", left, value: right)
}

/// `left >= right`.
public func >= <L: TypedSQLExpressible, R: TypedSQLExpressible>(left: L, right: R) -> SQLExpression<Bool>
where L.Value.Unwrapped == R.Value.Unwrapped {
    .binary(">=", left, right)
}

/// `left >= ?` with `right` bound.
public func >= <L: TypedSQLExpressible>(left: L, right: L.Value.Unwrapped) -> SQLExpression<Bool> {
    .binary(">=", left, value: right)
}

// A column compared with a value takes the column's own node for the comparison (made once per
// column and operator), so a query built per call makes no node for it. These overloads are
// more specific than the ones above, which serve every other expression. Inlinable, so that the
// caller's module specializes them for the column's type: unspecialized, each looked up
// `Column<V>`'s generic metadata (about 200 instructions a call).

/// `column = ?` with `right` bound.
@inlinable
public func == <V>(left: Column<V>, right: V.Unwrapped) -> SQLExpression<Bool> { left.comparison(.equal, SQLArgument(right)) }

/// `column <> ?` with `right` bound.
@inlinable
public func != <V>(left: Column<V>, right: V.Unwrapped) -> SQLExpression<Bool> { left.comparison(.notEqual, SQLArgument(right)) }

/// `column < ?` with `right` bound.
@inlinable
public func < <V>(left: Column<V>, right: V.Unwrapped) -> SQLExpression<Bool> { left.comparison(.less, SQLArgument(right)) }

/// `column <= ?` with `right` bound.
@inlinable
public func <= <V>(left: Column<V>, right: V.Unwrapped) -> SQLExpression<Bool> { left.comparison(.lessOrEqual, SQLArgument(right)) }

/// `column > ?` with `right` bound.
@inlinable
public func > <V>(left: Column<V>, right: V.Unwrapped) -> SQLExpression<Bool> { left.comparison(.greater, SQLArgument(right)) }

/// `column >= ?` with `right` bound.
@inlinable
public func >= <V>(left: Column<V>, right: V.Unwrapped) -> SQLExpression<Bool> { left.comparison(.greaterOrEqual, SQLArgument(right)) }

extension TypedSQLExpressible {
    /// `self BETWEEN ? AND ?` with the range's bounds bound.
    ///
    /// ```swift
    /// users.filter(score.between(10...20))
    /// ```
    public func between(_ range: ClosedRange<Value.Unwrapped>) -> SQLExpression<Bool> where Value.Unwrapped: Comparable {
        SQLExpression(
            sql: operandSQL + " BETWEEN ? AND ?",
            bindings: bindings + SQLArguments([SQLArgument(range.lowerBound), SQLArgument(range.upperBound)]),
            isCompound: true, requiredFeatures: requiredFeatures)
    }
}
