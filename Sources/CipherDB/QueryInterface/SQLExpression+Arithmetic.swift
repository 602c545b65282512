// Arithmetic takes numeric operands of one type (optionals allowed: NULL in, NULL out); `+` on
// text is concatenation (see SQLExpression+Text.swift).

/// `left + right`.
public func + <L: TypedSQLExpressible, R: TypedSQLExpressible>(left: L, right: R) -> SQLExpression<L.Value>
where L.Value == R.Value, L.Value.Unwrapped: Numeric {
    .binary("+", left, right)
}

/// `left + ?` with `right` bound.
public func + <L: TypedSQLExpressible>(left: L, right: L.Value.Unwrapped) -> SQLExpression<L.Value>
where L.Value.Unwrapped: Numeric {
    .binary("+", left, value: right)
}

/// `left - right`.
public func - <L: TypedSQLExpressible, R: TypedSQLExpressible>(left: L, right: R) -> SQLExpression<L.Value>
where L.Value == R.Value, L.Value.Unwrapped: Numeric {
    .binary("-", left, right)
}

/// `left - ?` with `right` bound.
public func - <L: TypedSQLExpressible>(left: L, right: L.Value.Unwrapped) -> SQLExpression<L.Value>
where L.Value.Unwrapped: Numeric {
    .binary("-", left, value: right)
}

/// `left * right`.
public func * <L: TypedSQLExpressible, R: TypedSQLExpressible>(left: L, right: R) -> SQLExpression<L.Value>
where L.Value == R.Value, L.Value.Unwrapped: Numeric {
    .binary("*", left, right)
}

/// `left * ?` with `right` bound.
public func * <L: TypedSQLExpressible>(left: L, right: L.Value.Unwrapped) -> SQLExpression<L.Value>
where L.Value.Unwrapped: Numeric {
    .binary("*", left, value: right)
}

/// `left / right` (integer division for integers, as in SQLite; NULL for a zero divisor).
public func / <L: TypedSQLExpressible, R: TypedSQLExpressible>(left: L, right: R) -> SQLExpression<L.Value>
where L.Value == R.Value, L.Value.Unwrapped: Numeric {
    .binary("/", left, right)
}

/// `left / ?` with `right` bound.
public func / <L: TypedSQLExpressible>(left: L, right: L.Value.Unwrapped) -> SQLExpression<L.Value>
where L.Value.Unwrapped: Numeric {
    .binary("/", left, value: right)
}

/// `left % right`.
public func % <L: TypedSQLExpressible, R: TypedSQLExpressible>(left: L, right: R) -> SQLExpression<L.Value>
where L.Value == R.Value, L.Value.Unwrapped: BinaryInteger {
    .binary("%", left, right)
}

/// `left % ?` with `right` bound.
public func % <L: TypedSQLExpressible>(left: L, right: L.Value.Unwrapped) -> SQLExpression<L.Value>
where L.Value.Unwrapped: BinaryInteger {
    .binary("%", left, value: right)
}

/// `-operand`.
public prefix func - <E: TypedSQLExpressible>(operand: E) -> SQLExpression<E.Value> where E.Value.Unwrapped: Numeric {
    .prefix("-", operand)
}
