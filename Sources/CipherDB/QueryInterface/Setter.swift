import Foundation

/// Assigns a value: `column <- value`, in inserts and updates.
infix operator <- : AssignmentPrecedence

/// One `column = value` of an insert or an update, made with `<-`, `+=`, `-=`, `*=` or `/=`.
///
/// ```swift
/// users.insert(email <- "a@example.com", name <- nil)
/// users.filter(id == 1).update(score += 1, name <- "B")
/// ```
public struct Setter: Sendable {
    /// What a setter assigns: a value bound to a `?` (the common case, kept without an array,
    /// a node or an existential), or an expression.
    @usableFromInline
    enum Assigned: Sendable {
        case bound(SQLArgument)
        case expression(SQLExpression<Void>)
    }

    /// An assigned expression, boxed: inline, it would make every setter larger, and an insert
    /// copies and destroys its setters.
    @usableFromInline
    final class AssignedExpression: Sendable {
        let expression: SQLExpression<Void>
        init(_ expression: SQLExpression<Void>) { self.expression = expression }
    }

    /// The column's quoted name (never qualified: SQLite's SET takes bare names).
    @usableFromInline let column: String
    /// A hash of `column`, made with the column: shapes are compared on every run.
    @usableFromInline let columnHash: Int
    /// The value bound to the setter's `?`; NULL, and unused, when it assigns an expression.
    /// A stored field rather than an enum's payload: binding reads it in place, where a switch
    /// over an enum copied and destroyed the whole enum.
    @usableFromInline let boundValue: SQLArgument
    /// The assigned expression, `nil` for a bound value.
    @usableFromInline let assignedExpression: AssignedExpression?

    /// `column = ?` with `value` bound. Inlinable: made where `<-` is, a setter is written in
    /// place, with no enum made and switched over (about 30 instructions a setter).
    @inlinable
    init(column: String, columnHash: Int, boundValue: SQLArgument) {
        self.column = column
        self.columnHash = columnHash
        self.boundValue = boundValue
        self.assignedExpression = nil
    }

    /// `column = expression`.
    init(column: String, columnHash: Int, expression: SQLExpression<Void>) {
        self.column = column
        self.columnHash = columnHash
        self.boundValue = .value(.null)
        self.assignedExpression = AssignedExpression(expression)
    }

    /// What is assigned.
    var assigned: Assigned {
        if let assignedExpression { return .expression(assignedExpression.expression) }
        return .bound(boundValue)
    }

    /// The assigned expression's node, `nil` for a bound value: what the statement's shape
    /// depends on.
    var expressionNode: SQLNode? { assignedExpression?.expression.node }

    /// What the setters' expressions need of the running SQLite beyond 3.15.
    static func requiredFeatures(of setters: [Setter]) -> Set<SQLiteFeature> {
        var features: Set<SQLiteFeature> = []
        for setter in setters { features.formUnion(setter.expressionNode?.requiredFeatures ?? []) }
        return features
    }

    /// The value as an expression: `?` with the value, or the expression.
    var value: SQLExpression<Void> {
        switch assigned {
        case .bound(let value): return .value(value)
        case .expression(let expression): return expression
        }
    }
}

/// `column = ?` with `value` bound (`nil` stores NULL in an optional column).
// Inlinable, so that the caller's module specializes it for the value's type: the value is
// converted where its type is known.
@inlinable
public func <- <Value>(column: Column<Value>, value: Value) -> Setter {
    Setter(column: column.quotedName, columnHash: column.quotedNameHash, boundValue: SQLArgument(value))
}

/// `column = expression`.
public func <- <Value, E: TypedSQLExpressible>(column: Column<Value>, value: E) -> Setter where E.Value.Unwrapped == Value.Unwrapped {
    Setter(column: column.quotedName, columnHash: column.quotedNameHash, expression: value.sqlExpression)
}

/// `column = column + ?`.
public func += <Value>(column: Column<Value>, value: Value.Unwrapped) -> Setter where Value.Unwrapped: Numeric {
    column <- Column<Value>(column.name) + value
}

/// `column = column - ?`.
public func -= <Value>(column: Column<Value>, value: Value.Unwrapped) -> Setter where Value.Unwrapped: Numeric {
    column <- Column<Value>(column.name) - value
}

/// `column = column * ?`.
public func *= <Value>(column: Column<Value>, value: Value.Unwrapped) -> Setter where Value.Unwrapped: Numeric {
    column <- Column<Value>(column.name) * value
}

/// `column = column / ?`.
public func /= <Value>(column: Column<Value>, value: Value.Unwrapped) -> Setter where Value.Unwrapped: Numeric {
    column <- Column<Value>(column.name) / value
}

/// SQLite.swift's increment setter; Swift itself no longer declares the operator.
postfix operator ++
/// SQLite.swift's decrement setter; Swift itself no longer declares the operator.
postfix operator --

/// `column = column + 1`, SQLite.swift's spelling of `column += 1`.
///
/// ```swift
/// try db.run(players.filter(id == 1).update(score++))
/// ```
public postfix func ++ <Value>(column: Column<Value>) -> Setter where Value.Unwrapped: Numeric {
    column += 1
}

/// `column = column - 1`, SQLite.swift's spelling of `column -= 1`.
public postfix func -- <Value>(column: Column<Value>) -> Setter where Value.Unwrapped: Numeric {
    column -= 1
}
