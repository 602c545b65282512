/// `left AND right`.
public func && (left: SQLExpression<Bool>, right: SQLExpression<Bool>) -> SQLExpression<Bool> {
    .binary("AND", left, right)
}

/// `left OR right`.
public func || (left: SQLExpression<Bool>, right: SQLExpression<Bool>) -> SQLExpression<Bool> {
    .binary("OR", left, right)
}

/// `NOT operand`.
public prefix func ! (operand: SQLExpression<Bool>) -> SQLExpression<Bool> {
    .prefix("NOT ", operand)
}
